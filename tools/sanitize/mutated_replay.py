#!/usr/bin/env python3
"""Hundreds of thousands of mutated input lines, from data the tests never read, through a
sanitized geotrigger: every run must end with exit 0 (bad records rejected, counted, reported),
account for every line, and leave no sanitizer report.

    python3 tools/sanitize/mutated_replay.py --binary .build-asan/debug/geotrigger [--lines 300000]

Sources (../shared/datasets, not shipped): the Liverpool bus fleet's feed (route 14, as NDJSON
and CSV fixes), the five BLE walks (as sightings, through tools/ble/convert.py), and GeoNames'
cities as circle regions around the buses. Each line is kept or mutated (byte flips, insertions
and deletions, truncation, splices of two lines, JSON and CSV tokens, extreme numbers, invalid
UTF-8, CR, NUL, a byte order mark, over-long lines), seeded so a failure can be replayed.

Every chunk is replayed as a user would: from a file, from standard input, with --jobs 2, and
with --checkpoint, killed with SIGKILL part way and resumed; CSV and GPX chunks too. The
sanitizer's options are set with log_path into a temporary folder, and any report fails the run.
"""
import argparse
import csv
import glob
import io
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "datasets")

TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"\\u0000", b"\\ud800", b"null", b"true", b"-0",
          b"1e308", b"-1e309", b"NaN", b"Infinity", b"0.000000000000000000001", b"99999999999999999999",
          b'"t":', b'"device":', b'"lat":', b'"lon":', b'"accuracy":', b'"rssi":', b'"uuid":', b'"op":',
          b'"addRegion"', b'"removeRegion"', b'"push"', b'"add"', b'"region":', b'"request":', b'"ids":[]',
          b"\xef\xbb\xbf", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\r", b"\x00", b"\t", b" " * 40,
          b'"2021-02-30T25:61:61Z"', b'"0000-01-01T00:00:00Z"', b'"9999-12-31T23:59:59.999Z"']


def mutate(line, rng, other):
    r = rng.random()
    if r < 0.45:
        return line
    b = bytearray(line)
    for _ in range(rng.randint(1, 3)):
        k = rng.random()
        at = rng.randrange(len(b) + 1)
        if k < 0.15 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif k < 0.30:
            b[at:at] = bytes([rng.randrange(256)])
        elif k < 0.42 and b:
            end = min(len(b), at + rng.randint(1, 12))
            del b[at:end]
        elif k < 0.52:
            b = b[:at]
        elif k < 0.62:
            cut = rng.randrange(len(other) + 1)
            b = b[:at] + other[cut:]
        elif k < 0.82:
            b[at:at] = rng.choice(TOKENS)
        elif k < 0.90 and b:
            end = min(len(b), at + rng.randint(1, 16))
            b[at:at] = b[at:end] * rng.randint(1, 4)
        elif k < 0.93:
            b = b + b"x" * rng.choice([1000, 70000, 1100000])
        else:
            # A number replaced by an extreme one.
            for i in range(len(b)):
                if 48 <= b[i] <= 57:
                    j = i
                    while j < len(b) and (48 <= b[j] <= 57 or b[j] in b".eE-+"):
                        j += 1
                    b[i:j] = rng.choice([b"1e308", b"-0", b"1e-320", b"180.0000001", b"91", b"-999999999999"])
                    break
    return bytes(b)


def bus_rows():
    path = os.path.join(SHARED, "liverpool_bus_route14", "route14_outbound.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda r: r["timestamp"])
    return rows


def bus_lines(rows):
    out = []
    for r in rows:
        t = r["timestamp"].replace(" ", "T") + "Z"
        out.append(json.dumps({"t": t, "device": "bus-" + r["vehicle_id"], "lat": float(r["latitude"]),
                               "lon": float(r["longitude"]), "accuracy": 8}, separators=(",", ":")).encode())
    return out


def ble_lines(work):
    lines = []
    for walk in sorted(glob.glob(os.path.join(SHARED, "ble_position_annotated_cc0", "trk", "*.mbd"))):
        out = os.path.join(work, "ble-" + os.path.basename(walk))
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "ble", "convert.py"), walk, "--out", out,
                        "--positions"], check=True, capture_output=True)
        with open(os.path.join(out, "sightings.ndjson"), "rb") as f:
            lines += f.read().splitlines()
    return lines


def regions(rows, rng, path):
    """Circles around GeoNames' cities near the buses and around points of their route."""
    lats = [float(r["latitude"]) for r in rows]
    lons = [float(r["longitude"]) for r in rows]
    lat0, lon0 = sum(lats) / len(lats), sum(lons) / len(lons)
    features = []
    with open(os.path.join(SHARED, "poi_geonames", "cities15000.csv"), newline="", encoding="utf-8") as f:
        for c in csv.DictReader(f):
            lat, lon = float(c["lat"]), float(c["lon"])
            if abs(lat - lat0) < 1.0 and abs(lon - lon0) < 1.5:
                features.append((f"city-{c['geonameid']}", lat, lon, rng.choice([500, 1500, 4000])))
    for k in range(300):
        r = rows[rng.randrange(len(rows))]
        features.append((f"stop-{k}", float(r["latitude"]), float(r["longitude"]), rng.choice([30, 80, 200])))
    with open(path, "w") as f:
        json.dump({"type": "FeatureCollection", "features": [
            {"type": "Feature", "id": i, "geometry": {"type": "Point", "coordinates": [lon, lat]},
             "properties": {"radius": rad}} for i, lat, lon, rad in features]}, f)
    return len(features)


# No repeating time trigger: a mutated time thousands of years ahead would make it fire every
# interval in between (hundreds of millions of deliveries), which is the engine's semantics, not a
# fault, and would only time this check out.
REQUESTS = [
    {"id": "arrive", "content": {"title": "Arriving"}, "trigger": {"type": "location", "region": "stop-1"}},
    {"id": "tick", "content": {"title": "tick"}, "trigger": {"type": "timeInterval", "seconds": 600}},
    {"id": "morning", "content": {"title": "morning"},
     "trigger": {"type": "calendar", "components": {"hour": 8}, "timeZone": "Europe/London"}},
    {"id": "pushed", "content": {"title": "news"}, "trigger": {"type": "push"}},
]


class Runner:
    def __init__(self, binary, work, reports):
        self.binary, self.work, self.reports = binary, work, reports
        self.runs = 0
        self.failures = []
        env = dict(os.environ)
        log = os.path.join(reports, "report")
        for name in ("ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"):
            env[name] = f"log_path={log}:{env.get(name, '')}"
        env["SWIFT_BACKTRACE"] = "enable=no"
        self.env = env

    def run(self, args, stdin=None, label="", kill_after=None):
        self.runs += 1
        cmd = [self.binary] + args
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env, cwd=self.work)
        if kill_after is not None:
            time.sleep(kill_after)
            p.send_signal(signal.SIGKILL)
            p.communicate()
            return None
        _, err = p.communicate(stdin)
        if p.returncode != 0:
            self.failures.append(f"{label}: exit {p.returncode}: {' '.join(cmd)}\n{err.decode('utf-8', 'replace')[-2000:]}")
        return err.decode("utf-8", "replace")


def records_read(summary):
    for line in summary.splitlines():
        if " records from " in line:
            return int(line.split("geotrigger: ")[1].split(" records")[0].replace(",", ""))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=35)
    a = ap.parse_args()
    if not os.path.isdir(SHARED):
        sys.exit("mutated_replay: ../shared/datasets is absent (this check reads data the project does not ship)")
    binary = os.path.abspath(a.binary)
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="geotrigger-mutated-")
    reports = os.path.join(work, "reports")
    os.makedirs(reports)
    rows = bus_rows()
    sources = bus_lines(rows) + ble_lines(work)
    n_regions = regions(rows, rng, os.path.join(work, "regions.geojson"))
    with open(os.path.join(work, "requests.json"), "w") as f:
        json.dump(REQUESTS, f)
    runner = Runner(binary, work, reports)
    base = ["replay", "--regions", "regions.geojson", "--requests", "requests.json", "--dwell", "300"]
    fed = 0
    chunk_no = 0
    start = time.time()
    print(f"mutated_replay: {len(sources):,} source lines, {n_regions} regions; work in {work}", file=sys.stderr)
    while fed < a.lines:
        chunk_no += 1
        pos = rng.randrange(len(sources))
        lines = [mutate(sources[(pos + k) % len(sources)], rng, sources[rng.randrange(len(sources))])
                 for k in range(a.chunk)]
        # Push and control records among the readings.
        for _ in range(a.chunk // 500):
            lines.insert(rng.randrange(len(lines)), mutate(b'{"t":1769443200,"device":"bus-4716","op":"push","id":"pushed"}',
                                                         rng, b""))
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
        path = os.path.join(work, f"chunk{chunk_no}.ndjson")
        with open(path, "wb") as f:
            f.write(data)
        label = f"chunk {chunk_no} (seed {a.seed})"
        s1 = runner.run(base + ["-o", path + ".out", path], label=label + " file")
        runner.run(base + ["-"], stdin=data, label=label + " stdin")
        s3 = runner.run(base + ["--jobs", "2", path], label=label + " --jobs 2")
        if s1 is not None and s3 is not None and records_read(s1) != records_read(s3):
            runner.failures.append(f"{label}: {records_read(s1)} records one job, {records_read(s3)} with --jobs 2")
        cp = os.path.join(work, f"cp{chunk_no}")
        runner.run(base + ["--checkpoint", cp, "--checkpoint-every", "2000", "-o", cp + ".out", path],
                   label=label + " killed", kill_after=rng.uniform(0.05, 0.6))
        runner.run(base + ["--checkpoint", cp, "--checkpoint-every", "2000", "-o", cp + ".out", path],
                   label=label + " resumed")
        # A run killed and resumed writes exactly the events of a run never stopped (SPEC §8).
        with open(path + ".out", "rb") as f1, open(cp + ".out", "rb") as f2:
            if f1.read() != f2.read():
                runner.failures.append(f"{label}: the killed and resumed run's events differ from the whole run's")
        # The same lines as CSV rows (a field may now hold anything), and as GPX points.
        text = io.StringIO()
        w = csv.writer(text, lineterminator="\r\n" if chunk_no % 2 else "\n")
        w.writerow(["t", "device", "lat", "lon", "accuracy"])
        for raw in lines[: a.chunk // 4]:
            try:
                r = json.loads(raw)
                w.writerow([r.get("t"), r.get("device"), r.get("lat"), r.get("lon"), r.get("accuracy")])
            except Exception:
                text.write(raw.decode("utf-8", "replace").replace("\n", " ") + "\n")
        cpath = os.path.join(work, f"chunk{chunk_no}.csv")
        with open(cpath, "w", encoding="utf-8", errors="replace") as f:
            f.write(text.getvalue())
        runner.run(base + [cpath], label=label + " csv")
        gpx = [b'<?xml version="1.0"?><gpx version="1.1"><trk><trkseg>']
        for raw in lines[: a.chunk // 8]:
            try:
                r = json.loads(raw)
                gpx.append(f'<trkpt lat="{r.get("lat")}" lon="{r.get("lon")}"><time>{r.get("t")}</time></trkpt>'.encode())
            except Exception:
                gpx.append(mutate(b'<trkpt lat="53.4" lon="-2.9"><time>2026-01-26T15:57:02Z</time></trkpt>', rng, raw))
        gpath = os.path.join(work, f"chunk{chunk_no}.gpx")
        with open(gpath, "wb") as f:
            f.write(b"\n".join(gpx) + b"</trkseg></trk></gpx>\n")
        runner.run(base + [gpath], label=label + " gpx")
        fed += len(lines) + a.chunk // 4 + a.chunk // 8
        print(f"mutated_replay: {fed:,} lines in {runner.runs} runs, {time.time() - start:.0f} s", file=sys.stderr)
    reported = sorted(glob.glob(os.path.join(reports, "report*")))
    for r in reported:
        with open(r, errors="replace") as f:
            print(f"==== {r}\n{f.read()}", file=sys.stderr)
    for failure in runner.failures:
        print(f"FAILED {failure}", file=sys.stderr)
    print(f"mutated_replay: {fed:,} mutated lines, {runner.runs} runs, {len(reported)} sanitizer reports, "
          f"{len(runner.failures)} failed runs, {time.time() - start:.0f} s", file=sys.stderr)
    if not reported and not runner.failures:
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print(f"mutated_replay: inputs kept in {work}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
