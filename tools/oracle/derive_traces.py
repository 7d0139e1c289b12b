#!/usr/bin/env python3
"""Derives antimeridian and polar test traces (and their regions) from REAL GPX tracks.

Install:  python3 -m pip install geographiclib     (tested with geographiclib 2.1, Python 3.11).
          Developer tool, not run by CI.

Usage:    python3 tools/oracle/derive_traces.py [REPO_ROOT]
Writes into Tests/GeotriggerCLITests/Fixtures/:
  cerknicko-jezero.ndjson        datasets/gpxpy_tracks/cerknicko-jezero.gpx as NDJSON, unchanged
                                 (device "cerknicko-jezero"), for the stdin test
  antimeridian.ndjson            devices visnjan-am, cerknica-am
  antimeridian.regions.geojson
  polar-north.ndjson             devices cerknica-np, visnjan-np
  polar-north.regions.geojson
  polar-south.ndjson             devices cerknica-sp, visnjan-sp
  polar-south.regions.geojson

The fixes keep the real tracks' timing, sampling, gaps and GPS jitter; only the place changes.
  (a) antimeridian: every longitude is shifted by a constant so that the track's median
      longitude lands on 180 deg (plus a few micro-degrees), then wrapped into [-180, 180).
      Geodesic distances are invariant under a longitude shift, so the shifted copies of the
      real-place circles (same radius) must give the same decisions as the originals: the script
      asserts that for every fix.
  (b) polar: each fix is expressed as (azimuth, distance) from the track's first fix with
      GeographicLib Inverse; the azimuths are rotated by a constant so that the fix farthest from
      the start (or, for one trace per pole, the fix about START_KM from the start) points at the
      pole; the fixes are then placed with Direct from a start point about START_KM from the pole
      (0.6-4 km here), so one trace per pole passes 25 m from the pole and the other within 2 km. Distances and azimuths from the start are kept exactly, the rest of
      the shape nearly (the tracks span a few km).
Coordinates are written with 10 decimals (about 0.01 mm); t is Unix seconds as in the GPX
(whole seconds there). Radii of the synthetic circles are picked by `pick_radius`: the round value
(from a fixed list) with the most boundary crossings whose closest fix is >= 0.5 m from the
boundary; the oracle re-checks the 1 cm rule.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import read_gpx  # noqa: E402

from geographiclib.geodesic import Geodesic  # noqa: E402

G = Geodesic.WGS84
ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))
TRACKS = os.path.join(ROOT, "datasets", "gpxpy_tracks")
REGIONS = os.path.join(ROOT, "datasets", "regions", "slovenia-croatia.geojson")
OUT = os.path.join(ROOT, "Tests", "GeotriggerCLITests", "Fixtures")
GENERATOR = "tools/oracle/derive_traces.py"


def wrap(lon: float) -> float:
    x = (lon + 180.0) % 360.0 - 180.0
    return x


def t_json(t: Decimal) -> str:
    return str(int(t)) if t == t.to_integral_value() else format(t.normalize(), "f")


def fix_line(t: Decimal, device: str, lat: float, lon: float) -> str:
    return f'{{"t":{t_json(t)},"device":{json.dumps(device)},"lat":{round(lat, 10)!r},"lon":{round(lon, 10)!r}}}'


def write_ndjson(path, rows):
    """rows: (t, device, lat, lon); written merged by time, stable in the given order."""
    rows = sorted(rows, key=lambda r: r[0])
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for t, dev, lat, lon in rows:
            f.write(fix_line(t, dev, lat, lon) + "\n")
    # read back what the oracle will see (rounded coordinates)
    return [(t, dev, round(lat, 10), round(lon, 10)) for t, dev, lat, lon in rows]


def write_regions(path, feats):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        f.write(",\n".join(json.dumps(ft, ensure_ascii=False, separators=(",", ":")) for ft in feats))
        f.write("\n]}\n")


def circle(rid, lon, lat, radius, name, **props):
    return {"type": "Feature", "id": rid,
            "geometry": {"type": "Point", "coordinates": [round(lon, 10), round(lat, 10)]},
            "properties": {"name": name, "radius": radius, **props}}


RADII = [50, 75, 100, 150, 200, 250, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1500, 1800,
         2000, 2500, 3000, 3500, 4000, 5000, 6000, 7000, 8000]


def pick_radius(lat, lon, fixes, exclude=()):
    """Round radius with the most crossings for this device's fixes; closest fix >= 0.5 m away."""
    ds = [G.Inverse(lat, lon, f[2], f[3])["s12"] for f in fixes]
    best = None
    for r in RADII:
        if r in exclude or min(abs(d - r) for d in ds) < 0.5:
            continue
        ins = [d <= r for d in ds]
        crossings = sum(a != b for a, b in zip(ins, ins[1:]))
        if best is None or crossings > best[1]:
            best = (r, crossings)
    if best is None or best[1] == 0:
        raise SystemExit(f"no useful radius for a circle at {lat},{lon}")
    return best[0]


def load_track(name):
    return list(read_gpx(os.path.join(TRACKS, name + ".gpx")))


def real_regions():
    with open(REGIONS, encoding="utf-8") as f:
        return {ft["id"]: ft for ft in json.load(f)["features"]}


# --------------------------------------------------------------------------- antimeridian
def antimeridian(real):
    specs = [("around-visnjan-with-car", "visnjan-am",
              ["visnjan-drive-start", "visnjan", "kastelir", "nova-vas-porec", "vizinada"]),
             ("cerknicko-jezero", "cerknica-am",
              ["cerknica-wp-001", "cerknica", "rakek", "vanishing-lake", "begunje-pri-cerknici", "faggio"])]
    rows, feats, info = [], [], {}
    for track, dev, region_ids in specs:
        fx = load_track(track)
        shift = 180.0 - statistics.median(f.lon for f in fx) + 3.7e-6
        info[dev] = shift
        mine = [(f.t, dev, f.lat, wrap(f.lon + shift)) for f in fx]
        assert all(abs(r[3]) != 180.0 for r in mine)
        rows += mine
        for rid in region_ids:
            ft = real[rid]
            lon, lat = ft["geometry"]["coordinates"]
            feats.append(circle(f"{rid}-am", wrap(lon + shift), lat, ft["properties"]["radius"],
                                f"{ft['properties']['name']} (shifted to the antimeridian)",
                                derivedFrom=f"datasets/regions/slovenia-croatia.geojson#{rid}",
                                lonShift=shift))
    written = write_ndjson(os.path.join(OUT, "antimeridian.ndjson"), rows)
    by_dev = {d: [r for r in written if r[1] == d] for d in info}
    # circles on the seam itself, chosen per device
    v, c = by_dev["visnjan-am"], by_dev["cerknica-am"]
    vlat = statistics.median(r[2] for r in v)
    clat = statistics.median(r[2] for r in c)
    feats.append(circle("seam-visnjan-180", 180.0, vlat, pick_radius(vlat, 180.0, v),
                        "On the antimeridian (lon = 180) across the Višnjan drive"))
    feats.append(circle("seam-visnjan-minus180", -180.0, vlat, pick_radius(vlat, -180.0, v, exclude=(
        feats[-1]["properties"]["radius"],)), "Same centre written as lon = -180, other radius"))
    lat_w, lon_w = clat + 0.004, -179.985
    feats.append(circle("west-of-seam-cerknica", lon_w, lat_w, pick_radius(lat_w, lon_w, c),
                        "West of the antimeridian, reaching across it (Cerknica copy)"))
    lat_e, lon_e = clat - 0.006, 179.99
    feats.append(circle("east-of-seam-cerknica", lon_e, lat_e, pick_radius(lat_e, lon_e, c),
                        "East of the antimeridian, reaching across it (Cerknica copy)"))
    # a MultiPolygon cut at the antimeridian (RFC 7946 §3.1.9): a band 0.004 deg each side of it
    lo_lat, hi_lat = round(min(r[2] for r in v) + 0.002, 6), round(max(r[2] for r in v) - 0.001, 6)
    feats.append({"type": "Feature", "id": "seam-band-multipolygon",
                  "geometry": {"type": "MultiPolygon", "coordinates": [
                      [[[179.996, lo_lat], [180.0, lo_lat], [180.0, hi_lat], [179.996, hi_lat], [179.996, lo_lat]]],
                      [[[-180.0, lo_lat], [-179.996, lo_lat], [-179.996, hi_lat], [-180.0, hi_lat], [-180.0, lo_lat]]]]},
                  "properties": {"name": "Band across the antimeridian, cut into two parts at +-180 (RFC 7946 3.1.9)"}})
    write_regions(os.path.join(OUT, "antimeridian.regions.geojson"), feats)
    # invariance check: shifted circles decide as the originals did
    for track, dev, region_ids in specs:
        orig = load_track(track)
        mine = by_dev[dev]
        for rid in region_ids:
            ft = real[rid]
            lon, lat = ft["geometry"]["coordinates"]
            r = ft["properties"]["radius"]
            am = next(x for x in feats if x["id"] == f"{rid}-am")
            alon, alat = am["geometry"]["coordinates"]
            for o, m in zip(orig, mine):
                d0 = G.Inverse(lat, lon, o.lat, o.lon)["s12"]
                d1 = G.Inverse(alat, alon, m[2], m[3])["s12"]
                assert abs(d0 - d1) < 1e-3 and (d0 <= r) == (d1 <= r), (rid, d0, d1)
    print(f"antimeridian: {len(written)} fixes, shifts {info}; shifted circles decide as the originals",
          file=sys.stderr)


# --------------------------------------------------------------------------- polar
def transplant(fx, dev, north, start_km, start_lon, over_pole):
    """over_pole=False: aim the fix farthest from the start at the pole, start START_KM away.
    over_pole=True: aim the fix whose distance from the start is nearest START_KM at the pole and
    start that fix's distance + MISS_M from the pole, so the trace passes MISS_M from the pole."""
    first = fx[0]
    polar = [G.Inverse(first.lat, first.lon, f.lat, f.lon) for f in fx]
    if over_pole:
        aim = min(polar, key=lambda g: abs(g["s12"] - start_km * 1000.0))
        start_km = (aim["s12"] + MISS_M) / 1000.0
    else:
        aim = max(polar, key=lambda g: g["s12"])
    toward_pole = 0.0 if north else 180.0
    rot = toward_pole - aim["azi1"]
    pole_lat = 90.0 if north else -90.0
    s = G.Direct(pole_lat, start_lon, 180.0 if north else 0.0, start_km * 1000.0)
    slat, slon = s["lat2"], s["lon2"]
    out = []
    for f, g in zip(fx, polar):
        if g["s12"] == 0:
            out.append((f.t, dev, slat, slon))
        else:
            d = G.Direct(slat, slon, g["azi1"] + rot, g["s12"])
            out.append((f.t, dev, d["lat2"], d["lon2"]))
    return out, (slat, slon, rot, first)


MISS_M = 25.0


def map_point(meta, lat, lon):
    """Place a real point with the same (azimuth, distance) mapping as its track."""
    slat, slon, rot, first = meta
    g = G.Inverse(first.lat, first.lon, lat, lon)
    d = G.Direct(slat, slon, g["azi1"] + rot, g["s12"])
    return d["lat2"], d["lon2"]


def polar(real, north):
    tag, sign = ("np", 1) if north else ("sp", -1)
    pole = 90.0 * sign
    # (track, device, start km from the pole, start longitude, aim a fix at the pole?, circles to carry)
    specs = [("cerknicko-jezero", f"cerknica-{tag}", 3.0 if north else 4.0, 170.0 if north else -100.0, north,
              ["cerknica-wp-001", "vanishing-lake", "cerknica"]),
             ("around-visnjan-with-car", f"visnjan-{tag}", 2.0 if north else 0.6, -60.0 if north else 45.0, not north,
              ["visnjan-drive-start", "visnjan"])]
    rows, feats, metas = [], [], {}
    for track, dev, start_km, start_lon, over_pole, rids in specs:
        fx = load_track(track)
        mine, meta = transplant(fx, dev, north, start_km, start_lon, over_pole)
        metas[dev] = (meta, rids)
        rows += mine
    written = write_ndjson(os.path.join(OUT, f"polar-{'north' if north else 'south'}.ndjson"), rows)
    by_dev = {d: [r for r in written if r[1] == d] for d in metas}
    for dev, (meta, rids) in metas.items():
        for rid in rids:
            ft = real[rid]
            lon, lat = ft["geometry"]["coordinates"]
            plat, plon = map_point(meta, lat, lon)
            feats.append(circle(f"{rid}-{tag}", plon, plat, ft["properties"]["radius"],
                                f"{ft['properties']['name']} (transplanted with the {dev} trace)",
                                derivedFrom=f"datasets/regions/slovenia-croatia.geojson#{rid}"))
    c, v = by_dev[f"cerknica-{tag}"], by_dev[f"visnjan-{tag}"]
    allfx = c + v
    feats.append(circle(f"pole-{tag}", 0.0, pole, pick_radius(pole, 0.0, allfx),
                        "Centred on the pole (lon 0)"))
    feats.append(circle(f"pole-{tag}-lon180", 180.0, pole,
                        pick_radius(pole, 180.0, allfx, exclude=(feats[-1]["properties"]["radius"],)),
                        "Centred on the pole, written with lon 180, other radius"))
    # a circle 800 m from the pole whose disk contains the pole
    lat8 = G.Direct(pole, 120.0, 180.0 if north else 0.0, 800.0)["lat2"]
    feats.append(circle(f"around-pole-{tag}", 120.0, lat8, 2000, "Centre 800 m from the pole, disk contains it"))
    lat4 = G.Direct(pole, 180.0, 180.0 if north else 0.0, 4000.0)["lat2"]
    feats.append(circle(f"near-pole-180-{tag}", 180.0, lat4, pick_radius(lat4, 180.0, allfx),
                        "4 km from the pole on the antimeridian"))
    lat3 = G.Direct(pole, -90.0, 180.0 if north else 0.0, 3000.0)["lat2"]
    feats.append(circle(f"near-pole-w90-{tag}", -90.0, lat3, pick_radius(lat3, -90.0, allfx),
                        "3 km from the pole on meridian -90"))
    cap = 89.99 * sign
    ring = [[-180.0, cap], [180.0, cap], [180.0, pole], [-180.0, pole], [-180.0, cap]]
    if not north:
        ring = [[-180.0, pole], [180.0, pole], [180.0, cap], [-180.0, cap], [-180.0, pole]]
    feats.append({"type": "Feature", "id": f"polar-cap-{tag}",
                  "geometry": {"type": "Polygon", "coordinates": [ring]},
                  "properties": {"name": "Every point within 0.01 deg of latitude of the pole (a lon/lat box)"}})
    write_regions(os.path.join(OUT, f"polar-{'north' if north else 'south'}.regions.geojson"), feats)
    for dev, fxs in by_dev.items():
        dmin = min(G.Inverse(pole, 0.0, r[2], r[3])["s12"] for r in fxs)
        print(f"polar {tag}: {dev}: {len(fxs)} fixes, closest to the pole {dmin:.0f} m", file=sys.stderr)


def convert_plain():
    fx = load_track("cerknicko-jezero")
    write_ndjson(os.path.join(OUT, "cerknicko-jezero.ndjson"), [(f.t, f.device, f.lat, f.lon) for f in fx])


def main():
    os.makedirs(OUT, exist_ok=True)
    real = real_regions()
    convert_plain()
    antimeridian(real)
    polar(real, north=True)
    polar(real, north=False)


if __name__ == "__main__":
    main()
