// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform
import Policy
import TestSupport
import XCTest

/// Issue 54 on the built `kiosk` binary: a credential whose subject the pins file lists (written
/// by `deploy/examples/issue-credential pin set`, its hash checked by Python's hashlib.scrypt)
/// waits for its PIN, typed on a Wiegand keypad on the simulated chip's lines (`KIOSK_GPIO_CHIP=sim`,
/// the edges through standard input with the moments they happened): the right PIN opens, a wrong
/// one and none do not, the duress code opens as the PIN does and its alarm reaches Mosquitto, five
/// wrong lock the subject across a restart; and no digit of a PIN is in the log, on the broker or
/// in the state folder.
final class KeypadEndToEndTests: XCTestCase {
    typealias Kiosk = FleetEndToEndTests.LiveKiosk
    var folder = ""
    var peer: CredentialPeer!
    var python = ""
    let pin = "58203914", duressPIN = "58203915", wrongPIN = "96385274", shortPIN = "730461"
    static let d0 = 12, d1 = 13

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        self.python = python
        folder = NSTemporaryDirectory() + "kiosk-keypad-e2e-\(UUID().uuidString.prefix(8))"
        for d in ["trust", "state"] { try FileManager.default.createDirectory(atPath: folder + "/" + d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: folder + "/trust/issuer-1.pem")
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `issue-credential pin set` with the PIN on its standard input.
    func pinSet(_ subject: String, _ pin: String, duress: Bool = false) throws {
        let script = Checkout.root.appendingPathComponent("deploy/examples/issue-credential").path
        let r = try run(python, [script, "pin", "set", "--subject", subject, "--file", folder + "/pins"] + (duress ? ["--duress"] : []),
                        input: pin + "\n")
        XCTAssertEqual(r.status, 0, r.errors)
        XCTAssertFalse(r.output.contains(pin) || r.errors.contains(pin), "pin set shows no digit of the PIN")
    }

    /// Python's own hashlib.scrypt, given the line's parameters and salt, makes its key from `pin`.
    func pythonVerifies(_ subject: String, _ pin: String) throws -> Bool {
        let check = """
            import base64, hashlib, sys
            def b(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
            for line in open(sys.argv[1]):
                f = line.split()
                if f and f[0] == sys.argv[2]:
                    _, logn, r, p, salt, key = f[1].split("$")
                    k = hashlib.scrypt(sys.stdin.readline().strip().encode(), salt=b(salt), n=1 << int(logn), r=int(r), p=int(p), dklen=len(b(key)), maxmem=1 << 28)
                    sys.exit(0 if k == b(key) else 1)
            sys.exit(2)
            """
        let r = try run(python, ["-c", check, folder + "/pins", subject], input: pin + "\n")
        XCTAssertNotEqual(r.status, 2, "no line for \(subject)")
        return r.status == 0
    }

    func run(_ program: String, _ args: [String], input: String) throws -> Child.Outcome {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        return try Child.run(p, input: Data(input.utf8))
    }

    func mint(_ sub: String) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        return try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                             claims: ["1": "acme", "2": sub, "4": now + 3600, "5": now - 60, "6": now - 60])
    }

    func env(_ broker: MosquittoBroker, _ topic: String) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: folder + "/trust", state: folder + "/state").merging([
            "KIOSK_KEYPAD": "wiegand:\(Self.d0),\(Self.d1)", "KIOSK_PINS_FILE": folder + "/pins", "KIOSK_PIN_WINDOW_S": "3",
            "KIOSK_BUZZER_LINE": "18", "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic,
        ]) { _, b in b }
    }

    /// The keys as a Wiegand keypad sends them: `width`-bit bursts, each bit a 100 us pulse 2 ms
    /// after the last, stamped just before now and written at once; a key every 60 ms (a quick hand).
    func type(_ keys: String, on kiosk: Kiosk, width: Int = 8) {
        for c in keys {
            let key: KeypadKey = c == "#" ? .hash : c == "*" ? .star : .digit(UInt8(String(c))!)
            let bits = WiegandKeypadPolicy.bits(of: key, width: width)
            var t = monotonicNanoseconds() - UInt64(bits.count) * 2_000_000
            var lines: [String] = []
            for bit in bits {
                let line = bit ? Self.d1 : Self.d0
                lines += ["\(line) 0 \(t)", "\(line) 1 \(t + 100_000)"]
                t += 2_000_000
            }
            kiosk.say(lines.joined(separator: "\n"))
            usleep(60_000)  // the pace of a hand, not a wait for anything to happen
        }
    }

    func testRightWrongNoneDuressAndALockoutThatOutlivesARestart() throws {
        try pinSet("alice", pin)
        try pinSet("carol", shortPIN)
        XCTAssertTrue(try pythonVerifies("alice", pin), "hashlib.scrypt finds pin set's hash")
        XCTAssertFalse(try pythonVerifies("alice", wrongPIN))
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/pins")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let alice = try mint("alice"), bob = try mint("bob"), carol = try mint("carol")

        let broker = try MosquittoBroker()
        let topic = "kp-\(UUID().uuidString.prefix(6))/door-1"
        let sub = try MosquittoSubscriber(broker: broker, topic: "#")
        let replay = try FleetEndToEndTests.FifoReplay(folder + "/replay", count: 14)
        let kiosk = try Kiosk(env: env(broker, topic).merging(["KIOSK_CAMERA": "replay:" + replay.path]) { _, b in b }, stdin: true)
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("keypad"), kiosk.text)
        XCTAssertEqual(kiosk.of("keypad").first?["state"], "ready")
        XCTAssertEqual(kiosk.of("pins").first?["subjects"], "2")
        kiosk.say("\(Self.d0) 1")  // a Wiegand line idles high
        kiosk.say("\(Self.d1) 1")

        var prompts = 0
        func ask(_ token: String, _ keys: String?, width: Int = 8, verdicts n: Int) {
            prompts += 1
            replay.feed(try! FleetEndToEndTests.frame(Array(token.utf8)))
            let deadline = Date().addingTimeInterval(20)
            while kiosk.lines.filter({ $0["event"] == "beep" && $0["for"] == "pin" }).count < prompts, Date() < deadline { usleep(20_000) }
            if let keys { type(keys, on: kiosk, width: width) }
            XCTAssertTrue(kiosk.waitFor("verdict", count: n), kiosk.text)
        }
        ask(alice, pin, verdicts: 1)  // 8 digits end it
        replay.feed(try FleetEndToEndTests.frame(Array(bob.utf8)))  // bob is not listed: no PIN
        XCTAssertTrue(kiosk.waitFor("verdict", count: 2), kiosk.text)
        ask(alice, "12*" + wrongPIN, verdicts: 3)  // cleared, then wrong
        ask(alice, nil, verdicts: 4)  // the window ends
        ask(alice, duressPIN, verdicts: 5)  // plus1: 4 + 1 = 5
        ask(carol, shortPIN + "#", width: 4, verdicts: 6)  // 4-bit bursts, # ends
        let verdicts = kiosk.of("verdict").map { "\($0["result"]!):\($0["reason"]!)" }
        XCTAssertEqual(verdicts, ["granted:valid", "granted:valid", "denied:wrong pin", "denied:pin required", "granted:valid", "granted:valid"],
                       kiosk.text)
        XCTAssertEqual(kiosk.of("pin").map { $0["result"]! }, ["ok", "wrong", "timeout", "ok", "ok"], kiosk.text)
        XCTAssertEqual(kiosk.of("duress").count, 1)
        XCTAssertEqual(kiosk.of("duress").first?["credential"], "alice")
        // Four grants drove the strike: each opened it, or held it open longer (bob's came in alice's 200 ms).
        XCTAssertEqual(kiosk.of("door").filter { $0["state"] == "open" }.count + kiosk.of("door_extended").count, 4, kiosk.text)
        // The duress grant and the PIN's look the same at the door: the same verdict line but its time.
        let granted = kiosk.lines.filter { $0["event"] == "verdict" && $0["credential"] == "alice" && $0["result"] == "granted" }
        XCTAssertEqual(granted.count, 2)
        XCTAssertEqual(granted.map { $0.filter { $0.key != "ms" && $0.key != "frame" && $0.key != "time" } }.reduce(into: Set<[String: String]>()) { $0.insert($1) }.count, 1)

        // Four more wrong (five in all): alice is locked, also after a restart.
        for i in 0..<4 { ask(alice, wrongPIN, verdicts: 7 + i) }
        XCTAssertEqual(kiosk.of("pin_locked").count, 1, kiosk.text)
        replay.feed(try FleetEndToEndTests.frame(Array(alice.utf8)))
        XCTAssertTrue(kiosk.waitFor("verdict", count: 11), kiosk.text)
        XCTAssertEqual(kiosk.of("verdict").last?["reason"], "pin locked")
        let alarm = sub.waitFor { m in m.contains { $0.topic == topic + "/alarm" } }
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)

        let again = try FleetEndToEndTests.FifoReplay(folder + "/replay2", count: 2)
        let second = try Kiosk(env: env(broker, topic).merging(["KIOSK_CAMERA": "replay:" + again.path]) { _, b in b }, stdin: true)
        defer { if second.process.isRunning { second.kill9() } }
        XCTAssertTrue(second.waitFor("keypad"), second.text)
        again.feed(try FleetEndToEndTests.frame(Array(alice.utf8)))
        XCTAssertTrue(second.waitFor("verdict"), second.text)
        XCTAssertEqual(second.of("verdict").first?["reason"], "pin locked", second.text)
        again.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(second.wait(), 0, second.text)

        // The alarm: {"type":"duress","subject":"alice","time":...} on <topic>/alarm.
        let alarms = alarm.filter { $0.topic == topic + "/alarm" }
            .compactMap { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] }
        XCTAssertEqual(alarms.first?["type"] as? String, "duress")
        XCTAssertEqual(alarms.first?["subject"] as? String, "alice")
        XCTAssertEqual((alarms.first?["time"] as? String)?.hasSuffix("Z"), true)

        // No digit of a PIN anywhere the kiosk writes: the log, the broker, the state folder.
        var written = kiosk.text + second.text + sub.messages.map { $0.topic + " " + $0.text }.joined(separator: "\n")
        for f in (FileManager.default.enumerator(atPath: folder + "/state")?.allObjects as? [String]) ?? [] {
            written += (try? String(contentsOfFile: folder + "/state/" + f, encoding: .isoLatin1)) ?? ""
        }
        XCTAssertTrue(written.contains("pin locked"), "the search looks at what was written")
        for secret in [pin, duressPIN, wrongPIN, shortPIN] {
            XCTAssertFalse(written.contains(secret), "a PIN in the kiosk's output")
        }
    }

    /// The duress alarm goes through the spool on disk as the scans do (interface.md 0.6): the
    /// broker away, a duress code opens, the alarm is on disk (an `A` line) and the kiosk is killed
    /// (SIGKILL); the broker back and the kiosk restarted on the same state folder, the alarm
    /// arrives. It came at QoS 1: published while its subscriber's session was away, the broker
    /// kept it for that session (QoS 0 it would not), and it is not retained.
    func testADuressAlarmOutlivesTheBrokerAwayAndAKilledKiosk() throws {
        try pinSet("alice", pin)
        let alice = try mint("alice")
        let broker = try MosquittoBroker()
        let topic = "kd-\(UUID().uuidString.prefix(6))/door-1"
        let state = folder + "/state"
        /// The spool's live alarms (`A` lines no `X` line marks gone).
        func spooledAlarms() -> Int {
            guard let text = try? String(contentsOfFile: state + "/mqtt-spool", encoding: .utf8) else { return 0 }
            var live = Set<Substring>()
            for f in text.split(separator: "\n").map({ $0.split(separator: " ") }) where f.count >= 2 {
                if f[0] == "A" { live.insert(f[1]) } else if f[0] == "X" { live.remove(f[1]) }
            }
            return live.count
        }
        let replay = try FleetEndToEndTests.FifoReplay(folder + "/replay", count: 4)
        let kiosk = try Kiosk(env: env(broker, topic).merging(["KIOSK_CAMERA": "replay:" + replay.path]) { _, b in b }, stdin: true)
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("keypad"), kiosk.text)
        kiosk.say("\(Self.d0) 1")
        kiosk.say("\(Self.d1) 1")
        broker.stop()
        XCTAssertTrue(kiosk.waitFor("mqtt_disconnected"), kiosk.text)
        replay.feed(try FleetEndToEndTests.frame(Array(alice.utf8)))
        let deadline = Date().addingTimeInterval(20)
        while !kiosk.lines.contains(where: { $0["event"] == "beep" && $0["for"] == "pin" }), Date() < deadline { usleep(20_000) }
        type(duressPIN, on: kiosk)
        XCTAssertTrue(kiosk.waitFor("duress"), kiosk.text)
        XCTAssertEqual(kiosk.of("verdict").first?["result"], "granted", kiosk.text)
        XCTAssertEventually("the alarm on disk", within: 10) { spooledAlarms() == 1 }
        kiosk.kill9()
        XCTAssertEqual(kiosk.wait(), -SIGKILL)

        // The broker back; a session that will be away when the alarm comes.
        try broker.start()
        let session = "duress-\(UUID().uuidString.prefix(6))"
        try MosquittoSubscriber(broker: broker, topic: topic + "/alarm", persistentID: session).stop()
        let again = try FleetEndToEndTests.FifoReplay(folder + "/replay2", count: 1)
        let second = try Kiosk(env: env(broker, topic).merging(["KIOSK_CAMERA": "replay:" + again.path]) { _, b in b }, stdin: true)
        defer { if second.process.isRunning { second.kill9() } }
        XCTAssertTrue(second.waitFor("mqtt_connected"), second.text)
        XCTAssertEventually("the broker acknowledged the alarm", within: 20) { spooledAlarms() == 0 }
        let back = try MosquittoSubscriber(broker: broker, topic: topic + "/alarm", persistentID: session)
        let got = back.waitFor { !$0.filter { $0.topic == topic + "/alarm" }.isEmpty }.filter { $0.topic == topic + "/alarm" }
        XCTAssertEqual(got.count, 1, "\(got)")
        XCTAssertEqual(got.first?.retained, false)
        let alarm = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(got.first?.payload ?? [])) as? [String: String])
        XCTAssertEqual(alarm["type"], "duress")
        XCTAssertEqual(alarm["subject"], "alice")
        XCTAssertFalse(got.first!.text.contains(pin) || got.first!.text.contains(duressPIN))
        again.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(second.wait(), 0, second.text)
    }

    /// Without a keypad present, a credential that needs a PIN is denied `pin required` at once;
    /// one that does not opens.
    func testNoKeypadDeniesWhoNeedsAPINAndOpensForTheOthers() throws {
        try pinSet("alice", pin)
        let replay = try DoorFixtures.replay([try mint("alice"), try mint("bob")], at: folder + "/replay")
        var e = DoorFixtures.credentialsEnv(folder: folder, trust: folder + "/trust", state: folder + "/state")
        e["KIOSK_PINS_FILE"] = folder + "/pins"
        e["KIOSK_CAMERA"] = "replay:" + replay
        let r = try KioskProcess.run(["run"], env: e)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.of("verdict").map { "\($0["credential"]!):\($0["reason"]!)" }, ["alice:pin required", "bob:valid"], r.stderr)
    }
}
