"""Shared helpers for the Geotrigger oracle scripts: reading GPX / NDJSON readings, times, output.

Part of tools/oracle/ (see tools/oracle/README.md). Pure standard library; the scripts that
import it need `pip install geographiclib shapely` (tested with geographiclib 2.1, shapely 2.x,
Python 3.11). Not run by CI: developers run tools/oracle/make_fixtures.sh to regenerate fixtures.

Times are handled as exact decimals (`decimal.Decimal` Unix seconds) so that ordering and the
millisecond rounding of the output do not depend on binary floating point.
"""
from __future__ import annotations

import calendar
import heapq
import json
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_rfc3339(text: str) -> Decimal:
    """RFC 3339 / GPX xsd:dateTime -> exact Unix seconds. Any number of fraction digits."""
    m = _RFC3339.match(text.strip())
    if not m:
        raise ValueError(f"bad time {text!r}")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    whole = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    frac = Decimal(m.group(7)) if m.group(7) else Decimal(0)
    tz = m.group(8)
    off = 0
    if tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        off = sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return Decimal(whole - off) + frac


def format_ms(t: Decimal) -> str:
    """Exact Unix seconds -> RFC 3339 UTC with milliseconds, rounded to the nearest ms (ties to even)."""
    ms = int((t * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))
    sec, msr = divmod(ms, 1000)  # floor division: correct for negative (pre-1970) times too
    days, rem = divmod(sec, 86400)
    # calendar from days since epoch (proleptic Gregorian, works before 1970)
    import datetime as _dt

    date = _dt.date(1970, 1, 1) + _dt.timedelta(days=days)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    return f"{date.year:04d}-{date.month:02d}-{date.day:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{msr:03d}Z"


@dataclass
class Fix:
    t: Decimal          # exact Unix seconds
    device: str
    lat: float
    lon: float
    source: str         # "FILE:LINE" or "FILE:trkpt#N"
    t_text: str = ""    # the time as written in the input


def device_from_path(path: str) -> str:
    base = os.path.basename(path)
    return base.rsplit(".", 1)[0] if "." in base else base


def read_gpx(path: str, device: str | None = None, stats: dict | None = None):
    """Yields a Fix for every <trkpt> with a <time> (GPX 1.0 and 1.1), in document order."""
    dev = device or device_from_path(path)
    tree = ET.parse(path)
    n = 0
    for el in tree.iter():
        if not el.tag.endswith("trkpt"):
            continue
        n += 1
        time_el = None
        for ch in el:
            if ch.tag.endswith("}time") or ch.tag == "time":
                time_el = ch
        if time_el is None or not (time_el.text or "").strip():
            if stats is not None:
                stats["trkpt_without_time"] = stats.get("trkpt_without_time", 0) + 1
            continue
        txt = time_el.text.strip()
        yield Fix(parse_rfc3339(txt), dev, float(el.get("lat")), float(el.get("lon")),
                  f"{os.path.basename(path)}:trkpt#{n}", txt)


def read_ndjson(path: str, stats: dict | None = None):
    """Yields a Fix for every NDJSON GPS fix (records with lat and lon). Other records are skipped."""
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line, parse_float=Decimal, parse_int=Decimal)
            if "lat" not in rec or "lon" not in rec:
                if stats is not None:
                    stats["not_a_fix"] = stats.get("not_a_fix", 0) + 1
                continue
            t = rec["t"]
            if isinstance(t, str):
                t = parse_rfc3339(t)
            lat, lon = float(rec["lat"]), float(rec["lon"])
            if not (-90 <= lat <= 90 and -180 <= lon <= 180) or not rec.get("device"):
                if stats is not None:
                    stats["invalid_fix"] = stats.get("invalid_fix", 0) + 1
                continue
            yield Fix(Decimal(t), str(rec["device"]), lat, lon, f"{os.path.basename(path)}:{ln}", str(rec["t"]))


def read_any(path: str, stats: dict | None = None):
    low = path.lower()
    if low.endswith(".gpx"):
        return read_gpx(path, stats=stats)
    if low.endswith(".ndjson") or low.endswith(".jsonl"):
        return read_ndjson(path, stats=stats)
    raise SystemExit(f"{path}: unknown reading format (want .gpx, .ndjson or .jsonl)")


def merged(paths: list[str], stats: dict | None = None):
    """K-way merge of the inputs by time; equal times keep file order (heapq.merge is stable
    across its iterables in argument order). Each file is assumed to be in time order, as the
    spec says; a file that is not is merged the way a streaming k-way merge would do it."""
    streams = [read_any(p, stats) for p in paths]
    return heapq.merge(*streams, key=lambda fx: fx.t)


def dump_event_line(t: Decimal, event: str, device: str, region: str) -> str:
    return json.dumps({"t": format_ms(t), "event": event, "device": device, "region": region},
                      ensure_ascii=False, separators=(",", ":"))
