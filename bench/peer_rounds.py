#!/usr/bin/env python3
"""Whole process against issue 5's Python peer, in rounds (issues 27 and 39):

    bench/peer_rounds.py --regions regions.csv --readings readings.csv \
        [--rounds 3] [--runs 11] [--jobs 2] LABEL=BINARY [LABEL=BINARY ...]

Each round times the peer once (`described_peer.py`, pinned to one core with taskset, through
bench/.venv's Python), then runs every `geotrigger` binary `--runs` times, taking turns
(`geotrigger replay --regions R --hysteresis 0 --max-accuracy 0 --jobs N READINGS -o /dev/null`),
and prints the peer's time, each binary's median wall time and the ratio. Wall time is the
clock around each whole process, start to exit, as a user times it. On a VM whose speed swings
from minute to minute, only ratios taken in the same round compare: the peer is timed in each.
The events are not checked here: `bench/peer/check_peer.py --peer described` does that.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))


def wall(command):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--regions", required=True, help="CSV circles: id,lat,lon,radius")
    p.add_argument("--readings", required=True, help="CSV readings: t,device,lat,lon,accuracy")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=11, help="runs of each binary in a round")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("binaries", nargs="+", metavar="LABEL=BINARY")
    a = p.parse_args()
    binaries = []
    for spec in a.binaries:
        label, sep, path = spec.partition("=")
        if not sep or not os.access(path, os.X_OK):
            sys.exit(f"peer_rounds: {spec!r} is not LABEL=BINARY with an executable binary")
        binaries.append((label, path))
    python = os.path.join(BENCH, ".venv", "bin", "python")
    if not os.access(python, os.X_OK):
        sys.exit("peer_rounds: bench/.venv is missing: run bench/peer/setup first")
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"peer-rounds-{os.getpid()}.ndjson")
    peer = ["taskset", "-c", "0", python, os.path.join(BENCH, "peer", "described_peer.py"),
            "--regions", a.regions, "--readings", a.readings, "--out", out]
    print(f"# {shlex.join(peer)}")
    for label, path in binaries:
        print(f"# {label}: {shlex.join([path, 'replay', '--regions', a.regions, '--hysteresis', '0', '--max-accuracy', '0', '--jobs', str(a.jobs), a.readings, '-o', '/dev/null'])}")
    try:
        for r in range(a.rounds):
            peer_seconds = wall(peer)
            times = {label: [] for label, _ in binaries}
            for _ in range(a.runs):
                for label, path in binaries:
                    times[label].append(wall([path, "replay", "--regions", a.regions, "--hysteresis", "0",
                                              "--max-accuracy", "0", "--jobs", str(a.jobs), a.readings,
                                              "-o", "/dev/null"]))
            cells = [f"{label} {statistics.median(t) * 1000:.1f} ms = {peer_seconds / statistics.median(t):.1f}x"
                     for label, t in times.items()]
            print(f"round {r + 1}: peer {peer_seconds:.2f} s; " + "; ".join(cells), flush=True)
    finally:
        if os.path.exists(out):
            os.remove(out)


if __name__ == "__main__":
    main()
