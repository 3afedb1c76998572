#!/usr/bin/env bash
# Checks `docstore inspect --html` as a person sees it: writes the report of the demo store, has
# headless Chromium take a screenshot of it, and checks the picture — the page map's squares are
# drawn in the colors of their trees (pixels of the Note records' color and of the free pages'
# are counted) — then leaves the PNG for a look. Installs chromium first if it is missing.
#   scripts/html-report-check.sh [OUT_DIR]      (default /tmp/docstore-html-check)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-deps.sh --browser
swift build --product docstore
bin="$(swift build --show-bin-path)/docstore"
out="${1:-/tmp/docstore-html-check}"
rm -rf "$out" && mkdir -p "$out"
"$bin" demo "$out/Notes.docstore" > /dev/null
"$bin" inspect "$out/Notes.docstore" --html "$out/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,1300 \
  --screenshot="$out/report.png" "file://$out/report.html" 2> "$out/chromium.log"
python3 - "$out" <<'PY'
import colorsys, re, struct, sys, zlib
out = sys.argv[1]
html = open(f"{out}/report.html").read()
# The color the report gives the Note records' tree (its legend entry) and free pages.
m = re.search(r'background:hsl\((\d+), 65%, (\d+)%\)"></span>(records\.\d+) — records of Note', html)
assert m, "the legend has no entry for the records of Note"
h, l = int(m.group(1)), int(m.group(2))
r, g, b = (round(c * 255) for c in colorsys.hls_to_rgb(h / 360, l / 100, 0.65))
free = (0xdd, 0xe3, 0xea)

def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"unexpected PNG type {ctype}/{depth}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, rows, prev, stride = zlib.decompress(idat), [], None, width * bpp
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            up = prev[x] if prev else 0
            c = prev[x - bpp] if prev and x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + up) & 255
            elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c
                pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    for line in rows:
        for x in range(0, stride, bpp):
            yield tuple(line[x:x + 3])

counts = {}
for px in pixels(f"{out}/report.png"):
    counts[px] = counts.get(px, 0) + 1
near = lambda want: sum(n for px, n in counts.items() if all(abs(px[i] - want[i]) <= 2 for i in range(3)))
notes, blank = near((r, g, b)), near(free)
print(f"screenshot {out}/report.png: {notes} pixels in the color of {m.group(3)} (records of Note), {blank} in the free pages' color, {len(counts)} colors")
# 46 leaf and branch pages of Note records, 144 pixels each, drawn in its color (legend, table
# swatch and bar add a little); the free pages' squares in theirs.
assert notes > 40 * 100, "the page map's Note squares are not drawn"
assert blank > 15 * 100, "the free pages' squares are not drawn"
print("ok: the page map is drawn in its trees' colors")
PY
