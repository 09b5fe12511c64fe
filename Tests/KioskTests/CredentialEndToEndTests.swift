// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// Issue 21 on the built `kiosk` binary: credentials minted by an independent issuer (PyPI's cwt
/// and pycose, pyotp: Tests/Peers/credentials.py), drawn as QR codes into replayed frames, judged
/// by `KIOSK_VERDICT=credentials`, with the strike on simulated GPIO. Each test reads what the
/// kiosk said (`credential` events, `door` events) and greps every output for the tokens.
final class CredentialEndToEndTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }
    var peer: CredentialPeer!
    /// Every token shown: none may appear in any output.
    var tokens: [String] = []

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        folder = NSTemporaryDirectory() + "kiosk-cred-e2e-\(UUID().uuidString.prefix(8))"
        for d in [trust, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
        try peer.keygen("EdDSA", privatePath: folder + "/ed.key", publicPath: trust + "/hex-ed01.pem")
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    var now: Int { Int(Date().timeIntervalSince1970) }

    /// A signed credential: iss acme, sub alice, valid from a minute ago for an hour, unless
    /// `claims` says otherwise.
    func mint(_ claims: [String: Any] = [:], key: String = "es.key", alg: String = "ES256", kid: Any = "issuer-1",
              lib: String = "cwt") throws -> String {
        var all: [String: Any] = ["1": "acme", "2": "alice", "4": now + 3600, "5": now - 60, "6": now - 60]
        all.merge(claims) { _, b in b }
        let t = try peer.sign(lib: lib, privatePath: folder + "/" + key, alg: alg, kid: kid, claims: all)
        tokens.append(t)
        return t
    }

    func baseEnv(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_CREDENTIAL_AUDIENCE": "door-1"]) { _, b in b }.merging(more) { _, b in b }
    }

    /// A replay folder: an empty frame, then each code followed by an empty frame.
    func replay(_ codes: [String], name: String = "replay") throws -> String {
        try DoorFixtures.replay(codes, at: folder + "/" + name)
    }

    typealias Run = KioskProcess.Run

    func run(_ args: [String] = ["run"], env: [String: String]) throws -> Run { try KioskProcess.run(args, env: env) }

    /// No token, nor a long piece of one (the Base45 after the prefix), in `text`.
    func assertNoToken(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for t in tokens {
            let body = t.split(separator: ":", maxSplits: 1).last.map(String.init) ?? t
            for piece in [t, String(body.prefix(24)), String(body.suffix(24))] where piece.count >= 12 {
                XCTAssertFalse(text.contains(piece), "\(what) carries a token (\(piece))", file: file, line: line)
            }
        }
    }

    // MARK: the tests

    func testEachSignedCredentialGetsItsVerdictAndOnlyTheValidOnesOpenTheDoor() throws {
        try peer.keygen("ES256", privatePath: folder + "/stranger.key", publicPath: folder + "/stranger.pem")
        try peer.keygen("ES256", privatePath: folder + "/second.key", publicPath: trust + "/issuer-1.2.pem")
        try "# revoked\nmallory\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let hostile = [
            "KC1:" + String(repeating: "A", count: 1000),  // Base45 of random-looking bytes: not COSE
            "KC1:" + Base45.encode([0x78, 0x9c, 0x01, 0x02, 0x03, 0x04]),  // invalid zlib
            "KC1:" + Base45.encode([UInt8](repeating: 0x81, count: 100) + [0]),  // deep nesting
            "KC1:" + Base45.encode([0x84, 0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),  // a huge length
            "KC1:" + Base45.encode([0xa2, 0x01, 0x26, 0x01, 0x27]),  // duplicate keys
            "KC1:ABC~",  // not Base45
        ]
        // The code that is no credential first: it is decided at once, the credentials in turn on the
        // verifier's thread, so only this order is the log's whatever the machine's load.
        let cases: [(String, String)] = [
            ("HELLO-WORLD", "not a credential"),
            (try mint(["7": ["hex": "01"]]), "valid"),
            (try mint(["2": "bob"], key: "ed.key", alg: "EdDSA", kid: ["hex": "ed01"], lib: "pycose"), "valid"),
            (try mint(["2": "carol"], key: "second.key"), "valid"),  // the second key of the shared kid
            (try mint(["2": "dave", "4": now - 3600, "5": now - 7200]), "expired"),
            (try mint(["2": "erin", "5": now + 3600, "4": now + 7200]), "not yet valid"),
            (try mint(["2": "frank"], key: "stranger.key"), "signature"),
            (try mint(["2": "grace"], key: "stranger.key", kid: "stranger"), "unknown key"),
            (try mint(["2": "heidi", "3": "door-2"]), "wrong door"),
            (try mint(["2": "ivan", "3": "door-1"]), "valid"),
            (try mint(["2": "mallory"]), "revoked"),
        ] + hostile.map { ($0, "malformed") }
        tokens += hostile
        let r = try run(env: baseEnv(["KIOSK_CAMERA": "replay:" + (try replay(cases.map(\.0)))]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.reasons, cases.map(\.1), r.stderr)
        XCTAssertEqual(r.of("credential").map { $0["result"] ?? "" }, cases.map { $0.1 == "valid" ? "granted" : "denied" })
        XCTAssertEqual(r.of("verdict").map { $0["result"] ?? "" }, cases.map { $0.1 == "valid" ? "granted" : "denied" })
        XCTAssertEqual(r.doorOpenings, 4, r.stderr)
        XCTAssertEqual(r.of("credential")[1]["sub"], "alice")
        XCTAssertEqual(r.of("credential")[1]["cti"], "01")
        XCTAssertEqual(r.of("credential")[1]["kid"], "issuer-1")
        XCTAssertEqual(r.of("credential")[2]["kid"], "hex-ed01")
        // The scan events: credential=SUB and the hash, never data.
        let scans = r.of("scan")
        XCTAssertEqual(scans.count, cases.count)
        XCTAssertEqual(scans[1]["credential"], "alice")
        XCTAssertEqual(scans[1]["hash"]?.count, 16)
        XCTAssertNil(scans[1]["data"])
        XCTAssertEqual(scans.first?["data"], "HELLO-WORLD", "a code that is no credential is shown as it is")
        XCTAssertEqual(r.of("credentials_reloaded").first?["keys"], "3")
        assertNoToken(r.stderr, "the log")
        assertNoToken(r.stdout, "stdout")
    }

    func testAOneTimeCredentialOpensOnceEvenAcrossASIGKILLAndARestart() throws {
        let once = try mint(["7": ["hex": "abcdef"]])
        let env = baseEnv()
        let first = try FleetEndToEndTests.FifoReplay(folder + "/fifo1", count: 2)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env.merging(["KIOSK_CAMERA": "replay:" + first.path]) { _, b in b })
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
        first.feed(try FleetEndToEndTests.frame(Array(once.utf8)))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
        first.feed(try FleetEndToEndTests.frame(nil))
        // The door opened: the token is on disk already. Killed now, it must still know it.
        XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
        kiosk.kill9()
        _ = kiosk.wait()
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["valid"], kiosk.text)
        let again = try run(env: env.merging(["KIOSK_CAMERA": "replay:" + (try replay([once, once], name: "again"))]) { _, b in b })
        XCTAssertEqual(again.reasons, ["used", "used"], again.stderr)
        XCTAssertEqual(again.doorOpenings, 0)
        XCTAssertEqual(again.of("credentials_reloaded").first?["store"], "1")
        assertNoToken(kiosk.text + again.stderr, "the log")
    }

    func testAntipassbackAndSIGHUPReloadingTheRevocationList() throws {
        let a = try mint(["7": ["hex": "a1"]]), b = try mint(["7": ["hex": "a2"]]), c = try mint(["2": "bob"])
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 6)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: baseEnv(["KIOSK_CAMERA": "replay:" + fifo.path, "KIOSK_ANTIPASSBACK_S": "600"]))
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
        for (i, t) in [a, b].enumerated() {
            fifo.feed(try FleetEndToEndTests.frame(Array(t.utf8)))
            fifo.feed(try FleetEndToEndTests.frame(nil))
            XCTAssertTrue(kiosk.waitFor("credential", count: i + 1), kiosk.text)
        }
        try "bob\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reloaded").last?["revoked"], "1")
        fifo.feed(try FleetEndToEndTests.frame(Array(c.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["valid", "antipassback", "revoked"], kiosk.text)
    }

    /// The building's `reload` command on a real Mosquitto reloads the revocation list as SIGHUP
    /// does: bob's credential is valid, bob is revoked in the file, the command is answered ok and
    /// the credentials reloaded, and bob's next credential is denied, revoked.
    func testTheBuildingsReloadCommandReloadsTheRevocationList() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        let broker = try MosquittoBroker()
        let topic = "kc-\(UUID().uuidString.prefix(6))/door"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/command/result")
        let before = try mint(["2": "bob"]), after = try mint(["2": "bob"])
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 4)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: baseEnv([
            "KIOSK_CAMERA": "replay:" + fifo.path, "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic,
            "KIOSK_MQTT_DISCOVERY": "", "KIOSK_MQTT_COMMANDS": "1",
        ]))
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        XCTAssertEventually("the kiosk subscribes to \(topic)/command") {
            ((try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? "").contains("\t\(topic)/command (QoS")
        }
        fifo.feed(try FleetEndToEndTests.frame(Array(before.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)

        try "bob\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic + "/command", "-q", "1",
                                                           "-m", #"{"id":"reload-7","command":"reload","time":\#(now)}"#])
        let results = sub.waitFor { $0.count >= 1 }
        let answer = results.first.map { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] ?? [:] } ?? [:]
        XCTAssertEqual(answer["id"] as? String, "reload-7", results.map(\.text).joined(separator: "\n"))
        XCTAssertEqual(answer["result"] as? String, "ok", results.map(\.text).joined(separator: "\n"))
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reloaded").last?["revoked"], "1", kiosk.text)
        XCTAssertEqual(kiosk.of("command").map { "\($0["id"] ?? "") \($0["command"] ?? "") \($0["result"] ?? "")" }, ["reload-7 reload ok"])

        fifo.feed(try FleetEndToEndTests.frame(Array(after.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["valid", "revoked"], kiosk.text)
        XCTAssertEqual(kiosk.of("credential").last?["result"], "denied", kiosk.text)
        assertNoToken(kiosk.text, "the log")
        assertNoToken(results.map(\.text).joined(separator: "\n"), "the command's answer")
    }

    func testRotatingCodesFromPyotp() throws {
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        try "carol \(secret)\n".write(toFile: folder + "/totp", atomically: true, encoding: .utf8)
        let t = now
        let current = try peer.totp(secret: secret, holder: "carol", time: t)
        let old = try peer.totp(secret: secret, holder: "carol", time: t - 60)
        let forged = try peer.totp(secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", holder: "carol", time: t)
        tokens += [current, old, forged]
        let r = try run(env: baseEnv(["KIOSK_TOTP_FILE": folder + "/totp", "KIOSK_CLOCK_SKEW_S": "5",
                                      "KIOSK_CAMERA": "replay:" + (try replay([current, current, old, forged]))]))
        XCTAssertEqual(r.reasons, ["valid", "used", "expired", "signature"], r.stderr)
        XCTAssertEqual(r.doorOpenings, 1)
        XCTAssertEqual(r.of("credentials_reloaded").first?["holders"], "1")
        XCTAssertEqual(r.of("scan").first?["credential"], "carol")
        XCTAssertFalse(r.stderr.contains(secret), "the secret is never logged")
        assertNoToken(r.stderr, "the log")
        let env = baseEnv(["KIOSK_TOTP_FILE": folder + "/totp"])
        let doctor = try run(["doctor"], env: env), check = try run(["check"], env: env)
        XCTAssertTrue(doctor.stdout.contains("PASS totp: \(folder)/totp: 1 holders (secrets not shown)"), doctor.stdout)
        for out in [doctor.stdout, doctor.stderr, check.stdout, check.stderr] { XCTAssertFalse(out.contains(secret), "doctor and check never show a secret") }
        // A bad line is named by its number, never shown.
        try "carol \(secret)\ncarol \(secret)\n".write(toFile: folder + "/totp", atomically: true, encoding: .utf8)
        let bad = try run(["check"], env: env)
        XCTAssertEqual(bad.status, 78)
        XCTAssertTrue(bad.stderr.contains("line 2: holder carol is listed twice"), bad.stderr)
        XCTAssertFalse(bad.stderr.contains(secret))
    }

    /// The kernel's clock state, injected: an LD_PRELOAD library built here answers adjtimex as
    /// the kernel does for a clock no one has set (maximum error 16 s, STA_UNSYNC, TIME_ERROR),
    /// the kiosk's real call path unchanged.
    func testAnUnsynchronisedClockDeniesTimeBoundCredentials() throws {
        let library = try unsynchronisedLibrary()
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        try "carol \(secret)\n".write(toFile: folder + "/totp", atomically: true, encoding: .utf8)
        let timed = try mint()
        let untimed = try mint(["2": "bob"], key: "ed.key", alg: "EdDSA", kid: ["hex": "ed01"], lib: "pycose")
        // pycose signs exactly the claims given: no exp, no nbf for this one.
        let untimedPlain = try peer.sign(lib: "pycose", privatePath: folder + "/ed.key", alg: "EdDSA", kid: ["hex": "ed01"], claims: ["2": "zoe"])
        let code = try peer.totp(secret: secret, holder: "carol", time: now)
        tokens += [untimedPlain, code]
        var env = baseEnv(["KIOSK_TOTP_FILE": folder + "/totp", "LD_PRELOAD": library, "KIOSK_REQUIRE_SYNCED_CLOCK": "1",
                           "TEST_KIOSK_RTC_DIR": folder + "/no-rtc",  // This machine's RTC aside
                           "KIOSK_CAMERA": "replay:" + (try replay([timed, untimed, untimedPlain, code]))])
        let r = try run(env: env)
        XCTAssertEqual(r.reasons, ["clock not synchronized", "clock not synchronized", "valid", "clock not synchronized"], r.stderr)
        let doctor = try run(["doctor"], env: env)
        XCTAssertTrue(doctor.stdout.contains("FAIL clock:"), doctor.stdout)
        // Without the requirement the same codes are judged by the clock as it is.
        env["KIOSK_REQUIRE_SYNCED_CLOCK"] = "0"
        env["KIOSK_CAMERA"] = "replay:" + (try replay([timed, code], name: "again"))
        XCTAssertEqual(try run(env: env).reasons, ["valid", "valid"])
    }

    /// The program and the broker hear of credentials without their tokens; a code that is no
    /// credential goes to the program, whose exit status decides as in hook mode.
    func testTheProgramAndTheBrokerNeverSeeAToken() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        let broker = try MosquittoBroker()
        let topic = "kc-\(UUID().uuidString.prefix(6))/door"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/scan")
        let program = folder + "/program", heard = folder + "/heard"
        try "#!/bin/sh\n{ cat; echo \"env=$KIOSK_CODE|$KIOSK_CREDENTIAL_RESULT|$KIOSK_CREDENTIAL_SUB\"; } >> \(heard)\n[ \"$KIOSK_CODE\" = OPEN-SESAME ] && exit 0\nexit 1\n"
            .write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        let good = try mint(), bad = try mint(["2": "dave", "4": now - 3600, "5": now - 7200])
        let codes = [good, bad, "OPEN-SESAME", "SOMETHING-ELSE"]
        let r = try run(env: baseEnv(["KIOSK_ON_SCAN": program, "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic,
                                      "KIOSK_MQTT_DISCOVERY": "", "KIOSK_CAMERA": "replay:" + (try replay(codes))]))
        XCTAssertEqual(r.status, 0, r.stderr)
        // The log's verdicts come as they are decided (a credential by the verifier at once, the
        // others by the program): their order is the machine's; the broker's messages keep the
        // scans' order, checked below.
        XCTAssertEqual(r.of("verdict").map { $0["result"] ?? "" }.sorted(), ["denied", "denied", "granted", "granted"], r.stderr)
        XCTAssertEqual(r.of("verdict").first { $0["credential"] == "alice" }?["result"], "granted", r.stderr)
        let messages = sub.waitFor { $0.filter { $0.topic == topic + "/scan" }.count >= 4 }.filter { $0.topic == topic + "/scan" }
        let scans = messages.map { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] ?? [:] }
        XCTAssertEqual(scans.count, 4)
        XCTAssertEqual(scans.first?["credential"] as? String, "alice")
        XCTAssertEqual((scans.first?["hash"] as? String)?.count, 16)
        XCTAssertNil(scans.first?["data"])
        XCTAssertEqual(scans.map { $0["verdict"] as? String }, ["granted", "denied", "granted", "denied"])
        XCTAssertEqual(scans[2]["data"] as? String, "OPEN-SESAME")
        let said = (try? String(contentsOfFile: heard, encoding: .utf8)) ?? ""
        XCTAssertTrue(said.contains("result=granted reason=valid kid=issuer-1 iss=acme sub=alice"), said)
        XCTAssertTrue(said.contains("env=result=granted"), said)
        XCTAssertTrue(said.contains("|granted|alice"), said)
        XCTAssertTrue(said.contains("reason=expired"), said)
        assertNoToken(said, "the program's stdin and environment")
        assertNoToken(messages.map(\.text).joined(separator: "\n"), "the MQTT scan messages")
        assertNoToken(r.stderr, "the log")
        // The same fields in JSON (what the journal's fields are made of).
        let json = try run(env: baseEnv(["KIOSK_LOG_FORMAT": "json", "KIOSK_CAMERA": "replay:" + (try replay([good], name: "json"))]))
        XCTAssertTrue(json.stderr.contains("\"event\":\"credential\""), json.stderr)
        assertNoToken(json.stderr, "the JSON log")
    }

    func testStartRefusesATrustDirectoryItCannotUse() throws {
        try "not a key\n".write(toFile: trust + "/broken.pem", atomically: true, encoding: .utf8)
        let r = try run(env: baseEnv(["KIOSK_CAMERA": "replay:" + (try replay([]))]))
        XCTAssertEqual(r.status, 78, r.stderr)
        XCTAssertTrue(r.stderr.contains("event=config_error var=KIOSK_TRUST_DIR"), r.stderr)
        XCTAssertTrue(r.stderr.contains("broken.pem"), r.stderr)
        let check = try run(["check"], env: baseEnv())
        XCTAssertEqual(check.status, 78, check.stderr)
        try FileManager.default.removeItem(atPath: trust + "/broken.pem")
        let ok = try run(["check"], env: baseEnv())
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.contains("# credentials: 2 keys, 0 revoked, 0 TOTP holders"), ok.stdout)
        let doctor = try run(["doctor"], env: baseEnv())
        XCTAssertTrue(doctor.stdout.contains("PASS trust: kid issuer-1: EC P-256 key in"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PASS trust: kid hex-ed01: Ed25519 key in"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PASS store:"), doctor.stdout)
    }
}

extension KioskProcess.Run {
    /// The credential events' reasons, in order.
    var reasons: [String] { of("credential").compactMap { $0["reason"] } }
    /// Grants the strike carried out: opened, or held open longer while open (debug level).
    var doorOpenings: Int { of("door").filter { $0["state"] == "open" }.count + of("door_extended").count }
}
