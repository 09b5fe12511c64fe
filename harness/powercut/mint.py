#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The power-cut workload's credentials: an issuer's key, one-time credentials minted by the
project's own example issuer (deploy/examples/issue-credential, PyPI's `cwt`: run it with the
tests' peers' python, .cache/peers), and each drawn as a QR code in a PGM picture for the kiosk's
replay camera (modules from zint's --dump, as harness/vm/frames.py draws them).

With TICKETS, also event tickets minted by pretix itself (Tests/Peers/pretix_tickets.py in the
pretix venv beside the peers', .cache/peers/pretix, as the tests' PretixPeer) and two site bundles
signed by deploy/examples/site-bundle (PyPI's pycose): version 1 carries the trust folder, version
2 the same and a revocation list.

usage: mint.py OUTDIR COUNT [TICKETS]
  OUTDIR/trust/pc-1.pem          the issuer's public key (KIOSK_TRUST_DIR)
  OUTDIR/tokens/NNN.pgm          credential NNN drawn (NNN from 001)
  OUTDIR/blank.pgm               a white picture
  OUTDIR/tokens.list             one line a credential: NNN CTI-HEX
  OUTDIR/trust/pretix/pc.pem     the event pc's key (pretix's valid_keys form)
  OUTDIR/tickets/NNN.pgm         ticket NNN drawn (item NNN of event pc)
  OUTDIR/tickets.list            one line a ticket: NNN SUB (pretix:pc:ITEM, as the kiosk logs it)
  OUTDIR/site.pem                the site's public key (KIOSK_SITE_KEY)
  OUTDIR/bundle-1.cose, bundle-2.cose   the site bundles, versions 1 and 2
"""
import json
import os
import re
import shutil
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
    if len(sys.argv) > 3:
        tickets(out, int(sys.argv[3]))
        bundles(out)


def tickets(out, count):
    python = os.path.join(os.path.dirname(os.path.dirname(sys.executable)), "pretix", "bin", "python")
    if not os.access(python, os.X_OK):
        sys.exit("mint.py: no %s (make peers installs pretix there)" % python)
    peer = subprocess.Popen([python, os.path.join(REPO, "Tests", "Peers", "pretix_tickets.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(request):
        peer.stdin.write(json.dumps(request) + "\n")
        peer.stdin.flush()
        answer = json.loads(peer.stdout.readline())
        if "error" in answer:
            sys.exit("mint.py: the pretix peer: %s" % answer["error"])
        return answer

    os.makedirs(os.path.join(out, "trust", "pretix"), exist_ok=True)
    os.makedirs(os.path.join(out, "tickets"), exist_ok=True)
    with open(os.path.join(out, "trust", "pretix", "pc.pem"), "w") as f:
        f.write(ask({"op": "event", "name": "pc"})["valid_key"] + "\n")
    lines = []
    for i in range(1, count + 1):
        secret = ask({"op": "mint", "event": "pc", "item": i, "variation": 0, "subevent": 0,
                      "valid_from": None, "valid_until": None})["secret"]
        pgm(os.path.join(out, "tickets", "%03d.pgm" % i), modules(58, secret))
        lines.append("%03d pretix:pc:%d\n" % (i, i))
    peer.stdin.close()
    peer.wait()
    with open(os.path.join(out, "tickets.list"), "w") as f:
        f.writelines(lines)


def bundles(out):
    tool = os.path.join(REPO, "deploy", "examples", "site-bundle")
    key = os.path.join(out, "site.key")
    subprocess.run([sys.executable, tool, "keygen", "--key", key, "--public", os.path.join(out, "site.pem")],
                   check=True, stdout=subprocess.DEVNULL)
    folder = os.path.join(out, "site")
    shutil.copytree(os.path.join(out, "trust"), os.path.join(folder, "trust"))
    for version in (1, 2):
        if version == 2:
            with open(os.path.join(folder, "revoked"), "w") as f:
                f.write("# revoked by the site's bundle 2\n00112233445566778899aabbccddeeff\n")
        subprocess.run([sys.executable, tool, "sign", "--key", key, "--folder", folder, "--version", str(version),
                        "--out", os.path.join(out, "bundle-%d.cose" % version)], check=True, stdout=subprocess.DEVNULL)
    os.remove(key)
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
