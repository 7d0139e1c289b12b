#!/usr/bin/env python3
"""Score beacon `near`-zone events against the true intervals of the BLE walks.

Usage:
  python3 tools/ble/score.py --events EVENTS.ndjson WALK.mbd   # geotrigger's output for one walk
  python3 tools/ble/score.py --model naive [WALK ...]           # simulate a model (no WALK = all)
  python3 tools/ble/score.py --model beacon|fused [...] [--json]   # the prototype's estimators
  (a model may take parameters: --model naive:alpha=0.3, --model fused:window=3)

EVENTS is geotrigger's NDJSON output for the walk converted by convert.py: lines
{"t":"RFC 3339","event":"enter"|"exit","device":"tag","region":"sensor10",…}. Other events
(dwell, deliver) and other devices are ignored. A region still entered at the end is closed at
the walk's end; every interval is clipped to the walk's window [t_0, t_K] (the truth is unknown
outside it; an exit stamped last sighting + --beacon-exit may lie beyond t_K). An exit without an
enter, or a second enter while inside, is reported as an inconsistency and otherwise ignored.

Scores (per walk, and overall = the same sums over all walks):
  IoU          = sum over sensors of |ours ∩ truth| / sum over sensors of |ours ∪ truth| (seconds)
  enters       = number of our enter events (clipped to the window)
  true enters  = number of true intervals (truth.py)
  enter ratio  = enters / true enters
Truth: truth.py (3-D distance tag-sensor < 3 m, zero-order hold between consecutive samples).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import truth as truth_mod  # noqa: E402


def events_to_intervals(events, t_end: float, device: str = common.DEVICE,
                        warn=None):
    """Per region, the inside intervals and the number of enters, from enter/exit events."""
    open_at: dict[str, float] = {}
    iv: dict[str, common.Intervals] = {}
    enters: dict[str, list[float]] = {}
    for ev in events:
        if ev.get("device", device) != device or ev.get("event") not in ("enter", "exit"):
            continue
        region, t = ev["region"], common.parse_time(ev["t"])
        if ev["event"] == "enter":
            if region in open_at:
                if warn:
                    warn(f"second enter of {region} at {ev['t']} while inside; ignored")
                continue
            open_at[region] = t
            enters.setdefault(region, []).append(t)
        else:
            if region not in open_at:
                if warn:
                    warn(f"exit of {region} at {ev['t']} without an enter; ignored")
                continue
            iv.setdefault(region, []).append((open_at.pop(region), t))
    for region, t in open_at.items():
        iv.setdefault(region, []).append((t, max(t, t_end)))
    return ({r: common.normalize(x) for r, x in iv.items()},
            {r: len(x) for r, x in enters.items()}, enters)


def score_walk(walk: Path, events, sensors=None, warn=None) -> dict:
    sensors = sensors or common.load_sensors()
    rows = common.load_walk(walk, sensors)
    t0, t1 = rows[0].t, rows[-1].t
    tv = truth_mod.true_intervals(rows, sensors)
    ours, _, enter_times = events_to_intervals(events, t1, warn=warn)
    per = {}
    inter = union = 0.0
    n_ours = n_true = 0
    for s in sorted(sensors.values(), key=lambda s: s.minor):
        o = common.clip(ours.get(s.name, []), t0, t1)
        t = tv[s.name]
        i = common.total(common.intersect(o, t))
        u = common.union_length(o, t)
        e = sum(1 for x in enter_times.get(s.name, []) if t0 <= x <= t1)
        per[s.name] = {"inter": i, "union": u, "enters": e, "true_enters": len(t),
                       "ours_s": common.total(o), "true_s": common.total(t)}
        inter += i
        union += u
        n_ours += e
        n_true += len(t)
    return {"walk": common.walk_name(walk), "duration": t1 - t0, "inter": inter, "union": union,
            "iou": inter / union if union else 1.0, "enters": n_ours, "true_enters": n_true,
            "enter_ratio": n_ours / n_true if n_true else float("nan"), "sensors": per}


def overall(results: list[dict]) -> dict:
    inter = sum(r["inter"] for r in results)
    union = sum(r["union"] for r in results)
    e = sum(r["enters"] for r in results)
    te = sum(r["true_enters"] for r in results)
    return {"walk": "overall", "inter": inter, "union": union,
            "iou": inter / union if union else 1.0, "enters": e, "true_enters": te,
            "enter_ratio": e / te if te else float("nan")}


def table(results: list[dict], title: str = "", per_sensor=False) -> str:
    lines = []
    if title:
        lines.append(title)
    lines.append(f"{'walk':32s} {'IoU':>6s} {'enters':>6s} {'true':>5s} {'ratio':>6s}"
                 f" {'∩ s':>7s} {'∪ s':>7s}")
    for r in results + [overall(results)]:
        lines.append(f"{r['walk']:32s} {r['iou']:6.3f} {r['enters']:6d} {r['true_enters']:5d}"
                     f" {r['enter_ratio']:6.2f} {r['inter']:7.1f} {r['union']:7.1f}")
        if per_sensor and "sensors" in r:
            for name, s in r["sensors"].items():
                if s["union"] or s["enters"]:
                    lines.append(f"    {name:28s} {s['inter'] / s['union'] if s['union'] else 1:6.3f}"
                                 f" {s['enters']:6d} {s['true_enters']:5d}        "
                                 f"{s['inter']:7.1f} {s['union']:7.1f}")
    return "\n".join(lines)


def read_events(path: Path):
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("walks", nargs="*", help="walk .mbd paths or names (default: all in trk/)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--events", type=Path, help="geotrigger output for ONE walk")
    g.add_argument("--model", help="simulate: naive, beacon, fused (see prototype.py)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--per-sensor", action="store_true")
    a = ap.parse_args(argv)
    sensors = common.load_sensors()
    walks = [common.resolve_walk(w) for w in a.walks] or common.default_walks()
    warn = lambda m: sys.stderr.write(f"warning: {m}\n")  # noqa: E731
    if a.events:
        if len(walks) != 1:
            ap.error("--events scores exactly one walk")
        events = list(read_events(a.events))
        if not any(e.get("event") in ("enter", "exit") for e in events):
            warn(f"{a.events} has no enter/exit events")
        results = [score_walk(walks[0], events, sensors, warn)]
        title = f"events {a.events}"
    else:
        import prototype
        model = prototype.make_model(a.model)
        results = []
        for w in walks:
            rows = common.load_walk(w, sensors)
            results.append(score_walk(w, model.run(rows, sensors), sensors, warn))
        title = f"model {a.model}: {model.describe()}"
    if a.json:
        print(json.dumps({"title": title, "walks": results, "overall": overall(results)},
                         indent=1))
    else:
        print(table(results, title, a.per_sensor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
