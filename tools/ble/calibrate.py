#!/usr/bin/env python3
"""Per-receiver calibration (measured power, RSSI at 1 m) from walks with ground-truth positions.

Usage:
  python3 tools/ble/calibrate.py WALK [WALK ...] [--out FILE.json] [--min-distance 1]
                                 [--max-distance 8] [--exponent 2] [--fit-exponent]

What a real deployment does once per installed beacon, here done from annotated walks: for each
sensor (modelled as a beacon, see common.py) take every sample of the given walks whose true 3-D
distance tag-sensor d is within [--min-distance, --max-distance] (default 1-8 m) and, with the
path-loss exponent n fixed (default 2, the engine's default), estimate

    P1m = median(RSSI + 10 * n * log10(d))

i.e. a robust (median) fit of RSSI = P1m - 10 n log10(d) with the slope fixed. A sensor with fewer
than --min-samples (default 20) samples in the window is left out (the engine then uses -59 dBm).

--fit-exponent additionally fits ONE shared n (all sensors, each with its own intercept) by least
squares on the same samples, writes it as "pathLossExponent" and uses it for the intercepts.
It is off by default: the fitted exponents scatter (1.2-2.6 per sensor) and the engine's decision
thresholds were designed around n = 2.

Output (stdout or --out), read by convert.py --calibration:
  {"measuredPower": {"sensor10": -57.5, ...}, "pathLossExponent": 2.0 (only with --fit-exponent),
   "walks": [...], "window_m": [1, 8], "samples": {"sensor10": 312, ...},
   "residual_db": {"sensor10": 5.1, ...}}        (residual = MAD * 1.4826 about the fit)

Never calibrate on the walk you then score: evaluate.py --calibrated does leave-one-walk-out.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

MIN_SAMPLES = 20


def samples(walks: list[Path], sensors, lo: float, hi: float) -> dict[str, list[tuple[float, int]]]:
    """Per sensor name, (true 3-D distance, RSSI) for every row with lo <= d <= hi."""
    out: dict[str, list[tuple[float, int]]] = {}
    for w in walks:
        for r in common.load_walk(w, sensors):
            d = r.true_distance()
            if lo <= d <= hi:
                out.setdefault(r.sensor.name, []).append((d, r.rssi))
    return out


def fit_shared_exponent(data: dict[str, list[tuple[float, int]]]) -> float:
    """Least-squares n with one intercept per sensor: regress RSSI on -10 log10(d), sensor-demeaned."""
    num = den = 0.0
    for pts in data.values():
        if len(pts) < MIN_SAMPLES:
            continue
        xs = [-10 * math.log10(d) for d, _ in pts]
        ys = [float(r) for _, r in pts]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        num += sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        den += sum((x - mx) ** 2 for x in xs)
    return num / den


def calibrate(walks: list[Path], lo: float = 1.0, hi: float = 8.0, exponent: float = 2.0,
              fit_exponent: bool = False, min_samples: int = MIN_SAMPLES) -> dict:
    sensors = common.load_sensors()
    data = samples(walks, sensors, lo, hi)
    n = fit_shared_exponent(data) if fit_exponent else exponent
    power, count, resid = {}, {}, {}
    for s in sorted(sensors.values(), key=lambda s: s.minor):
        pts = data.get(s.name, [])
        count[s.name] = len(pts)
        if len(pts) < min_samples:
            continue
        est = [r + 10 * n * math.log10(d) for d, r in pts]
        p = statistics.median(est)
        power[s.name] = round(p, 1)
        resid[s.name] = round(1.4826 * statistics.median(abs(e - p) for e in est), 1)
    out = {"measuredPower": power}
    if fit_exponent:
        out["pathLossExponent"] = round(n, 2)
    out.update({"walks": [common.walk_name(w) for w in walks], "window_m": [lo, hi],
                "exponent_used": round(n, 2), "samples": count, "residual_db": resid})
    return out


def load(path: Path) -> tuple[dict[str, float], float | None]:
    """(sensor -> measuredPower, shared pathLossExponent or None) from a calibration file.

    Accepts calibrate.py's output or a flat {"sensor10": -57.5, ...} mapping.
    """
    raw = json.loads(Path(path).read_text())
    if "measuredPower" in raw:
        return {k: float(v) for k, v in raw["measuredPower"].items()}, raw.get("pathLossExponent")
    return {k: float(v) for k, v in raw.items()}, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("walks", nargs="+")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--min-distance", type=float, default=1.0)
    ap.add_argument("--max-distance", type=float, default=8.0)
    ap.add_argument("--exponent", type=float, default=2.0, help="fixed n (default 2)")
    ap.add_argument("--fit-exponent", action="store_true", help="fit one shared n instead")
    ap.add_argument("--min-samples", type=int, default=MIN_SAMPLES)
    a = ap.parse_args(argv)
    walks = [common.resolve_walk(w) for w in a.walks]
    cal = calibrate(walks, a.min_distance, a.max_distance, a.exponent, a.fit_exponent,
                    a.min_samples)
    text = json.dumps(cal, indent=1) + "\n"
    if a.out:
        a.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
