#!/usr/bin/env python3
"""Convert one BLE walk into geotrigger inputs: regions.geojson + sightings.ndjson.

Usage:  python3 tools/ble/convert.py WALK [--out DIR] [--positions] [--origin LAT,LON]
                                          [--measured-power DBM] [--path-loss-exponent N]
                                          [--calibration FILE.json]

WALK is a .mbd path or a walk name (straight_01, straight_02, rectangular_without_rotation)
looked up in ../shared/datasets/ble_position_annotated_cc0/trk/. DIR defaults to a new
temporary directory (printed); do not write it inside the repository -- the sightings are the
dataset's data, which is not committed (licence rule).

Framing: each of the 12 fixed receivers ("sensors") is modelled as an iBeacon (UUID below,
major 1, minor = sensor number) and the walking transmitter ("tag") as the device "tag" hearing
them. The radio path is reciprocal, so the RSSI is kept as measured.

regions.geojson  one beacon region per sensor, id "sensor10", proximity "near" (3 m):
    {"type":"Feature","id":"sensor10","geometry":null,
     "properties":{"beacon":{"uuid":"E2C56DB5-…","major":1,"minor":10},"proximity":"near"}}
  --positions   geometry = Point [lon, lat] of the sensor: the dataset's x (east) and y (north)
                metres placed on a local tangent plane at --origin (default 45.0,14.0) with the
                WGS84 meridian and prime-vertical radii of curvature at the origin latitude:
                    lat = lat0 + y / M(lat0),   lon = lon0 + x / (N(lat0) cos lat0)   (radians)
                Over the 21 x 18 m room the neglected terms are < 0.1 mm (checked against
                GeographicLib in the README). Coordinates are written with 9 decimals (~0.1 mm).
                z (mounting height, 1.22 m or 2.30 m) is not put into the geometry: geotrigger's
                circles are horizontal; it is kept as properties.height for reference.
  --measured-power / --path-loss-exponent   add properties.measuredPower / pathLossExponent to
                every region (SPEC §3); without them the engine uses -59 dBm and n = 2.0.
  --calibration FILE.json   per-sensor measuredPower (calibrate.py's output, or a flat
                {"sensor10": -57.5, ...} mapping); a sensor missing from it gets --measured-power
                (or nothing). A "pathLossExponent" in the file applies to every region unless
                --path-loss-exponent is given.

sightings.ndjson  one line per dataset row, in time order (stable sort; two walks have one pair
  of rows out of order by microseconds):
    {"t":1581249601.4086823,"device":"tag","uuid":"E2C56DB5-…","major":1,"minor":10,"rssi":-87}
  t is copied verbatim from the file (Unix seconds with its fraction).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
WGS84_E2 = WGS84_F * (2 - WGS84_F)


def local_to_lonlat(x: float, y: float, lat0: float, lon0: float) -> tuple[float, float]:
    """East/north metres around (lat0, lon0) -> (lon, lat) degrees on a local tangent plane."""
    phi = math.radians(lat0)
    w = 1 - WGS84_E2 * math.sin(phi) ** 2
    n_radius = WGS84_A / math.sqrt(w)                       # prime vertical
    m_radius = WGS84_A * (1 - WGS84_E2) / w ** 1.5          # meridian
    lat = lat0 + math.degrees(y / m_radius)
    lon = lon0 + math.degrees(x / (n_radius * math.cos(phi)))
    return lon, lat


def build_regions(sensors, positions: bool, origin, measured_power=None, exponent=None,
                  calibration: dict[str, float] | None = None) -> dict:
    feats = []
    for s in sorted(sensors.values(), key=lambda s: s.minor):
        props = {"beacon": {"uuid": common.BEACON_UUID, "major": common.BEACON_MAJOR,
                            "minor": s.minor},
                 "proximity": "near"}
        power = (calibration or {}).get(s.name, measured_power)
        if power is not None:
            props["measuredPower"] = power
        if exponent is not None:
            props["pathLossExponent"] = exponent
        geom = None
        if positions:
            lon, lat = local_to_lonlat(s.pos[0], s.pos[1], *origin)
            geom = {"type": "Point", "coordinates": [round(lon, 9), round(lat, 9)]}
            props["height"] = s.pos[2]
        feats.append({"type": "Feature", "id": s.name, "geometry": geom, "properties": props})
    return {"type": "FeatureCollection", "features": feats}


def sighting_line(row: common.Row) -> str:
    return ('{"t":%s,"device":"%s","uuid":"%s","major":%d,"minor":%d,"rssi":%d}'
            % (row.t_text, common.DEVICE, common.BEACON_UUID, common.BEACON_MAJOR,
               row.sensor.minor, row.rssi))


def convert(walk: Path, out: Path, positions=False, origin=(45.0, 14.0),
            measured_power=None, exponent=None,
            calibration: dict[str, float] | None = None) -> tuple[Path, Path]:
    sensors = common.load_sensors()
    rows = common.load_walk(walk, sensors)
    out.mkdir(parents=True, exist_ok=True)
    regions = out / "regions.geojson"
    sightings = out / "sightings.ndjson"
    regions.write_text(json.dumps(build_regions(sensors, positions, origin, measured_power,
                                                exponent, calibration), indent=1) + "\n")
    with open(sightings, "w") as f:
        for r in rows:
            f.write(sighting_line(r) + "\n")
    return regions, sightings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("walk")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--positions", action="store_true")
    ap.add_argument("--origin", default="45.0,14.0", help="LAT,LON of the dataset's (0,0)")
    ap.add_argument("--measured-power", type=float)
    ap.add_argument("--path-loss-exponent", type=float)
    ap.add_argument("--calibration", type=Path,
                    help="JSON sensor -> measuredPower (calibrate.py's output)")
    a = ap.parse_args(argv)
    calibration, exponent = None, a.path_loss_exponent
    if a.calibration:
        import calibrate
        calibration, cal_exponent = calibrate.load(a.calibration)
        if exponent is None:
            exponent = cal_exponent
    walk = common.resolve_walk(a.walk)
    try:
        lat0, lon0 = (float(v) for v in a.origin.split(","))
    except ValueError:
        ap.error("--origin wants LAT,LON")
    out = a.out or Path(tempfile.mkdtemp(prefix=f"ble-{common.walk_name(walk)}-"))
    regions, sightings = convert(walk, out, a.positions, (lat0, lon0), a.measured_power,
                                 exponent, calibration)
    print(f"{regions}\n{sightings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
