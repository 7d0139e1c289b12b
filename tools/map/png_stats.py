#!/usr/bin/env python3
"""What a rendered map looks like, in numbers: reads a PNG (8-bit RGB or RGBA, as headless
Chromium writes its screenshots) with the standard library only, and prints JSON:
  {"width", "height", "background": fraction of pixels equal to the most common colour,
   "colours": {"#rrggbb": fraction of pixels within --tolerance of it, ...},
   "dark": {"x0,y0,x1,y1": fraction of dark pixels (text) in that box, ...}}
Used by the map tests (MapRenderTests) as a reader of the picture independent of the code that
drew it.

usage: png_stats.py FILE.png [--colour #rrggbb ...] [--box x0,y0,x1,y1 ...] [--tolerance N]
"""
import json
import struct
import sys
import zlib
from collections import Counter


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width, height, colour_type = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour_type not in (2, 6) or interlace:
                raise SystemExit(f"{path}: only 8-bit RGB/RGBA, non-interlaced PNGs are read")
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, k = [], bytearray(stride), 0
    for _ in range(height):
        f = raw[k]
        line = bytearray(raw[k + 1:k + 1 + stride])
        k += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    pixels = [[tuple(row[x * channels:x * channels + 3]) for x in range(width)] for row in rows]
    return width, height, pixels


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    path, colours, boxes, tolerance = args[0], [], [], 40
    i = 1
    while i < len(args):
        if args[i] == "--colour":
            colours.append(args[i + 1])
        elif args[i] == "--box":
            boxes.append(args[i + 1])
        elif args[i] == "--tolerance":
            tolerance = int(args[i + 1])
        i += 2
    width, height, pixels = read_png(path)
    counts = Counter(p for row in pixels for p in row)
    total = width * height
    result = {"width": width, "height": height, "background": counts.most_common(1)[0][1] / total,
              "colours": {}, "dark": {}}
    for hexcolour in colours:
        target = tuple(int(hexcolour[j:j + 2], 16) for j in (1, 3, 5))
        near = sum(n for c, n in counts.items() if max(abs(c[j] - target[j]) for j in range(3)) <= tolerance)
        result["colours"][hexcolour] = near / total
    for box in boxes:
        x0, y0, x1, y1 = (int(v) for v in box.split(","))
        area = [pixels[y][x] for y in range(max(0, y0), min(height, y1)) for x in range(max(0, x0), min(width, x1))]
        dark = sum(1 for p in area if sum(p) < 3 * 110)
        result["dark"][box] = dark / max(1, len(area))
    print(json.dumps(result))


main()
