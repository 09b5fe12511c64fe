// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform
import Policy
import TestSupport
import XCTest

/// The door's modes on the release binary: a lockdown from the building on a real Mosquitto
/// (retained `<topic>/mode`, the answer), kept across SIGKILL, ended by `kiosk mode` over the
/// local socket (refused to an ordinary user); a commanded unlock until its time, the exit button
/// in a lockdown, the fire panel's input above all (the simulated chip through standard input);
/// `unlock` windows, with `first=GROUP`, under libfaketime.
final class ModeEndToEndTests: XCTestCase {
    typealias Kiosk = FleetEndToEndTests.LiveKiosk
    var folder = ""
    var peer: CredentialPeer!
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }
    var run: String { folder + "/run" }
    var rules: String { folder + "/access" }

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        folder = NSTemporaryDirectory() + "kiosk-mode-e2e-\(UUID().uuidString.prefix(8))"
        for d in [trust, state, run] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        chmod(folder, 0o755)
        chmod(run, 0o755)
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
        try """
            schedule office  mon-fri 07:00-19:00
            allow staff      always
            allow visitor    office
            allow security   always
            lockdown-allow   security
            """.write(toFile: rules, atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    func mint(_ sub: String, groups: [String], from: Int = Int(Date().timeIntervalSince1970) - 60) throws -> [UInt8] {
        let claims: [String: Any] = ["1": "acme", "2": sub, "4": from + 2 * 86_400, "5": from, "6": from, "groups": groups]
        return Array(try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: claims).utf8)
    }

    func env(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["RUNTIME_DIRECTORY": run, "KIOSK_ACCESS_FILE": rules]) { _, b in b }.merging(more) { _, b in b }
    }

    /// `kiosk mode ARGS` against this test's kiosk, as root or (`asNobody`) as the user nobody.
    func mode(_ args: [String], asNobody: Bool = false) throws -> KioskProcess.Run {
        let environment = ["RUNTIME_DIRECTORY": run]
        guard asNobody else { return try KioskProcess.run(["mode"] + args, env: environment) }
        let (p, out, err) = try KioskProcess.start(["--reuid=nobody", "--regid=nogroup", "--clear-groups", KioskProcess.binary.path, "mode"] + args,
                                                   env: environment, executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        return try KioskProcess.finish(p, out: out, err: err)
    }

    func modes(_ k: Kiosk) -> [String] { k.of("mode").map { "\($0["mode"] ?? ""):\($0["reason"] ?? "")" } }
    func reasons(_ k: Kiosk) -> [String] { k.of("credential").compactMap { $0["reason"] } }

    func testALockdownFromTheBuildingHoldsAcrossSIGKILLAndKioskModeEndsIt() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        let broker = try MosquittoBroker()
        let topic = "kt-\(UUID().uuidString.prefix(6).lowercased())/door-1"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/#")
        let staff = try mint("sam", groups: ["staff"]), guardian = try mint("gus", groups: ["security"])
        let mqtt = ["KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic, "KIOSK_MQTT_COMMANDS": "1"]
        let first = try FleetEndToEndTests.FifoReplay(folder + "/replay1", count: 4)
        let kiosk = try Kiosk(env: env(mqtt.merging(["KIOSK_CAMERA": "replay:" + first.path]) { _, b in b }))
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        let now = Int(Date().timeIntervalSince1970)
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic + "/command", "-q", "1",
                                                           "-m", #"{"id":"lock-1","command":"mode","mode":"lockdown","time":\#(now)}"#])
        XCTAssertTrue(kiosk.waitFor("mode"), kiosk.text)
        XCTAssertEqual(modes(kiosk), ["lockdown:command"])
        XCTAssertEqual(try String(contentsOfFile: state + "/mode", encoding: .utf8), "kiosk-mode 1\nlockdown\n", "kept on disk")
        let seen = sub.waitFor { m in m.contains { $0.topic == topic + "/mode" && $0.text.contains("\"lockdown\"") }
            && m.contains { $0.topic == topic + "/command/result" } }
        XCTAssertTrue(seen.contains { $0.topic == topic + "/command/result" && $0.text.contains(#""id":"lock-1","result":"ok""#) }, "\(seen.map(\.text))")
        first.feed(try FleetEndToEndTests.frame(staff))
        first.feed(try FleetEndToEndTests.frame(nil))
        first.feed(try FleetEndToEndTests.frame(guardian))
        XCTAssertTrue(kiosk.waitFor("credential", count: 2), kiosk.text)
        XCTAssertEqual(reasons(kiosk), ["lockdown", "valid"], "only lockdown-allow opens")
        XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
        kiosk.kill9()
        _ = kiosk.wait()
        sub.stop()

        // A new process: the lockdown is read back, the retained mode says so, it still denies.
        let retained = try MosquittoSubscriber(broker: broker, topic: topic + "/mode")
        let second = try FleetEndToEndTests.FifoReplay(folder + "/replay2", count: 4)
        let again = try Kiosk(env: env(mqtt.merging(["KIOSK_CAMERA": "replay:" + second.path]) { _, b in b }))
        defer { if again.process.isRunning { again.kill9() } }
        XCTAssertTrue(again.waitFor("mode"), again.text)
        XCTAssertEqual(modes(again), ["lockdown:restart"])
        let kept = retained.waitFor { $0.contains { $0.retained } }
        XCTAssertTrue(kept.contains { $0.retained && $0.text.hasPrefix(#"{"mode":"lockdown""#) }, "\(kept.map(\.text))")
        second.feed(try FleetEndToEndTests.frame(staff))
        XCTAssertTrue(again.waitFor("credential"), again.text)
        XCTAssertEqual(reasons(again), ["lockdown"])

        // kiosk mode: refused to an ordinary user by the socket's permissions; root ends the lockdown.
        let refused = try mode(["normal"], asNobody: true)
        XCTAssertEqual(refused.status, 77, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("permission denied"), refused.stderr)
        XCTAssertEqual(modes(again), ["lockdown:restart"], "nothing changed")
        let socket = try FileManager.default.attributesOfItem(atPath: run + "/mode.sock")
        XCTAssertEqual((socket[.posixPermissions] as? NSNumber)?.intValue, 0o660)
        let ended = try mode(["normal"])
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "mode: normal\n")
        XCTAssertTrue(again.waitFor("mode", count: 2), again.text)
        XCTAssertEqual(modes(again), ["lockdown:restart", "normal:command"])
        // The command's own line follows the mode's: waited for, not raced.
        XCTAssertTrue(again.waitFor("command"), again.text)
        XCTAssertTrue(again.of("command").contains { $0["result"] == "ok" && $0["uid"] == "0" && $0["mode"] == "normal" }, again.text)
        second.feed(try FleetEndToEndTests.frame(nil))
        second.feed(try FleetEndToEndTests.frame(staff))
        XCTAssertTrue(again.waitFor("credential", count: 2), again.text)
        XCTAssertEqual(reasons(again), ["lockdown", "valid"])
        XCTAssertEqual(try String(contentsOfFile: state + "/mode", encoding: .utf8), "kiosk-mode 1\n")
        // An unlock from the building for a minute: the strike held released, kept on disk.
        let until = Int(Date().timeIntervalSince1970) + 60
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic + "/command", "-q", "1",
                                                           "-m", #"{"id":"unlock-1","command":"mode","mode":"unlock","until":\#(until),"time":\#(until - 60)}"#])
        XCTAssertTrue(again.waitFor("mode", count: 3), again.text)
        XCTAssertEqual(modes(again).last, "unlock:command")
        XCTAssertEqual(again.of("mode").last?["until"], String(until))
        // Held: opened so, or (the grant's 200 ms not over yet) its opening held on.
        XCTAssertTrue(again.lines.contains { ["door", "door_extended"].contains($0["event"] ?? "") && $0["held"] == "true" }, again.text)
        XCTAssertEqual(try String(contentsOfFile: state + "/mode", encoding: .utf8), "kiosk-mode 1\nunlock \(until)\n")
        second.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(again.wait(), 0, again.text)
        XCTAssertFalse(FileManager.default.fileExists(atPath: run + "/mode.sock"), "the socket goes with the kiosk")
    }

    func testAnUnlockUntilItsTimeTheExitButtonInALockdownAndTheFirePanelAboveAll() throws {
        let replay = try FleetEndToEndTests.FifoReplay(folder + "/replay", count: 1)
        let kiosk = try Kiosk(env: env(["KIOSK_CAMERA": "replay:" + replay.path, "KIOSK_REX_LINE": "6", "KIOSK_EMERGENCY_LINE": "7",
                                        "KIOSK_DOOR_CONTACT_LINE": "8"]), stdin: true)
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("ready"), kiosk.text)
        let tooFar = try mode(["unlock", "--until", "+25h"])
        XCTAssertEqual(tooFar.status, 1)
        XCTAssertEqual(tooFar.stderr, "kiosk mode: the kiosk refused: until is more than 24 h ahead\n")
        XCTAssertEqual(try mode(["unlock"]).status, 64, "until is required")
        let unlock = try mode(["unlock", "--until", "+2s"])
        XCTAssertEqual(unlock.status, 0, unlock.stderr)
        XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
        XCTAssertEqual(kiosk.of("door").first?["held"], "true", kiosk.text)
        // Someone walks through during free passage: no alarm.
        kiosk.say("contact 1")
        XCTAssertTrue(kiosk.waitFor("door_contact"), kiosk.text)
        kiosk.say("contact 0")
        XCTAssertTrue(kiosk.waitFor("door_contact", count: 2), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("mode", count: 2, seconds: 6), kiosk.text)
        XCTAssertEqual(modes(kiosk), ["unlock:command", "normal:until"])
        // The strike shuts on the mode's end, its line after the mode's (seen late under load).
        XCTAssertTrue(kiosk.waitFor("door", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("door").map { $0["state"] ?? "" }, ["open", "closed"])
        XCTAssertEqual(kiosk.of("door").last?["reason"], "mode_normal")
        XCTAssertEqual(kiosk.of("door_forced").count, 0, kiosk.text)

        // In a lockdown the exit button still opens.
        XCTAssertEqual(try mode(["lockdown"]).status, 0)
        // A press of 200 ms that has just ended, both edges written at once and stamped where they
        // happened (as the kernel stamps a line's events): however late the kiosk reads them, in
        // one read or two, the debounce sees a 200 ms press.
        let released = monotonicNanoseconds()
        kiosk.say("rex 1 \(released - 200_000_000)\nrex 0 \(released)")
        XCTAssertTrue(kiosk.waitFor("door", count: 4), kiosk.text)
        XCTAssertEqual(kiosk.of("rex").first?["opens"], "true")
        XCTAssertEqual(kiosk.of("door")[2]["ms"], "200", kiosk.text)

        // The fire panel: above the lockdown; a normal from the operator does not end it; its end does.
        kiosk.say("emergency 1")
        XCTAssertTrue(kiosk.waitFor("mode", count: 4), kiosk.text)
        XCTAssertEqual(Array(modes(kiosk).suffix(2)), ["lockdown:command", "emergency:input"])
        XCTAssertTrue(kiosk.waitFor("door", count: 5), kiosk.text)
        XCTAssertEqual(kiosk.of("door").last?["held"], "true")
        let normal = try mode(["normal"])
        XCTAssertEqual(normal.stdout, "mode: emergency\n", "taken, but the input is above it")
        kiosk.say("emergency 0")
        XCTAssertTrue(kiosk.waitFor("mode", count: 5), kiosk.text)
        XCTAssertEqual(modes(kiosk).last, "normal:input")
        XCTAssertTrue(kiosk.waitFor("door", count: 6), kiosk.text)
        XCTAssertEqual(kiosk.of("door").last?["state"], "closed")
        XCTAssertEqual(kiosk.of("emergency_input").map { $0["state"] ?? "" }, ["active", "ended"])
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
    }

    /// `unlock` lines under libfaketime (Monday 2026-03-02, Berlin): a plain window unlocks at
    /// start inside it and not outside; a `first=staff` window only after a staff member's grant,
    /// a visitor's grant before does nothing; `kiosk check` says each window's next change.
    func testUnlockWindowsPlainAndFirstStaff() throws {
        guard FileManager.default.isExecutableFile(atPath: AccessEndToEndTests.faketime) else { throw XCTSkip("no faketime (make deps)") }
        let midnight = 1_772_406_000  // 2026-03-02 00:00 in Berlin
        let visitor = try mint("vera", groups: ["visitor"], from: midnight), staff = try mint("sam", groups: ["staff"], from: midnight)
        let dir = folder + "/codes"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var frames = [try FleetEndToEndTests.frame(nil)]
        for c in [visitor, staff] { frames += [try FleetEndToEndTests.frame(c), try FleetEndToEndTests.frame(nil)] }
        for (i, f) in frames.enumerated() { try Data(f).write(to: URL(fileURLWithPath: dir + String(format: "/%04d.pgm", i))) }
        let base = try String(contentsOfFile: rules, encoding: .utf8)
        let e = env(["TZ": "Europe/Berlin", "KIOSK_CAMERA": "replay:" + dir])

        try (base + "\nunlock office\n").write(toFile: rules, atomically: true, encoding: .utf8)
        let inside = try AccessEndToEndTests.runAt("2026-03-02 10:00:00", env: e)
        XCTAssertEqual(inside.status, 0, inside.stderr)
        XCTAssertEqual(inside.of("mode").map { "\($0["mode"] ?? ""):\($0["reason"] ?? "")" }, ["unlock:schedule"], inside.stderr)
        XCTAssertEqual(inside.of("door").first?["held"], "true", inside.stderr)
        let outside = try AccessEndToEndTests.runAt("2026-03-02 20:00:00", env: e)
        XCTAssertEqual(outside.of("mode").count, 0, outside.stderr)
        XCTAssertEqual(outside.of("credential").compactMap { $0["reason"] }, ["outside schedule", "valid"])

        try (base + "\nunlock office first=staff\n").write(toFile: rules, atomically: true, encoding: .utf8)
        let first = try AccessEndToEndTests.runAt("2026-03-02 10:00:00", env: e)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.of("credential").compactMap { $0["reason"] }, ["valid", "valid"])
        XCTAssertEqual(first.of("mode").map { "\($0["mode"] ?? ""):\($0["reason"] ?? "")" }, ["unlock:first"], first.stderr)
        let events = first.events.filter { ["credential", "mode"].contains($0) }
        XCTAssertEqual(events, ["credential", "credential", "mode"], "the visitor's grant unlocked nothing; the staff grant did")
        let check = try AccessEndToEndTests.runAt("2026-03-02 10:00:00", env: e, command: "check")
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("# access: unlock office first=staff: its window is open now (from the first grant to staff in it), ends mon 2026-03-02 19:00\n"),
                      check.stdout)
        XCTAssertTrue(check.stdout.contains("# mode: no command in force (\(state)/mode)"), check.stdout)
    }

    /// Home Assistant's select and button: the keys its MQTT integration requires, and each
    /// command_template rendered by Jinja2 as Home Assistant renders it (Tests/Peers/ha_templates.py)
    /// is a command the kiosk carries out: each mode of the select (emergency refused: it comes
    /// from the input only), an unlock for an hour, the button's open.
    func testHomeAssistantsSelectAndButtonRenderToCommandsTheKioskTakes() throws {
        let d = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: FleetTopics(prefix: "kiosk/door-1"),
                                       version: "0.1.0", door: true, commands: true)
        let input = try JSONSerialization.data(withJSONObject: d.messages.map { ["topic": $0.topic, "payload": $0.payload] })
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CredentialPeer.python!)
        p.arguments = [Checkout.root.appendingPathComponent("Tests/Peers/ha_templates.py").path]
        let run = try Child.run(p, input: input)
        XCTAssertEqual(run.status, 0, run.errors)
        let rendered = try XCTUnwrap(try JSONSerialization.jsonObject(with: run.stdout) as? [[String: Any]])
        XCTAssertEqual(rendered.count, 5, "four options and the button")
        var desk = FleetCommandsPolicy(maxAgeSeconds: 30, defaultOpenMilliseconds: 3000)
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        var taken: [FleetCommandsPolicy.Command] = []
        for r in rendered {
            let command = try XCTUnwrap(r["command"] as? String)
            switch desk.receive(Array(command.utf8), nowMs: nowMs) {
            case .carryOut(_, let c): taken.append(c)
            case .refused(_, _, let reason):
                XCTAssertEqual(r["value"] as? String, "emergency", "\(command): \(reason)")
                XCTAssertTrue(reason.hasPrefix("unknown mode \"emergency\""), reason)
            }
        }
        XCTAssertEqual(taken.count, 4)
        XCTAssertEqual(taken[0], .mode(.normal))
        guard case .mode(.unlock(let until)) = taken[1] else { return XCTFail("\(taken)") }
        XCTAssertEqual(Double(until), Double(nowMs) / 1000 + 3600, accuracy: 5, "an hour from now")
        XCTAssertEqual(taken[2], .mode(.lockdown))
        XCTAssertEqual(taken[3], .open(milliseconds: 3000))
    }
}
