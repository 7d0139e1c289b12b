#!/usr/bin/env python3
"""Issue 5's Python peer: `geotrigger replay` on circle regions in exact mode, as the issue describes it.

"A strong Python pipeline (pandas CSV reading, pyproj projection, a shapely 2 STRtree over circle
envelopes, pyproj geodesic filter, vectorised transitions)". Same semantics and output as peer.py
(the tuned peer): inside iff the WGS84 geodesic distance <= radius; a device's first fix inside
emits `enter`, the first fix outside after being inside emits `exit`.

Per chunk of fixes (everything vectorised, no per-fix or per-candidate Python):
  1. pandas reads a chunk of the CSV readings (`t,device,lat,lon,accuracy`; dtypes given);
  2. pyproj projects the fixes to EPSG:3857 (Web Mercator, metres);
  3. a shapely 2 STRtree over each circle's projected envelope answers one bulk
     `query(points)` for the chunk (the envelope test: all a point-in-box query needs);
  4. pyproj's Geod.inv (GeographicLib, WGS84) gives the exact distance of every candidate pair;
     inside iff distance <= radius;
  5. enter/exit transitions from one sort of (device, region, fix-in-device) keys (peer.py's code).

Prints one JSON line on stdout: fixes, events, seconds, fixes_per_s, load_seconds.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import pandas as pd
import shapely
from pyproj import Transformer

import peer
from peer import lap

READING_DTYPES = {"t": "float64", "device": "str", "lat": "float64", "lon": "float64",
                  "accuracy": "float64"}
# Web Mercator is finite and increasing in latitude short of the poles: clamping there keeps it
# monotone, so fixes and envelope corners clamped the same way keep their order.
MAX_LAT = 90 - 1e-9


class Regions:
    """Circles (pandas CSV), and a shapely STRtree over their envelopes projected to EPSG:3857."""

    def __init__(self, path):
        df = pd.read_csv(path, usecols=["id", "lat", "lon", "radius"],
                         dtype={"id": "str", "lat": "float64", "lon": "float64", "radius": "float64"},
                         keep_default_na=False, na_values=[""])
        self.ids = df["id"].tolist()
        lat, lon, r = peer.check_circles(path, self.ids, df["lat"].to_numpy(), df["lon"].to_numpy(),
                                         df["radius"].to_numpy())
        # The writer (shared with peer.py) gathers the JSON-quoted ids from a polars Series.
        self.json_ids = peer.pl.Series([json.dumps(s) for s in self.ids], dtype=peer.pl.String)
        self.lat, self.lon, self.radius = lat, lon, r
        self.project = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)

        # The rigorous lon/lat envelope of each circle (peer.py's: the spherical cap of angle
        # r / M_equator holds every point within geodesic distance r; split at the antimeridian,
        # all longitudes at a pole). EPSG:3857 maps lon/lat rectangles to rectangles, increasing
        # in both coordinates, so projecting two corners gives the projected envelope exactly.
        self.box_region, x0, y0, x1, y1 = peer.lonlat_envelopes(lat, lon, peer.cap_angle(r))
        px0, py0 = self.project.transform(x0, np.clip(y0, -MAX_LAT, MAX_LAT))
        px1, py1 = self.project.transform(x1, np.clip(y1, -MAX_LAT, MAX_LAT))
        if not (np.isfinite(px0).all() and np.isfinite(py0).all() and np.isfinite(px1).all()
                and np.isfinite(py1).all()):
            raise SystemExit(f"{path}: an envelope did not project to EPSG:3857")
        self.tree = shapely.STRtree(shapely.box(px0, py0, px1, py1))

    def __len__(self):
        return len(self.radius)


class Replay(peer.Replay):
    """peer.py's transitions, carry-over and writer; pandas chunks in, projected STRtree candidates
    and Geod.inv on every candidate instead of the tuned peer's lon/lat tree and chord bound."""

    def codes(self, devices):
        # One hash pass per chunk (pd.factorize), then a dictionary look-up per distinct device.
        local, uniq = pd.factorize(devices)
        self.add_devices(uniq)
        return np.fromiter((self.device_code[d] for d in uniq), np.int64, len(uniq))[local]

    def chunk(self, df):
        # Fixes only (rows without lat and lon are not fixes); reject bad ones as peer.py does.
        t = df["t"].to_numpy()
        lat = df["lat"].to_numpy()
        lon = df["lon"].to_numpy()
        acc = df["accuracy"].to_numpy()
        device = df["device"]
        fix = ~(np.isnan(lat) & np.isnan(lon))
        with np.errstate(invalid="ignore"):
            ok = (device.notna().to_numpy() & np.isfinite(t) & np.isfinite(lat) & np.isfinite(lon)
                  & (np.abs(lat) <= 90) & (np.abs(lon) <= 180) & (np.isnan(acc) | (acc >= 0)))
        ok &= fix
        self.rejected += int(fix.sum() - ok.sum())
        if not ok.any():
            return
        if not ok.all():
            t, lat, lon, device = t[ok], lat[ok], lon[ok], device[ok]
        self.replay(self.codes(device), t, lat, lon)

    predicate = None

    def inside_pairs(self, slat, slon):
        """(fix, region) pairs with the fix inside the circle, in fix order: project, one bulk
        STRtree query, then the geodesic distance of every candidate."""
        rg = self.regions
        x, y = rg.project.transform(slon, np.clip(slat, -MAX_LAT, MAX_LAT))
        lap("project")
        fi, bi = rg.tree.query(shapely.points(x, y), predicate=self.predicate)
        ri = rg.box_region[bi]
        self.candidates += len(fi)
        lap("strtree")
        _, _, dist = self.geod.inv(slon[fi], slat[fi], rg.lon[ri], rg.lat[ri])
        self.ambiguous += len(fi)
        inside = dist <= rg.radius[ri]
        lap("geodesic")
        return fi[inside], ri[inside]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--regions", required=True, help="CSV circles: id,lat,lon,radius")
    p.add_argument("--readings", required=True,
                   help="CSV fixes with a header: t (Unix seconds), device, lat, lon, accuracy")
    p.add_argument("--out", required=True, help="events NDJSON")
    p.add_argument("--limit", type=int, default=None, help="stop after N readings")
    p.add_argument("--chunk-rows", type=int, default=50_000,
                   help="CSV rows per pandas chunk [50,000: peer.py's default chunk size]")
    p.add_argument("--predicate", choices=["intersects", "none"], default="none",
                   help="the STRtree query's predicate [none: the envelope test alone, which is "
                        "exact for points in boxes and the fastest]; intersects gives the same "
                        "candidates slower (for experiments)")
    a = p.parse_args(argv)

    t0 = time.perf_counter()
    regions = Regions(a.regions)
    load = time.perf_counter() - t0

    t1 = peer._last[0] = time.perf_counter()
    with open(a.out, "wb") as out:
        replay = Replay(regions, out)
        replay.predicate = None if a.predicate == "none" else a.predicate
        reader = pd.read_csv(a.readings, usecols=list(READING_DTYPES), dtype=READING_DTYPES,
                             keep_default_na=False, na_values=[""], chunksize=a.chunk_rows,
                             nrows=a.limit)
        with reader:
            for df in reader:
                lap("read")
                replay.chunk(df)
    peer.summarise(replay, regions, time.perf_counter() - t1, load)


if __name__ == "__main__":
    main()
