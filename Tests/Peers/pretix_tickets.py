#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tests' pretix (issue 34): event tickets minted by PyPI's pretix itself, with its own
`Sig1TicketSecretGenerator` (pretix/base/secrets.py: its key generation, its protobuf payload, its
framing, base64 and reversal). The generator is given a stand-in event: an object with the
`settings` attributes it reads and writes (the key pair, base64 of PEM, as pretix keeps them) and
nothing else. Django is set up from `pretix.settings` with a temporary data folder; no database
is touched (the generator reads only `event.settings`). One JSON request a line on stdin, one JSON
answer a line on stdout, so a test starts Python once.

Requests:
  {"op": "event", "name": NAME}
      a new event with its own key pair; the answer: {"valid_key": ...} (what pretix's API gives
      in the event's valid_keys.pretix_sig1: base64 of the public key's PEM) and {"pem": ...}
  {"op": "mint", "event": NAME, "item": 42, "variation": 0, "subevent": 0,
   "valid_from": UNIX or null, "valid_until": UNIX or null}
      a ticket's secret, as pretix's generate_secret returns it: {"secret": ...}
  {"op": "sign", "event": NAME, "payload_hex": HEX}
      any payload framed and signed by the generator's own _sign_payload, then base64 and
      reversed as generate_secret does: {"secret": ...} (a valid signature over bytes pretix
      would never write: the kiosk's parser must refuse them)
  {"op": "payload", "secret": ...}
      the payload and signature of a secret, as pretix's _parse reads them: {"payload_hex", "signature_hex"}
  {"op": "version"}: {"pretix": VERSION}
"""
import base64
import json
import os
import struct
import sys
import tempfile
from datetime import datetime, timezone
from types import SimpleNamespace

_data = tempfile.mkdtemp(prefix="kiosk-pretix-peer-")
os.environ["DATA_DIR"] = _data
os.environ.setdefault("PRETIX_CONFIG_FILE", os.devnull)
os.environ["DJANGO_SETTINGS_MODULE"] = "pretix.settings"

import django  # noqa: E402

django.setup()

import pretix  # noqa: E402
from pretix.base.secretgenerators import pretix_sig1_pb2  # noqa: E402
from pretix.base.secrets import Sig1TicketSecretGenerator  # noqa: E402

events = {}


class StandInEvent:
    """What Sig1TicketSecretGenerator touches of an event: `settings` with the key pair."""

    def __init__(self):
        self.settings = SimpleNamespace(ticket_secrets_pretix_sig1_privkey=None, ticket_secrets_pretix_sig1_pubkey=None)


def pk(n):
    return SimpleNamespace(pk=n) if n else None


def when(t):
    return None if t is None else datetime.fromtimestamp(t, tz=timezone.utc)


def handle(r):
    op = r["op"]
    if op == "version":
        return {"pretix": pretix.__version__}
    if op == "event":
        event = StandInEvent()
        gen = Sig1TicketSecretGenerator(event)
        gen._generate_keys()
        events[r["name"]] = gen
        valid_key = event.settings.ticket_secrets_pretix_sig1_pubkey
        return {"valid_key": valid_key, "pem": base64.b64decode(valid_key).decode()}
    gen = events[r["event"]] if "event" in r else None
    if op == "mint":
        secret = gen.generate_secret(item=pk(r["item"]), variation=pk(r.get("variation", 0)),
                                     subevent=pk(r.get("subevent", 0)), valid_from=when(r.get("valid_from")),
                                     valid_until=when(r.get("valid_until")))
        # pretix's own reader must take it back (the event's key, the same fields).
        t = gen._parse(secret)
        assert t is not None and t.item == r["item"], "pretix does not read back its own ticket"
        return {"secret": secret}
    if op == "sign":
        framed = gen._sign_payload(bytes.fromhex(r["payload_hex"]))
        return {"secret": base64.b64encode(framed).decode()[::-1]}
    if op == "payload":
        raw = base64.b64decode(r["secret"][::-1])
        n, m = struct.unpack(">H", raw[1:3])[0], struct.unpack(">H", raw[3:5])[0]
        return {"payload_hex": raw[5:5 + n].hex(), "signature_hex": raw[5 + n:5 + n + m].hex()}
    raise ValueError("unknown op " + op)


for line in sys.stdin:
    try:
        answer = handle(json.loads(line))
    except Exception as e:  # the test sees why
        answer = {"error": f"{type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
