#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The power-cut workload's credentials: an issuer's key, one-time credentials minted by the
project's own example issuer (deploy/examples/issue-credential, PyPI's `cwt`: run it with the
tests' peers' python, .cache/peers), and each drawn as a QR code in a PGM picture for the kiosk's
replay camera (modules from zint's --dump, as harness/vm/frames.py draws them).

usage: mint.py OUTDIR COUNT
  OUTDIR/trust/pc-1.pem          the issuer's public key (KIOSK_TRUST_DIR)
  OUTDIR/tokens/NNN.pgm          credential NNN drawn (NNN from 001)
  OUTDIR/blank.pgm               a white picture
  OUTDIR/tokens.list             one line a credential: NNN CTI-HEX
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ left in harness/vm
sys.path.insert(0, os.path.join(REPO, "harness", "vm"))
from frames import modules  # noqa: E402  (zint --dump, one list of 0/1 a symbol row)

W, H, SCALE, WHITE, BLACK = 480, 360, 3, 220, 30


def pgm(path, rows):
    img = bytearray([WHITE]) * (W * H)
    if rows:
        size = len(rows) * SCALE
        x0, y0 = (W - size) // 2, (H - size) // 2
        for y in range(size):
            row = rows[y // SCALE]
            line = bytes(BLACK if row[x // SCALE] else WHITE for x in range(size))
            img[(y0 + y) * W + x0:(y0 + y) * W + x0 + size] = line
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (W, H) + bytes(img))


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    issuer = os.path.join(REPO, "deploy", "examples", "issue-credential")
    os.makedirs(os.path.join(out, "tokens"), exist_ok=True)
    key = os.path.join(out, "issuer.key")
    subprocess.run([sys.executable, issuer, "keygen", "--kid", "pc-1", "--key", key,
                    "--trust-dir", os.path.join(out, "trust")], check=True, stdout=subprocess.DEVNULL)
    lines = []
    for i in range(1, count + 1):
        r = subprocess.run([sys.executable, issuer, "mint", "--key", key, "--kid", "pc-1", "--iss", "powercut",
                            "--sub", "ticket-%03d" % i, "--valid-for", "30d", "--one-time"],
                           check=True, capture_output=True, text=True)
        text = r.stdout.strip()
        cti = re.search(r"^cti ([0-9a-f]+)", r.stderr, re.M)
        if not text.startswith("KC1:") or not cti:
            sys.exit("mint.py: issue-credential gave no credential or cti: %r %r" % (r.stdout, r.stderr))
        pgm(os.path.join(out, "tokens", "%03d.pgm" % i), modules(58, text))
        lines.append("%03d %s\n" % (i, cti.group(1)))
    pgm(os.path.join(out, "blank.pgm"), None)
    with open(os.path.join(out, "tokens.list"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
