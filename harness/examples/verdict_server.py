#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in access service for harness/examples/run.sh, on loopback: prints its port, then
answers POSTs by path:
  /check    granted when the form's code is one of ALLOWED, else denied; records the request
  /json     {"result": "granted"}      /json-denied  {"result": "denied"}
  /forbid   403                        /broken       500
  /maybe    200 "maybe"                /slow         waits 5 s, then granted
  /trickle  granted, one byte every 0.4 s (each read within the socket timeout)
Each /check request's code bytes, symbology and Authorization header go to RECORD (a file).
"""
import http.server
import json
import os
import sys
import time
import urllib.parse

ALLOWED = {b"OK-1", b"0012345"}
RECORD = os.environ.get("RECORD", "/dev/null")


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        # Latin-1 both ways: every percent-encoded byte comes back as itself.
        text = urllib.parse.parse_qs(self.rfile.read(length).decode("latin-1"), keep_blank_values=True, encoding="latin-1")
        form = {k.encode("latin-1"): [v.encode("latin-1") for v in vs] for k, vs in text.items()}
        code = form.get(b"code", [b""])[0]
        path = self.path
        if path == "/check":
            with open(RECORD, "w", encoding="utf-8") as f:
                json.dump({"code": code.hex(), "symbology": form.get(b"symbology", [b""])[0].decode(),
                           "authorization": self.headers.get("Authorization", ""),
                           "type": self.headers.get("Content-Type", "")}, f)
            self.answer(200, b"granted\n" if code in ALLOWED else b"denied\n")
        elif path == "/json":
            self.answer(200, b'{"result": "granted"}')
        elif path == "/json-denied":
            self.answer(200, b'{"result": "denied"}')
        elif path == "/forbid":
            self.answer(403, b"no")
        elif path == "/broken":
            self.answer(500, b"granted")
        elif path == "/maybe":
            self.answer(200, b"maybe")
        elif path == "/slow":
            time.sleep(5)
            self.answer(200, b"granted")
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "7")
            self.end_headers()
            for byte in b"granted":
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.4)
        else:
            self.answer(404, b"")

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gave up (the timeout tests) is expected; anything else is said.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
