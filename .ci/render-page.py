#!/usr/bin/env python3
"""render-page.py PAGE.html OUT.png: renders a `report --html` page in
headless Chromium to OUT.png, and fails (exit 1, naming why) when Chromium
logs an error, when the page is blank, or when it is cut off.

Chromium's --screenshot takes the window, not the page: the window starts
2000 px tall and doubles until the bottom band of the screenshot is page
background (the page ended above it), up to 32000 px. Blank means fewer
than MIN_COLOURS distinct colours, or non-background pixels in under
MIN_COVERED of the page's tiles above its bottom. The PNG is read with the
standard library only (zlib, struct): 8-bit RGB or RGBA, not interlaced,
which is what Chromium writes.
"""

import itertools
import operator
import struct
import subprocess
import sys
import tempfile
import zlib

WIDTH = 1400
FIRST_HEIGHT = 2000
MOST_HEIGHT = 32000
# Rows at the bottom that must be background for the page to have ended.
BOTTOM_BAND = 40
TILE = 64
MIN_COLOURS = 16
MIN_COVERED = 0.25

# Lines Chromium logs at ERROR level in a headless container that say
# nothing about the page, each with why it is harmless:
HARMLESS_ERRORS = [
    # No D-Bus system or session bus in a container: Chromium asks it for
    # power, screensaver and Bluetooth services the page never uses.
    "ERROR:dbus/bus.cc",
    "ERROR:dbus/object_proxy.cc",
    # With --disable-gpu and no GPU device, the GPU process may give up at
    # start; headless Chromium draws in software (SwiftShader/Skia) anyway.
    "ERROR:components/viz/service/main/viz_main_impl.cc",
    "ERROR:gpu/",
    "ERROR:ui/gl/",
    # The compositor compares two processes' clock readings; on a busy VM
    # the later one can read earlier by a fraction of a millisecond. It
    # says nothing of the page (CI saw "-0.128 ms" once in 28 pages).
    "Frame latency is negative",
]


def chromium(page, out, height):
    """Renders `page` in a window WIDTH x height into `out`; returns the
    ERROR lines Chromium logged that are not known to be harmless."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [
                "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{height}",
                "--enable-logging=stderr", "--v=0",
                f"--screenshot={out}", f"file://{page}",
            ],
            capture_output=True, text=True, timeout=120, check=False,
        )
    if result.returncode != 0:
        sys.exit(f"{page}: chromium exited {result.returncode}:\n{result.stderr}")
    return [
        line for line in result.stderr.splitlines()
        if "ERROR" in line and not any(h in line for h in HARMLESS_ERRORS)
    ]


def read_png(path):
    """(width, height, rows): each row a bytes of RGB(A) pixels."""
    with open(path, "rb") as png:
        data = png.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    at, idat, header = 8, [], None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        sys.exit(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}: unread")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], raw[start + 1:start + 1 + stride]
        previous = unfilter(kind, line, previous, channels)
        rows.append(previous)
    return width, height, channels, rows


def unfilter(kind, line, previous, bpp):
    """One scanline with its PNG filter undone; None, Sub and Up run in
    C (map, accumulate), Average and Paeth byte by byte."""
    if kind == 0:
        return line
    if kind == 2:
        return bytes(map(operator.and_, map(operator.add, line, previous),
                         itertools.repeat(255)))
    if kind == 1:
        out = bytearray(len(line))
        for channel in range(bpp):
            sums = itertools.accumulate(line[channel::bpp])
            out[channel::bpp] = bytes(map(operator.and_, sums, itertools.repeat(255)))
        return bytes(out)
    out = bytearray(line)
    if kind == 3:
        for i in range(len(out)):
            left = out[i - bpp] if i >= bpp else 0
            out[i] = (out[i] + ((left + previous[i]) >> 1)) & 255
        return bytes(out)
    for i in range(bpp):
        out[i] = (out[i] + previous[i]) & 255
    for i in range(bpp, len(out)):
        a, b, c = out[i - bpp], previous[i], previous[i - bpp]
        pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
        out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return bytes(out)


def pixels(row, channels):
    """The row's pixels as RGB triples."""
    return zip(row[0::channels], row[1::channels], row[2::channels])


def main(page, out):
    height = FIRST_HEIGHT
    while True:
        errors = chromium(page, out, height)
        if errors:
            sys.exit(f"{page}: chromium logged errors:\n" + "\n".join(errors))
        width, rows_count, channels, rows = read_png(out)
        # The top left pixel is the page's own background (its margin).
        blank_row = rows[0][:channels] * width
        if all(row == blank_row for row in rows[-BOTTOM_BAND:]):
            break
        if height * 2 > MOST_HEIGHT:
            sys.exit(f"{page}: cut off: still not ended at {height} px")
        height *= 2
    drawn_rows = [y for y, row in enumerate(rows) if row != blank_row]
    if not drawn_rows:
        sys.exit(f"{page}: blank: every pixel is the page's background")
    bottom = drawn_rows[-1] + 1
    colours, covered, tiles = set(), 0, 0
    for top in range(0, bottom, TILE):
        band = rows[top:min(top + TILE, bottom)]
        for left in range(0, width, TILE):
            tiles += 1
            span = slice(left * channels, min(left + TILE, width) * channels)
            in_tile = set()
            for row in band[::2]:
                in_tile.update(pixels(row[span], channels))
            covered += len(in_tile) >= 3
            colours |= in_tile
    share = covered / tiles
    print(f"{out}: {width}x{rows_count} window, page {bottom} px tall, "
          f"{len(colours)} colours, {share:.0%} of tiles drawn")
    if len(colours) < MIN_COLOURS or share < MIN_COVERED:
        sys.exit(f"{page}: blank: {len(colours)} colours (at least {MIN_COLOURS}), "
                 f"{share:.0%} of tiles drawn (at least {MIN_COVERED:.0%})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: render-page.py PAGE.html OUT.png")
    main(sys.argv[1], sys.argv[2])
