#!/usr/bin/env python3
"""Score the real geotrigger binary on every BLE walk, without and with beacon positions.

Usage:
  python3 tools/ble/evaluate.py --binary .build/release/geotrigger [--json] [WALK ...]
  python3 tools/ble/evaluate.py --binary … --calibrated [--fit-exponent] [--json] [WALK ...]
  python3 tools/ble/evaluate.py --binary … --lowo [--svg FILE]   (+ leave-one-walk-out families)

For each walk (default: all in the dataset's trk/), and for each mode:
  * "per-beacon": beacon regions without a position (only RSSI decides),
  * "fused":      the same regions with a Point each (positions fused from several beacons),
it converts the walk (convert.py), runs `geotrigger replay` on the sightings with default options,
and scores the events (score.py: IoU of the `near`-zone intervals against the truth, and enters
against true enters). Prints one table per mode with per-walk and overall rows; `--json` prints
{"per-beacon": {...overall...}, "fused": {...}} for tests. Standard library only.

--calibrated: LEAVE-ONE-WALK-OUT per-receiver calibration. For each scored walk W,
calibrate.py estimates every sensor's measuredPower (n fixed at 2, median of RSSI + 20 log10 d
over samples at 1-8 m true 3-D distance) from the OTHER walks of the dataset (all walks in trk/,
not only those named on the command line, minus W), writes them into W's regions and scores W.
W's own RSSI or truth never enters its calibration. --fit-exponent also fits one shared n on the
other walks (off by default). Without --calibrated the run is the uncalibrated one, unchanged.

The dataset is read from ../shared/datasets/ble_position_annotated_cc0 (or $GEOTRIGGER_BLE_DATASET);
it is not shipped with the project. Exits 66 when it is absent.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import calibrate  # noqa: E402
import convert  # noqa: E402
import score  # noqa: E402

MODES = {"per-beacon": False, "fused": True}


def leave_one_out(walks: list[Path], pool: list[Path], fit_exponent=False) -> dict[Path, dict]:
    """For each walk, calibrate.py's result from the walks of `pool` other than it."""
    out = {}
    for w in walks:
        others = [p for p in pool if p.resolve() != w.resolve()]
        if not others:
            raise SystemExit(f"--calibrated: no other walk to calibrate {common.walk_name(w)} on")
        out[w] = calibrate.calibrate(others, fit_exponent=fit_exponent)
    return out


def evaluate(binary: Path, walks: list[Path], calibrations: dict[Path, dict] | None = None) -> dict:
    results = {}
    with tempfile.TemporaryDirectory(prefix="geotrigger-ble-") as tmp:
        for mode, positions in MODES.items():
            walk_results = []
            for walk in walks:
                out = Path(tmp) / f"{common.walk_name(walk)}-{mode}"
                cal = (calibrations or {}).get(walk)
                if cal is None:
                    convert.convert(walk, out, positions=positions)
                else:
                    convert.convert(walk, out, positions=positions,
                                    exponent=cal.get("pathLossExponent"),
                                    calibration=cal["measuredPower"])
                events = out / "events.ndjson"
                subprocess.run([str(binary), "replay", "--regions", str(out / "regions.geojson"),
                                "--output", str(events), "--quiet", str(out / "sightings.ndjson")], check=True)
                walk_results.append(score.score_walk(walk, score.read_events(events)))
            results[mode] = {"walks": walk_results, "overall": score.overall(walk_results)}
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, type=Path, help="the geotrigger executable")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--calibrated", action="store_true",
                        help="leave-one-walk-out per-sensor measuredPower (calibrate.py)")
    parser.add_argument("--fit-exponent", action="store_true",
                        help="with --calibrated: also fit one shared n on the other walks")
    parser.add_argument("--lowo", action="store_true",
                        help="also the leave-one-walk-out table of the method families (lowo.py): "
                             "constants chosen on two walks, the third scored, rotated")
    parser.add_argument("--svg", help="with --lowo: the IoU / enters trade-off chart to this file")
    parser.add_argument("walks", nargs="*")
    args = parser.parse_args(argv)
    common.require_dataset()
    if args.fit_exponent and not args.calibrated:
        parser.error("--fit-exponent needs --calibrated")
    walks = [common.resolve_walk(w) for w in args.walks] or common.default_walks()
    calibrations = (leave_one_out(walks, common.default_walks(), args.fit_exponent)
                    if args.calibrated else None)
    results = evaluate(args.binary, walks, calibrations)
    if args.json:
        print(json.dumps({mode: r["overall"] for mode, r in results.items()}, indent=1))
    else:
        label = ""
        if calibrations:
            label = ", leave-one-walk-out calibrated" + (" (+ shared n)" if args.fit_exponent else "")
            for w, cal in calibrations.items():
                print(f"calibration for {common.walk_name(w)} (from {', '.join(cal['walks'])}, "
                      f"n = {cal['exponent_used']}): "
                      + " ".join(f"{k.removeprefix('sensor')}:{v:g}"
                                 for k, v in cal["measuredPower"].items()))
        for mode, r in results.items():
            print(score.table(r["walks"], title=f"geotrigger, {mode}{label}"))
    if args.lowo:
        # The scores above use the engine's defaults on every walk; those defaults were chosen
        # leaving one walk out (lowo.py --engine, below, which also gives the held-out figures).
        import lowo
        print()
        lowo.main(["--engine"] + (["--svg", args.svg] if args.svg else []) + (["--json"] if args.json else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
