#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for pretix's REST API for harness/examples/run.sh (deploy/examples/pretix-keys), on
loopback: prints its port, then answers GETs with the JSON shapes pretix's API documents and its
serializers write (EventSerializer's valid_keys, RevokedTicketSecretSerializer's pages):
  /api/v1/organizers/acme/events/conf/                  the event, valid_keys.pretix_sig1 = [VALID_KEY]
  /api/v1/organizers/acme/events/conf/revokedsecrets/   SECRETS (a JSON list) in pages of 2, `next` links
  /api/v1/organizers/acme/events/random/                an event with the default (random) secrets: no key
Any other path: 404. A request whose Authorization is not `Token TOKEN`: 403, as pretix answers.
Each request's path and Authorization header are appended to RECORD (a file).
"""
import http.server
import json
import os
import urllib.parse

VALID_KEY = os.environ["VALID_KEY"]
SECRETS = json.loads(os.environ.get("SECRETS", "[]"))
TOKEN = os.environ.get("TOKEN", "")
RECORD = os.environ.get("RECORD", "/dev/null")
PAGE = 2


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with open(RECORD, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "authorization": self.headers.get("Authorization", "")}) + "\n")
        if self.headers.get("Authorization") != "Token " + TOKEN:
            return self.answer(403, {"detail": "You do not have permission to perform this action."})
        url = urllib.parse.urlsplit(self.path)
        base = "/api/v1/organizers/acme/events/"
        event = {"name": {"en": "Conference"}, "slug": "conf", "live": True, "testmode": False, "currency": "EUR",
                 "date_from": "2026-12-24T18:00:00Z", "has_subevents": False, "timezone": "Europe/Berlin"}
        if url.path == base + "conf/":
            return self.answer(200, dict(event, valid_keys={"pretix_sig1": [VALID_KEY]}))
        if url.path == base + "random/":
            return self.answer(200, dict(event, slug="random", valid_keys={"pretix_sig1": []}))
        if url.path == base + "conf/revokedsecrets/":
            page = int(urllib.parse.parse_qs(url.query).get("page", ["1"])[0])
            chunk = SECRETS[(page - 1) * PAGE:page * PAGE]
            more = page * PAGE < len(SECRETS)
            port = self.server.server_address[1]
            return self.answer(200, {
                "count": len(SECRETS),
                "next": f"http://127.0.0.1:{port}{url.path}?page={page + 1}" if more else None,
                "previous": None if page == 1 else f"http://127.0.0.1:{port}{url.path}?page={page - 1}",
                "results": [{"id": i, "secret": s, "created": "2026-12-01T10:00:00Z"} for i, s in enumerate(chunk, (page - 1) * PAGE + 1)],
            })
        return self.answer(404, {"detail": "Not found."})

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
