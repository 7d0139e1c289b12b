"""Shared helpers for the BLE walk tools: dataset location, walk and sensor loading, intervals.

The position-annotated BLE dataset (Danis et al., CC0) is NOT in this repository. Every tool reads
it from ../shared/datasets/ble_position_annotated_cc0 relative to the repository root (override
with the environment variable GEOTRIGGER_BLE_DATASET) and stops with a clear message when it is
absent.

Framing. In the dataset 12 fixed receivers ("sensors") hear one walking transmitter (the "tag").
Geotrigger's model is the other way round (a phone hears fixed iBeacons), so each sensor is
modelled as a beacon (UUID BEACON_UUID, major 1, minor = the sensor number, e.g. sensor10 -> 10)
and the tag as the device "tag". The radio path is reciprocal, so the RSSI a sensor measured is
what a phone at the tag's place would have measured from a beacon at the sensor's place (up to the
two radios' calibrations, which the measured power absorbs).
"""
from __future__ import annotations

import bisect
import csv
import datetime as dt
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATASET_ENV = "GEOTRIGGER_BLE_DATASET"
DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "datasets" / "ble_position_annotated_cc0"

BEACON_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
BEACON_MAJOR = 1
DEVICE = "tag"
NEAR_RADIUS = 3.0  # SPEC §4: near < 3 m


def dataset_dir() -> Path:
    return Path(os.environ.get(DATASET_ENV, DEFAULT_DATASET))


def require_dataset() -> Path:
    """The dataset directory, or exit 66 with a message saying where it was expected."""
    d = dataset_dir()
    if not (d / "cnf" / "tetam.dev").is_file() or not (d / "trk").is_dir():
        sys.stderr.write(
            f"BLE dataset not found at {d}\n"
            "  It is not shipped with the repository (licence rule). Expected the directory\n"
            "  ../shared/datasets/ble_position_annotated_cc0 next to the repository root, with\n"
            f"  cnf/tetam.dev and trk/*.mbd (or set {DATASET_ENV}).\n")
        sys.exit(66)
    return d


def default_walks() -> list[Path]:
    return sorted((require_dataset() / "trk").glob("*.mbd"))


def resolve_walk(arg: str) -> Path:
    """A walk given as a path, or as a bare name found in the dataset's trk/ directory."""
    p = Path(arg)
    if p.is_file():
        return p
    d = require_dataset() / "trk"
    for cand in (d / arg, d / f"{arg}.mbd", d / f"{arg}_all_sensors.mbd"):
        if cand.is_file():
            return cand
    sys.stderr.write(f"walk not found: {arg} (looked in {d} too)\n")
    sys.exit(66)


def walk_name(path: Path) -> str:
    return path.name.removesuffix(".mbd").removesuffix("_all_sensors")


@dataclass(frozen=True)
class Sensor:
    mac: str
    name: str            # "sensor10"
    minor: int           # 10
    pos: tuple[float, float, float]  # metres, dataset frame (x east, y north, z up)


def load_sensors(dataset: Path | None = None) -> dict[str, Sensor]:
    """Sensors by MAC, from cnf/tetam.dev ("Dongles:{mac: [[x,y,z], colour, alias], ...}")."""
    dataset = dataset or require_dataset()
    text = (dataset / "cnf" / "tetam.dev").read_text()
    m = re.search(r"Dongles:\s*(\{.*?\})\s*$", text, re.M | re.S)
    if not m:
        raise SystemExit(f"{dataset}/cnf/tetam.dev: no 'Dongles:' line")
    raw = json.loads(m.group(1))
    out = {}
    for mac, (pos, _colour, alias) in raw.items():
        minor = int(alias.removeprefix("sensor"))
        out[mac] = Sensor(mac, alias, minor, (float(pos[0]), float(pos[1]), float(pos[2])))
    return out


@dataclass(frozen=True)
class Row:
    t: float
    t_text: str          # the timestamp exactly as written in the file
    sensor: Sensor
    rssi: int
    pos: tuple[float, float, float]  # ground truth of the tag at this sighting

    def true_distance(self) -> float:
        return math.dist(self.pos, self.sensor.pos)


def load_walk(path: Path, sensors: dict[str, Sensor] | None = None) -> list[Row]:
    """Rows of one .mbd walk, in time order.

    Two of the walks have one pair of rows out of order by microseconds (the per-sensor logs were
    merged); a STABLE sort by time fixes that, as geotrigger rejects a reading older than its
    device's previous one.
    """
    sensors = sensors or load_sensors()
    rows = []
    with open(path, newline="") as f:
        for lineno, rec in enumerate(csv.reader(f), 1):
            if not rec:
                continue
            if len(rec) < 7:
                raise SystemExit(f"{path}:{lineno}: expected >= 7 fields, got {len(rec)}")
            s = sensors.get(rec[1])
            if s is None:
                raise SystemExit(f"{path}:{lineno}: unknown sensor {rec[1]}")
            rows.append(Row(float(rec[0]), rec[0], s, int(rec[3]),
                            (float(rec[4]), float(rec[5]), float(rec[6]))))
    rows.sort(key=lambda r: r.t)
    return rows


# ---------------------------------------------------------------- intervals

Intervals = list[tuple[float, float]]   # sorted, disjoint, half-open [a, b)


def total(iv: Intervals) -> float:
    return sum(b - a for a, b in iv)


def normalize(iv: Intervals) -> Intervals:
    out: Intervals = []
    for a, b in sorted(x for x in iv if x[1] > x[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def intersect(x: Intervals, y: Intervals) -> Intervals:
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append((a, b))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def clip(iv: Intervals, lo: float, hi: float) -> Intervals:
    return [(max(a, lo), min(b, hi)) for a, b in iv if min(b, hi) > max(a, lo)]


def union_length(x: Intervals, y: Intervals) -> float:
    return total(x) + total(y) - total(intersect(x, y))


# ---------------------------------------------------------------- time

def rfc3339(t: float) -> str:
    """UTC with milliseconds, as geotrigger writes (SPEC §4)."""
    ms = math.floor(t * 1000 + 0.5)
    d = dt.datetime.fromtimestamp(ms // 1000, dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def parse_time(v) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    return dt.datetime.fromisoformat(s).timestamp()


def bisect_right(a, x):  # re-export for the tools
    return bisect.bisect_right(a, x)
