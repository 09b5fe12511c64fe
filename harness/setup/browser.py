#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The setup code's phone page (deploy/examples/site-setup, interface 0.6 "Set up at the door by a
signed code") in a real browser: Debian's chromium and chromium-driver, headless, driven by
Selenium (PyPI; Service("/usr/bin/chromedriver"), no browser download), at a phone's viewport
(Chrome's device metrics: 360x800 CSS pixels at 3 device pixels each, and 390x844 at 3). The
site's key is made by PyPI's `cryptography`; `site-setup make` writes the code, its PNG and its
page; the code drawn in Chromium's screenshot is read by zbar (`zbarimg --raw -Sbinary`, Debian's
zbar-tools) and checked by `cbor2` and `cryptography` (the signature by the site's public key, the
claims as asked): no project code checks the page. Then the release kiosk reads the screenshot:
`kiosk decode` calls it a setup code, `kiosk setup --show SCREENSHOT --root DIR` verifies it for a
new door and says what it would change.

  browser.py --out DIR [--kiosk PATH_TO_RELEASE_KIOSK]

Two codes: `door-3`, as a site makes one (a P-256 key, a network with its key, a zone, three time
servers, the broker's password, three settings: about 470 bytes, QR version 15), and `hostile`
(an Ed25519 key; the door's name, the SSID and settings with <script>, quotes and an ampersand,
all values a door takes). Checks (one PASS/FAIL line each; exit 1 on any FAIL; a missing chromium,
chromedriver, zbarimg, selenium, cbor2, cryptography or libqrencode is a FAIL):
  each page opened from a file and served from 127.0.0.1 with the network unreachable (a proxy on
  a closed port, every host name unresolvable): its picture loaded, nothing asked of any other
  origin (the browser's network log: only the page itself and data: URLs; the server: only its
  own host), no script element, no Content-Security-Policy violation, the code whole on the
  phone's screen without scrolling; the screenshot's code, read by zbar, is the code's bytes, its
  signature verifies, its claims are those asked; the hostile values shown as text, byte for
  byte, none of them markup (no element, attribute or dialog of theirs); neither the Wi-Fi key
  nor the broker's password anywhere in the page (its text, its HTML, its title) nor in
  site-setup's or the kiosk's output; the kiosk reads the screenshot as a setup code and, for a
  new door, verifies it and lists what it would change.

The output folder (DIR): site.key, site.pem, hostile.key, hostile.pem (the keys), door-3.* and
hostile.* (site-setup's .ks1, .png, .html), NAME-VIEWPORT.png (the screenshots), door-NAME/ (a
new door's root for --show: its etc/hostname, the code's door, only).
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import browser_common as common  # noqa: E402
from browser_common import Server, check, zbar  # noqa: E402
SITE_SETUP = os.path.join(ROOT, "deploy", "examples", "site-setup")
# Phones: CSS pixels and device pixels a CSS pixel (an Android phone, an iPhone 13-15).
VIEWPORTS = [("360x800", 360, 800, 3), ("390x844", 390, 844, 3)]
PSK = "correct horse battery staple"
PASSWORD = "broker-pw-7f3a9c"
HOSTILE_SSID = '<script>alert("x")</script>\'&'     # 30 bytes: an SSID is at most 32
HOSTILE_DOOR = 'd3"\'<b>&amp;</b>'                   # the door's name (its host name), no spaces
# Values a door takes (`kiosk check` accepts them): markup, quotes and an ampersand are text there.
HOSTILE_ENV = {"KIOSK_MQTT_USER": 'd3"><img/src=x/onerror=alert(1)>', "KIOSK_MQTT_TOPIC": "door/'a'&\"b\"<i>x</i>",
               "KIOSK_MQTT_URL": "mqtt://broker.local"}

# ---- the codes ----------------------------------------------------------------------------

def keygen(out, name, alg):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    key = ec.generate_private_key(ec.SECP256R1()) if alg == "ES256" else ed25519.Ed25519PrivateKey.generate()
    with open(os.path.join(out, name + ".key"), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    with open(os.path.join(out, name + ".pem"), "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return key.public_key()


def site_setup(out, key, name, args, stdin="", kiosk=None):
    """`site-setup make`; with `kiosk`, that kiosk's `setup --show` checks the code first."""
    r = subprocess.run([sys.executable, SITE_SETUP, "make", "--key", os.path.join(out, key + ".key"), "--out", os.path.join(out, name)]
                       + args + (["--kiosk", kiosk] if kiosk else []), input=stdin, capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    return r


def verify_code(code, public, asked):
    """The code as a door reads it, checked by cbor2 and cryptography alone: KS1: and one untagged
    COSE_Sign1, nothing after it; the signature by `public` over Sig_structure1; the claims those
    asked (`asked`: the claims that must be there, by value). Returns a description or raises."""
    import cbor2
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    value, _ = common.after_prefix(code, b"KS1:", "COSE_Sign1 of a KS1: code")
    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[0], bytes) and isinstance(value[2], bytes)):
        raise ValueError("not a COSE_Sign1 array")
    protected, _, payload, signature = value
    alg = cbor2.loads(protected).get(1)
    tbs = cbor2.dumps(["Signature1", protected, b"", payload])
    if alg == -7:
        public.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")),
                      tbs, ec.ECDSA(hashes.SHA256()))
    elif alg == -8:
        public.verify(signature, tbs)
    else:
        raise ValueError(f"alg {alg}")
    claims = cbor2.loads(payload)
    for k, v in asked.items():
        if claims.get(k) != v:
            raise ValueError(f"claim {k}: {claims.get(k)!r}, asked {v!r}")
    if not 0 < claims["exp"] - claims["iat"] <= 86_400 or len(claims["cti"]) != 16:
        raise ValueError(f"iat {claims['iat']}, exp {claims['exp']}, cti {claims['cti']!r}")
    return f"{'ES256' if alg == -7 else 'EdDSA'}, claims {sorted(claims)}"


# ---- the server and the browser -----------------------------------------------------------

def start_browser(profile):
    # The network is out of reach: every connection goes to a proxy on a closed port (loopback
    # excepted, as Chromium bypasses it by default: the page's own server) and no host name resolves.
    return common.start_browser(profile, ["--proxy-server=http://127.0.0.1:9",
                                          "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])


def network_log(driver):
    """(URL, document URL) of every request in the browser's network log since the last call."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method", ""), message.get("params", {})
        if method == "Network.requestWillBeSent":
            urls.append((params["request"]["url"], params.get("documentURL", "")))
        elif method in ("Network.webSocketCreated", "Network.webTransportCreated"):
            urls.append((params.get("url", "?"), ""))
    return urls


def page_state(driver):
    return driver.execute_script("""
        const img = document.getElementById('code'), r = img ? img.getBoundingClientRect() : null;
        return {ready: document.readyState, loaded: !!(img && img.complete && img.naturalWidth > 0),
                natural: img ? img.naturalWidth : 0,
                rect: r ? [r.left, r.top, r.right, r.bottom] : null, vw: innerWidth, vh: innerHeight,
                scrollWidth: document.documentElement.scrollWidth,
                scripts: document.scripts.length, title: document.title, text: document.body.innerText,
                html: document.documentElement.outerHTML,
                tags: Array.from(document.querySelectorAll('*'), (e) => e.tagName.toLowerCase()),
                handlers: Array.from(document.querySelectorAll('*')).flatMap((e) => Array.from(e.attributes, (a) => a.name))
                          .filter((n) => n.startsWith('on')),
                cells: Array.from(document.querySelectorAll('tr'), (tr) => [tr.cells[0] ? tr.cells[0].textContent : '',
                                                                          tr.cells[1] ? tr.cells[1].textContent : ''])};""")


def no_secret(text):
    """Neither secret, nor its hex or base64, in `text`."""
    for s in (PSK, PASSWORD):
        b = s.encode()
        for form in (s, b.hex(), base64.b64encode(b).decode().rstrip("="), base64.urlsafe_b64encode(b).decode().rstrip("=")):
            if form in text:
                return False
    return True


# ---- the run ------------------------------------------------------------------------------

def run(args):
    out = args.out
    if os.path.exists(out):
        import shutil
        shutil.rmtree(out)
    os.makedirs(out)
    public = keygen(out, "site", "ES256")
    hostile_public = keygen(out, "hostile", "EdDSA")
    for secret, value in (("psk", PSK), ("pw", PASSWORD)):
        with open(os.path.join(out, secret), "w") as f:
            f.write(value + "\n")

    codes = {}
    ntp = ["0.pool.ntp.org", "1.pool.ntp.org", "2.pool.ntp.org"]
    env = {"KIOSK_MQTT_URL": "mqtt://broker.site.example:1883", "KIOSK_MQTT_USER": "door-3", "KIOSK_ROI": "0.2,0.2,0.6,0.6"}
    r = site_setup(out, "site", "door-3", ["--door", "door-3", "--ssid", "door-net", "--psk-file", os.path.join(out, "psk"),
                                 "--tz", "Europe/Berlin", "--ntp", *ntp, "--mqtt-password-file", "-"]
                   + [a for k, v in env.items() for a in ("--env", f"{k}={v}")], stdin=PASSWORD + "\n", kiosk=args.kiosk)
    if check("site-setup make door-3 (P-256)", r.returncode == 0, (r.stdout + r.stderr).strip()):
        codes["door-3"] = {"public": public, "asked": {"door": "door-3", "wifi": {"ssid": "door-net", "psk": PSK},
                                                       "tz": "Europe/Berlin", "ntp": ntp, "mqtt_password": PASSWORD, "env": env},
                           "shown": {"door-3", "door-net", "Europe/Berlin", "included", *env.values()}, "out": r.stdout + r.stderr}
    r = site_setup(out, "hostile", "hostile", ["--door", HOSTILE_DOOR, "--ssid", HOSTILE_SSID, "--psk-file", "-", "--mqtt-password-file", os.path.join(out, "pw")]
                   + [a for k, v in HOSTILE_ENV.items() for a in ("--env", f"{k}={v}")], stdin=PSK + "\n", kiosk=args.kiosk)
    if check("site-setup make hostile (Ed25519; <script>, quotes and & in the door's name, the SSID and the settings)", r.returncode == 0,
             (r.stdout + r.stderr).strip()):
        codes["hostile"] = {"public": hostile_public, "asked": {"door": HOSTILE_DOOR, "wifi": {"ssid": HOSTILE_SSID, "psk": PSK},
                                                                "mqtt_password": PASSWORD, "env": HOSTILE_ENV},
                            "shown": {HOSTILE_DOOR, HOSTILE_SSID, *HOSTILE_ENV.values()}, "out": r.stdout + r.stderr}
    if args.kiosk:
        # A value the door refuses (a broker URL with a path): the kiosk's own check refuses the
        # code before anything is written, and says which variable.
        r = site_setup(out, "site", "refused", ["--ssid", "door-net", "--psk-file", os.path.join(out, "psk"),
                                                "--env", "KIOSK_MQTT_URL=mqtt://broker.example/?a=1"], kiosk=args.kiosk)
        written = [f for f in os.listdir(out) if f.startswith("refused")]
        check("site-setup make refuses a code the door would refuse (KIOSK_MQTT_URL with a path; the kiosk's setup --show), nothing written",
              r.returncode != 0 and "refused KIOSK_MQTT_URL" in r.stderr and not written and no_secret(r.stdout + r.stderr),
              (r.stdout + r.stderr).strip()[:200] + (f"; written {written}" if written else ""))
    for name, c in codes.items():
        check(f"{name}: site-setup's output carries no secret", no_secret(c["out"]))
        html_text = open(os.path.join(out, name + ".html"), encoding="utf-8").read()
        check(f"{name}: the page's HTML file carries no secret (its text, nor its picture's base64)", no_secret(html_text))

    # Each code's door, new (for --show): its host name, nothing else.
    for name, c in codes.items():
        c["root"] = os.path.join(out, "door-" + name)
        os.makedirs(os.path.join(c["root"], "etc"))
        with open(os.path.join(c["root"], "etc", "hostname"), "w") as f:
            f.write(c["asked"]["door"] + "\n")

    server = Server(out)
    browser = start_browser(os.path.join(out, "profile"))
    screenshots = []
    try:
        for name, c in codes.items():
            code = open(os.path.join(out, name + ".ks1"), "rb").read()
            for how, url in [("file", "file://" + os.path.join(out, name + ".html")),
                             ("served", f"http://127.0.0.1:{server.port}/{name}.html")]:
                for label, width, height, scale in VIEWPORTS:
                    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                            {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": True})
                    seen = len(server.requests)
                    network_log(browser)
                    browser.get_log("browser")
                    browser.get(url)
                    end = time.time() + 15
                    state = page_state(browser)
                    while not (state["ready"] == "complete" and state["loaded"]) and time.time() < end:
                        time.sleep(0.05)
                        state = page_state(browser)
                    where = f"{name}, {how}, {label}"
                    requests = network_log(browser)
                    console = browser.get_log("browser")
                    check(f"{where}: the page and its picture load with the network out of reach", state["loaded"],
                          f"picture {state['natural']} px wide")
                    # Only the page itself; its picture is a data: URL (Chromium logs it as a request).
                    others = [u for u, _ in requests if u != url and not u.startswith("data:")]
                    served = server.requests[seen:]
                    foreign_hosts = {q["host"] for q in served} - {f"127.0.0.1:{server.port}"}
                    paths = {q["path"] for q in served}
                    check(f"{where}: nothing asked of another origin", not others and not foreign_hosts
                          and paths <= ({f"/{name}.html", "/favicon.ico"} if how == "served" else set()),
                          f"{len(requests)} requests in the browser's log ({sum(u.startswith('data:') for u, _ in requests)} data:), "
                          f"the server saw {sorted(paths) or 'none'}" + (f"; others: {others[:3]}" if others else ""))
                    csp = [e["message"] for e in console if "Content Security Policy" in e.get("message", "")]
                    check(f"{where}: no script, no event handler, no CSP violation",
                          state["scripts"] == 0 and not state["handlers"] and "script" not in state["tags"] and not csp,
                          f"{state['scripts']} scripts, handlers {state['handlers']}, {'; '.join(csp)[:200]}")
                    # The page as wide as the phone (a wider page is zoomed out or scrolled sideways:
                    # the code smaller or cut), and the code whole on its first screen.
                    left, top, right, bottom = state["rect"]
                    check(f"{where}: the page fits the phone's width, the code whole on its screen without scrolling",
                          state["vw"] == width and state["scrollWidth"] <= width and left >= 0 and top >= 0
                          and right <= width and bottom <= height,
                          f"the code {right - left:.0f} CSS px wide at {left:.0f},{top:.0f}; the viewport {state['vw']}x{state['vh']}, "
                          f"the page {state['scrollWidth']} wide, the phone {width}x{height}")
                    check(f"{where}: no secret in the page's text, HTML or title",
                          no_secret(state["text"]) and no_secret(state["html"]) and no_secret(state["title"]))
                    cells = {v for _, v in state["cells"]}
                    missing = c["shown"] - cells
                    check(f"{where}: the values shown as text, byte for byte", not missing, f"missing {sorted(missing)}" if missing else
                          f"{len(state['cells'])} rows")
                    if name == "door-3" and label == VIEWPORTS[0][0]:
                        # Version 15: more than the middle half of a 640x480 frame holds at a size
                        # that reads (docs/measurements/setup-codes.md); the page says what to do.
                        check(f"{where}: the page says how close, and what a door already set up needs for a code this large",
                              "8-9 cm" in state["text"] and "may not read a code this large" in state["text"]
                              and "KIOSK_ROI=0,0,1,1" in state["text"])
                    if name == "hostile":
                        # No element, attribute or dialog of the values' making: the tags the page has.
                        expected_tags = {"html", "head", "meta", "title", "style", "body", "img", "p", "small", "table", "tbody", "tr", "th", "td"}
                        stray = set(state["tags"]) - expected_tags
                        try:
                            alert = browser.switch_to.alert.text
                        except Exception:
                            alert = None
                        check(f"{where}: the hostile values are text, not markup", not stray and alert is None
                              and state["tags"].count("img") == 1, f"stray elements {sorted(stray)}, dialog {alert!r}")
                    if how == "file":
                        path = os.path.join(out, f"{name}-{label}.png")
                        png = browser.get_screenshot_as_png()
                        with open(path, "wb") as f:
                            f.write(png)
                        try:
                            read = zbar(path)
                            what = verify_code(read, c["public"], c["asked"])
                            check(f"{where}: zbar reads the screenshot's code: the code's bytes, signed by the site's key, the claims asked",
                                  read == code, f"{len(read)} bytes ({len(code)} written), {what}")
                            screenshots.append((name, path))
                        except Exception as e:
                            check(f"{where}: zbar reads the screenshot's code", False, f"{type(e).__name__}: {e}")
    finally:
        try:
            browser.quit()
        finally:
            server.stop()

    if args.kiosk:
        kiosk_step(args.kiosk, screenshots, codes)


def kiosk_step(kiosk, screenshots, codes):
    """The release kiosk reads each screenshot as a setup code (`kiosk decode`, the whole picture
    its ROI), and `kiosk setup --show` verifies it for a new door (its root: a host name only)."""
    for name, path in screenshots:
        label, door = os.path.basename(path), codes[name]["root"]
        r = subprocess.run([kiosk, "decode", "--roi", "0,0,1,1", path], capture_output=True, text=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin"})
        size = len(open(os.path.join(os.path.dirname(path), name + ".ks1"), "rb").read())
        check(f"kiosk decode {label}: a setup code of {size} bytes, its contents not printed",
              r.returncode == 0 and f"a setup code of {size} bytes" in r.stdout and no_secret(r.stdout + r.stderr),
              (r.stdout + r.stderr).strip()[:300])
        r = subprocess.run([kiosk, "setup", "--show", path, "--root", door], capture_output=True, text=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin"})
        out = r.stdout + r.stderr
        want = ["wifi: door-net (WPA-PSK, key hidden)", "tz: Europe/Berlin", "KIOSK_ROI=0.2,0.2,0.6,0.6"] if name == "door-3" else \
               [f"wifi: {HOSTILE_SSID} (WPA-PSK, key hidden)"] + [f"{k}={v}" for k, v in HOSTILE_ENV.items()]
        check(f"kiosk setup --show {label}: verified for a new door, what it would change said, no secret",
              r.returncode == 0 and all(w in out for w in want) and "nothing was changed" in out and no_secret(out),
              out.strip().replace("\n", " | ")[:400])
        check(f"kiosk setup --show {label}: the door's root unchanged", sorted(os.listdir(door)) == ["etc"]
              and os.listdir(os.path.join(door, "etc")) == ["hostname"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the output folder (replaced)")
    p.add_argument("--kiosk", help="the release kiosk: it reads the screenshots")
    args = p.parse_args()
    args.out = os.path.abspath(args.out)
    common.main("harness/setup/browser.py", {"selenium": "selenium", "cbor2": "cbor2", "cryptography": "cryptography"}, run, args)


if __name__ == "__main__":
    main()
