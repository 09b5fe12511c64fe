#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The 2D bench's other reader (`make bench-2d`; docs/measurements/accuracy.md): zxing-cpp
# from PyPI (the version pinned in the Makefile, 2.x as Debian 13 has it) on the pictures
# `kiosk-dev twod --dump DIR` wrote (N.png, the text in N.txt), each read whole with the
# library's defaults for Aztec, Data Matrix and PDF417, as anyone would call it. Prints one line a
# picture and the counts by symbology.
#
#   harness/bench-2d/zxing.py DIR
import os
import sys
from importlib.metadata import version

import zxingcpp
from PIL import Image

folder = sys.argv[1]
formats = zxingcpp.BarcodeFormat.Aztec | zxingcpp.BarcodeFormat.DataMatrix | zxingcpp.BarcodeFormat.PDF417
names = {zxingcpp.BarcodeFormat.Aztec: "Aztec", zxingcpp.BarcodeFormat.DataMatrix: "DataMatrix", zxingcpp.BarcodeFormat.PDF417: "PDF417"}
n = 1
read, total, wrong = {}, {}, 0
while os.path.exists(os.path.join(folder, "%d.png" % n)):
    expected = open(os.path.join(folder, "%d.txt" % n), encoding="utf-8").read()
    found = zxingcpp.read_barcodes(Image.open(os.path.join(folder, "%d.png" % n)), formats=formats)
    # The symbology is the bench's order: Aztec, Data Matrix, PDF417 in turn.
    kind = ["Aztec", "DataMatrix", "PDF417"][(n - 1) % 3]
    ok = any(b.text == expected for b in found)
    wrong += any(b.text != expected for b in found)
    total[kind] = total.get(kind, 0) + 1
    read[kind] = read.get(kind, 0) + ok
    print("%d %s: zxing-cpp %s %s" % (n, kind, version("zxing-cpp"), "read" if ok else "-"))
    n += 1
print("")
for kind in ["Aztec", "DataMatrix", "PDF417"]:
    print("| %s | %d | %d |" % (kind, total.get(kind, 0), read.get(kind, 0)))
print("| total | %d | %d |" % (sum(total.values()), sum(read.values())))
print("wrong: %d" % wrong)
