#!/usr/bin/env python3
"""Checks a Python peer against `geotrigger replay` in exact mode.

Either runs both (`--regions R --readings F [--geotrigger BIN] [--peer tuned|described]`) or
compares two existing event files (`--expected geotrigger.ndjson --actual peer.ndjson`). The
described peer (described_peer.py) reads CSV: NDJSON readings are converted to a CSV first, and
geotrigger replays that same CSV. Compares the multisets of
(device, region, event, t) and, for events present in both, enteredAt and distance (to 1 cm).
Prints every mismatch (the first --show of each kind) with the geodesic distance to the boundary,
and exits 1 if there is any. SPEC §4 lets decisions differ for points within 1 cm of a boundary;
such mismatches are reported as boundary ties and do not fail the check.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import polars as pl
from pyproj import Geod

from peer import read_block

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = {"t": pl.String, "event": pl.String, "device": pl.String, "region": pl.String,
          "distance": pl.Float64, "enteredAt": pl.String}


def load(path):
    df = pl.read_ndjson(path, schema=SCHEMA).filter(pl.col("event").is_in(["enter", "exit"]))
    # Times as integer milliseconds, whether written as RFC 3339 strings or numbers.
    def ms(col):
        parsed = pl.col(col).str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_unit="ms", strict=False)
        return parsed.dt.epoch("ms").fill_null(
            (pl.col(col).cast(pl.Float64, strict=False) * 1000).round().cast(pl.Int64))
    return df.with_columns(ms("t").alias("t_ms"), ms("enteredAt").alias("entered_ms"))


def run(cmd):
    print("$ " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--regions")
    p.add_argument("--readings")
    p.add_argument("--geotrigger", default=os.path.join(HERE, "../../.build/release/geotrigger"))
    p.add_argument("--expected", help="geotrigger's events (skips running it)")
    p.add_argument("--actual", help="the peer's events (skips running it)")
    p.add_argument("--peer", choices=["tuned", "described"], default="tuned",
                   help="tuned: peer.py (polars NDJSON, chord bound); described: described_peer.py "
                        "(issue 5's pipeline, CSV) [tuned]")
    p.add_argument("--chunk-bytes", help="passed to peer.py (small values exercise chunk carry-over)")
    p.add_argument("--chunk-rows", help="passed to described_peer.py (the same, in CSV rows)")
    p.add_argument("--show", type=int, default=20, help="mismatches shown per kind [20]")
    a = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="check_peer-")
    if a.peer == "described" and a.readings and not a.readings.endswith(".csv") and not a.actual:
        csv = os.path.join(tmp, "readings.csv")
        with open(a.readings, "rb") as f:
            read_block(f.read()).select("t", "device", "lat", "lon", "accuracy").write_csv(csv)
        print(f"readings as CSV: {csv}", file=sys.stderr)
        a.readings = csv
    if not a.expected:
        a.expected = os.path.join(tmp, "geotrigger.ndjson")
        run([a.geotrigger, "replay", "--regions", a.regions, "--hysteresis", "0", "--max-accuracy", "0",
             a.readings, "-o", a.expected])
    if not a.actual:
        a.actual = os.path.join(tmp, "peer.ndjson")
        if a.peer == "described":
            run([sys.executable, os.path.join(HERE, "described_peer.py"), "--regions", a.regions,
                 "--readings", a.readings, "--out", a.actual]
                + (["--chunk-rows", a.chunk_rows] if a.chunk_rows else []))
        else:
            run([sys.executable, os.path.join(HERE, "peer.py"), "--regions", a.regions, "--readings",
                 a.readings, "--out", a.actual] + (["--chunk-bytes", a.chunk_bytes] if a.chunk_bytes else []))

    exp, act = load(a.expected), load(a.actual)
    key = ["device", "region", "event", "t_ms"]
    ce = collections.Counter(exp.select(key).iter_rows())
    ca = collections.Counter(act.select(key).iter_rows())
    missing = ce - ca  # geotrigger has, the peer lacks
    extra = ca - ce    # the peer has, geotrigger lacks
    print(f"geotrigger: {exp.height} events ({(exp['event'] == 'enter').sum()} enter), "
          f"peer: {act.height} events ({(act['event'] == 'enter').sum()} enter)")

    failures = 0
    ties = 0
    if missing or extra:
        regions = {}
        fixes = {}
        if a.regions and a.readings:
            rdf = pl.read_csv(a.regions, columns=["id", "lat", "lon", "radius"],
                              schema_overrides={"id": pl.String})
            regions = {r[0]: r[1:] for r in rdf.iter_rows()}
            want = {(k[0], k[3]) for k in list(missing) + list(extra)}
            if a.readings.endswith(".csv"):
                fdf = pl.read_csv(a.readings, schema_overrides={"t": pl.Float64, "device": pl.String,
                                                                 "lat": pl.Float64, "lon": pl.Float64})
            else:
                with open(a.readings, "rb") as f:
                    fdf = read_block(f.read())
            fdf = fdf.with_columns((pl.col("t") * 1000).round().cast(pl.Int64).alias("t_ms"))
            for d, t, lat, lon in fdf.select("device", "t_ms", "lat", "lon").iter_rows():
                if (d, t) in want:
                    fixes[(d, t)] = (lat, lon)
        geod = Geod(ellps="WGS84")
        for label, diff in (("missing in peer", missing), ("extra in peer", extra)):
            shown = 0
            for (d, r, ev, t), n in sorted(diff.items(), key=lambda kv: kv[0][3]):
                note = ""
                if r in regions and (d, t) in fixes:
                    lat, lon = fixes[(d, t)]
                    rlat, rlon, rad = regions[r]
                    dist = geod.inv(lon, lat, rlon, rlat)[2]
                    off = dist - rad
                    note = f" distance-radius={off:+.4f} m"
                    if abs(off) <= 0.01:
                        ties += n
                        note += " (boundary tie, allowed)"
                    else:
                        failures += n
                else:
                    failures += n
                if shown < a.show:
                    print(f"{label}: device={d} region={r} {ev} t_ms={t} x{n}{note}")
                    shown += 1
            if len(diff) > shown:
                print(f"{label}: ... {len(diff) - shown} more")

    # Same events: enteredAt and distance should agree too.
    both = exp.join(act, on=key, how="inner", suffix="_peer")
    bad_entered = both.filter(pl.col("entered_ms").ne_missing(pl.col("entered_ms_peer")))
    bad_dist = both.filter((pl.col("distance") - pl.col("distance_peer")).abs() > 0.0101)
    for label, df in (("enteredAt differs", bad_entered), ("distance differs", bad_dist)):
        for row in df.head(a.show).iter_rows(named=True):
            print(f"{label}: {json.dumps(row)}")
    failures += bad_entered.height + bad_dist.height

    verdict = "PASS" if failures == 0 else "FAIL"
    print(f"{verdict}: {len(missing)} missing, {len(extra)} extra "
          f"({ties} boundary ties within 1 cm), {bad_entered.height} enteredAt and "
          f"{bad_dist.height} distance differences")
    sys.exit(0 if failures == 0 else 1)


if __name__ == "__main__":
    main()
