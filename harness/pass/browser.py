#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The holder's pass page (deploy/pass/, issue 43) in a real browser: Debian's chromium and
chromium-driver, headless, driven by Selenium (PyPI; Service("/usr/bin/chromedriver"), no browser
download). The page is built by `deploy/examples/pass-page build` and served by this script on
127.0.0.1 (a small HTTP server that records every request); the QR codes of screenshots are read by
zbar (`zbarimg --raw -Sbinary`, Debian's zbar-tools) and their proofs verified by Python's
`cryptography` against the key the page's #key-link gives: no project code checks the page.
Credentials are minted here by PyPI's `cwt` (an issuer key made by `cryptography`).

  browser.py --out DIR [--site BUILT_DIR] [--kiosk PATH_TO_RELEASE_KIOSK]

Checks (one PASS/FAIL line each; exit 1 on any FAIL, a missing chromium, chromedriver, selenium,
zbarimg, cwt or cryptography is a FAIL):
  enrol (the key link's COSE_Key is a P-256 point in RFC 9679's encoding), installable (Chromium's
  installability errors: none), three screenshots at three slots (the page's clock shifted: no
  sleeping) whose QR codes carry form-2 passes with valid proofs, byte for byte, the same key after
  a reload and after a browser restart on the same profile, exportKey of the private key refused,
  a #c= link for another key / an expired one / mangled ones refused (the page keeps what it had),
  a #c= link for this key taken (a form-1 pass with a valid proof, the credential carried byte for
  byte; also with cnf's point compressed), the page opens offline from its service worker, neither
  the server nor the browser's network log saw a request to any other host, no CSP violation; and
  the page's words for: no WebCrypto (not https), storage not persistent, an iPhone.

The output folder (DIR), for the step that replays the screenshots through the kiosk:
  site/                the page as built (unless --site is given)
  profile/             the browser profile (the page's key lives in its IndexedDB)
  pass-1.png, pass-2.png, pass-3.png   screenshots of #pass (form 2) at three slots
  pass-form1.png       a screenshot of #pass showing the form-1 pass
  trust/pass-test.pem  the issuer's public key (KIOSK_TRUST_DIR for form 1; kid "pass-test")
  holders              the holders line for this page's key: `phone-1 KEY` (KIOSK_HOLDERS_FILE)
  screens.json         {"key_link", "cose_key" (base64url), "key_id" (hex), "holder_name",
                        "issuer_kid", "window_note",
                        "screens": [{"file", "slot", "slot_start" (Unix s), "form", "payload_hex",
                                     "role", "qr" (the page's "N bytes, QR version V")}...]}
      roles: "now" (slot A), "next" (A + 1), "old" (A - 12: 60 s older, past a 15 s window),
      "form1" (the credential's pass, a slot after "next"). Replaying with the kiosk's clock at
      A's start + 2 s (faketime): "now" is granted, "now" again is used, "old" is stale.
  kiosk/               --kiosk's work, when given: a replay folder per run (blank, the screenshot,
                       blank: PNGs of one size), its stderr (NAME.log), the state folder they share

The page's test hook (deploy/pass/pass.js): on 127.0.0.1/localhost only, window.KH1PassTest.
setClockOffset(ms) shifts the page's clock and redraws at once (a Promise of the slot shown).
"""
import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import zlib
import struct

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import browser_common as common  # noqa: E402
from browser_common import Server, check, zbar  # noqa: E402
PASS_PAGE = os.path.join(ROOT, "deploy", "examples", "pass-page")
HOLDER = "phone-1"
KID = "pass-test"

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---- the browser --------------------------------------------------------------------------

def start_browser(profile, extra=()):
    return common.start_browser(profile, ["--window-size=600,1000", "--force-device-scale-factor=1", *extra])



class Browser:
    def __init__(self, profile, base, extra=()):
        self.profile, self.base, self.extra = profile, base, extra
        self.urls = []      # (URL, document URL) of every request the browser's network log shows
        self.console = []   # the console's messages
        self.driver = start_browser(profile, extra)

    def drain(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message.get("method", ""), message.get("params", {})
            if method == "Network.requestWillBeSent":
                self.urls.append((params["request"]["url"], params.get("documentURL", "")))
            elif method in ("Network.webSocketCreated", "Network.webTransportCreated"):
                self.urls.append((params.get("url", "?"), ""))
        for entry in self.driver.get_log("browser"):
            self.console.append(entry)

    def restart(self):
        self.drain()
        self.driver.quit()
        self.driver = start_browser(self.profile, self.extra)

    def quit(self):
        try:
            self.drain()
        finally:
            self.driver.quit()

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def js_async(self, script, *args):
        return self.driver.execute_async_script(script, *args)

    def wait(self, condition, what, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"waited {timeout} s for {what}")

    def open(self, url):
        self.driver.get(url)
        return self.ready()

    def ready(self):
        """Waits until the page shows a pass and its key link; returns (key link, slot, form)."""
        def state():
            return self.js("""const a = document.getElementById('key-link'), p = document.getElementById('pass');
                return a && p && a.href.includes('#k=') && p.dataset.slot ? [a.href, p.dataset.slot, p.dataset.form] : null;""")
        link, slot, form = self.wait(state, "the pass and the key link")
        return link, int(slot), int(form)

    def status(self):
        return self.js("return document.getElementById('status').textContent")

    def follow(self, fragment):
        """Opens the page's address with a fragment; returns the status line it then shows."""
        self.js("document.getElementById('status').textContent = ''")
        self.driver.get(self.base + fragment)
        return self.wait(lambda: self.status(), "a status line after " + fragment[:12])

    def at_slot(self, slot, path):
        """Shifts the page's clock into the middle of `slot`, screenshots #pass; returns the bytes."""
        for _ in range(3):
            shown = self.js_async("""const done = arguments[arguments.length - 1];
                const offset = arguments[0] * 5000 + 2500 - Date.now();
                window.KH1PassTest.setClockOffset(offset).then(done, (e) => done('error ' + e));""", slot)
            element = self.driver.find_element("id", "pass")
            before = element.get_attribute("data-slot")
            png = element.screenshot_as_png
            after = element.get_attribute("data-slot")
            if before == after == str(slot) and shown == slot:
                with open(path, "wb") as f:
                    f.write(png)
                return png
        raise RuntimeError(f"the page would not hold slot {slot} for a screenshot (shown {shown}, {before} -> {after})")


# ---- reading and checking a pass ----------------------------------------------------------

def read_pass(payload):
    """KH1: + one CBOR array, definite, canonical, nothing after it: returns the array."""
    import cbor2
    value, body = common.after_prefix(payload, b"KH1:", "CBOR array of a KH1: pass")
    if cbor2.dumps(value) != body:
        raise ValueError("the CBOR is not in its shortest, definite form")
    if not (isinstance(value, list) and len(value) == 4 and value[0] in (1, 2) and isinstance(value[1], bytes)
            and isinstance(value[2], int) and isinstance(value[3], bytes) and len(value[3]) == 64):
        raise ValueError(f"not [form, bytes, slot, 64-byte proof]: {value!r}"[:200])
    return value


def proof_ok(public_key, form, slot, subject, proof):
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    message = b"KH1 proof" + bytes([0, form]) + slot.to_bytes(4, "big") + hashlib.sha256(subject).digest()
    signature = encode_dss_signature(int.from_bytes(proof[:32], "big"), int.from_bytes(proof[32:], "big"))
    try:
        public_key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def key_from_link(link):
    """The COSE_Key of a #k= link, checked: (its bytes, x, y, the cryptography public key, key_id)."""
    import cbor2
    from cryptography.hazmat.primitives.asymmetric import ec
    fragment = urllib.parse.urlsplit(link).fragment
    if not fragment.startswith("k="):
        raise ValueError(f"no #k= in {link}")
    cose = unb64url(fragment[2:])
    key = cbor2.loads(cose)
    if not (isinstance(key, dict) and set(key) == {1, -1, -2, -3} and key[1] == 2 and key[-1] == 1
            and isinstance(key[-2], bytes) and isinstance(key[-3], bytes) and len(key[-2]) == len(key[-3]) == 32):
        raise ValueError(f"not an EC2 P-256 COSE_Key: {key!r}")
    # RFC 9679's input is the deterministic encoding of exactly these four: the link carries it.
    canonical = b"\xa4\x01\x02\x20\x01\x21\x58\x20" + key[-2] + b"\x22\x58\x20" + key[-3]
    if cose != canonical:
        raise ValueError("the COSE_Key is not in RFC 9679's deterministic encoding")
    public = ec.EllipticCurvePublicNumbers(int.from_bytes(key[-2], "big"), int.from_bytes(key[-3], "big"),
                                           ec.SECP256R1()).public_key()  # raises when not on the curve
    return cose, key[-2], key[-3], public, hashlib.sha256(cose).digest()[:8]


# ---- minting ------------------------------------------------------------------------------

class Issuer:
    def __init__(self, folder):
        import cwt
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        self.private = ec.generate_private_key(ec.SECP256R1())
        pem = self.private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption())
        self.key = cwt.COSEKey.from_pem(pem, kid=KID)
        os.makedirs(os.path.join(folder, "trust"), exist_ok=True)
        with open(os.path.join(folder, "trust", KID + ".pem"), "wb") as f:
            f.write(self.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                           serialization.PublicFormat.SubjectPublicKeyInfo))

    def mint(self, sub, holder_key, exp_in=3600, compressed=False):
        """A COSE_Sign1 (ES256, by cwt) with iss, sub, exp, cti and cnf = {1: holder's COSE_Key}."""
        import cwt
        x, y = holder_key
        cnf_key = {1: 2, -1: 1, -2: x, -3: (y[-1] & 1 == 1) if compressed else y}
        now = int(time.time())
        claims = {1: "acme", 2: sub, 4: now + exp_in, 5: now - 60, 6: now - 60, 7: os.urandom(8), 8: {1: cnf_key}}
        return cwt.CWT.new().encode_and_sign(claims, self.key)

    def verify(self, token):
        import cwt
        from cryptography.hazmat.primitives import serialization
        public = cwt.COSEKey.from_pem(self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), kid=KID)
        # cwt reads COSE_Sign1 tagged (18): the pass carries it untagged.
        return cwt.decode(b"\xd2" + token if token[:1] != b"\xd2" else token, public)


def untagged(token):
    """COSE_Sign1 without its tag 18 (cwt writes the tag; a form-1 pass carries it untagged)."""
    return token[1:] if token[:1] == b"\xd2" else token


# ---- the test -----------------------------------------------------------------------------

def run(args):
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    site = args.site
    if not site:
        site = os.path.join(out, "site")
        r = subprocess.run([sys.executable, PASS_PAGE, "build", "--out", site], capture_output=True, text=True)
        if not check("pass-page build", r.returncode == 0, (r.stdout + r.stderr).strip().splitlines()[0] if (r.stdout + r.stderr).strip() else ""):
            return
    server = Server(site)
    base = f"http://127.0.0.1:{server.port}/"
    host = f"127.0.0.1:{server.port}"
    browser = Browser(os.path.join(out, "profile"), base)
    screens = []
    try:
        started = time.time()
        link, slot0, form = browser.open(base)
        try:
            cose, x, y, public, key_id = key_from_link(link)
            check("enrol: #key-link carries a P-256 point", link.startswith(base + "#k="),
                  f"key_id {key_id.hex()}, {time.time() - started:.1f} s to the first pass")
        except Exception as e:
            check("enrol: #key-link carries a P-256 point", False, f"{e}")
            return
        check("opened bare: a form-2 pass", form == 2, f"form {form}")
        try:
            errors = browser.driver.execute_cdp_cmd("Page.getInstallabilityErrors", {}).get("installabilityErrors")
            manifest = browser.driver.execute_cdp_cmd("Page.getAppManifest", {})
            check("installable: the manifest reads, no installability errors (Chromium's own judgement)",
                  errors == [] and not manifest.get("errors") and manifest.get("url", "").startswith(base),
                  f"{errors} {manifest.get('errors')}")
        except Exception as e:
            check("installable", False, str(e))
        with open(os.path.join(out, "holders"), "w") as f:
            f.write(f"{HOLDER} {b64url(cose)}\n")

        # Three slots, the page's clock shifted (no sleeping): now, next, a minute older.
        a = int(time.time()) // 5
        plan = [("now", a, "pass-1.png"), ("next", a + 1, "pass-2.png"), ("old", a - 12, "pass-3.png")]
        for role, slot, name in plan:
            path = os.path.join(out, name)
            try:
                browser.at_slot(slot, path)
                payload = zbar(path)
                value = read_pass(payload)
                good = (value[0] == 2 and value[1] == key_id and value[2] == slot
                        and proof_ok(public, 2, slot, key_id, value[3]))
                check(f"screenshot at slot {role} ({slot}): zbar reads a form-2 pass whose proof verifies", good,
                      f"{len(payload)} bytes, form {value[0]}, slot {value[2]}, {qr_version(browser)}")
                screens.append({"file": name, "slot": slot, "slot_start": slot * 5, "form": 2,
                                "payload_hex": payload.hex(), "role": role, "qr": qr_version(browser)})
            except Exception as e:
                check(f"screenshot at slot {role} ({slot})", False, str(e))
        def write_json():
            with open(os.path.join(out, "screens.json"), "w") as f:
                json.dump({"key_link": link, "cose_key": b64url(cose), "key_id": key_id.hex(), "holder_name": HOLDER,
                           "issuer_kid": KID, "base": base,
                           "window_note": "replay with the kiosk's clock at the 'now' slot's start + 2 s: now granted, "
                                          "now again used, old (60 s older) stale under KIOSK_PASS_WINDOW_S=15",
                           "screens": screens}, f, indent=1)
        write_json()
        payloads = {s["payload_hex"] for s in screens}
        check("three slots, three different codes", len(payloads) == 3 == len(screens))
        browser.js_async("window.KH1PassTest.setClockOffset(0).then(arguments[arguments.length - 1])")

        # The private key cannot leave the browser.
        result = browser.js_async("""const done = arguments[arguments.length - 1];
            const r = indexedDB.open('kh1-pass');
            r.onerror = () => done({error: String(r.error)});
            r.onsuccess = () => {
              const g = r.result.transaction('state').objectStore('state').get('holder');
              g.onerror = () => done({error: String(g.error)});
              g.onsuccess = async () => {
                const h = g.result, out = {extractable: h.privateKey.extractable, usages: h.privateKey.usages,
                                           algorithm: h.privateKey.algorithm, exports: {}};
                for (const f of ['pkcs8', 'jwk', 'raw']) {
                  try { await crypto.subtle.exportKey(f, h.privateKey); out.exports[f] = 'exported'; }
                  catch (e) { out.exports[f] = e.name; }
                }
                const raw = new Uint8Array(await crypto.subtle.exportKey('raw', h.publicKey));
                out.publicHex = Array.from(raw, (b) => b.toString(16).padStart(2, '0')).join('');
                r.result.close();
                done(out);
              };
            };""")
        exports = result.get("exports", {})
        check("exportKey of the private key refuses (pkcs8, jwk, raw)",
              result.get("extractable") is False and exports and all(v != "exported" for v in exports.values()),
              f"extractable={result.get('extractable')} {exports} {result.get('error', '')}")
        check("the key in IndexedDB is the key link's", result.get("publicHex") == (b"\x04" + x + y).hex()
              and result.get("algorithm", {}).get("namedCurve") == "P-256")

        # The same key after a reload and after a browser restart on the same profile.
        browser.driver.refresh()
        link2, _, _ = browser.ready()
        check("reload: the same key", link2 == link)
        browser.restart()
        link3, _, _ = browser.open(base)
        check("browser restarted on the same profile: the same key", link3 == link)

        issuer = Issuer(out)
        # A credential for another key: refused, the page keeps its form-2 pass.
        from cryptography.hazmat.primitives.asymmetric import ec
        other = ec.generate_private_key(ec.SECP256R1()).public_key().public_numbers()
        other_token = issuer.mint("mallory", (other.x.to_bytes(32, "big"), other.y.to_bytes(32, "big")))
        status = browser.follow("#c=" + b64url(other_token))
        _, _, form = browser.ready()
        check("a #c= link for another key is refused, the page keeps its pass",
              "another key" in status and form == 2 and stored_credential(browser) is None, f"{status!r}, form {form}")

        mine = issuer.mint("alice", (x, y))
        expired = issuer.mint("alice-old", (x, y), exp_in=-60)
        status = browser.follow("#c=" + b64url(expired))
        _, _, form = browser.ready()
        check("an expired credential is refused", "expired" in status and form == 2 and stored_credential(browser) is None,
              f"{status!r}, form {form}")
        for what, fragment in [("cut short", b64url(mine)[: len(b64url(mine)) // 2]),
                               ("a character not base64url", b64url(mine)[:40] + "!" + b64url(mine)[40:]),
                               ("bytes changed into no CBOR", b64url(b"\xff" + mine[1:]))]:
            status = browser.follow("#c=" + fragment)
            _, _, form = browser.ready()
            check(f"a mangled link ({what}) is refused", "damaged" in status and form == 2
                  and stored_credential(browser) is None, f"{status!r}, form {form}")

        # A credential for this page's key: taken, a form-1 pass.
        status = browser.follow("#c=" + b64url(mine))
        _, _, form = browser.ready()
        check("a #c= link for this page's key is taken", "kept" in status and form == 1, f"{status!r}, form {form}")
        slot = a + 2
        path = os.path.join(out, "pass-form1.png")
        try:
            browser.at_slot(slot, path)
            payload = zbar(path)
            value = read_pass(payload)
            claims = issuer.verify(value[1])
            good = (value[0] == 1 and value[1] == untagged(mine) and value[2] == slot
                    and proof_ok(public, 1, slot, value[1], value[3]) and claims.get(2) == "alice")
            check("the form-1 pass: [1, the credential byte for byte, slot, proof], the proof verifies", good,
                  f"{len(payload)} bytes (a credential of {len(value[1])}), form {value[0]}, slot {value[2]}, {qr_version(browser)}")
            screens.append({"file": "pass-form1.png", "slot": slot, "slot_start": slot * 5, "form": 1,
                            "payload_hex": payload.hex(), "role": "form1", "qr": qr_version(browser)})
        except Exception as e:
            check("the form-1 pass", False, str(e))
        write_json()
        browser.js_async("window.KH1PassTest.setClockOffset(0).then(arguments[arguments.length - 1])")
        # Having a credential, another key's link still leaves it in place.
        status = browser.follow("#c=" + b64url(other_token))
        _, _, form = browser.ready()
        check("with a credential, another key's link is refused and the credential kept",
              "another key" in status and form == 1 and stored_credential(browser) == untagged(mine).hex(), f"{status!r}")
        compressed = issuer.mint("alice-c", (x, y), compressed=True)
        status = browser.follow("#c=" + b64url(compressed))
        check("cnf with a compressed point (y as its sign bit) of this key is taken",
              "kept" in status and stored_credential(browser) == untagged(compressed).hex(), f"{status!r}")

        # Offline: the server stopped, the page reopens from its service worker, same key, a pass.
        browser.restart()
        browser.open(base)
        registered = browser.wait(lambda: browser.js("return !!(navigator.serviceWorker && navigator.serviceWorker.controller)"),
                                  "the service worker to control the page", timeout=20)
        seen = len(server.requests)
        server.stop()
        try:
            browser.driver.refresh()
            link4, _, form = browser.ready()
            check("offline (server stopped): the page opens from its service worker with the same key",
                  registered and link4 == link and form == 1 and len(server.requests) == seen)
        except Exception as e:
            check("offline (server stopped): the page opens from its service worker", False, str(e))

    finally:
        browser.quit()
        try:
            server.stop()
        except Exception:
            pass

    # No request to another origin: the server saw only its own host, the browser's log only it.
    hosts = {r["host"] for r in server.requests}
    check("the server saw requests only for itself", hosts == {host},
          f"{len(server.requests)} requests, hosts {sorted(hosts)}, paths {sorted({r['path'] for r in server.requests})}")
    # chrome:// is the browser's own start page before the test opens the page: no network.
    # A request from the page's documents must be to the page's origin (a data: URL would count
    # too); any request to the network (http, https, ws, wss) must be to 127.0.0.1:PORT.
    internal = [u for u, doc in browser.urls if doc.split(":")[0] in ("chrome", "about") and not u.startswith(base)]
    ours = [u for u, doc in browser.urls if u.startswith(base)]
    foreign = [u for u, doc in browser.urls if not u.startswith(base)
               and (doc.startswith(base) or urllib.parse.urlsplit(u).scheme in ("http", "https", "ws", "wss", "ftp"))]
    check("the browser's network log shows no other host", ours and not foreign,
          f"{len(ours)} requests to {host}, {len(internal)} by the browser's own chrome:// start page, none to the network"
          + (f", others: {foreign[:5]}" if foreign else ""))
    csp = [e["message"] for e in browser.console if "Content Security Policy" in e.get("message", "")]
    check("no Content-Security-Policy violation in the console", not csp, "; ".join(csp)[:300])
    errors = [e["message"] for e in browser.console if e.get("level") == "SEVERE"]
    print("INFO console errors: " + ("; ".join(errors)[:500] if errors else "none"))

    messages(out, site)
    if args.kiosk:
        kiosk_step(args.kiosk, out, screens)


def messages(out, site):
    """The page's words for what it cannot help: no WebCrypto (not a secure context: the page at
    http://insecure.test, which the browser resolves to 127.0.0.1 by --host-resolver-rules, no DNS),
    an iPhone (its user agent) and storage that is not persistent."""
    server = Server(site)
    name = "insecure.test"
    browser = Browser(os.path.join(out, "profile-messages"), f"http://{name}:{server.port}/",
                      extra=[f"--host-resolver-rules=MAP {name} 127.0.0.1"])
    try:
        d = browser.driver
        d.get(browser.base)
        status = browser.wait(lambda: (browser.status() if browser.status() != "Starting..." else ""), "the status line")
        secure = browser.js("return window.isSecureContext")
        shown = browser.js("return document.getElementById('pass').children.length")
        check("not a secure context (http on a name other than 127.0.0.1/localhost): no WebCrypto, the page says to use https",
              secure is False and "https" in status and shown == 0, f"{status!r}")
        d.get(f"http://127.0.0.1:{server.port}/")
        browser.ready()
        note = browser.wait(lambda: browser.js("const n = document.getElementById('storage-note'); return n ? n.textContent : ''"),
                            "the storage note")
        persisted = browser.js_async("navigator.storage.persisted().then(arguments[arguments.length - 1])")
        check("storage not persistent (persist() refused, as in a private window): the page says the key may not last",
              persisted is False and "private window" in note and "not persistent" in note, f"{note!r}")
        ua = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1"
        d.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": ua, "platform": "iPhone"})
        d.refresh()
        browser.ready()
        note = browser.wait(lambda: browser.js("const n = document.getElementById('ios-note'); return n ? n.textContent : ''"),
                            "the iPhone note")
        check("on an iPhone (not from the home screen): the page says the key survives only on the Home Screen",
              "Home Screen" in note, f"{note!r}")
    except Exception as e:
        check("the page's messages", False, f"{type(e).__name__}: {e}")
    finally:
        browser.quit()
        server.stop()


def qr_version(browser):
    """What the page says it drew (#pass's title: 'N bytes, QR version V'), for the figures."""
    return browser.js("return document.getElementById('pass').title")


def stored_credential(browser):
    """The hex of the credential the page keeps in IndexedDB, or None."""
    return browser.js_async("""const done = arguments[arguments.length - 1];
        const r = indexedDB.open('kh1-pass');
        r.onerror = () => done('error');
        r.onsuccess = () => {
          const g = r.result.transaction('state').objectStore('state').get('credential');
          g.onsuccess = () => { r.result.close();
            done(g.result ? Array.from(new Uint8Array(g.result.bytes), (b) => b.toString(16).padStart(2, '0')).join('') : null); };
          g.onerror = () => done('error');
        };""")


# ---- the screenshots through the release kiosk (optional) ---------------------------------

def blank_png(width, height):
    row = b"\x00" + b"\xff" * width

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height, 9)) + chunk(b"IEND", b""))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def kiosk_step(kiosk, out, screens):
    """Replays the screenshots as camera frames through the release kiosk (one run each, one state
    folder), its clock at the 'now' slot's start + 2 s (faketime): 'now' granted, 'now' again used,
    'old' stale, 'next' (a later slot, 3 s ahead) granted; the form-1 pass at its own slot granted."""
    by_role = {s["role"]: s for s in screens}
    if not all(r in by_role for r in ("now", "old")):
        check("kiosk: screenshots to replay", False, "missing")
        return
    if not os.access("/usr/bin/faketime", os.X_OK):
        check("kiosk: faketime", False, "apt-get install faketime")
        return
    work = os.path.join(out, "kiosk")
    state = os.path.join(work, "state")
    os.makedirs(state)
    env = {"PATH": "/usr/bin:/bin", "KIOSK_VERDICT": "credentials", "KIOSK_TRUST_DIR": os.path.join(out, "trust"),
           "KIOSK_REVOKED_FILE": os.path.join(work, "revoked"), "KIOSK_HOLDERS_FILE": os.path.join(out, "holders"),
           "STATE_DIRECTORY": state, "KIOSK_ROI": "0,0,1,1", "KIOSK_REPEAT_MS": "0", "KIOSK_GPIO_CHIP": "sim",
           "KIOSK_DOOR_LINE": "5", "KIOSK_DOOR_MS": "200", "KIOSK_STATS_S": "0", "KIOSK_REQUIRE_SYNCED_CLOCK": "0",
           "KIOSK_PASS_WINDOW_S": "15", "KIOSK_LOG_LEVEL": "debug"}
    open(env["KIOSK_REVOKED_FILE"], "w").close()
    plan = [("granted", "now", "granted"), ("used", "now", "used"), ("stale", "old", "stale"),
            ("next", "next", "granted")] + ([("form1", "form1", "granted")] if "form1" in by_role else [])
    for name, role, expected in plan:
        # The kiosk's clock: 2 s into the 'now' slot (the form-1 pass: into its own slot).
        at = time.strftime("@%Y-%m-%d %H:%M:%S", time.gmtime(by_role["form1" if role == "form1" else "now"]["slot_start"] + 2))
        frames = os.path.join(work, name)
        os.makedirs(frames)
        source = os.path.join(out, by_role[role]["file"])
        w, h = png_size(source)
        blank = blank_png(w, h)
        for i, kind in enumerate(["blank", "code", "blank"]):
            target = os.path.join(frames, f"{i:04d}.png")
            if kind == "blank":
                open(target, "wb").write(blank)
            else:
                shutil.copy(source, target)
        r = subprocess.run(["/usr/bin/faketime", "-f", at, kiosk, "run"], env={**env, "TZ": "UTC",
                           "KIOSK_CAMERA": "replay:" + frames}, capture_output=True, text=True, timeout=60)
        open(os.path.join(work, name + ".log"), "w").write(r.stderr)
        events = [line for line in r.stderr.splitlines() if "event=credential " in line or line.endswith("event=credential")]
        got = " | ".join(events)[:300] or (r.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
        if expected == "granted":
            ok = any("result=granted" in e for e in events)
        else:
            ok = any("result=denied" in e and f"reason={expected}" in e for e in events)
        check(f"kiosk: the '{role}' screenshot replayed is {expected}", ok, f"exit {r.returncode}: {got}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the output folder (replaced)")
    p.add_argument("--site", help="a folder pass-page build made (default: build one into OUT/site)")
    p.add_argument("--kiosk", help="the release kiosk: replay the screenshots through it (needs faketime)")
    args = p.parse_args()
    common.main("browser.py", {"selenium": "selenium", "cbor2": "cbor2", "cwt": "cwt", "cryptography": "cryptography"}, run, args)


if __name__ == "__main__":
    main()
