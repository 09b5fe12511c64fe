#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tests' independent holder and issuer of passes (issue 43, interface.md 0.5), with no code
of the kiosk's: holders' keys and proofs from PyPI's `cryptography`, CBOR from `cbor2`, the
issuer's CWT (with `cnf`) from `cwt`. One JSON request a line on stdin, one JSON answer a line on
stdout, so a test starts Python once.

Requests:
  {"op": "holder", "private": PATH, "compressed": false}
     a new P-256 key (its private key to PATH, PEM): its COSE_Key {1: 2, -1: 1, -2: x, -3: y}
     as base64url without padding ("key"), the page's link ("link": ...#k=KEY), the key_id
     (RFC 9679 thumbprint's first 8 bytes, "key_id" hex); compressed: y is the sign bit (a bool)
  {"op": "issuer", "private": PATH, "public": PATH}          an ES256 issuer's key pair (PEM)
  {"op": "credential", "private": PATH, "kid": TEXT, "claims": {...}, "holder_key": KEY}
     a CWT signed by the issuer with cwt (claims by number, a cti as {"hex": ...}), cnf = the
     holder's COSE_Key when holder_key is given; answers the untagged COSE_Sign1 ("hex") and
     the page's link ("link": ...#c=BASE64URL)
  {"op": "pass", "form": 1|2, "credential": HEX (form 1) | "key": KEY (form 2), "slot": N,
   "private": PATH, "malleate": false}
     "KH1:" + [form, credential or key_id, slot, proof] as hex; proof = ES256 (r||s) by the
     holder's key over "KH1 proof" 00 form slot(BE32) SHA-256(credential or key_id);
     malleate: the same signature as (r, n-s), which verifies as well
"""
import base64
import hashlib
import json
import sys

import cbor2
import cwt
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def cose_key(public, compressed=False):
    n = public.public_numbers()
    y = bool(n.y & 1) if compressed else n.y.to_bytes(32, "big")
    return {1: 2, -1: 1, -2: n.x.to_bytes(32, "big"), -3: y}


def key_id(key: dict) -> bytes:
    # RFC 9679: the required members in deterministic CBOR (RFC 8949 4.2.1), then SHA-256.
    return hashlib.sha256(cbor2.dumps(key, canonical=True)).digest()[:8]


def load_private(path):
    return serialization.load_pem_private_key(open(path, "rb").read(), None)


def holder(r):
    key = ec.generate_private_key(ec.SECP256R1())
    with open(r["private"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    k = cose_key(key.public_key(), r.get("compressed", False))
    text = b64url(cbor2.dumps(k))
    return {"key": text, "link": "https://pass.example/#k=" + text, "key_id": key_id(k).hex()}


def issuer(r):
    key = ec.generate_private_key(ec.SECP256R1())
    with open(r["private"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(r["public"], "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return {"ok": True}


def credential(r):
    claims = {(int(k) if k.isdigit() else k): (bytes.fromhex(v["hex"]) if isinstance(v, dict) else v) for k, v in r["claims"].items()}
    if r.get("holder_key"):
        claims[8] = {1: cbor2.loads(unb64url(r["holder_key"]))}
    key = cwt.COSEKey.from_pem(open(r["private"], "rb").read(), kid=r["kid"].encode())
    token = cwt.CWT.new().encode_and_sign(claims, key, tagged=False)
    item = cbor2.loads(token)
    # The pass carries an untagged COSE_Sign1: cwt may tag it (18); the contents are the same.
    if isinstance(item, cbor2.CBORTag):
        item = item.value
    raw = cbor2.dumps(item)
    return {"hex": raw.hex(), "link": "https://pass.example/#c=" + b64url(raw)}


def make_pass(r):
    form = r["form"]
    if form == 1:
        cred = bytes.fromhex(r["credential"])
    else:
        cred = key_id(cbor2.loads(unb64url(r["key"])))
    slot = r["slot"]
    message = b"KH1 proof" + b"\x00" + bytes([form]) + slot.to_bytes(4, "big") + hashlib.sha256(cred).digest()
    der = load_private(r["private"]).sign(message, ec.ECDSA(hashes.SHA256()))
    rr, ss = decode_dss_signature(der)
    if r.get("malleate"):
        ss = P256_N - ss
    proof = rr.to_bytes(32, "big") + ss.to_bytes(32, "big")
    return {"hex": (b"KH1:" + cbor2.dumps([form, cred, slot, proof])).hex()}


for line in sys.stdin:
    req = json.loads(line)
    try:
        ans = {"holder": holder, "issuer": issuer, "credential": credential, "pass": make_pass}[req["op"]](req)
    except Exception as e:  # the test sees why
        ans = {"error": repr(e)}
    print(json.dumps(ans), flush=True)
