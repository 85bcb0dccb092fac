"""Checks a screenshot of report.html (a PNG from headless Chromium):
the heatmap was drawn (many distinct colours of its colour ramp), the
origin is marked (magenta #ff00ff pixels) and non-finite cells are red.
No imaging library: PNG decoded here (8-bit RGB/RGBA, non-interlaced)."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = decode(sys.argv[1])
    colours, magenta, red = set(), 0, 0
    for row in rows:
        for x in range(0, w * bpp, bpp):
            px = row[x:x + 3]
            colours.add(px)
            if px == b"\xff\x00\xff":
                magenta += 1
            elif px == b"\xd0\x00\x00":
                red += 1
    print("screenshot %dx%d: %d colours, %d magenta (origin) px, %d red (non-finite) px"
          % (w, h, len(colours), magenta, red))
    ok = len(colours) >= 40 and magenta >= 30 and red >= 20
    if not ok:
        print("ERROR: the heatmap, its origin mark or its non-finite cells are missing")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
