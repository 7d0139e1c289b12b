#!/usr/bin/env python3
"""Independent oracle: exact-mode Geotrigger events (SPEC §2 "Exact mode", §4).

Install:  python3 -m pip install geographiclib shapely     (Python >= 3.9; tested 3.11,
          geographiclib 2.1, shapely 2.0). A developer tool, not run by CI.

Usage:    python3 tools/oracle/exact_events.py REGIONS.geojson READINGS... [-o OUT.ndjson] [--stats]

Computes what `geotrigger replay --regions REGIONS --hysteresis 0 --max-accuracy 0
--initial enter READINGS...` (no --dwell) must print, restricted to the fields
t, event, device, region. Written without looking at the Swift code.

Readings
  * GPX: every <trkpt> with a <time> is a fix; device = file name without extension. A <trkpt>
    without <time> is not a fix (counted as trkpt_without_time).
  * NDJSON/JSONL: records with "lat" and "lon" are fixes (t = Unix seconds or RFC 3339);
    other records (beacon sightings, control records) are ignored here.
  * Several files are merged by time with a streaming k-way merge; equal times keep file order.
  * A fix whose time is older (strictly) than the same device's previous accepted fix is rejected
    (skipped, counted). Equal times are accepted. Mojstrovka.gpx: every fix is stamped
    1901-12-13T20:45:52.2073437Z (= -2^31 s + 0.2073437 s, a 32-bit overflow) except trkpt #2,
    stamped ...52.207Z, which is older than #1 and so is rejected; the rest are accepted.

Regions (GeoJSON FeatureCollection; id = feature id or properties.id; or CSV id,lat,lon,radius)
  * circle: Point + properties.radius (m). distance = GeographicLib Geodesic.WGS84.Inverse s12;
    inside iff distance <= radius.
  * Polygon / MultiPolygon: inside iff the point is covered (boundary counts) in lon/lat.
    Pure-Python exact (rational) point-in-polygon, cross-checked with shapely `covers`;
    the script stops with an error if they ever disagree.
  * Beacon-only regions (geometry null) are ignored.

State machine per (device, region): unknown -> first fix inside: enter; first fix outside: no
event. outside -> inside: enter. inside -> outside (distance > r): exit.

Event order rule: events are written fix by fix in input (merged) order; the events of one fix
are written in region-file order (first feature first), enters and exits mixed as they come.
Every event's t is its fix's time, RFC 3339 UTC, rounded to the nearest millisecond.

Safety check: if any fix lies within 1 cm of a circle boundary (|s12 - r| < 0.01 m), or within
1e-9 degrees of a polygon boundary without lying on it, a warning names it and the script exits
with status 3 (after writing the events) so that the fixture author adjusts the region.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import dump_event_line, merged  # noqa: E402

from geographiclib.geodesic import Geodesic  # noqa: E402
import shapely  # noqa: E402
from shapely.geometry import Point, shape  # noqa: E402

WGS84 = Geodesic.WGS84
BOUNDARY_TOLERANCE_M = 0.01
POLYGON_TOLERANCE_DEG = 1e-9


# ----------------------------------------------------------------------------- polygons
def _on_segment(px, py, ax, ay, bx, by) -> bool:
    """Exact: is P on the closed segment AB? (Fractions of the float coordinates)."""
    if min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by):
        return (bx - ax) * (py - ay) - (by - ay) * (px - ax) == 0
    return False


def ring_locate(px, py, ring) -> int:
    """1 inside, 0 on boundary, -1 outside. ring = list of (Fraction x, Fraction y), closed."""
    inside = False
    n = len(ring)
    for i in range(n - 1):
        ax, ay = ring[i]
        bx, by = ring[i + 1]
        if _on_segment(px, py, ax, ay, bx, by):
            return 0
        # half-open crossing rule on y; exact comparison of the crossing x with px
        if (ay > py) != (by > py):
            # x of the crossing = ax + (py - ay) * (bx - ax) / (by - ay)
            xc = ax + (py - ay) * (bx - ax) / (by - ay)
            if px < xc:
                inside = not inside
    return 1 if inside else -1


def polygon_covers(rings, px, py) -> bool:
    shell = ring_locate(px, py, rings[0])
    if shell == 0:
        return True
    if shell < 0:
        return False
    for hole in rings[1:]:
        h = ring_locate(px, py, hole)
        if h == 0:
            return True      # the hole's boundary belongs to the polygon
        if h > 0:
            return False
    return True


def to_fraction_rings(coords):
    return [[(Fraction(x), Fraction(y)) for x, y, *_ in ring] for ring in coords]


# ----------------------------------------------------------------------------- regions
class Region:
    def __init__(self, rid, kind, **kw):
        self.id = rid
        self.kind = kind
        self.__dict__.update(kw)


def load_regions(path):
    if path.lower().endswith(".csv"):  # circles only: header id,lat,lon,radius
        import csv
        with open(path, encoding="utf-8", newline="") as f:
            return [Region(r["id"], "circle", lat=float(r["lat"]), lon=float(r["lon"]), radius=float(r["radius"]))
                    for r in csv.DictReader(f)]
    with open(path, encoding="utf-8") as f:
        fc = json.load(f)
    if fc.get("type") != "FeatureCollection":
        raise SystemExit(f"{path}: not a FeatureCollection")
    regions, seen = [], set()
    for i, feat in enumerate(fc["features"]):
        props = feat.get("properties") or {}
        rid = feat.get("id", props.get("id"))
        if not isinstance(rid, str) or not rid:
            raise SystemExit(f"{path}: feature {i}: missing string id")
        if rid in seen:
            raise SystemExit(f"{path}: feature {i}: duplicate id {rid}")
        seen.add(rid)
        geom = feat.get("geometry")
        if geom is None:
            continue  # beacon region without position: not a geometry
        gt = geom["type"]
        if gt == "Point":
            r = props.get("radius")
            if not isinstance(r, (int, float)) or r <= 0:
                raise SystemExit(f"{path}: feature {rid}: Point needs properties.radius > 0")
            lon, lat = geom["coordinates"][:2]
            regions.append(Region(rid, "circle", lat=float(lat), lon=float(lon), radius=float(r)))
        elif gt in ("Polygon", "MultiPolygon"):
            parts = [geom["coordinates"]] if gt == "Polygon" else geom["coordinates"]
            regions.append(Region(rid, "polygon", parts=[to_fraction_rings(p) for p in parts],
                                  shp=shape(geom)))
            shapely.prepare(regions[-1].shp)
        else:
            raise SystemExit(f"{path}: feature {rid}: unsupported geometry {gt}")
    return regions


# ----------------------------------------------------------------------------- main
def compute(regions_path, reading_paths, out, stats_out=None):
    regions = load_regions(regions_path)
    stats = {"fixes_read": 0, "rejected_older_than_previous": 0, "events": {"enter": 0, "exit": 0}}
    last_t = {}            # device -> last accepted time
    state = {}             # (device, region index) -> True inside / False outside
    warnings = []
    min_margin = {}        # region id -> smallest |s12 - r| seen (circle) for the report
    lines = []
    for fx in merged(reading_paths, stats):
        stats["fixes_read"] += 1
        prev = last_t.get(fx.device)
        if prev is not None and fx.t < prev:
            stats["rejected_older_than_previous"] += 1
            stats.setdefault("rejected_examples", []).append(f"{fx.source} t={fx.t_text}")
            continue
        last_t[fx.device] = fx.t
        px, py = Fraction(fx.lon), Fraction(fx.lat)
        pt = None
        for ri, reg in enumerate(regions):
            if reg.kind == "circle":
                s12 = WGS84.Inverse(reg.lat, reg.lon, fx.lat, fx.lon)["s12"]
                margin = abs(s12 - reg.radius)
                if margin < min_margin.get(reg.id, float("inf")):
                    min_margin[reg.id] = margin
                if margin < BOUNDARY_TOLERANCE_M:
                    warnings.append(f"{fx.source}: fix {fx.lat},{fx.lon} is {s12 - reg.radius:+.4f} m "
                                    f"from the boundary of circle {reg.id} (r={reg.radius})")
                inside = s12 <= reg.radius
            else:
                inside = any(polygon_covers(rings, px, py) for rings in reg.parts)
                if pt is None:
                    pt = Point(fx.lon, fx.lat)
                ref = bool(reg.shp.covers(pt))
                if ref != inside:
                    raise SystemExit(f"INTERNAL: point-in-polygon disagrees with shapely covers for "
                                     f"{reg.id} at {fx.source} ({fx.lon},{fx.lat}): ours={inside} shapely={ref}")
                d = reg.shp.boundary.distance(pt)
                if 0 < d < POLYGON_TOLERANCE_DEG:
                    warnings.append(f"{fx.source}: fix {fx.lat},{fx.lon} is {d:.3g} deg from the boundary "
                                    f"of polygon {reg.id}")
            key = (fx.device, ri)
            was = state.get(key)
            ev = None
            if inside and was is not True:
                ev = "enter"
            elif not inside and was is True:
                ev = "exit"
            state[key] = inside
            if ev:
                stats["events"][ev] += 1
                lines.append(dump_event_line(fx.t, ev, fx.device, reg.id))
    out.write("".join(l + "\n" for l in lines))
    stats["devices"] = sorted(last_t)
    stats["min_circle_margin_m"] = min(min_margin.values()) if min_margin else None
    stats["regions_entered"] = sorted({json.loads(l)["region"] for l in lines})
    for w in warnings[:50]:
        print("WARNING:", w, file=sys.stderr)
    if stats_out is not None:
        ex = stats.pop("rejected_examples", None)
        if ex:
            stats["rejected_first"] = ex[:3]
        print(json.dumps(stats, ensure_ascii=False), file=stats_out)
    return 3 if warnings else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("regions")
    ap.add_argument("readings", nargs="+")
    ap.add_argument("-o", "--output", help="write events here (default stdout)")
    ap.add_argument("--stats", action="store_true", help="print a JSON summary on stderr")
    a = ap.parse_args()
    out = open(a.output, "w", encoding="utf-8", newline="\n") if a.output else sys.stdout
    rc = compute(a.regions, a.readings, out, sys.stderr if a.stats else None)
    if a.output:
        out.close()
    if rc:
        print("ERROR: fixes within 1 cm of a circle boundary (or 1e-9 deg of a polygon edge): "
              "adjust the region(s) above", file=sys.stderr)
    sys.exit(rc)


if __name__ == "__main__":
    main()
