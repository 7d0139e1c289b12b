#!/usr/bin/env python3
"""Geotrigger's reading of gpsd's regression logs against gpsd's own (../shared/datasets/gpsd_nmea_logs).

    python3 tools/gpsd/against_gpsd.py [--binary .build/release/geotrigger] [--logs DIR] [--markdown] [--reports]

For each NAME.log: `geotrigger convert --device x NAME.log` (NMEA, told by its content), and the
TPV reports of NAME.log.chk with mode >= 2 and a position. A gpsd fix (a run of reports with one
time: gpsd repeats a cycle's report as its sentences come, and a log may go back in time) is
found when a converted fix has its time of day to 1 s (gpsd moves some receivers' dates by 1024
weeks) and its position to 2e-6 degrees, the closest in time first. A converted fix is extra when
no gpsd report, timed or not, has its position. With --reports the input is gpsd's own JSON
reports (the .chk's JSON lines, what `gpspipe -w` prints) on standard input, times to 1 ms.
"""
import argparse, json, os, subprocess, sys

def tpvs(path):
    timed, positions = [], []
    for raw in open(path, 'rb'):
        if not raw.startswith(b'{'):
            continue
        try:
            o = json.loads(raw)
        except ValueError:
            continue
        if o.get('class') != 'TPV' or o.get('mode', 0) < 2 or 'lat' not in o or 'lon' not in o:
            continue
        positions.append((o['lat'], o['lon']))
        t = o.get('time')
        if t:
            # A fix per run of reports with one time (gpsd repeats a cycle's report as its
            # sentences come): a log going back in time (captures spliced) meets a time again,
            # and that is another fix.
            tod = round(int(t[11:13]) * 3600 + int(t[14:16]) * 60 + float(t[17:-1]), 3)
            if not timed or timed[-1][0] != tod:
                timed.append((tod, []))
            timed[-1][1].append((o['lat'], o['lon']))
    return timed, positions

def converted(binary, path, reports=False):
    if reports:
        # gpsd's own reports, as `gpspipe -w` would print them, on standard input.
        lines = b''.join(l for l in open(path + '.chk', 'rb') if l.startswith(b'{'))
        out = subprocess.run([binary, 'convert', '-q', '--format', 'gpsd', '--device', 'x', '-'], input=lines,
                             capture_output=True, check=True).stdout
    else:
        out = subprocess.run([binary, 'convert', '-q', '--device', 'x', path], capture_output=True, check=True).stdout
    fixes = []
    for line in out.splitlines():
        o = json.loads(line)
        t = o['t']
        tod = int(t[11:13]) * 3600 + int(t[14:16]) * 60 + float(t[17:-1])
        fixes.append((tod, o['lat'], o['lon']))
    return fixes

def near(a, b):
    return abs(a[0] - b[0]) <= 2e-6 and abs(a[1] - b[1]) <= 2e-6

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--binary', default=os.path.join(root, '.build/release/geotrigger'))
    p.add_argument('--logs', default=os.path.join(os.path.dirname(root), 'shared/datasets/gpsd_nmea_logs'))
    p.add_argument('--markdown', action='store_true', help='a table per receiver')
    p.add_argument('--reports', action='store_true',
                   help="read gpsd's JSON reports (the .chk's JSON lines, on standard input) instead of the log; "
                        "time to 1 ms")
    args = p.parse_args()
    tolerance = 0.001 if args.reports else 1
    names = sorted(n for n in os.listdir(args.logs) if n.endswith('.log'))
    total = found_all = extra_all = 0
    rows = []
    for name in names:
        mine = converted(args.binary, os.path.join(args.logs, name), args.reports)
        timed, positions = tpvs(os.path.join(args.logs, name + '.chk'))
        used, found = set(), 0
        for t, reported in timed:
            def dt(k):
                d = abs(mine[k][0] - t) % 86400
                return min(d, 86400 - d)
            ks = [k for k in range(len(mine)) if k not in used and dt(k) <= tolerance
                  and any(near(mine[k][1:], c) for c in reported)]
            if ks:
                used.add(min(ks, key=dt))
                found += 1
        extra = sum(1 for k in range(len(mine)) if k not in used and not any(near(mine[k][1:], q) for q in positions))
        total += len(timed); found_all += found; extra_all += extra
        rows.append((name[:-4], len(timed), found, len(mine), extra))
    if args.markdown:
        print('| receiver log | gpsd fixes | found | Geotrigger fixes | extra |')
        print('|---|---:|---:|---:|---:|')
        for r in rows:
            print('| %s | %d | %d | %d | %d |' % r)
    print('%d logs: %d of gpsd\'s %d fixes found (%.2f %%), %d extra (%.2f %% of gpsd\'s)'
          % (len(names), found_all, total, 100.0 * found_all / max(total, 1), extra_all, 100.0 * extra_all / max(total, 1)))

if __name__ == '__main__':
    main()
