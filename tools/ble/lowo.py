#!/usr/bin/env python3
"""Leave-one-walk-out (LOWO) scores of beacon-zone methods, and their IoU / enters trade-off chart.

Usage:
  python3 tools/ble/lowo.py [FAMILY ...] [--json] [--svg FILE]

A FAMILY is a prototype model (prototype.py) with a small grid of values for its physical
constants, each grid value within the range the constant's physical meaning allows (listed
below, chosen before any score was seen). For each walk W:

  1. every grid point runs on the two OTHER walks;
  2. the point chosen is the one with the highest IoU among those whose enters stay within
     1.5x the true enters on those two walks (if none does, the one with the fewest enters);
  3. that point scores W.

The held-out figure is the sum over the three W of the scores in step 3 (sum of intersections
over sum of unions; sum of enters over 16 true enters), the number the README reports. A
family whose grid has one point is parameter-free: its held-out figure is its plain score.

--svg FILE draws every grid point of every family scored on all three walks (IoU against the
enter ratio, one colour per family) and each family's held-out figure as a ringed dot, with the
targets as lines. Standard library + numpy (as prototype.py); the dataset as common.py finds it.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import prototype  # noqa: E402
import score  # noqa: E402

# Each family: a prototype model and, per constant, the values its physical meaning allows.
FAMILIES: dict[str, tuple[str, dict[str, list]]] = {
    # The baseline: no constant to choose.
    "naive": ("naive", {}),
    # Per beacon, no positions: a Kalman filter on RSSI (dB). q: RSSI drift (dB^2/s) of a walker
    # at 1-1.5 m/s near 3 m (about 3-5 dB per metre): 8-30; z: the decision bound in sigmas of the
    # estimate, 0.5-1.5; confirm: sightings agreeing (2 Hz, so 0.5-1 s).
    "beacon": ("beacon", {"q": [8.0, 15.0, 30.0], "z": [0.5, 1.0, 1.5], "confirm": [1, 2]}),
    # With positions, the engine's method: log-range least squares over 2 s, position smoothed
    # with tau (s): a walker covers 0.5-2 m in 0.5-1.5 s; hyst: exit margin (m), 0.5-1.5, the
    # position's error scale; confirm 2-3 fixes.
    "fused": ("fused", {"tau": [0.5, 1.0, 1.5], "hyst": [0.5, 1.0, 1.5], "confirm": [2, 3]}),
    # With positions, a tracker on every sighting (constant velocity, RSSI noise 6 dB), zones by
    # P(inside): sigma_a (m/s^2) 0.5-1.0 (pedestrian); p_enter 0.5-0.95, leaving at 1 - p_enter
    # (a symmetric hysteresis from the estimate's own uncertainty).
    "ekf-prob": ("ekf-prob", {"sigma_a": [0.5, 0.7, 1.0], "p_enter": [0.5, 0.7, 0.84, 0.95]}),
    # With positions, the engine's fused position, zones by its own uncertainty (prototype.py
    # FusedModel decide="prob"): sigma_slow (dB) the shadowing that a 2 s window does not
    # average, 3-5 dB (indoor shadowing 3-6 dB); enter at P(inside) >= p_enter 0.5-0.7, leave at
    # P(inside) <= p_exit 0.16 (1 sigma) or 0.3.
    "fused-prob": ("fused-prob", {"sigma_slow": [3.0, 4.0, 5.0], "p_enter": [0.5, 0.6, 0.7], "p_exit": [0.16, 0.3]}),
    # Issue 38: a minimum visit. A zone is entered only once it has been wanted without a break for
    # min_in s: a walker at about 1.3 m/s covers 0.65-2.6 m in 0.5-2 s, up to the near zone's 3 m
    # radius, so a shorter "visit" is a graze or a fade, not a visit. Per beacon with the decision
    # bound z (0.5-1.5 sigma, as above); q stays at its derived 15 dB^2/s.
    "beacon-visit": ("beacon", {"min_in": [0.5, 1.0, 1.5, 2.0], "z": [0.5, 1.0, 1.5]}),
    # The same minimum visit on the fused position, with the exit margin (m) 0.5-1.5 as above.
    "fused-visit": ("fused", {"min_in": [0.5, 1.0, 1.5, 2.0], "hyst": [0.5, 1.0, 1.5]}),
    # And with a walking-speed limit on the fused position: a person moves at most 1.5-2.5 m/s
    # (a brisk walk to a slow run), so the smoothed position moves no faster.
    "fused-speed": ("fused", {"min_in": [0.5, 1.0, 1.5, 2.0], "hyst": [0.5, 1.0], "vmax": [1.5, 2.5]}),
    # The engine's method with positions since issue 38: a fused enter needs the zone's own beacon
    # within it too (its 1-sigma rule, no minimum visit): two estimates must agree. tau (s) and
    # the exit margin (m) as above; the fused position's own minimum visit 0-1 s; the window's
    # reading the gated mean (env_q 0) or its median (0.5), which body shadowing moves less.
    "fused-gated": ("fused", {"tau": [1.0, 1.5], "hyst": [0.5, 1.0], "min_in": [0.0, 0.5, 1.0],
                              "env_q": [0.0, 0.5], "gate_beacon": [1]}),
}

# The engine's defaults are one set of constants for both kinds of zone: `--engine` chooses them
# for each walk on the other four, jointly (per beacon from beacon-visit, with positions from
# fused-gated restricted to the gated mean the engine computes), as the constants that meet every
# target there (enters within TARGET_RATIO with and without positions, no more with them) with
# the highest IoU with and without positions added; then scores the walk with them.
ENGINE = ("beacon-visit", "fused-gated")

# Issue 38's limit on enters (issue 26 chose within 1.5x).
TARGET_RATIO = 1.3
COLOURS = {"naive": "#888888", "beacon": "#1f77b4", "fused": "#d62728", "ekf-prob": "#2ca02c", "fused-prob": "#ff7f0e",
           "beacon-visit": "#17becf", "fused-visit": "#8c564b", "fused-speed": "#e377c2", "fused-gated": "#000000"}


def grid(params: dict[str, list]) -> list[dict]:
    keys = list(params)
    return [dict(zip(keys, values)) for values in itertools.product(*(params[k] for k in keys))] or [{}]


def spec(model: str, point: dict) -> str:
    if model == "ekf-prob" and "p_enter" in point:
        point = dict(point, p_exit=round(1 - point["p_enter"], 4))
    return model + (":" + ",".join(f"{k}={v}" for k, v in point.items()) if point else "")


def run_family(name: str, walks: list[Path], sensors) -> dict:
    model, params = FAMILIES[name]
    rows = {w: common.load_walk(w, sensors) for w in walks}
    points = []
    for point in grid(params):
        s = spec(model, point)
        per_walk = {}
        for w in walks:
            m = prototype.make_model(s)
            per_walk[common.walk_name(w)] = score.score_walk(w, m.run(rows[w], sensors), sensors)
        points.append({"point": point, "spec": s, "walks": per_walk,
                       "overall": score.overall(list(per_walk.values()))})
    held_out = []
    chosen = {}
    for w in walks:
        name_w = common.walk_name(w)

        def train(p):
            return score.overall([r for k, r in p["walks"].items() if k != name_w])
        ok = [p for p in points if train(p)["enter_ratio"] <= TARGET_RATIO]
        best = max(ok, key=lambda p: train(p)["iou"]) if ok else min(points, key=lambda p: train(p)["enters"])
        chosen[name_w] = best["point"]
        held_out.append(best["walks"][name_w])
    return {"family": name, "model": model, "points": points, "chosen": chosen,
            "held_out": held_out, "held_out_overall": score.overall(held_out)}


def engine_lowo(results: dict[str, dict], walks: list[Path]) -> dict:
    """The engine's constants chosen jointly for each walk on the others (ENGINE), and the walk
    scored with them; {"per-beacon": [...], "fused": [...], "chosen": {...}}."""
    per_beacon = results[ENGINE[0]]["points"]
    fused = [p for p in results[ENGINE[1]]["points"] if p["point"].get("env_q", 0.0) == 0.0]
    out = {"per-beacon": [], "fused": [], "chosen": {}}
    for w in walks:
        name_w = common.walk_name(w)

        def train(p):
            return score.overall([r for k, r in p["walks"].items() if k != name_w])
        best = None
        for a in per_beacon:
            ta = train(a)
            for b in fused:
                tb = train(b)
                ok = (ta["enter_ratio"] <= TARGET_RATIO and tb["enter_ratio"] <= TARGET_RATIO
                      and tb["enters"] <= ta["enters"])
                key = (ok, ta["iou"] + tb["iou"])
                if best is None or key > best[0]:
                    best = (key, a, b)
        _, a, b = best
        out["chosen"][name_w] = {"per-beacon": a["point"], "fused": b["point"], "met on the others": best[0][0]}
        out["per-beacon"].append(a["walks"][name_w])
        out["fused"].append(b["walks"][name_w])
    return out


def svg(results: list[dict], targets: dict[str, float], engine: dict | None = None) -> str:
    W, H, L, B, R, T = 640, 420, 60, 50, 150, 20
    xmax = max(5.0, max(p["overall"]["enter_ratio"] for r in results for p in r["points"]) * 1.05)
    ymax = 0.8

    def X(v): return L + (W - L - R) * v / xmax

    def Y(v): return H - B - (H - B - T) * v / ymax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for k in range(0, int(xmax) + 1):
        out.append(f'<line x1="{X(k):.1f}" y1="{Y(0):.1f}" x2="{X(k):.1f}" y2="{Y(ymax):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{X(k):.1f}" y="{Y(0) + 14:.1f}" text-anchor="middle">{k}×</text>')
    for k in range(0, 9):
        v = k / 10
        out.append(f'<line x1="{X(0):.1f}" y1="{Y(v):.1f}" x2="{X(xmax):.1f}" y2="{Y(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{L - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 12}" text-anchor="middle">enters / true enters '
               f'({results[0]["points"][0]["overall"]["true_enters"]} true, {len(results[0]["points"][0]["walks"])} walks)</text>')
    out.append(f'<text x="16" y="{(T + H - B) / 2:.0f}" text-anchor="middle" transform="rotate(-90 16 {(T + H - B) / 2:.0f})">time IoU</text>')
    # Targets: the ratio limit, and the IoU targets with and without positions.
    out.append(f'<line x1="{X(TARGET_RATIO):.1f}" y1="{Y(0):.1f}" x2="{X(TARGET_RATIO):.1f}" y2="{Y(ymax):.1f}" stroke="#000" stroke-dasharray="4 3"/>')
    for label, v in targets.items():
        out.append(f'<line x1="{X(0):.1f}" y1="{Y(v):.1f}" x2="{X(TARGET_RATIO):.1f}" y2="{Y(v):.1f}" stroke="#000" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{X(TARGET_RATIO) + 4:.1f}" y="{Y(v) + 4:.1f}">{label} ≥ {v}</text>')
    for r in results:
        c = COLOURS.get(r["family"], "#9467bd")
        for p in r["points"]:
            o = p["overall"]
            out.append(f'<circle cx="{X(o["enter_ratio"]):.1f}" cy="{Y(o["iou"]):.1f}" r="3" fill="{c}" fill-opacity="0.55">'
                       f'<title>{p["spec"]}: {o["iou"]:.3f} / {o["enter_ratio"]:.2f}</title></circle>')
        h = r["held_out_overall"]
        out.append(f'<circle cx="{X(h["enter_ratio"]):.1f}" cy="{Y(h["iou"]):.1f}" r="7" fill="none" stroke="{c}" stroke-width="2.5">'
                   f'<title>{r["family"]} held out: {h["iou"]:.3f} / {h["enter_ratio"]:.2f}</title></circle>')
    if engine:
        # The engine's held-out figures: squares, filled for positions.
        for mode, fill in (("per-beacon", "white"), ("fused", "black")):
            h = score.overall(engine[mode])
            x, y = X(h["enter_ratio"]), Y(h["iou"])
            out.append(f'<rect x="{x - 6:.1f}" y="{y - 6:.1f}" width="12" height="12" fill="{fill}" stroke="black" stroke-width="2">'
                       f'<title>Geotrigger {mode} held out: {h["iou"]:.3f} / {h["enter_ratio"]:.2f}</title></rect>')
    for k, r in enumerate(results):
        c = COLOURS.get(r["family"], "#9467bd")
        y = T + 14 + 18 * k
        out.append(f'<circle cx="{W - R + 16}" cy="{y - 4}" r="4" fill="{c}"/>')
        out.append(f'<text x="{W - R + 26}" y="{y}">{r["family"]}</text>')
    y = T + 14 + 18 * len(results) + 8
    out.append(f'<circle cx="{W - R + 16}" cy="{y - 4}" r="6" fill="none" stroke="#000" stroke-width="2"/>')
    out.append(f'<text x="{W - R + 26}" y="{y}">held out (LOWO)</text>')
    out.append(f'<text x="{W - R + 10}" y="{y + 18}">dots: each grid point</text>')
    out.append(f'<text x="{W - R + 10}" y="{y + 32}">on all the walks</text>')
    if engine:
        out.append(f'<rect x="{W - R + 10}" y="{y + 42}" width="12" height="12" fill="white" stroke="black" stroke-width="2"/>')
        out.append(f'<text x="{W - R + 26}" y="{y + 52}">engine, no positions</text>')
        out.append(f'<rect x="{W - R + 10}" y="{y + 60}" width="12" height="12" fill="black" stroke="black" stroke-width="2"/>')
        out.append(f'<text x="{W - R + 26}" y="{y + 70}">engine, positions</text>')
        out.append(f'<text x="{W - R + 10}" y="{y + 86}">(held out, --engine)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--svg")
    ap.add_argument("--engine", action="store_true",
                    help="also choose the engine's constants jointly, leaving each walk out (runs ENGINE's families)")
    a = ap.parse_args(argv)
    if a.engine:
        a.families = list(dict.fromkeys(list(a.families) + list(ENGINE)))
    sensors = common.load_sensors()
    walks = common.default_walks()
    results = []
    for f in a.families:
        if f not in FAMILIES:
            raise SystemExit(f"unknown family {f}; one of {', '.join(FAMILIES)}")
        r = run_family(f, walks, sensors)
        results.append(r)
        if not a.json:
            h = r["held_out_overall"]
            print(f"== {f}: {len(r['points'])} grid points")
            for w, res in zip(walks, r["held_out"]):
                print(f"   held out {common.walk_name(w):30s} {res['iou']:.3f} / {res['enter_ratio']:.2f}"
                      f"   chosen on the others: {r['chosen'][common.walk_name(w)]}")
            print(f"   HELD-OUT OVERALL {h['iou']:.3f} / {h['enter_ratio']:.2f} ({h['enters']} enters)")
            best = max(r["points"], key=lambda p: p["overall"]["iou"])
            print(f"   best in-sample (for reference, not a score): {best['overall']['iou']:.3f} / "
                  f"{best['overall']['enter_ratio']:.2f} {best['spec']}")
    engine = engine_lowo({r["family"]: r for r in results}, walks) if a.engine else None
    if engine and not a.json:
        print("== engine: constants chosen jointly on the other walks")
        for mode in ("per-beacon", "fused"):
            for w, res in zip(walks, engine[mode]):
                print(f"   {mode:10s} held out {common.walk_name(w):30s} {res['iou']:.3f} / {res['enter_ratio']:.2f}"
                      f" ({res['enters']} of {res['true_enters']})")
            h = score.overall(engine[mode])
            print(f"   {mode:10s} HELD-OUT OVERALL {h['iou']:.3f} / {h['enter_ratio']:.2f} ({h['enters']} enters)")
        for w, c in engine["chosen"].items():
            print(f"   chosen without {w}: {c}")
    if a.svg:
        Path(a.svg).write_text(svg(results, {"with positions": 0.42, "without": 0.33}, engine))
    if a.json:
        print(json.dumps({"families": [{k: v for k, v in r.items() if k != "points"} | {
            "points": [{"spec": p["spec"], "overall": p["overall"]} for p in r["points"]]} for r in results],
            "engine": engine and {"chosen": engine["chosen"],
                                  "held_out": {m: score.overall(engine[m]) for m in ("per-beacon", "fused")}}},
            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
