#!/usr/bin/env bash
# Makes this folder's GeoJSON files with the tools users write regions with (issue 39): the same
# twelve circles (Vienna, with the properties a QGIS or geopandas user's layer has) as GDAL
# (ogr2ogr, which QGIS's "Save Features As… GeoJSON" also goes through), geopandas and Python's
# json module write them. Not run by the tests: the files are committed, made once with
# gdal-bin 3.6 (Debian 12) and geopandas 1.2 (PyPI). To make them again:
#
#   apt-get install gdal-bin && pip install geopandas && Tests/GeotriggerFormatsTests/Fixtures/layouts/make.sh
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/source.geojson" <<'PY'
import json, sys
names = ["Stephansdom", "Prater", "Schönbrunn", "Naschmarkt", "Karlsplatz", "Belvedere",
         "Donauinsel", "Zentralfriedhof", "Hofburg", "Museumsquartier", "Kahlenberg", "Alte Donau"]
features = []
for k, name in enumerate(names):
    props = {"id": f"v{k}", "radius": 75 + 37.5 * k, "name": name,
             "category": ["park", "square", "church"][k % 3], "capacity": 100 * k,
             "notifyOnExit": k % 4 != 1, "note": None if k % 2 else f"visit {k} — ünïcode"}
    features.append({"type": "Feature",
                     "geometry": {"type": "Point", "coordinates": [16.30 + 0.013 * k, 48.17 + 0.007 * k]},
                     "properties": props})
json.dump({"type": "FeatureCollection", "features": features}, open(sys.argv[1], "w"), ensure_ascii=False)
PY
ogr2ogr -f GeoJSON gdal.geojson "$work/source.geojson"
ogr2ogr -f GeoJSON -lco RFC7946=YES -lco WRITE_BBOX=YES gdal-rfc7946-bbox.geojson "$work/source.geojson"
python3 - "$work/source.geojson" <<'PY'
import json, sys
import geopandas
frame = geopandas.read_file(sys.argv[1])
open("geopandas-to-json.geojson", "w").write(frame.to_json())
frame.to_file("geopandas-to-file.geojson", driver="GeoJSON")
collection = json.load(open(sys.argv[1]))
json.dump(collection, open("python-json-dump.geojson", "w"))
json.dump(collection, open("python-json-dump-indent-sorted.geojson", "w"), indent=2, sort_keys=True)
PY
