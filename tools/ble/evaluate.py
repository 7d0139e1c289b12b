#!/usr/bin/env python3
"""Score the real geotrigger binary on every BLE walk, without and with beacon positions.

Usage:
  python3 tools/ble/evaluate.py --binary .build/release/geotrigger [--json] [WALK ...]

For each walk (default: all in the dataset's trk/), and for each mode:
  * "per-beacon": beacon regions without a position (only RSSI decides),
  * "fused":      the same regions with a Point each (positions fused from several beacons),
it converts the walk (convert.py), runs `geotrigger replay` on the sightings with default options,
and scores the events (score.py: IoU of the `near`-zone intervals against the truth, and enters
against true enters). Prints one table per mode with per-walk and overall rows; `--json` prints
{"per-beacon": {...overall...}, "fused": {...}} for tests. Standard library only.

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
import convert  # noqa: E402
import score  # noqa: E402

MODES = {"per-beacon": False, "fused": True}


def evaluate(binary: Path, walks: list[Path]) -> dict:
    results = {}
    with tempfile.TemporaryDirectory(prefix="geotrigger-ble-") as tmp:
        for mode, positions in MODES.items():
            walk_results = []
            for walk in walks:
                out = Path(tmp) / f"{common.walk_name(walk)}-{mode}"
                convert.convert(walk, out, positions=positions)
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
    parser.add_argument("walks", nargs="*")
    args = parser.parse_args(argv)
    common.require_dataset()
    walks = [common.resolve_walk(w) for w in args.walks] or common.default_walks()
    results = evaluate(args.binary, walks)
    if args.json:
        print(json.dumps({mode: r["overall"] for mode, r in results.items()}, indent=1))
    else:
        for mode, r in results.items():
            print(score.table(r["walks"], title=f"geotrigger, {mode}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
