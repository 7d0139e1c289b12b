#!/usr/bin/env python3
"""Python peer baseline for `geotrigger replay` on circle regions in exact mode.

Does what `geotrigger replay --regions R --hysteresis 0 --max-accuracy 0 READINGS -o OUT` does for
CSV circle regions (`id,lat,lon,radius`) and NDJSON GPS fixes: a device is inside a circle iff the
WGS84 geodesic distance is <= radius; the first fix inside (or a device's first fix, if inside)
emits `enter`, the first fix outside after being inside emits `exit`.

Pipeline, per chunk of fixes (everything vectorised, no per-fix Python):
  1. polars parses a block of NDJSON lines (schema given, so no inference);
  2. a shapely 2 STRtree over the circles' lon/lat envelopes answers one bulk query for the chunk;
  3. a spherical chord bound with the ellipsoid's extreme radii of curvature over the circle's
     latitude band decides clear cases; pyproj's Geod.inv (GeographicLib) decides the rest;
  4. enter/exit transitions come from one sort of (device, region, fix-in-device) keys: runs of
     consecutive inside fixes are visits; state for each device's last fix carries to the next chunk.

Prints one JSON line on stdout: fixes, events, seconds, fixes_per_s, load_seconds.
"""

import argparse
import io
import json
import os
import sys
import time

import numpy as np
import polars as pl
import shapely
from pyproj import Geod

# WGS84
A = 6378137.0
F = 1 / 298.257223563
E2 = F * (2 - F)
M_EQUATOR = A * (1 - E2)  # smallest radius of curvature anywhere on the ellipsoid
MARGIN = 1e-9  # relative slack on the cheap bounds (far above float error, far below 1 cm)

FIX_SCHEMA = {"t": pl.Float64, "device": pl.String, "lat": pl.Float64, "lon": pl.Float64,
              "accuracy": pl.Float64}


def meridian_radius(phi):
    s = np.sin(phi)
    return A * (1 - E2) / (1 - E2 * s * s) ** 1.5


def normal_radius(phi):
    s = np.sin(phi)
    return A / np.sqrt(1 - E2 * s * s)


def unit_vectors(lat_deg, lon_deg):
    phi = np.radians(lat_deg)
    lam = np.radians(lon_deg)
    c = np.cos(phi)
    return np.column_stack((c * np.cos(lam), c * np.sin(lam), np.sin(phi)))


def cap_angle(r):
    """The spherical angle of a cap that holds every point within geodesic distance r (metres) of
    the centre: s >= M_EQUATOR * sigma everywhere on the ellipsoid."""
    return r / M_EQUATOR * (1 + MARGIN) + 1e-12


def lonlat_envelopes(lat, lon, rho):
    """Rigorous lon/lat boxes of the spherical caps of angle `rho` around (lat, lon), in degrees:
    split at the antimeridian (an extra box for the part that wraps), all longitudes when the cap
    reaches a pole. Returns (box_region, x0, y0, x1, y1): box k belongs to circle box_region[k]."""
    n = len(lat)
    phi0 = np.radians(lat)
    dlat = np.degrees(rho) + 1e-9
    polar = rho >= np.pi / 2 - np.abs(phi0) - 1e-12
    with np.errstate(invalid="ignore"):
        dlon = np.degrees(np.arcsin(np.minimum(1.0, np.sin(rho) / np.cos(phi0)))) + 1e-9
    dlon = np.where(polar, 360.0, dlon)
    ymin = np.maximum(-90.0, lat - dlat)
    ymax = np.minimum(90.0, lat + dlat)
    xmin = lon - dlon
    xmax = lon + dlon
    full = polar | (dlon >= 180)
    west = ~full & (xmin < -180)  # wraps past -180: extra box at the east end
    east = ~full & (xmax > 180)  # wraps past +180: extra box at the west end
    bx0 = np.where(full, -180.0, np.maximum(-180.0, xmin))
    bx1 = np.where(full, 180.0, np.minimum(180.0, xmax))
    idx = np.arange(n)
    extra_w, extra_e = idx[west], idx[east]
    box_region = np.concatenate((idx, extra_w, extra_e))
    x0 = np.concatenate((bx0, xmin[west] + 360, np.full(len(extra_e), -180.0)))
    x1 = np.concatenate((bx1, np.full(len(extra_w), 180.0), xmax[east] - 360))
    y0 = np.concatenate((ymin, ymin[west], ymin[east]))
    y1 = np.concatenate((ymax, ymax[west], ymax[east]))
    return box_region, x0, y0, x1, y1


def check_circles(path, ids, lat, lon, r):
    """The circles' columns, or the run stops naming the first bad one (as geotrigger does)."""
    bad = ~(np.isfinite(lat) & np.isfinite(lon) & np.isfinite(r) & (np.abs(lat) <= 90)
            & (np.abs(lon) <= 180) & (r > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SystemExit(f"{path}: region {ids[i]!r}: bad lat/lon/radius")
    return lat, lon, r


class Regions:
    """Circles, their STRtree over lon/lat envelopes and the per-circle chord thresholds."""

    def __init__(self, path):
        df = pl.read_csv(path, columns=["id", "lat", "lon", "radius"],
                         schema_overrides={"id": pl.String, "lat": pl.Float64, "lon": pl.Float64,
                                           "radius": pl.Float64})
        self.ids = df["id"].to_list()
        lat, lon, r = check_circles(path, self.ids, df["lat"].to_numpy(), df["lon"].to_numpy(),
                                    df["radius"].to_numpy())
        self.json_ids = pl.Series([json.dumps(s) for s in self.ids], dtype=pl.String)
        self.lat, self.lon, self.radius = lat, lon, r
        self.x, self.y, self.z = (np.ascontiguousarray(c) for c in unit_vectors(lat, lon).T)
        n = len(r)

        # Any point within geodesic distance r lies within spherical angle rho of the centre
        # (s >= M_EQUATOR * sigma), so the spherical cap of radius rho bounds the circle.
        rho = cap_angle(r)
        phi0 = np.radians(lat)
        band_lo = np.maximum(0.0, np.abs(phi0) - rho)
        band_hi = np.minimum(np.pi / 2, np.abs(phi0) + rho)
        # Along a path within the band, ds/dsigma lies in [M(lo), N(hi)]: sure inside if
        # N(hi)*sigma <= r, sure outside if M(lo)*sigma > r. Compared as chords of unit vectors.
        sig_in = r / normal_radius(band_hi) * (1 - MARGIN)
        sig_out = np.minimum(np.pi, r / meridian_radius(band_lo) * (1 + MARGIN))
        self.chord2_in = (2 * np.sin(sig_in / 2)) ** 2
        self.chord2_out = (2 * np.sin(sig_out / 2)) ** 2

        self.box_region, x0, y0, x1, y1 = lonlat_envelopes(lat, lon, rho)
        self.tree = shapely.STRtree(shapely.box(x0, y0, x1, y1))

    def __len__(self):
        return len(self.radius)


class Replay:
    def __init__(self, regions, out):
        self.regions = regions
        self.out = out
        self.geod = Geod(ellps="WGS84")
        self.device_code = {}
        self.device_json = []
        # Per device (by code): time of its latest accepted fix.
        self.last_t = np.empty(0)
        # Open visits as sorted keys device * regions + region, with their enteredAt.
        self.carry_key = np.empty(0, np.int64)
        self.carry_entered = np.empty(0)
        self.fixes = 0
        self.rejected = 0
        self.events = 0
        self.enters = 0
        self.exits = 0
        self.ambiguous = 0
        self.candidates = 0

    def add_devices(self, uniq):
        """Codes the chunk's distinct device names not seen before (in first-seen order)."""
        new = [d for d in uniq if d not in self.device_code]
        for d in new:
            self.device_code[d] = len(self.device_json)
            self.device_json.append(json.dumps(d))
        if new:
            grow = len(self.device_json) - len(self.last_t)
            self.last_t = np.concatenate((self.last_t, np.full(grow, -np.inf)))

    def codes(self, devices):
        uniq = devices.unique().to_list()
        self.add_devices(uniq)
        return devices.replace_strict(uniq, [self.device_code[d] for d in uniq],
                                      return_dtype=pl.Int64).to_numpy()

    def chunk(self, df):
        # Fixes only (beacon sightings and control records have no lat/lon); reject bad ones.
        df = df.filter(pl.col("lat").is_not_null() | pl.col("lon").is_not_null())
        ok = (pl.col("device").is_not_null() & pl.col("t").is_finite() & pl.col("lat").is_finite()
              & pl.col("lon").is_finite() & (pl.col("lat").abs() <= 90) & (pl.col("lon").abs() <= 180)
              & (pl.col("accuracy").is_null() | (pl.col("accuracy") >= 0)))
        n0 = df.height
        df = df.filter(ok.fill_null(False))
        self.rejected += n0 - df.height
        if df.height == 0:
            return
        code = self.codes(df["device"])
        self.replay(code, df["t"].to_numpy(), df["lat"].to_numpy(), df["lon"].to_numpy())

    def replay(self, code, t, lat, lon):
        """Valid fixes of one chunk in input order (device codes, times, coordinates): rejects those
        older than their device's previous fix, finds the inside pairs, writes the transitions."""
        order, sc, first, st = by_device(code, t)
        prev_t = np.empty_like(st)
        prev_t[1:] = st[:-1]
        prev_t[first] = self.last_t[sc[first]]
        if (st < prev_t).any():
            # A fix older than its device's previous accepted fix is rejected (rare: slow path).
            keep = np.ones(len(st), bool)
            run_max = dict()
            for k in range(len(st)):
                d = sc[k]
                m = run_max.get(d, self.last_t[d])
                if st[k] < m:
                    keep[k] = False
                else:
                    run_max[d] = st[k]
            self.rejected += int((~keep).sum())
            sel = np.sort(order[keep])
            code, t, lat, lon = code[sel], t[sel], lat[sel], lon[sel]
            if len(t) == 0:
                return
            order, sc, first, st = by_device(code, t)
        n = len(t)
        self.fixes += n
        lap("parse+validate")
        # Work in device order from here on: fix k of the chunk (sorted) is seq k - start + 1 of
        # its device (seq 0 stands for the device's last fix of earlier chunks).
        starts = np.flatnonzero(first)
        counts = np.diff(np.append(starts, n))
        ndev = len(self.device_json)
        dev_count = np.zeros(ndev, np.int64)
        dev_count[sc[starts]] = counts
        dev_start = np.zeros(ndev, np.int64)
        dev_start[sc[starts]] = starts
        self.last_t[sc[starts]] = st[starts + counts - 1]
        slat, slon = lat[order], lon[order]

        fi, ri = self.inside_pairs(slat, slon)
        rg = self.regions

        # One sort of (device, region, seq) keys: runs of consecutive seq are visits.
        R = len(rg)
        L = int(counts.max()) + 1
        if (ndev + 1) * R * L >= 2 ** 63:
            raise SystemExit("peer: chunk too large for 64-bit keys; lower --chunk-bytes")
        seq = fi - dev_start[sc[fi]] + 1
        keys = np.concatenate(((sc[fi] * R + ri) * L + seq, self.carry_key * L))
        # Pairs arrive ordered by (device, seq), so each device's keys form one block and a stable
        # sort (timsort, which exploits the existing runs) beats quicksort about 3x here.
        keys.sort(kind="stable")
        g = keys // L
        s = keys - g * L
        m = len(keys)
        run_start = np.ones(m, bool)
        if m > 1:
            run_start[1:] = (g[1:] != g[:-1]) | (s[1:] != s[:-1] + 1)
        run_end = np.ones(m, bool)
        run_end[:-1] = run_start[1:]
        lap("sort")
        starts_k = np.flatnonzero(run_start)
        ends_k = np.flatnonzero(run_end)  # the i-th run starts at starts_k[i], ends at ends_k[i]
        dev = g[ends_k] // R
        end_s = s[ends_k]
        exits = end_s < dev_count[dev]
        # enteredAt of each run: its first fix's time, or the carried value.
        first_s = s[starts_k]
        dev_first = g[starts_k] // R
        entered = np.where(first_s > 0, st[dev_start[dev_first] + np.maximum(first_s, 1) - 1], np.nan)
        carried = np.flatnonzero(first_s == 0)
        if len(carried):
            entered[carried] = self.carry_entered[np.searchsorted(self.carry_key, g[starts_k[carried]])]
        # Visits still open at each device's last fix carry over to the next chunk.
        self.carry_key = g[ends_k[~exits]]
        self.carry_entered = entered[~exits]

        enters = first_s > 0
        enter_pos = dev_start[dev_first[enters]] + first_s[enters] - 1
        exit_pos = dev_start[dev[exits]] + end_s[exits]  # the device's next fix
        ev_pos = np.concatenate((enter_pos, exit_pos))
        ev_reg = np.concatenate((g[starts_k[enters]], g[ends_k[exits]])) % R
        ev_exit = np.concatenate((np.zeros(len(enter_pos), bool), np.ones(len(exit_pos), bool)))
        ev_entered = np.concatenate((np.full(len(enter_pos), np.nan), entered[exits]))
        self.enters += len(enter_pos)
        self.exits += len(exit_pos)
        lap("transitions")
        # Back to input order for output.
        self.write(order[ev_pos], ev_reg, ev_exit, ev_entered, t, lat, lon, code)

    def inside_pairs(self, slat, slon):
        """(fix, region) pairs with the fix inside the circle, fixes indexed as given and the pairs
        in fix order. Candidates from one bulk STRtree query, then the cheap bound, then Geod.inv
        for the band between its two thresholds."""
        rg = self.regions
        n = len(slat)
        fi, bi = rg.tree.query(shapely.points(slon, slat))
        ri = rg.box_region[bi]
        self.candidates += len(fi)
        lap("strtree")
        # Chord between unit vectors: 1-D gathers on the region side (much faster than row
        # gathers), np.repeat on the fix side (the query answers in fix order).
        per_fix = np.bincount(fi, minlength=n)
        fxyz = unit_vectors(slat, slon)
        c2 = np.square(rg.x[ri] - np.repeat(fxyz[:, 0], per_fix))
        c2 += np.square(rg.y[ri] - np.repeat(fxyz[:, 1], per_fix))
        c2 += np.square(rg.z[ri] - np.repeat(fxyz[:, 2], per_fix))
        lap("distance:chord")
        inside = c2 <= rg.chord2_in[ri]
        amb = np.flatnonzero(~inside & (c2 <= rg.chord2_out[ri]))
        if len(amb):
            self.ambiguous += len(amb)
            fa, ra = fi[amb], ri[amb]
            _, _, dist = self.geod.inv(slon[fa], slat[fa], rg.lon[ra], rg.lat[ra])
            inside[amb] = dist <= rg.radius[ra]
        lap("distance:bounds")
        fi, ri = fi[inside], ri[inside]
        lap("distance")
        return fi, ri

    def write(self, ev_fix, ev_reg, ev_exit, ev_entered, t, lat, lon, code):
        ne = len(ev_fix)
        if ne == 0:
            return
        self.events += ne
        o = np.lexsort((ev_reg, ev_fix))
        ev_fix, ev_reg, ev_exit, ev_entered = ev_fix[o], ev_reg[o], ev_exit[o], ev_entered[o]
        rg = self.regions
        lap("write:sort")
        _, _, dist = self.geod.inv(lon[ev_fix], lat[ev_fix], rg.lon[ev_reg], rg.lat[ev_reg])
        lap("write:geod")
        dev_json = pl.Series(self.device_json, dtype=pl.String)
        frame = pl.DataFrame({
            "t": rfc3339(t[ev_fix]),
            "exit": ev_exit,
            "device": dev_json.gather(code[ev_fix]),
            "region": rg.json_ids.gather(ev_reg),
            "distance": np.round(dist, 2),
            "entered": rfc3339(np.where(ev_exit, ev_entered, 0.0)),
        })
        line = pl.concat_str(
            pl.lit('{"t":"'), pl.col("t"),
            pl.when(pl.col("exit")).then(pl.lit('","event":"exit","device":'))
            .otherwise(pl.lit('","event":"enter","device":')),
            pl.col("device"), pl.lit(',"region":'), pl.col("region"),
            pl.lit(',"distance":'), pl.col("distance").cast(pl.String),
            pl.when(pl.col("exit")).then(pl.concat_str(pl.lit(',"enteredAt":"'), pl.col("entered"),
                                                       pl.lit('"')))
            .otherwise(pl.lit("")),
            pl.lit("}"))
        lap("write:frame")
        # Each row is one finished JSON line: written raw, with no quoting and no header.
        frame.select(line).write_csv(self.out, include_header=False, quote_style="never")
        lap("write:out")


_PROFILE = {} if os.environ.get("PEER_PROFILE") else None
_last = [0.0]


def lap(stage):
    """With PEER_PROFILE set, accumulates wall time per stage (printed to stderr at the end)."""
    if _PROFILE is not None:
        now = time.perf_counter()
        _PROFILE[stage] = _PROFILE.get(stage, 0.0) + now - _last[0]
        _last[0] = now


def by_device(code, t):
    """Fixes grouped by device, in input order within a device: the permutation, the sorted codes,
    a flag for each device's first fix, and the sorted times."""
    order = np.argsort(code, kind="stable")
    sc = code[order]
    first = np.empty(len(sc), bool)
    first[0] = True
    np.not_equal(sc[1:], sc[:-1], out=first[1:])
    return order, sc, first, t[order]


def rfc3339(t):
    ms = pl.Series(np.round(np.asarray(t) * 1000).astype(np.int64)).cast(pl.Datetime("ms"))
    return ms.dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")


def read_block(b):
    """Parses an NDJSON block; `t` as Unix seconds, or (slower path) RFC 3339 strings."""
    try:
        return pl.read_ndjson(io.BytesIO(b), schema=FIX_SCHEMA)
    except pl.exceptions.ComputeError:
        df = pl.read_ndjson(io.BytesIO(b), schema={**FIX_SCHEMA, "t": pl.String})
    seconds = pl.col("t").cast(pl.Float64, strict=False)
    rfc = (pl.col("t").str.replace(r"[zZ]$", "+00:00")
           .str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_unit="us")
           .dt.epoch("us") / 1e6)
    return df.with_columns(seconds.fill_null(rfc).alias("t"))


def blocks(path, block_bytes):
    """Yields byte blocks of whole lines."""
    with open(path, "rb") as f:
        while True:
            b = f.read(block_bytes)
            if not b:
                return
            if not b.endswith(b"\n"):
                b += f.readline()
            yield b


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--regions", required=True, help="CSV circles: id,lat,lon,radius")
    p.add_argument("--readings", required=True, help="NDJSON fixes: t, device, lat, lon[, accuracy]")
    p.add_argument("--out", required=True, help="events NDJSON")
    p.add_argument("--limit", type=int, default=None, help="stop after N readings")
    p.add_argument("--chunk-bytes", type=int, default=4 << 20,
                   help="NDJSON bytes per chunk [4 MiB, about 50k fixes; peak memory ~350 MB]")
    a = p.parse_args(argv)

    t0 = time.perf_counter()
    regions = Regions(a.regions)
    load = time.perf_counter() - t0

    t1 = _last[0] = time.perf_counter()
    records = 0
    with open(a.out, "wb") as out:
        replay = Replay(regions, out)
        for b in blocks(a.readings, a.chunk_bytes):
            lap("read")
            df = read_block(b)
            lap("read")
            if a.limit is not None and records + df.height >= a.limit:
                df = df.head(a.limit - records)
                records += df.height
                replay.chunk(df)
                break
            records += df.height
            replay.chunk(df)
    summarise(replay, regions, time.perf_counter() - t1, load)


def summarise(replay, regions, seconds, load):
    """The one JSON line both peers print (and the stage times under PEER_PROFILE=1)."""
    if _PROFILE is not None:
        print(json.dumps({k: round(v, 3) for k, v in _PROFILE.items()}), file=sys.stderr)
    print(json.dumps({
        "fixes": replay.fixes, "events": replay.events, "enter": replay.enters, "exit": replay.exits,
        "rejected": replay.rejected, "regions": len(regions), "candidates": replay.candidates,
        "geodesic_calls": replay.ambiguous, "seconds": round(seconds, 4),
        "fixes_per_s": round(replay.fixes / seconds) if seconds > 0 else None,
        "load_seconds": round(load, 4)}))


if __name__ == "__main__":
    main()
