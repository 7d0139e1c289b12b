#!/usr/bin/env python3
"""Ground-truth `near` intervals per sensor for one BLE walk.

Usage:  python3 tools/ble/truth.py WALK [--radius 3.0] [--json]

Definition (used by score.py and prototype.py):
  * The walk's samples are ALL its rows (every sensor's sightings), in time order: t_0 <= ... <= t_K.
    Each row carries the tag's annotated position p_k (AR-based, ~4 cm median error).
  * For sensor s, the truth at sample k is  inside_k(s) = |p_k - s|_3D < radius  (3-D Euclidean
    distance between the tag and the sensor, radius 3 m = SPEC's `near`).
  * The state holds from t_k until the next sample t_{k+1} (of any sensor): a zero-order hold on
    a ~20 Hz timeline (12 sensors x ~2 Hz), so the boundary is placed to within ~0.05 s.
  * The truth covers the walk's window [t_0, t_K]; true intervals are the maximal runs of inside
    samples, i.e. [t_first_inside, t_first_outside_after). An interval still open at t_K ends at t_K.
  * True enters = number of intervals (an interval starting at t_0 counts, as with --initial enter).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def true_intervals(rows: list[common.Row], sensors, radius: float = common.NEAR_RADIUS
                   ) -> dict[str, common.Intervals]:
    """Per sensor name, the true inside intervals (half-open, within [t_0, t_K])."""
    out: dict[str, common.Intervals] = {}
    ts = [r.t for r in rows]
    for s in sensors.values():
        iv: common.Intervals = []
        start = None
        for k, r in enumerate(rows):
            inside = math.dist(r.pos, s.pos) < radius
            if inside and start is None:
                start = ts[k]
            elif not inside and start is not None:
                iv.append((start, ts[k]))
                start = None
        if start is not None:
            iv.append((start, ts[-1]))
        out[s.name] = common.normalize(iv)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("walk")
    ap.add_argument("--radius", type=float, default=common.NEAR_RADIUS)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    walk = common.resolve_walk(a.walk)
    sensors = common.load_sensors()
    rows = common.load_walk(walk, sensors)
    tv = true_intervals(rows, sensors, a.radius)
    if a.json:
        print(json.dumps({"walk": common.walk_name(walk), "start": rows[0].t, "end": rows[-1].t,
                          "intervals": tv}, indent=1))
        return 0
    t0 = rows[0].t
    print(f"{common.walk_name(walk)}: {rows[-1].t - t0:.1f} s, {len(rows)} sightings; "
          f"times relative to {common.rfc3339(t0)}")
    for name in sorted(tv, key=lambda n: int(n.removeprefix('sensor'))):
        spans = ", ".join(f"{a - t0:.2f}-{b - t0:.2f}" for a, b in tv[name]) or "-"
        print(f"  {name:9s} {len(tv[name])} enter(s) {common.total(tv[name]):6.2f} s  {spans}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
