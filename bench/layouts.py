#!/usr/bin/env python3
"""The scenario's circles (`id,lat,lon,radius` CSV) as GeoJSON in the layouts users' tools write
(issue 39), for `geotrigger-bench startup`:

    bench/layouts.py regions.csv OUTDIR

writes OUTDIR/LAYOUT.geojson and prints each LAYOUT written, one a line:
  compact         one feature a line, no spaces (the project's own generator)
  python          json.dump with its default separators (", ", ": ")
  python-indent   json.dump(indent=2)
  gdal            ogr2ogr -f GeoJSON (QGIS's export goes through the same driver), when installed
  geopandas       GeoDataFrame.to_json(), when geopandas is installed (its row number as the id)
"""
import csv
import json
import os
import shutil
import subprocess
import sys


def main():
    source, out = sys.argv[1], sys.argv[2]
    features = []
    with open(source, newline="") as f:
        for row in csv.DictReader(f):
            features.append({"type": "Feature", "id": row["id"],
                             "geometry": {"type": "Point", "coordinates": [float(row["lon"]), float(row["lat"])]},
                             "properties": {"radius": float(row["radius"])}})
    collection = {"type": "FeatureCollection", "features": features}
    compact = os.path.join(out, "compact.geojson")
    with open(compact, "w") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        f.write(",\n".join(json.dumps(x, separators=(",", ":")) for x in features))
        f.write("\n]}\n")
    print("compact")
    with open(os.path.join(out, "python.geojson"), "w") as f:
        json.dump(collection, f)
    print("python")
    with open(os.path.join(out, "python-indent.geojson"), "w") as f:
        json.dump(collection, f, indent=2)
    print("python-indent")
    if shutil.which("ogr2ogr"):
        target = os.path.join(out, "gdal.geojson")
        if os.path.exists(target):
            os.remove(target)
        subprocess.run(["ogr2ogr", "-f", "GeoJSON", target, compact], check=True)
        print("gdal")
    try:
        import geopandas
    except ImportError:
        return
    frame = geopandas.read_file(compact)
    with open(os.path.join(out, "geopandas.geojson"), "w") as f:
        f.write(frame.to_json())
    print("geopandas")


if __name__ == "__main__":
    main()
