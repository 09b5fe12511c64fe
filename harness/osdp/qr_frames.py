# SPDX-License-Identifier: Apache-2.0
# The replay frames for a payload: the Swift test draws the QR code (its own renderer) into
# QR_DIR/<hex of payload>.pgm; here it is copied as a few frames (blank ones around it).
import os, shutil


def write(folder, payload, qr_dir):
    source = os.path.join(qr_dir, payload.encode().hex() + ".pgm")
    blank = os.path.join(qr_dir, "blank.pgm")
    names = []
    for i in range(3):
        names.append((blank, "%04d.pgm" % i))
    for i in range(3, 8):
        names.append((source, "%04d.pgm" % i))
    for i in range(8, 10):
        names.append((blank, "%04d.pgm" % i))
    for src, name in names:
        shutil.copy(src, os.path.join(folder, name))
