# SPDX-License-Identifier: Apache-2.0
"""What the browser tiers share (harness/pass/browser.py, harness/setup/browser.py): PASS/FAIL
lines, the prerequisites, a server that records every request, Debian's headless Chromium driven
by Selenium (no browser download), zbar's reading of a screenshot, and the run that turns a crash
of the test into a FAIL, never a skip."""
import http.server
import os
import subprocess
import sys
import threading
import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ZBARIMG = "/usr/bin/zbarimg"

failures = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""), flush=True)
    if not ok:
        failures.append(name)
    return ok


def prerequisites(modules):
    """Debian's chromium, chromium-driver and zbar-tools, and the Python modules ({module: pip name})."""
    ok = True
    for path, package in [(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver"), (ZBARIMG, "zbar-tools")]:
        there = os.access(path, os.X_OK)
        ok &= check(f"prerequisite {path}", there, "" if there else f"apt-get install {package}")
    for module, pip in modules.items():
        try:
            __import__(module)
            check(f"prerequisite python {module}", True)
        except ImportError:
            ok = check(f"prerequisite python {module}", False, f"pip install {pip} (in the peers' venv)") and ok
    return ok


class Server:
    """Serves ROOT on 127.0.0.1 and records every request (method, path, Host)."""

    def __init__(self, root, port=0):
        self.requests = []
        requests, lock = self.requests, threading.Lock()

        class Handler(http.server.SimpleHTTPRequestHandler):
            extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                              ".webmanifest": "application/manifest+json", ".js": "text/javascript",
                              ".svg": "image/svg+xml"}

            def __init__(self, *a, **k):
                super().__init__(*a, directory=root, **k)

            def log_message(self, *a):
                pass

            def send_head(self):
                with lock:
                    requests.append({"method": self.command, "path": self.path, "host": self.headers.get("Host", "")})
                return super().send_head()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def start_browser(profile, extra=()):
    # Debian's chromium and chromedriver, named: Selenium Manager has nothing to find or download
    # (and is told to stay offline if it ever runs).
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
              "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
              "--disable-features=Translate,OptimizationHints,MediaRouter", "--hide-scrollbars", *extra]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)


def zbar(path):
    r = subprocess.run([ZBARIMG, "--quiet", "--raw", "-Sbinary", path], capture_output=True, timeout=60)
    if r.returncode != 0:
        raise ValueError(f"zbarimg found no code in {path} (exit {r.returncode}) {r.stderr.decode(errors='replace')[:200]}")
    # --raw -Sbinary: the symbol's bytes exactly, no newline added, no text conversion (zbar 0.23).
    return r.stdout


def after_prefix(data, prefix, what):
    """The one CBOR item after PREFIX (a code's bytes as zbar read them), nothing after it: (item, its bytes)."""
    import io
    import cbor2
    if not data.startswith(prefix):
        raise ValueError(f"not {what}: {data[:8]!r}")
    body = data[len(prefix):]
    stream = io.BytesIO(body)
    value = cbor2.CBORDecoder(stream).decode()
    if stream.tell() != len(body):
        raise ValueError(f"{len(body) - stream.tell()} bytes after the {what}")
    return value, body


def main(name, modules, run, args):
    """Runs run(args) when the prerequisites are there; prints the last line and exits 1 on any FAIL."""
    started = time.time()
    if prerequisites(modules):
        try:
            run(args)
        except Exception as e:  # a crash of the test is a FAIL, never a skip
            import traceback
            traceback.print_exc()
            check("the browser test ran to its end", False, f"{type(e).__name__}: {e}")
    print(f"{'FAIL' if failures else 'PASS'} {name}: {len(failures)} failed, {time.time() - started:.1f} s")
    sys.exit(1 if failures else 0)
