#!/usr/bin/env python3
"""Writes datasets/beacons/: a SYNTHETIC beacon demo (no real data): a lobby with four positioned
iBeacons 10 m apart, a wildcard store region, a kiosk beacon without a position, and one phone
walking through at 1.3 m/s while hearing the beacons at 2 Hz. RSSI = -59 - 20·log10(d) plus
Gaussian noise (sigma 4 dB, fixed seed), rounded to whole dB as phones report it. Standard library only.

Run: python3 tools/make_beacon_demo.py
"""
import json
import math
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "datasets" / "beacons"
UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
LAT0, LON0 = 48.2082, 16.3738          # Vienna, Stephansplatz
M_LAT = 111_132.954 - 559.822 * math.cos(2 * math.radians(LAT0))
M_LON = 111_412.84 * math.cos(math.radians(LAT0))


def lonlat(x, y):
    return [round(LON0 + x / M_LON, 9), round(LAT0 + y / M_LAT, 9)]


def main():
    random.seed(20261122)
    beacons = {"entrance": (0, 0), "desk": (10, 0), "lifts": (0, 10), "cafe": (10, 10)}
    features = []
    for minor, (name, (x, y)) in enumerate(beacons.items(), start=1):
        features.append({"type": "Feature", "id": name, "geometry": {"type": "Point", "coordinates": lonlat(x, y)},
                         "properties": {"beacon": {"uuid": UUID, "major": 1, "minor": minor}, "proximity": "near"}})
    features.append({"type": "Feature", "id": "store", "geometry": None,
                     "properties": {"beacon": {"uuid": UUID}, "note": "wildcard: any beacon with this UUID"}})
    features.append({"type": "Feature", "id": "kiosk", "geometry": None,
                     "properties": {"beacon": {"uuid": UUID, "major": 2, "minor": 1}, "radius": 2, "measuredPower": -62}})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "lobby.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": features}, indent=1) + "\n")

    # The phone walks entrance -> cafe diagonally, waits at the cafe, then leaves.
    path = [(-4, -4, 0), (12, 12, 17.4), (12, 12, 60), (20, 12, 66)]
    t0 = 1_763_800_000
    lines = []
    t = 0.0
    while t <= path[-1][2]:
        for (x0, y0, ta), (x1, y1, tb) in zip(path, path[1:]):
            if ta <= t <= tb:
                f = (t - ta) / (tb - ta) if tb > ta else 0
                px, py = x0 + f * (x1 - x0), y0 + f * (y1 - y0)
                break
        for minor, (bx, by) in enumerate(beacons.values(), start=1):
            d = max(0.3, math.hypot(px - bx, py - by))
            rssi = round(-59 - 20 * math.log10(d) + random.gauss(0, 4))
            if rssi >= -100:  # too weak to be heard
                lines.append({"t": round(t0 + t + 0.05 * minor, 2), "device": "phone", "uuid": UUID,
                              "major": 1, "minor": minor, "rssi": max(-127, min(-1, rssi))})
        t += 0.5
    # The kiosk, heard for 2 s at 2 Hz (a visit longer than the 1.5 s minimum visit), then never again.
    for k in range(5):
        lines.append({"t": t0 + 30.0 + 0.5 * k, "device": "phone", "uuid": UUID, "major": 2, "minor": 1, "rssi": -60})
    lines.sort(key=lambda r: r["t"])
    (OUT / "walk.ndjson").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    (OUT / "requests.json").write_text(json.dumps([
        {"id": "coffee", "content": {"title": "Coffee is on us", "body": "Show this at the counter"},
         "trigger": {"type": "location", "region": "cafe", "notifyOnExit": False}},
        {"id": "come-back", "content": {"title": "See you soon"},
         "trigger": {"type": "location", "region": "store", "notifyOnEntry": False}},
    ], indent=1) + "\n")


if __name__ == "__main__":
    main()
