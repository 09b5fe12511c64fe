#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make test-ha's scene (harness/ha/run.sh starts Mosquitto, Home Assistant and the broker log
first): a live release kiosk, door-3, publishing to that Mosquitto with Home Assistant discovery,
and what Home Assistant made of it, read from what its automations publish under kiosk-ha/seen/
(harness/ha/configuration.yaml).

  check.py --kiosk KIOSK --port PORT --broker-log FILE --ha-log FILE --out DIR

The kiosk is driven as the end-to-end tests drive it: frames through a FIFO replay (the codes
drawn by harness/bench-writes/frames.py), a Wiegand keypad and the door's inputs on the simulated
GPIO chip (lines on its standard input), credentials signed by the tests' issuer
(Tests/Peers/credentials.py), the PIN set by deploy/examples/issue-credential. Prints a PASS or
FAIL line for each check; run.sh counts them.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "harness", "bench-writes"))
import frames  # noqa: E402  (pgm, qr: the tests' 320x320 frames)

TOPIC, CLIENT = "kiosk/door-3", "door-3"
D0, D1, CONTACT, TAMPER = 12, 13, 8, 7
FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + " ha: " + what + ("" if ok or not detail else " (" + detail + ")"), flush=True)
    return ok


def eventually(pred, seconds, every=0.1):
    deadline = time.time() + seconds
    while True:
        v = pred()
        if v or time.time() > deadline:
            return v
        time.sleep(every)


class Broker:
    """What mosquitto_sub -v '#' wrote (run.sh started it before Home Assistant)."""

    def __init__(self, path):
        self.path = path

    def messages(self, topic=None):
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            t, _, p = line.partition(" ")
            if topic is None or t == topic:
                out.append((t, p))
        return out

    def seen(self, kind):
        """Home Assistant's reports on kiosk-ha/seen/KIND, as JSON."""
        out = []
        for _, p in self.messages("kiosk-ha/seen/" + kind):
            try:
                out.append(json.loads(p))
            except ValueError:
                pass
        return out

    def changes(self, entity_prefix):
        return [c for c in self.seen("change") if c.get("entity_id", "").startswith(entity_prefix)]

    def entities(self):
        dumps = self.seen("entities")
        return dumps[-1] if dumps else {}


class Kiosk:
    def __init__(self, binary, env, log):
        self.log = log
        self.err = open(log, "wb")
        self.p = subprocess.Popen([binary, "run"], env=env, stdin=subprocess.PIPE, stderr=self.err, stdout=subprocess.DEVNULL)

    def lines(self, event=None):
        with open(self.log, encoding="utf-8", errors="replace") as fh:
            out = [{k: v.strip('"') for k, v in FIELD.findall(l)} for l in fh.read().splitlines()]
        return [l for l in out if event is None or l.get("event") == event]

    def wait_for(self, event, count=1, seconds=20, where=lambda l: True):
        return eventually(lambda: len([l for l in self.lines(event) if where(l)]) >= count or self.p.poll() is not None, seconds) \
            and len([l for l in self.lines(event) if where(l)]) >= count

    def say(self, text):
        self.p.stdin.write((text + "\n").encode())
        self.p.stdin.flush()

    def type(self, keys):
        """The keys as an 8-bit Wiegand keypad sends them (KeypadEndToEndTests.type): a 100 us
        pulse a bit, 2 ms apart, stamped just before now; a key every 60 ms."""
        for c in keys:
            v = {"*": 10, "#": 11}.get(c, None)
            v = int(c) if v is None else v
            word = ((~v & 0xF) << 4) | v
            bits = [(word >> (7 - i)) & 1 for i in range(8)]
            t = time.monotonic_ns() - len(bits) * 2_000_000
            out = []
            for b in bits:
                line = D1 if b else D0
                out += ["%d 0 %d" % (line, t), "%d 1 %d" % (line, t + 100_000)]
                t += 2_000_000
            self.say("\n".join(out))
            time.sleep(0.06)


class Replay:
    """An empty first frame (read at open for the size), then FIFOs fed one frame each."""

    def __init__(self, folder, count):
        self.folder, self.next = folder, 1
        os.makedirs(folder)
        with open(os.path.join(folder, "0000.pgm"), "wb") as fh:
            fh.write(frames.pgm(None))
        for i in range(1, count + 1):
            os.mkfifo(os.path.join(folder, "%04d.pgm" % i))

    def show(self, code):
        """The code's frame and an empty one after it, written as the kiosk reads them (a thread:
        a kiosk that never reads must not hang the harness)."""
        self.show_frames([frames.pgm(frames.qr(code)), frames.pgm(None)])

    def end(self):
        """The next FIFO fed an empty frame: a replay's camera waits in open() for its writer
        (a real camera does not), and the stopping kiosk waits for its camera's thread."""
        self.show_frames([frames.pgm(None)])

    def show_frames(self, todo):
        names = [os.path.join(self.folder, "%04d.pgm" % (self.next + i)) for i in range(len(todo))]
        self.next += len(todo)

        def feed():
            for name, data in zip(names, todo):
                with open(name, "wb") as fh:
                    fh.write(data)
        threading.Thread(target=feed, daemon=True).start()


def main():
    a = argparse.ArgumentParser()
    for opt in ("--kiosk", "--port", "--broker-log", "--ha-log", "--out"):
        a.add_argument(opt, required=True)
    args = a.parse_args()
    out = args.out
    broker = Broker(args.broker_log)
    py = sys.executable

    # Home Assistant up: its birth message, and its first report of the MQTT entities (none yet).
    def ha_log():
        try:
            with open(args.ha_log, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except FileNotFoundError:
            return ""
    up = eventually(lambda: ("homeassistant/status", "online") in broker.messages("homeassistant/status")
                    and broker.seen("entities") or "recovery mode" in ha_log(), 180, 0.5)
    if not say(bool(up) and "recovery mode" not in ha_log(), "Home Assistant started, connected to Mosquitto and runs the automations",
               "no birth message or no kiosk-ha/seen/entities in 180 s, or recovery mode: see home-assistant.log"):
        return

    # The door's credentials: an issuer's key, alice with a PIN (her duress code: the last digit
    # plus one), bob without.
    folder = os.path.join(out, "door")
    for d in ("trust", "state", "run"):
        os.makedirs(os.path.join(folder, d))
    open(os.path.join(folder, "revoked"), "w").close()
    issuer = subprocess.Popen([py, os.path.join(REPO, "Tests/Peers/credentials.py")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)

    def ask(req):
        issuer.stdin.write(json.dumps(req) + "\n")
        issuer.stdin.flush()
        return json.loads(issuer.stdout.readline())
    ask({"op": "keygen", "alg": "ES256", "private": folder + "/es.key", "public": folder + "/trust/issuer-1.pem"})
    now = int(time.time())

    def mint(sub):
        return ask({"op": "sign", "lib": "cwt", "private": folder + "/es.key", "alg": "ES256", "kid": "issuer-1",
                    "claims": {"1": "acme", "2": sub, "4": now + 3600, "5": now - 60, "6": now - 60},
                    "zlib": True, "prefix": "KC1:"})["text"]
    alice, bob = mint("alice"), mint("bob")
    issuer.stdin.close()
    issuer.wait()
    rng = random.SystemRandom()
    pin = "".join(rng.choice("123456789") for _ in range(7)) + rng.choice("012345678")
    duress = pin[:-1] + str(int(pin[-1]) + 1)
    r = subprocess.run([py, os.path.join(REPO, "deploy/examples/issue-credential"), "pin", "set", "--subject", "alice",
                        "--file", folder + "/pins"], input=pin + "\n", capture_output=True, text=True)
    if not say(r.returncode == 0, "issue-credential pin set", r.stderr.strip()):
        return

    replay = Replay(os.path.join(folder, "replay"), 40)
    env = {"PATH": "/usr/bin:/bin", "KIOSK_VERDICT": "credentials", "KIOSK_TRUST_DIR": folder + "/trust",
           "KIOSK_REVOKED_FILE": folder + "/revoked", "STATE_DIRECTORY": folder + "/state", "RUNTIME_DIRECTORY": folder + "/run",
           "KIOSK_ROI": "0,0,1,1", "KIOSK_REPEAT_MS": "0", "KIOSK_GPIO_CHIP": "sim", "KIOSK_DOOR_LINE": "5",
           "KIOSK_DOOR_MS": "200", "KIOSK_STATS_S": "1", "KIOSK_REQUIRE_SYNCED_CLOCK": "0", "KIOSK_LOG_LEVEL": "debug",
           "KIOSK_KEYPAD": "wiegand:%d,%d" % (D0, D1), "KIOSK_PINS_FILE": folder + "/pins", "KIOSK_PIN_WINDOW_S": "10",
           "KIOSK_BUZZER_LINE": "18", "KIOSK_DOOR_CONTACT_LINE": str(CONTACT), "KIOSK_TAMPER_LINE": str(TAMPER),
           "KIOSK_MQTT_URL": "mqtt://127.0.0.1:" + args.port, "KIOSK_MQTT_TOPIC": TOPIC, "KIOSK_MQTT_CLIENT_ID": CLIENT,
           "KIOSK_MQTT_COMMANDS": "1", "KIOSK_CAMERA": "replay:" + folder + "/replay"}
    kiosk = Kiosk(args.kiosk, env, os.path.join(out, "kiosk.log"))
    try:
        scene(kiosk, replay, broker, alice, bob, pin, duress, args)
    finally:
        if kiosk.p.poll() is None:
            kiosk.p.kill()
            kiosk.p.wait()


def scene(kiosk, replay, broker, alice, bob, pin, duress, args):
    if not say(kiosk.wait_for("mqtt_connected") and kiosk.wait_for("keypad") and kiosk.wait_for("door_inputs"),
               "the kiosk runs, connected, with its keypad and the door's inputs", "kiosk.log"):
        return
    kiosk.say("%d 1" % D0)  # a Wiegand line idles high
    kiosk.say("%d 1" % D1)

    # 1. Discovery: the device and its entities, each from the kiosk's retained config messages.
    wanted = {"sensor camera": r"sensor\..*camera", "event scan": r"event\..*scan", "event duress": r"event\..*duress",
              "binary_sensor door": r"binary_sensor\..*door$", "binary_sensor tamper": r"binary_sensor\..*tamper",
              "select mode": r"select\..*mode", "button open": r"button\..*open"}

    def found():
        e = broker.entities()
        ids = {k: [i for i in e if re.fullmatch(p, i)] for k, p in wanted.items()}
        return e, ids
    eventually(lambda: all(found()[1].values()) and found()[0][found()[1]["sensor camera"][0]]["state"] != "unavailable", 60, 0.5)
    ents, ids = found()
    missing = [k for k, v in ids.items() if not v]
    say(not missing, "Home Assistant made the kiosk's entities from discovery: "
        + ", ".join(v[0] for v in ids.values() if v), "missing %s; it has %s" % (missing, sorted(ents)))
    if missing:
        return
    eid = {k: v[0] for k, v in ids.items()}
    devices = {v["device"] for v in ents.values()}
    say(devices == {"Kiosk door-3"}, "one device, Kiosk door-3, holds them all", str(devices))
    say(ents[eid["binary_sensor door"]]["class"] == "door" and ents[eid["binary_sensor tamper"]]["class"] == "tamper",
        "the door's binary sensors have the device classes door and tamper", str(ents))
    say(ents[eid["sensor camera"]]["state"] == "ok", "the Camera sensor says ok", ents[eid["sensor camera"]]["state"])

    # 2. A scan: Home Assistant's tag_scanned with the code as the tag id, and the Scan event.
    # A code that is no credential is published with its text: its tag id. A credential's token
    # never is (the scan message names its subject and hash): it fires no tag_scanned.
    plain = "HA-TAG-%06d" % random.SystemRandom().randrange(10 ** 6)
    replay.show(plain)
    kiosk.wait_for("verdict")
    tags = eventually(lambda: broker.seen("tag"), 20)
    say(bool(tags) and tags[0].get("tag_id") == plain and tags[0].get("device") == "Kiosk door-3",
        "a scan at the kiosk fired tag_scanned with the code as its tag id, from Kiosk door-3", str(tags)[:300])
    replay.show(bob)
    kiosk.wait_for("verdict", count=2)
    # Home Assistant has had bob's scan once its Scan entity fired for it (the same message).
    eventually(lambda: len([c for c in broker.changes(eid["event scan"]) if c["attributes"].get("event_type") == "scan"]) >= 2, 20)
    time.sleep(1)
    tags = broker.seen("tag")
    say(len(tags) == 1 and not any(bob in t for _, t in broker.messages()),
        "a credential's scan fired no tag_scanned: its token is nowhere on the broker", str(tags)[:300])
    scans = [json.loads(p) for _, p in broker.messages(TOPIC + "/scan")]
    fired = eventually(lambda: [c for c in broker.changes(eid["event scan"]) if c["attributes"].get("event_type") == "scan"], 20)
    say(bool(fired) and bool(scans) and fired[0]["attributes"].get("id") == scans[0].get("id"),
        "the Scan event entity fired scan with the scan's id", "%s / %s" % (str(fired)[:300], str(scans)[:200]))

    # 3. Home Assistant presses Open: the kiosk carries out the building's command.
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", args.port, "-t", "kiosk-ha/ask/open", "-m", "1"], check=True)
    opened = kiosk.wait_for("command", where=lambda l: l.get("command") == "open")
    say(opened and any(l.get("result") == "ok" for l in kiosk.lines("command")),
        "Home Assistant's Open button made the kiosk open (its command line)", str(kiosk.lines("command")))
    time.sleep(0.5)  # the strike's 200 ms pass: the door is shut and locked again

    # 4. The door forced and the tamper loop: the binary sensors follow; the Duress entity fires nothing.
    kiosk.say("contact 1")
    forced = kiosk.wait_for("door_forced")
    kiosk.say("tamper 1")
    kiosk.wait_for("tamper")
    door_on = eventually(lambda: any(c["state"] == "on" for c in broker.changes(eid["binary_sensor door"])), 20)
    tamper_on = eventually(lambda: any(c["state"] == "on" for c in broker.changes(eid["binary_sensor tamper"])), 20)
    kiosk.say("contact 0")
    kiosk.say("tamper 0")
    door_off = eventually(lambda: [c["state"] for c in broker.changes(eid["binary_sensor door"])][-1:] == ["off"], 20)
    tamper_off = eventually(lambda: [c["state"] for c in broker.changes(eid["binary_sensor tamper"])][-1:] == ["off"], 20)
    say(forced and door_on and door_off, "the door forced: the Door sensor went on and off",
        str([c["state"] for c in broker.changes(eid["binary_sensor door"])]))
    say(tamper_on and tamper_off, "the tamper loop: the Tamper sensor went on and off",
        str([c["state"] for c in broker.changes(eid["binary_sensor tamper"])]))
    alarms = [json.loads(p) for _, p in broker.messages(TOPIC + "/alarm")]
    time.sleep(3)  # Home Assistant had the alarms (the sensors' changes came after them); anything they fired is in
    duress_before = [c for c in broker.changes(eid["event duress"]) if c["state"] not in ("unknown", "unavailable")]
    say(len(alarms) >= 2 and not duress_before, "door_forced and tamper alarms on %s/alarm fired nothing on the Duress entity" % TOPIC,
        "alarms %s, duress changes %s" % (alarms, duress_before))

    # 5. The duress code at the live kiosk: Duress fires duress with the subject; its automation
    # chooses lockdown on the Mode select, and the kiosk goes into lockdown.
    replay.show(alice)
    kiosk.wait_for("beep", count=1, where=lambda l: l.get("for") == "pin")
    kiosk.type(duress)
    kiosk.wait_for("duress")
    got = eventually(lambda: [c for c in broker.changes(eid["event duress"]) if c["state"] not in ("unknown", "unavailable")], 20)
    attrs = got[0]["attributes"] if got else {}
    say(len(got) == 1 and attrs.get("event_type") == "duress" and attrs.get("subject") == "alice" and str(attrs.get("time", "")).endswith("Z"),
        "the duress code fired the Duress entity: event_type duress, subject alice, its time", str(got)[:400])
    mode = kiosk.wait_for("mode", where=lambda l: l.get("mode") == "lockdown")
    say(mode, "the duress automation chose lockdown on the Mode select: the kiosk is in lockdown",
        str(kiosk.lines("mode")) + str(kiosk.lines("command"))[:300])
    shown = eventually(lambda: broker.entities().get(eid["select mode"], {}).get("state") == "lockdown", 20)
    say(shown, "Home Assistant's Mode select shows lockdown (the kiosk's retained mode)",
        str(broker.entities().get(eid["select mode"])))

    # 6. No digit of the PIN or the duress code anywhere: the broker (the kiosk's messages and
    # Home Assistant's), Home Assistant's log, the kiosk's log.
    time.sleep(2)
    with open(args.ha_log, encoding="utf-8", errors="replace") if os.path.exists(args.ha_log) else open(os.devnull) as fh:
        ha_log = fh.read()
    written = {"the broker": "\n".join(t + " " + p for t, p in broker.messages()), "home-assistant.log": ha_log,
               "the kiosk's log": open(kiosk.log, encoding="utf-8", errors="replace").read()}
    leaks = [where for where, text in written.items() for secret in (pin, duress) if secret in text]
    say(not leaks and "alice" in written["the broker"] and '"subject":"alice"' in ha_log,
        "no PIN or duress code in what Home Assistant got, its log, the broker or the kiosk's log", str(leaks))

    # 7. The kiosk stops (SIGTERM): its status says offline and Home Assistant's entities go unavailable.
    kiosk.p.send_signal(signal.SIGTERM)
    replay.end()
    try:
        status = kiosk.p.wait(10)
    except subprocess.TimeoutExpired:
        status = None
    offline = eventually(lambda: broker.messages(TOPIC + "/status")[-1:] == [(TOPIC + "/status", "offline")], 10)
    gone = eventually(lambda: all(broker.entities().get(e, {}).get("state") == "unavailable" for e in eid.values()), 30, 0.5)
    say(status == 0 and offline and gone, "the kiosk stopped (SIGTERM): offline, and every entity unavailable in Home Assistant",
        "exit %s, status %s, %s" % (status, broker.messages(TOPIC + "/status")[-1:], {e: broker.entities().get(e) for e in eid.values()}))


if __name__ == "__main__":
    main()
