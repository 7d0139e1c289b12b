#!/usr/bin/env python3
"""Liverpool bus fleet (route 14 outbound): regions at real stops + exact-mode expected events.

Install:  python3 -m pip install geographiclib shapely     (tested: Python 3.11, geographiclib 2.1,
          shapely 2.x). A developer tool, not run by CI.

Usage:    python3 tools/oracle/bus_fleet.py [--csv CSV] [--ndjson OUT.ndjson]

Reads ../shared/datasets/liverpool_bus_route14/route14_outbound.csv (relative to the repository
root; UK Bus Open Data Service AVL, Open Government Licence v3.0 -- NOT copied into the repository)
and writes, in Tests/GeotriggerCLITests/Fixtures/:

  bus-fleet.regions.geojson   circles at places where the buses actually stop, and one polygon
  bus-fleet.expected.ndjson   exact_events.py on the converted fixes (t, event, device, region)

The converted NDJSON itself is written only to a temporary file (or to --ndjson OUT, outside the
repository please): the fleet data must not be committed. BusFleetTests.swift converts the CSV the
same way, in Swift, and must produce byte-identical NDJSON:

CSV -> NDJSON conversion (the contract shared with BusFleetTests.swift)
  * Header: id,vehicle_id,trip_id,timestamp,latitude,longitude,bearing,origin,destination,
    route_name,direction,operator (quoted or not). One fix per data row.
  * device = vehicle_id (8 buses; a bus that runs two trips is one device).
  * timestamp "YYYY-MM-DD HH:MM:SS" is naive local UK time. Every row is in January, when UK local
    time is GMT = UTC, so t = the same wall-clock time as UTC: "YYYY-MM-DDTHH:MM:SSZ". The script
    checks with zoneinfo Europe/London that the UTC offset is 0 at every timestamp and stops
    otherwise (the rule would be wrong in British Summer Time).
  * lat/lon are copied verbatim from the CSV text (checked to match -?D+.D+), so no float
    formatting is involved: {"t":"2026-01-26T15:57:02Z","device":"4716","lat":53.44451,"lon":-2.925173}
  * The FeatureCollection's properties.converted records the converted text's fix count, byte
    count and FNV-1a 64 digest; the Swift test recomputes them from its own conversion.
  * Order: the CSV is ordered by vehicle_id, then trip, then time (each bus's rows are in time
    order, but the file as a whole is not). The rows are sorted by timestamp with a STABLE sort,
    so fixes with equal timestamps keep file order (= ascending vehicle_id). The result is one
    stream in time order, as the CLI expects on standard input.

Regions (deterministic, derived from the data)
  * A "stop" is a maximal run of consecutive fixes of one vehicle trip that stay within 10 m of
    the run's first fix for at least 20 s (the bus is stationary: a bus stop or a traffic light).
    Its position is the mean of the run's fixes.
  * Stops are clustered greedily in stream order (a stop joins the first cluster whose seed is
    within 50 m). Clusters are ranked by distinct vehicles, then stops, then first appearance;
    clusters are taken from the top if their centre is >= 120 m from every centre already taken,
    until 16 are taken. Centre = mean of the cluster's stops, rounded to 6 decimals.
  * Radii cycle through 30..150 m; a radius is moved in 0.5 m steps (down first) until no fix lies
    within 0.5 m of the boundary (the oracle's own limit is 1 cm).
  * One polygon, "terminus": a lon/lat quadrilateral around the first fixes of the trips that
    start at the terminus (Queen Square Bus Station), so --initial enter is exercised.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import re
import sys
import tempfile
from zoneinfo import ZoneInfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exact_events  # noqa: E402

from geographiclib.geodesic import Geodesic  # noqa: E402

WGS84 = Geodesic.WGS84
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_CSV = os.path.join(ROOT, "..", "shared", "datasets", "liverpool_bus_route14", "route14_outbound.csv")
FIXTURES = os.path.join(ROOT, "Tests", "GeotriggerCLITests", "Fixtures")
REGIONS_OUT = os.path.join(FIXTURES, "bus-fleet.regions.geojson")
EXPECTED_OUT = os.path.join(FIXTURES, "bus-fleet.expected.ndjson")

ATTRIBUTION = ("Contains public sector information licensed under the Open Government Licence v3.0 "
               "(UK Bus Open Data Service)")
TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$")
NUM_RE = re.compile(r"^-?\d+\.\d+$")

STOP_RADIUS_M = 10.0      # stationary: within this of the run's first fix
STOP_MIN_S = 20           # ... for at least this long
CLUSTER_M = 50.0          # a stop joins a cluster whose seed is this close
SEPARATION_M = 120.0      # chosen centres are at least this far apart
N_CIRCLES = 16
RADII = [30, 45, 60, 80, 100, 120, 150, 40, 70, 90, 110, 135, 50, 75, 95, 125]
MIN_MARGIN_M = 0.5


# ----------------------------------------------------------------------------- conversion
def read_rows(path):
    """CSV rows as dicts, in file order, validated."""
    london = ZoneInfo("Europe/London")
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        for n, r in enumerate(csv.DictReader(f), 2):
            m = TIME_RE.match(r["timestamp"])
            if not m:
                raise SystemExit(f"{path}:{n}: bad timestamp {r['timestamp']!r}")
            local = dt.datetime(*(int(g) for g in m.groups()), tzinfo=london)
            if local.utcoffset() != dt.timedelta(0):
                raise SystemExit(f"{path}:{n}: {r['timestamp']} is not GMT in Europe/London; "
                                 "the 'local time = UTC' rule does not hold")
            for k in ("latitude", "longitude"):
                if not NUM_RE.match(r[k]):
                    raise SystemExit(f"{path}:{n}: bad {k} {r[k]!r}")
            if not r["vehicle_id"]:
                raise SystemExit(f"{path}:{n}: empty vehicle_id")
            out.append(r)
    return out


def time_ordered(rows):
    """Stable sort by timestamp (fixed-width text, so text order = time order)."""
    return sorted(rows, key=lambda r: r["timestamp"])


def ndjson_line(r) -> str:
    t = r["timestamp"].replace(" ", "T") + "Z"
    return (f'{{"t":"{t}","device":{json.dumps(r["vehicle_id"])},'
            f'"lat":{r["latitude"]},"lon":{r["longitude"]}}}')


# ----------------------------------------------------------------------------- regions
def dist(lat1, lon1, lat2, lon2):
    return WGS84.Inverse(lat1, lon1, lat2, lon2)["s12"]


def seconds(ts: str) -> int:
    return int(dt.datetime.strptime(ts, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc).timestamp())


def find_stops(stream):
    """Stationary runs per (vehicle, trip), in the order their first fix appears in the stream."""
    by_trip = {}
    for i, r in enumerate(stream):
        by_trip.setdefault((r["vehicle_id"], r["trip_id"]), []).append((i, r))
    stops = []
    for (veh, _trip), fixes in by_trip.items():
        i = 0
        while i < len(fixes):
            _, a = fixes[i]
            la, lo = float(a["latitude"]), float(a["longitude"])
            j = i + 1
            while j < len(fixes) and dist(la, lo, float(fixes[j][1]["latitude"]), float(fixes[j][1]["longitude"])) <= STOP_RADIUS_M:
                j += 1
            run = fixes[i:j]
            if len(run) >= 2 and seconds(run[-1][1]["timestamp"]) - seconds(a["timestamp"]) >= STOP_MIN_S:
                lat = sum(float(r["latitude"]) for _, r in run) / len(run)
                lon = sum(float(r["longitude"]) for _, r in run) / len(run)
                stops.append((fixes[i][0], veh, lat, lon))
                i = j
            else:
                i += 1
    stops.sort()
    return stops


def cluster_stops(stops):
    clusters = []  # dict(seed=(lat, lon), members=[...], first=index)
    for idx, veh, lat, lon in stops:
        for c in clusters:
            if dist(c["seed"][0], c["seed"][1], lat, lon) <= CLUSTER_M:
                c["members"].append((veh, lat, lon))
                break
        else:
            clusters.append({"seed": (lat, lon), "members": [(veh, lat, lon)], "first": idx})
    for c in clusters:
        c["vehicles"] = len({m[0] for m in c["members"]})
        c["lat"] = round(sum(m[1] for m in c["members"]) / len(c["members"]), 6)
        c["lon"] = round(sum(m[2] for m in c["members"]) / len(c["members"]), 6)
    clusters.sort(key=lambda c: (-c["vehicles"], -len(c["members"]), c["first"]))
    return clusters


def margin(lat, lon, radius, fixes):
    return min(abs(dist(lat, lon, a, b) - radius) for a, b in fixes)


def safe_radius(lat, lon, radius, fixes):
    for k in range(0, 40):
        for r in ((radius - 0.5 * k, radius + 0.5 * k) if k else (radius,)):
            if 30 <= r <= 150 and margin(lat, lon, r, fixes) >= MIN_MARGIN_M:
                return r
    raise SystemExit(f"no safe radius near {radius} at {lat},{lon}")


def make_regions(stream):
    fixes = [(float(r["latitude"]), float(r["longitude"])) for r in stream]
    chosen = []
    for c in cluster_stops(find_stops(stream)):
        if c["vehicles"] < 2:
            break
        if all(dist(c["lat"], c["lon"], o["lat"], o["lon"]) >= SEPARATION_M for o in chosen):
            chosen.append(c)
        if len(chosen) == N_CIRCLES:
            break
    # name the stops in route order: by distance from the terminus (first fix of the stream's
    # terminus trips), so ids read along the route
    firsts = terminus_first_fixes(stream)
    t_lat = sum(a for a, _ in firsts) / len(firsts)
    t_lon = sum(b for _, b in firsts) / len(firsts)
    chosen.sort(key=lambda c: dist(t_lat, t_lon, c["lat"], c["lon"]))
    features = []
    for n, c in enumerate(chosen):
        r = safe_radius(c["lat"], c["lon"], float(RADII[n % len(RADII)]), fixes)
        features.append({
            "type": "Feature", "id": f"stop-{n + 1:02d}",
            "geometry": {"type": "Point", "coordinates": [c["lon"], c["lat"]]},
            "properties": {"radius": r if r != int(r) else int(r),
                           "stops_seen": len(c["members"]), "vehicles_stopping": c["vehicles"]},
        })
    features.append(terminus_polygon(firsts))
    return {
        "type": "FeatureCollection",
        "properties": {"source": "liverpool_bus_route14 (route 14 outbound, 2026-01-26), made by tools/oracle/bus_fleet.py",
                       "attribution": ATTRIBUTION},
        "features": features,
    }


def terminus_first_fixes(stream):
    first = {}
    for r in stream:
        first.setdefault((r["vehicle_id"], r["trip_id"]), (float(r["latitude"]), float(r["longitude"])))
    pts = sorted(first.values())
    med = pts[len(pts) // 2]
    return [p for p in pts if dist(med[0], med[1], p[0], p[1]) <= 400]


def terminus_polygon(firsts):
    s = min(a for a, _ in firsts) - 0.0006   # ~67 m margin in latitude
    n = max(a for a, _ in firsts) + 0.0006
    w = min(b for _, b in firsts) - 0.0010   # ~66 m in longitude at 53.4 N
    e = max(b for _, b in firsts) + 0.0010
    s, n, w, e = (round(v, 6) for v in (s, n, w, e))
    # a quadrilateral, not a box: the north-east corner is pulled in
    ring = [[w, s], [e, s], [round(e - 0.0004, 6), round(n - 0.0002, 6)], [w, n], [w, s]]
    return {"type": "Feature", "id": "terminus",
            "geometry": {"type": "Polygon", "coordinates": [ring]},
            "properties": {"note": "around the first fixes of the trips leaving Queen Square Bus Station"}}


def fnv1a64(data: bytes) -> str:
    """FNV-1a 64-bit, as 16 hex digits (cheap to recompute in the Swift test; not cryptographic)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def dump_regions(fc) -> str:
    """One feature per line, like the other fixture regions files."""
    compact = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    head = {k: v for k, v in fc.items() if k != "features"}
    return (compact(head)[:-1] + ',"features":[\n'
            + ",\n".join(compact(f) for f in fc["features"]) + "\n]}\n")


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--csv", default=DEFAULT_CSV)
    ap.add_argument("--ndjson", help="also keep the converted fixes here (do not commit them)")
    a = ap.parse_args()
    if not os.path.exists(a.csv):
        raise SystemExit(f"{a.csv}: not found (the bus fleet lives in ../shared/datasets/, outside the repo)")
    stream = time_ordered(read_rows(a.csv))
    text = "".join(ndjson_line(r) + "\n" for r in stream)

    regions = make_regions(stream)
    # lets BusFleetTests.swift check that its own conversion is byte-identical to this one
    regions["properties"]["converted"] = {"fixes": len(stream), "bytes": len(text.encode()),
                                          "fnv1a64": fnv1a64(text.encode())}
    with open(REGIONS_OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump_regions(regions))

    with tempfile.TemporaryDirectory() as tmp:
        nd = os.path.join(tmp, "bus-fleet.ndjson")
        with open(nd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        if a.ndjson:
            with open(a.ndjson, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        with open(EXPECTED_OUT, "w", encoding="utf-8", newline="\n") as out:
            rc = exact_events.compute(REGIONS_OUT, [nd], out, sys.stderr)
    print(f"bus_fleet: {len(stream)} fixes, {len(regions['features'])} regions", file=sys.stderr)
    if rc:
        print("ERROR: a fix lies within 1 cm of a region boundary", file=sys.stderr)
    sys.exit(rc)


if __name__ == "__main__":
    main()
