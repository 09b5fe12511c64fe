#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The access controller's side of the kiosk's OSDP tests (issue 22): libosdp's ControlPanel
# (PyPI libosdp, an independent implementation) talks to the real kiosk binary over a
# pseudo-terminal pair. Each scenario prints one JSON object of what it observed; the Swift test
# (Tests/KioskTests/OSDPEndToEndTests.swift) judges it. Run with the peers' python (KIOSK_PEERS_PYTHON).
import json, os, random, select, signal, subprocess, sys, termios, threading, time, tty

import osdp

KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
WRONG_KEY = bytes.fromhex("ffeeddccbbaa99887766554433221100")


class PtyChannel(osdp.Channel):
    """The CP's end of the bus: the master side of a pseudo-terminal; what it wrote is recorded."""

    def __init__(self, fd):
        super().__init__()
        self.fd = fd
        self.written = []

    def read(self, max_bytes):
        try:
            return os.read(self.fd, max_bytes)
        except (BlockingIOError, OSError):
            return b""

    def write(self, buf):
        self.written.append(bytes(buf))
        try:
            return os.write(self.fd, buf)
        except OSError:
            return 0

    def flush(self):
        pass


class Kiosk:
    """The kiosk binary, its stderr read line by line with the time each line came."""

    def __init__(self, binary, env, log_path, stdin=False):
        # With stdin, the simulated inputs (KIOSK_GPIO_CHIP=sim) are driven through `say`.
        self.proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     stdin=subprocess.PIPE if stdin else None)
        self.lines = []
        self.t0 = time.monotonic()
        self.log = open(log_path, "a")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append((time.monotonic(), line))
            self.log.write(line + "\n")
            self.log.flush()

    def wait_for(self, text, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(text in l for _, l in self.lines):
                return True
            time.sleep(0.02)
        return False

    def say(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def wait_for_event(self, name, count=1, timeout=10, **want):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len([e for e in self.events(name) if all(e.get(k) == v for k, v in want.items())]) >= count:
                return True
            time.sleep(0.02)
        return False

    def events(self, name):
        out = []
        for t, l in self.lines:
            f = fields(l)
            if f.get("event") == name:
                f["_t"] = t
                out.append(f)
        return out

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.thread.join(2)
        return self.proc.returncode


def fields(line):
    """logfmt: key=value, values maybe quoted with backslash escapes."""
    out, i, n = {}, 0, len(line)
    while i < n:
        while i < n and line[i] == " ":
            i += 1
        j = i
        while j < n and line[j] not in "= ":
            j += 1
        key = line[i:j]
        if j >= n or line[j] != "=":
            i = j + 1
            continue
        j += 1
        if j < n and line[j] == '"':
            j += 1
            val = []
            while j < n and line[j] != '"':
                if line[j] == "\\" and j + 1 < n:
                    j += 1
                val.append(line[j])
                j += 1
            out[key] = "".join(val)
            i = j + 1
        else:
            k = j
            while k < n and line[k] != " ":
                k += 1
            out[key] = line[j:k]
            i = k
    return out


def crc16(data):
    crc = 0x1D0F
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def packet(address, seq, body, scb=None, crc=True, mangle_crc=False):
    out = bytearray([0x53, address, 0, 0, (seq & 3) | (4 if crc else 0) | (8 if scb else 0)])
    if scb:
        out += bytes([len(scb) + 1]) + bytes(scb)
    out += bytes(body)
    total = len(out) + (2 if crc else 1)
    out[2], out[3] = total & 0xFF, total >> 8
    if crc:
        c = crc16(out)
        if mangle_crc:
            c ^= 0x0101
        out += bytes([c & 0xFF, c >> 8])
    else:
        out.append((-sum(out)) & 0xFF)
    return bytes(out)


class Bus:
    def __init__(self, work):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def drain(self):
        while True:
            r, _, _ = select.select([self.master], [], [], 0)
            if not r:
                return
            try:
                if not os.read(self.master, 4096):
                    return
            except OSError:
                return

    def exchange(self, data, wait=0.3):
        """Writes one packet; returns what came back within `wait` s (b'' for silence)."""
        self.drain()
        os.write(self.master, data)
        got = b""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            r, _, _ = select.select([self.master], [], [], 0.02)
            if r:
                try:
                    got += os.read(self.master, 4096)
                except OSError:
                    pass
        return got


def kiosk_env(args, bus, extra):
    env = {
        "PATH": "/usr/bin:/bin",
        "KIOSK_OSDP_PORT": bus.path,
        "KIOSK_CAMERA": "replay:" + os.path.join(args.work, "frames"),
        "KIOSK_GPIO_CHIP": "sim",
        "KIOSK_GRANTED_LED_LINE": "5",
        "KIOSK_DENIED_LED_LINE": "6",
        "KIOSK_BUZZER_LINE": "18",
        "KIOSK_DOOR_LINE": "23",
        "KIOSK_BEEP_MS": "30",
        "KIOSK_LOG_LEVEL": "debug",
        "KIOSK_STATS_S": "0",
        "STATE_DIRECTORY": os.path.join(args.work, "state"),
        "RUNTIME_DIRECTORY": os.path.join(args.work, "run"),
    }
    os.makedirs(env["RUNTIME_DIRECTORY"], exist_ok=True)
    env.update(extra)
    return env


def control_panel(bus, scbk, flags=()):
    # A reply the last control panel did not stay to read is no reply to this one.
    time.sleep(0.1)
    bus.drain()
    channel = PtyChannel(bus.master)
    info = osdp.PDInfo(0, channel, scbk=scbk, flags=list(flags))
    cp = osdp.ControlPanel([info], log_level=osdp.LogLevel.Warning)
    cp.start()
    return cp, channel


def card_events(cp, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        e = cp.get_event(0, timeout=0.5)
        if e and e.get("event") == osdp.Event.CardRead:
            return e
    return None


def write_frames(args, payload):
    """The replay the kiosk has been retrying to open: a few frames showing `payload`."""
    sys.path.insert(0, os.path.dirname(__file__))
    folder = os.path.join(args.work, "frames")
    tmp = folder + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    import qr_frames  # noqa: E402  (draws with the frames the Swift side gave)
    qr_frames.write(tmp, payload, args.qr)
    os.rename(tmp, folder)


def gpio_story(k, since):
    return [(round(e["_t"] - since, 3), int(e["line"]), int(e["value"])) for e in k.events("gpio") if e["_t"] >= since]


def scenario_plain(args, bus, out):
    # No key, plaintext allowed: online, ID and CAP, a code read as a 26-bit Wiegand card.
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_REQUIRE_SECURE": "0", "KIOSK_WIEGAND_FACILITY": "0"}), args.log)
    out["osdp_start"] = k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, None)
    out["online"] = cp.online_wait(0, timeout=8)
    pid = cp.get_pd_id(0)
    out["pd_id"] = {"vendor": pid.vendor_code, "model": pid.model, "version": pid.version, "serial": pid.serial_number,
                    "firmware": pid.firmware_version}
    caps = {}
    for name in ["OutputControl", "CardDataFormat", "LEDControl", "AudibleControl", "TextOutput", "CheckCharacter",
                 "CommunicationSecurity", "ReceiveBufferSize"]:
        caps[name] = list(cp.check_capability(0, getattr(osdp.Capability, name)))
    out["caps"] = caps
    out["sc_active"] = cp.is_sc_active(0)
    write_frames(args, "18:36963")
    e = card_events(cp, 20)
    out["card"] = None if e is None else {"format": e["format"], "length": e.get("length"), "data": bytes(e["data"]).hex()}
    out["exit"] = k.stop()
    cp.teardown()
    out["kiosk_online_events"] = len(k.events("osdp_online"))
    out["osdp_card"] = [{"bits": e.get("bits"), "format": e.get("format")} for e in k.events("osdp_card")]


def status(cp, kind):
    cp.submit_command(0, {"command": osdp.Command.Status, "type": kind})
    end = time.monotonic() + 3
    while time.monotonic() < end:
        e = cp.get_event(0, timeout=0.5)
        if e and e.get("event") == osdp.Event.Status:
            return bytes(e["report"]).hex()
    return None


def submit_and_watch(cp, k, command, settle, want):
    """The lines' changes after `command`: at least `settle` s of them, longer (up to 5 s more) until
    `want` changes are seen, so that a loaded machine's slow poll is not taken for a missing one."""
    t = time.monotonic()
    cp.submit_command(0, command)
    time.sleep(settle)
    end = time.monotonic() + 5
    while len(gpio_story(k, t)) < want and time.monotonic() < end:
        time.sleep(0.05)
    return gpio_story(k, t)


def scenario_secure(args, bus, out):
    # A key given by the installer: Secure Channel, then the controller's LED, BUZ and OUT on the lines.
    keyfile = os.path.join(args.work, "scbk")
    with open(keyfile, "w") as f:
        f.write(KEY.hex() + "\n")
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_KEY_FILE": keyfile, "KIOSK_OSDP_CARD_FORMAT": "raw"}), args.log)
    k.wait_for("event=osdp_start")
    cp, channel = control_panel(bus, KEY, [osdp.LibFlag.EnforceSecure])
    out["online"] = cp.online_wait(0, timeout=8)
    out["sc_active"] = cp.sc_wait(0, timeout=8)
    C = osdp.Command
    # Green for 0.5 s (temporary), then back to the permanent state (off).
    out["led"] = submit_and_watch(cp, k, {"command": C.LED, "reader": 0, "led_number": 0, "control_code": 2, "on_count": 5,
                                          "off_count": 0, "on_color": osdp.CommandLEDColor.Green,
                                          "off_color": osdp.CommandLEDColor.Black, "timer_count": 5, "temporary": True}, 1.2, 2)
    # Red, permanently.
    out["led_red"] = submit_and_watch(cp, k, {"command": C.LED, "reader": 0, "led_number": 0, "control_code": 1, "on_count": 10,
                                              "off_count": 0, "on_color": osdp.CommandLEDColor.Red,
                                              "off_color": osdp.CommandLEDColor.Black, "timer_count": 0, "temporary": False}, 0.6, 1)
    # Two 0.2 s beeps 0.1 s apart.
    out["buzzer"] = submit_and_watch(cp, k, {"command": C.Buzzer, "reader": 0, "control_code": 2, "on_count": 2, "off_count": 1,
                                             "rep_count": 2}, 1.0, 4)
    # The strike: on for 0.7 s (timer, 100 ms units), then off.
    out["output"] = submit_and_watch(cp, k, {"command": C.Output, "output_no": 0, "control_code": 5, "timer_count": 7}, 1.4, 2)
    # Status: tamper and power (LSTATR), the strike (OSTATR) before and after osdp_OUT "on".
    out["lstat"] = status(cp, osdp.StatusReportType.Local)
    out["ostat_before"] = status(cp, osdp.StatusReportType.Output)
    cp.submit_command(0, {"command": C.Output, "output_no": 0, "control_code": 2, "timer_count": 0})
    time.sleep(0.4)
    out["ostat_on"] = status(cp, osdp.StatusReportType.Output)
    cp.submit_command(0, {"command": C.Output, "output_no": 0, "control_code": 1, "timer_count": 0})
    time.sleep(0.4)
    out["sc_still_active"] = cp.is_sc_active(0)
    write_frames(args, "VISITOR-7")
    e = card_events(cp, 20)
    out["card"] = None if e is None else {"format": e["format"], "length": e.get("length"), "data": bytes(e["data"]).hex()}
    out["exit"] = k.stop()
    cp.teardown()
    log = open(args.log).read()
    out["key_in_log"] = KEY.hex() in log.lower()
    out["secure_events"] = [e.get("state") for e in k.events("osdp_secure")]


def scenario_tamper(args, bus, out):
    # The tamper loop on a simulated input (driven from the kiosk's stdin): LSTATR's tamper byte.
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_REQUIRE_SECURE": "0", "KIOSK_TAMPER_LINE": "24"}), args.log,
              stdin=True)
    k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, None)
    out["online"] = cp.online_wait(0, timeout=8)
    out["door_inputs"] = k.wait_for("event=door_inputs")
    out["lstat"] = [status(cp, osdp.StatusReportType.Local)]
    k.say("tamper 1")
    out["tamper_alarm"] = k.wait_for_event("tamper", state="alarm")
    out["lstat"].append(status(cp, osdp.StatusReportType.Local))
    k.say("tamper 0")
    out["tamper_ok"] = k.wait_for_event("tamper", state="ok")
    out["lstat"].append(status(cp, osdp.StatusReportType.Local))
    out["exit"] = k.stop()
    cp.teardown()


def scenario_install(args, bus, out):
    # Install mode: SCBK-D, then the controller's KEYSET; a restart uses the kept key (no key file).
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_INSTALL_MODE": "1"}), args.log)
    k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, KEY, [])
    out["online"] = cp.online_wait(0, timeout=8)
    end = time.monotonic() + 15
    while time.monotonic() < end and not k.events("osdp_key"):
        time.sleep(0.1)
    out["keyset_logged"] = bool(k.events("osdp_key"))
    # After KEYSET the CP restarts the session with the new key.
    time.sleep(1.0)
    out["sc_active_after_keyset"] = cp.sc_wait(0, timeout=8)
    out["secure_keys"] = [e.get("key") for e in k.events("osdp_secure") if e.get("state") == "on"]
    cp.teardown()
    out["exit"] = k.stop()
    kept = os.path.join(args.work, "state", "osdp-scbk")
    out["kept_exists"] = os.path.exists(kept)
    out["kept_mode"] = oct(os.stat(kept).st_mode & 0o777) if out["kept_exists"] else None
    out["kept_is_key"] = out["kept_exists"] and open(kept).read().strip() == KEY.hex()
    # Restart: no key file, install mode still set in the environment: the kept key is used and
    # SCBK-D is no longer accepted.
    k2 = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_INSTALL_MODE": "1"}), args.log)
    k2.wait_for("event=osdp_start")
    start = k2.events("osdp_start")
    out["restart_key_source"] = start[0].get("key") if start else None
    out["restart_install_mode"] = start[0].get("install_mode") if start else None
    cp2, _ = control_panel(bus, KEY, [osdp.LibFlag.EnforceSecure])
    out["restart_sc_active"] = cp2.sc_wait(0, timeout=10)
    cp2.teardown()
    k2.stop()
    out["restart_events"] = [(e.get("event"), e.get("state"), e.get("reason"), e.get("detail")) for e in k2.events("osdp_secure") + k2.events("osdp_error")]
    out["key_in_log"] = KEY.hex() in open(args.log).read().lower()


def scenario_wrongkey(args, bus, out):
    keyfile = os.path.join(args.work, "scbk")
    with open(keyfile, "w") as f:
        f.write(KEY.hex() + "\n")
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_KEY_FILE": keyfile}), args.log)
    k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, WRONG_KEY, [])
    time.sleep(6)
    out["sc_active"] = cp.is_sc_active(0)
    t = time.monotonic()
    cp.submit_command(0, {"command": osdp.Command.Output, "output_no": 0, "control_code": 2, "timer_count": 0})
    time.sleep(1.5)
    out["gpio_after_command"] = gpio_story(k, t)
    cp.teardown()
    out["exit"] = k.stop()
    out["secure_on"] = [e for e in k.events("osdp_secure") if e.get("state") == "on"]
    out["errors"] = sorted({e.get("reason") for e in k.events("osdp_error")})


def scenario_restart(args, bus, out):
    keyfile = os.path.join(args.work, "scbk")
    with open(keyfile, "w") as f:
        f.write(KEY.hex() + "\n")
    env = kiosk_env(args, bus, {"KIOSK_OSDP_KEY_FILE": keyfile})
    k = Kiosk(args.kiosk, env, args.log)
    k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, KEY, [osdp.LibFlag.EnforceSecure])
    out["online"] = cp.online_wait(0, timeout=8) and cp.sc_wait(0, timeout=8)
    t = time.monotonic()
    k.stop(signal.SIGKILL)
    out["offline"] = cp.offline_wait(0, timeout=15)
    out["offline_after_s"] = round(time.monotonic() - t, 2)
    k2 = Kiosk(args.kiosk, env, args.log)
    k2.wait_for("event=osdp_start")
    t = time.monotonic()
    online = cp.online_wait(0, timeout=3)
    if not online:
        # libosdp's CP waits minutes before it tries an offline PD again; the operator's
        # re-enable (as a controller's "reset reader") starts it at once.
        out["cp_reenabled"] = True
        cp.disable_pd(0)
        end = time.monotonic() + 3
        while cp.is_pd_enabled(0) and time.monotonic() < end:
            time.sleep(0.05)
        out["cp_enable"] = cp.enable_pd(0)
        online = cp.online_wait(0, timeout=10)
    out["online_again"] = online and cp.sc_wait(0, timeout=8)
    out["online_again_after_s"] = round(time.monotonic() - t, 2)
    cp.teardown()
    k2.stop()


def scenario_comset(args, bus, out):
    # The controller moves the reader to address 5 at 115200 baud; a restart keeps that.
    env = kiosk_env(args, bus, {"KIOSK_OSDP_REQUIRE_SECURE": "0"})
    k = Kiosk(args.kiosk, env, args.log)
    k.wait_for("event=osdp_start")
    cp, _ = control_panel(bus, None)
    out["online"] = cp.online_wait(0, timeout=8)
    cp.submit_command(0, {"command": osdp.Command.Comset, "address": 5, "baud_rate": 115200})
    end = time.monotonic() + 5
    while time.monotonic() < end and not k.events("osdp_comset"):
        time.sleep(0.05)
    time.sleep(1.5)
    out["comset"] = [(e.get("address"), e.get("baud")) for e in k.events("osdp_comset")]
    out["baud_switched"] = [e.get("baud") for e in k.events("osdp_baud")]
    out["still_online"] = cp.is_online(0)
    cp.teardown()
    k.stop()
    kept = os.path.join(args.work, "state", "osdp-comset")
    out["kept"] = open(kept).read() if os.path.exists(kept) else None
    k2 = Kiosk(args.kiosk, env, args.log)
    k2.wait_for("event=osdp_start")
    start = k2.events("osdp_start")
    out["restart"] = {"address": start[0].get("address"), "baud": start[0].get("baud")} if start else None
    # A controller that polls address 0 gets no answer now; one that polls 5 does.
    out["old_address_answer"] = bus.exchange(packet(0, 0, [0x61, 0x00])).hex()
    out["new_address_answer"] = bus.exchange(packet(5, 0, [0x61, 0x00])).hex()
    k2.stop()


def scenario_hostile(args, bus, out):
    # No libosdp here: the test writes the bus bytes itself.
    keyfile = os.path.join(args.work, "scbk")
    with open(keyfile, "w") as f:
        f.write(KEY.hex() + "\n")
    k = Kiosk(args.kiosk, kiosk_env(args, bus, {"KIOSK_OSDP_KEY_FILE": keyfile}), args.log)
    k.wait_for("event=osdp_start")
    time.sleep(0.3)
    t0 = time.monotonic()
    res = {}
    ID = [0x61, 0x00]
    res["id_plain"] = bus.exchange(packet(0, 0, ID)).hex()
    res["bad_crc"] = bus.exchange(packet(0, 1, ID, mangle_crc=True)).hex()
    # osdp_OUT on, plaintext, while a key is configured and plaintext is refused: NAK 6.
    res["out_plain"] = bus.exchange(packet(0, 1, [0x68, 0, 2, 0, 0])).hex()
    # A length past the buffer: silence.
    res["too_long"] = bus.exchange(bytes([0x53, 0x00, 0xFF, 0xFF, 0x04]) + bytes(40)).hex()
    # A secured command without a session, and with a made-up MAC: NAK 6.
    res["bad_mac"] = bus.exchange(packet(0, 2, [0x68, 0, 2, 0, 0, 1, 2, 3, 4], scb=[0x15])).hex()
    # A wrong sequence number (3 after 2... expected 3? send 1 again with another command).
    res["sequence"] = bus.exchange(packet(0, 1, [0x60])).hex()
    # Random bytes for a few seconds.
    rng = random.Random(22)
    end = time.monotonic() + args.random_seconds
    sent = 0
    while time.monotonic() < end:
        chunk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        if rng.random() < 0.3:
            chunk = b"\x53" + chunk
        try:
            os.write(bus.master, chunk)
            sent += len(chunk)
        except BlockingIOError:
            pass
        bus.drain()
        time.sleep(0.002)
    res["random_bytes"] = sent
    time.sleep(0.3)
    res["id_after"] = bus.exchange(packet(0, 0, ID), wait=0.5).hex()
    out["replies"] = res
    out["alive"] = k.proc.poll() is None
    out["gpio"] = [g for g in gpio_story(k, t0) if g[1] == 23]
    out["exit"] = k.stop()
    out["errors"] = sorted({e.get("reason") for e in k.events("osdp_error")})


def main():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--kiosk", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--scenario", required=True)
    p.add_argument("--qr", help="folder of PGM frames showing codes, named CODE.pgm (hex of the payload)")
    p.add_argument("--random-seconds", type=float, default=3)
    args = p.parse_args()
    args.log = os.path.join(args.work, "kiosk.log")
    bus = Bus(args.work)
    out = {"scenario": args.scenario}
    globals()["scenario_" + args.scenario](args, bus, out)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
