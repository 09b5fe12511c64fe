#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Setup codes (`KS1:`, interface 0.6) for the arm64 VM tier's setup group, made from the spec by
PyPI's `cbor2` and `cryptography` (the peers' environment), not by the kiosk's code: the codes a
door must refuse (forged, expired, for another door or site, a program variable, a bad value),
which the site's own tool (deploy/examples/site-setup) refuses to make. And each code as the
camera's frame: its QR code (byte mode, drawn by zint from the code's bytes) 3 pixels a module in
the centre of a 640x480 GREY frame, inside the default ROI (the centre half), as a phone's
screen shows it at the reading distance.

  setup-codes.py keygen KEY PEM                 an ES256 site key: private (PKCS#8), public (SPKI)
  setup-codes.py code SIGNER OUT JSON [NAMED]   a code signed by SIGNER, naming NAMED's key as its
                                                site_key (default: SIGNER's); JSON: the claims,
                                                `cti` as hex
  setup-codes.py frame CODE OUT.raw [OUT.pgm]   the frame (and a PGM of it, for kiosk decode)
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in harness/vm
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "vm"))
from frames import modules  # noqa: E402  (zint --dump, one list of 0/1 a symbol row)

WHITE, BLACK = 220, 30
WIDTH, HEIGHT, SCALE = 640, 480, 3


def keygen(private_path, public_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    k = ec.generate_private_key(ec.SECP256R1())
    with open(private_path, "wb") as f:
        f.write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(public_path, "wb") as f:
        f.write(k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def code(signer_path, out_path, claims_json, named_path=None):
    import cbor2
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    def load(p):
        with open(p, "rb") as f:
            return serialization.load_pem_private_key(f.read(), None)
    signer = load(signer_path)
    named = load(named_path) if named_path else signer
    n = named.public_key().public_numbers()
    claims = json.loads(claims_json)
    claims["cti"] = bytes.fromhex(claims["cti"])
    # The site's public key as a COSE_Key (RFC 9052): EC2, P-256, x, y.
    claims["site_key"] = {1: 2, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")}
    protected = cbor2.dumps({1: -7})  # alg: ES256
    payload = cbor2.dumps(claims)
    tbs = cbor2.dumps(["Signature1", protected, b"", payload])
    r, s = decode_dss_signature(signer.sign(tbs, ec.ECDSA(hashes.SHA256())))
    with open(out_path, "wb") as f:
        f.write(b"KS1:" + cbor2.dumps([protected, {}, payload, r.to_bytes(32, "big") + s.to_bytes(32, "big")]))


def frame(code_path, raw_path, pgm_path=None):
    rows = modules(58, path=code_path)
    size = len(rows) * SCALE
    if size > HEIGHT // 2 - 8:  # it must fit the default ROI (the centre half) with a quiet zone
        sys.exit(f"setup-codes: a code of {len(rows)} modules does not fit the default ROI at {SCALE} px a module")
    img = bytearray([WHITE]) * (WIDTH * HEIGHT)
    x0, y0 = (WIDTH - size) // 2, (HEIGHT - size) // 2
    for y in range(size):
        row = rows[y // SCALE]
        base = (y0 + y) * WIDTH + x0
        img[base:base + size] = bytes(BLACK if row[x // SCALE] else WHITE for x in range(size))
    with open(raw_path, "wb") as f:
        f.write(img)
    if pgm_path:
        with open(pgm_path, "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (WIDTH, HEIGHT) + bytes(img))
    print(f"{len(rows)} modules")


def main():
    op, args = sys.argv[1], sys.argv[2:]
    if op == "keygen":
        keygen(*args)
    elif op == "code":
        code(*args)
    elif op == "frame":
        frame(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
