#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tests' independent issuer (issue 21): keys from `cryptography`, credentials signed by PyPI's
`cwt` (kid unprotected, as cwt puts it) or `pycose` (kid protected, untagged), rotating codes by
`pyotp`. Base45 is RFC 9285's encoding, written out here (the kiosk's decoder is checked
against the RFC's own vectors elsewhere). One JSON request a line on stdin, one JSON answer a
line on stdout, so a test starts Python once.

Requests:
  {"op": "keygen", "alg": "ES256"|"EdDSA", "private": PATH, "public": PATH}
  {"op": "sign", "lib": "cwt"|"pycose", "private": PATH, "alg": ..., "kid": TEXT or {"hex": HEX},
   "claims": {"1": "iss", "2": "sub", ..., "7": {"hex": HEX}, "groups": ["staff"]}, "zlib": true,
   "prefix": "KC1:", "tagged": false}
  (a key of digits is a CWT claim number, any other a text claim: `groups`, `uses`)
  {"op": "totp", "secret": BASE32, "time": UNIX, "digits": 6, "period": 30}
"""
import json
import sys
import zlib

import cwt
import pyotp
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from pycose.headers import KID, Algorithm
from pycose.keys import CoseKey
from pycose.messages import Sign1Message

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"


def base45(data: bytes) -> str:
    out = []
    for i in range(0, len(data) - 1, 2):
        n = data[i] * 256 + data[i + 1]
        c, n = n % 45, n // 45
        d, e = n % 45, n // 45
        out += [ALPHABET[c], ALPHABET[d], ALPHABET[e]]
    if len(data) % 2:
        n = data[-1]
        out += [ALPHABET[n % 45], ALPHABET[n // 45]]
    return "".join(out)


def value(v):
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else v


def keygen(r):
    key = ec.generate_private_key(ec.SECP256R1()) if r["alg"] == "ES256" else ed25519.Ed25519PrivateKey.generate()
    with open(r["private"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(r["public"], "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return {"ok": True}


def sign(r):
    pem = open(r["private"], "rb").read()
    kid = value(r["kid"])
    kid = kid.encode() if isinstance(kid, str) else kid
    claims = {(int(k) if k.isdigit() else k): value(v) for k, v in r["claims"].items()}
    if r.get("lib", "cwt") == "cwt":
        key = cwt.COSEKey.from_pem(pem, kid=kid)
        # cwt fills in iat (and exp/nbf when absent); the test gives the ones it checks. With a
        # text key cwt.encode would drop the integer ones: CWT.new().encode_and_sign keeps both.
        token = cwt.CWT.new().encode_and_sign(claims, key, tagged=r.get("tagged", False))
    else:
        from cwt.cbor_processor import CBORProcessor  # noqa: F401  (cbor2 through cwt)
        import cbor2
        private = serialization.load_pem_private_key(pem, None)
        alg = -7 if r["alg"] == "ES256" else -8
        if alg == -7:
            n = private.private_numbers()
            key = CoseKey.from_dict({1: 2, -1: 1, -2: n.public_numbers.x.to_bytes(32, "big"),
                                     -3: n.public_numbers.y.to_bytes(32, "big"), -4: n.private_value.to_bytes(32, "big")})
        else:
            raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
            key = CoseKey.from_dict({1: 1, -1: 6, -4: raw})
        msg = Sign1Message(phdr={Algorithm: alg, KID: kid}, payload=cbor2.dumps(claims))
        msg.key = key
        token = msg.encode(tag=r.get("tagged", False))
    if r.get("zlib", True):
        token = zlib.compress(token, 9)
    return {"text": r.get("prefix", "KC1:") + base45(token), "cose_hex": token.hex()}


def totp(r):
    t = pyotp.TOTP(r["secret"], digits=r.get("digits", 6), interval=r.get("period", 30))
    return {"code": t.at(r["time"]), "text": "KT1:%s:%d:%s" % (r.get("holder", "h"), r["time"], t.at(r["time"]))}


for line in sys.stdin:
    req = json.loads(line)
    try:
        ans = {"keygen": keygen, "sign": sign, "totp": totp}[req["op"]](req)
    except Exception as e:  # the test sees why
        ans = {"error": repr(e)}
    print(json.dumps(ans), flush=True)
