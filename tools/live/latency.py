#!/usr/bin/env python3
"""How long a reading written into `geotrigger replay -` takes to come out as its event.

Writes N readings, one every --interval seconds, into the replay's standard input through a
pipe; each one crosses a circle, so each gives one event line on the replay's standard output.
The time from writing a reading to reading its event is that reading's latency (the whole
process: decoding, the engine, the writer's flush, two pipes). Prints the median, 99th
percentile and largest, per input format and --jobs.

    python3 tools/live/latency.py                      # 200 readings per case, 20 ms apart
    python3 tools/live/latency.py --count 1000 --interval 0.005 --binary .build/release/geotrigger
"""
import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

REGIONS = {"type": "FeatureCollection", "features": [{
    "type": "Feature", "id": "c", "geometry": {"type": "Point", "coordinates": [13.0, 45.0]},
    "properties": {"radius": 100}}]}


def checksum(body):
    x = 0
    for b in body.encode():
        x ^= b
    return "$%s*%02X" % (body, x)


def reading(fmt, k):
    """The k-th reading: alternately at the circle's centre and 1.1 km north of it."""
    lat = 45.0 if k % 2 == 0 else 45.01
    t = 1_700_000_000 + k
    if fmt == "ndjson":
        return '{"t":%d,"device":"d","lat":%s,"lon":13.0}\n' % (t, lat)
    hms = time.strftime("%H%M%S", time.gmtime(t))
    day = time.strftime("%d%m%y", time.gmtime(t))
    if fmt == "gpsd":
        iso = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))
        return ('{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"time":"%s","lat":%s,"lon":13.0,"eph":5}\n'
                % (iso, lat))
    ddmm = "45%07.4f" % ((lat - 45) * 60)
    return (checksum("GPRMC,%s,A,%s,N,01300.0000,E,0.0,0.0,%s,,,A" % (hms, ddmm, day)) + "\r\n"
            + checksum("GPGGA,%s,%s,N,01300.0000,E,1,08,1.0,10.0,M,0.0,M,," % (hms, ddmm)) + "\r\n")


def measure(binary, fmt, jobs, count, interval):
    with tempfile.TemporaryDirectory() as d:
        regions = os.path.join(d, "r.geojson")
        with open(regions, "w") as f:
            json.dump(REGIONS, f)
        args = [binary, "replay", "--regions", regions, "-q", "--hysteresis", "0", "--format", fmt]
        if jobs > 1:
            args += ["--jobs", str(jobs)]
        p = subprocess.Popen(args + ["-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        out = p.stdout.fileno()
        latencies, missed, pending = [], 0, b""
        for k in range(count):
            start = time.monotonic()
            p.stdin.write(reading(fmt, k).encode())
            # Up to 2 s for its event line.
            while b"\n" not in pending:
                left = 2 - (time.monotonic() - start)
                if left <= 0 or not select.select([out], [], [], left)[0]:
                    break
                chunk = os.read(out, 65536)
                if not chunk:
                    break
                pending += chunk
            if b"\n" in pending:
                latencies.append(time.monotonic() - start)
                pending = pending[pending.index(b"\n") + 1:]
            else:
                missed += 1
            time.sleep(interval)
        p.stdin.close()
        p.wait()
        return latencies, missed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=".build/release/geotrigger")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--formats", nargs="+", default=["ndjson", "gpsd", "nmea"])
    ap.add_argument("--jobs", nargs="+", type=int, default=[1, 2])
    a = ap.parse_args()
    if not os.access(a.binary, os.X_OK):
        sys.exit("%s is not built: swift build -c release" % a.binary)
    print("| input | --jobs | readings | events while open | median | p99 | largest |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for fmt in a.formats:
        for jobs in a.jobs:
            lat, missed = measure(a.binary, fmt, jobs, a.count, a.interval)
            ms = sorted(x * 1000 for x in lat)
            p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))] if ms else float("nan")
            print("| %s | %d | %d | %d | %.2f ms | %.2f ms | %.2f ms |" % (
                fmt, jobs, a.count, len(lat), statistics.median(ms) if ms else float("nan"), p99,
                ms[-1] if ms else float("nan")))


if __name__ == "__main__":
    main()
