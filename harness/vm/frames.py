#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the raw camera frames the VM tests stream through vivid and vimc (stdlib only).

The codes' modules come from zint's --dump (one hex row per symbol row); each frame is a white
field with the code drawn dark in the centre (inside the default ROI, the centre half), or in the
top-left corner for the out-of-ROI frame. Formats: GREY (8-bit luma) and YUYV (Y0 U Y1 V, chroma
neutral), and BGR888 (3 bytes a pixel, grey) for vimc through libcamera. The QR frame is also
written as PPM, for cjpeg to make an MJPG frame of it. A GREY frame is also written as PGM so the
host can check it with `kiosk decode`, and a BGR888 frame's green channel (what the libcamera
plugin reads as luma). Two uniform GREY frames, dark (luma 20) and bright (luma 200), are the room
for the torch checks.

usage: frames.py OUTDIR [NAME=TEXT]...
    prints one line per frame: NAME FOURCC WIDTH HEIGHT SYMBOLOGY DATA. Each NAME=TEXT adds a GREY
    640x480 frame NAME-GREY-640x480 of a QR code of TEXT (the arm64 tier's credentials).
"""
import os
import subprocess
import sys

WHITE, BLACK = 220, 30
DARK, BRIGHT = 20, 200

CODES = [
    # name, zint barcode type, data, zbar symbology name, expected data
    ("qr", 58, "KIOSK-VM-QR-0001", "QR-Code", "KIOSK-VM-QR-0001"),
    ("ean13", 13, "400638133393", "EAN-13", "4006381333931"),
    ("code128", 20, "Kiosk128", "CODE-128", "Kiosk128"),
    ("card", 58, "36963", "QR-Code", "36963"),  # a card number for the door group's Wiegand
]
FORMATS = [("GREY", 640, 480), ("YUYV", 640, 480), ("YUYV", 1280, 720)]


def modules(kind, data=None, path=None):
    """A symbol's modules, one list of 0/1 a row (zint's --dump pads a row to whole hex digits):
    of the text `data`, or of the bytes of the file at `path` (byte mode)."""
    source = ["--binary", "-i", path] if path is not None else ["-d", data]
    out = subprocess.run(["zint", "-b", str(kind), "--dump", *source],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        hexes = line.replace(" ", "").strip()
        if hexes:
            rows.append([int(c, 16) >> (3 - i) & 1 for c in hexes for i in range(4)])
    return rows


def draw(width, height, rows, linear, where, fit=False):
    img = bytearray([WHITE]) * (width * height)
    if fit:  # a large code (a credential): the biggest whole module that leaves a quiet zone
        scale = max(1, min(6, (min(width, height) - 40) // len(rows)))
        w = h = len(rows) * scale
        cells = [[rows[y // scale][x // scale] for x in range(w)] for y in range(h)]
    elif linear:
        scale = 2 if width <= 640 else 3
        w = len(rows[0]) * scale
        h = height // 5
        pattern = rows[0]
        cells = [[pattern[x // scale] for x in range(w)]] * h
    else:
        scale = 6 if width <= 640 else 10
        w = h = len(rows) * scale
        cells = [[rows[y // scale][x // scale] for x in range(w)] for y in range(h)]
    if where == "centre":
        x0, y0 = (width - w) // 2, (height - h) // 2
    else:  # top-left corner, well outside the centre-half ROI
        x0, y0 = width // 32, height // 32
    for y in range(h):
        row = cells[y]
        base = (y0 + y) * width + x0
        img[base:base + w] = bytes(BLACK if v else WHITE for v in row)
    return img


def yuyv(luma):
    out = bytearray(len(luma) * 2)
    out[0::2] = luma
    out[1::2] = b"\x80" * len(luma)
    return out


def bgr(luma):
    out = bytearray(len(luma) * 3)
    for i in range(3):
        out[i::3] = luma
    return out


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    frames = []
    for name, kind, data, sym, expected in CODES:
        rows = modules(kind, data)
        linear = kind != 58
        for fourcc, w, h in FORMATS:
            frames.append((f"{name}-{fourcc}-{w}x{h}", fourcc, w, h, draw(w, h, rows, linear, "centre"), sym, expected))
    rows = modules(58, "KIOSK-VM-OUTSIDE")
    frames.append(("outside-YUYV-640x480", "YUYV", 640, 480, draw(640, 480, rows, False, "corner"), "-", "KIOSK-VM-OUTSIDE"))
    # libcamera through vimc: its RGB/YUV capture streams BGR888 (R, G, B bytes) at 636x480; the
    # frame is injected at the capture (vimc's inject parameter), grey, so green is the luma.
    rows = modules(58, "KIOSK-VM-LC-0001")
    frames.append(("qr-BGR888-636x480", "BGR888", 636, 480, draw(636, 480, rows, False, "centre"), "QR-Code", "KIOSK-VM-LC-0001"))
    # libcamera 0.4 (trixie, the arm64 tier) streams vimc's capture at 640x480.
    frames.append(("qr-BGR888-640x480", "BGR888", 640, 480, draw(640, 480, rows, False, "centre"), "QR-Code", "KIOSK-VM-LC-0001"))
    frames.append(("dark-BGR888-636x480", "BGR888", 636, 480, bytearray([DARK]) * (636 * 480), "-", "-"))
    # The UVC gadget's scene (group uvc): 640x480 luma, which uvc-gadget blurs as its lens and
    # streams as YUYV.
    rows = modules(58, "KIOSK-VM-UVC-0001")
    frames.append(("uvc-GREY-640x480", "GREY", 640, 480, draw(640, 480, rows, False, "centre"), "QR-Code", "KIOSK-VM-UVC-0001"))
    for extra in sys.argv[2:]:
        name, text = extra.split("=", 1)
        rows = modules(58, text)
        frames.append((f"{name}-GREY-640x480", "GREY", 640, 480, draw(640, 480, rows, False, "centre", fit=True), "QR-Code", text))
    for name, level in (("dark", DARK), ("bright", BRIGHT)):  # the torch's room: no code
        frames.append((f"{name}-GREY-640x480", "GREY", 640, 480, bytearray([level]) * (640 * 480), "-", "-"))
    for name, fourcc, w, h, luma, sym, expected in frames:
        raw = luma if fourcc == "GREY" else bgr(luma) if fourcc == "BGR888" else yuyv(luma)
        with open(os.path.join(outdir, name + ".raw"), "wb") as f:
            f.write(raw)
        if fourcc == "BGR888" and sym != "-":  # for the host's check: the green channel, as the plugin reads it
            with open(os.path.join(outdir, name + ".pgm"), "wb") as f:
                f.write(b"P5\n%d %d\n255\n" % (w, h) + bytes(raw[1::3]))
        if (fourcc == "GREY" and sym != "-") or name.startswith("outside"):
            with open(os.path.join(outdir, name + ".pgm"), "wb") as f:
                f.write(b"P5\n%d %d\n255\n" % (w, h) + bytes(luma))
        if name == "qr-GREY-640x480":  # for cjpeg: an MJPG camera's frame
            with open(os.path.join(outdir, "qr-RGB-640x480.ppm"), "wb") as f:
                f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(v for v in luma for _ in range(3)))
        print(name, fourcc, w, h, sym, expected)


if __name__ == "__main__":
    main()
