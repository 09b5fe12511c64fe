// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import TestSupport
import XCTest

/// Issue 35 on the built `kiosk` binary: site bundles signed by PyPI's pycose through the example
/// deploy/examples/site-bundle (the site's own tool), credentials by Tests/Peers/credentials.py
/// (cwt), taken from a file and from a retained topic on a real Mosquitto. Each test reads the
/// `bundle` events and what the verifier then decides: a badge the bundle revokes is denied.
final class SiteBundleEndToEndTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }
    var python = ""
    var peer: CredentialPeer!
    static var tool: String { Checkout.root.appendingPathComponent("deploy/examples/site-bundle").path }

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        self.python = python
        folder = NSTemporaryDirectory() + "kiosk-bundle-e2e-\(UUID().uuidString.prefix(8))"
        for d in [trust, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/issuer.key", publicPath: trust + "/issuer-1.pem")
        try site(["keygen", "--key", folder + "/site.key", "--public", folder + "/site.pem"])
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The site's tool; its output (a failure throws, with the output).
    @discardableResult
    func site(_ args: [String]) throws -> String {
        try MosquittoBroker.run(python, [SiteBundleEndToEndTests.tool] + args)
    }

    /// A bundle of `version` carrying `files` (name: content), signed by `key`; its path.
    func bundle(_ version: Int, _ files: [String: String], key: String = "site.key", force: Bool = false) throws -> String {
        let dir = folder + "/site-v\(version)-\(UUID().uuidString.prefix(6))"
        for (name, text) in files {
            let path = dir + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let out = dir + ".cose"
        try site(["sign", "--key", folder + "/" + key, "--folder", dir, "--version", String(version), "--out", out] + (force ? ["--force"] : []))
        return out
    }

    var issuerPEM: String { (try? String(contentsOfFile: trust + "/issuer-1.pem", encoding: .utf8)) ?? "" }

    var now: Int { Int(Date().timeIntervalSince1970) }

    func mint(_ sub: String) throws -> String {
        try peer.sign(privatePath: folder + "/issuer.key", alg: "ES256", kid: "issuer-1",
                      claims: ["1": "acme", "2": sub, "4": now + 3600, "5": now - 60, "6": now - 60])
    }

    func env(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_SITE_KEY": folder + "/site.pem"]) { _, b in b }.merging(more) { _, b in b }
    }

    /// A replay of these codes, each followed by an empty frame.
    func replay(_ codes: [String]) throws -> String {
        try DoorFixtures.replay(codes, at: folder + "/replay-\(UUID().uuidString.prefix(6))")
    }

    /// The bundle in force as the state directory shows it (the symlink's target).
    var linked: String? { try? FileManager.default.destinationOfSymbolicLink(atPath: state + "/bundle") }
    var keptFolders: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: state + "/bundles")) ?? []).sorted() }

    // MARK: the tests

    /// A lost badge revoked by a bundle from the file: denied at once, and still after a restart
    /// without the file (the kept bundle, verified again); `check` says where each file is read.
    func testABundleFromTheFileRevokesABadgeAndIsInForceAfterARestart() throws {
        let mallory = try mint("mallory"), alice = try mint("alice")
        let b1 = try bundle(1, ["revoked": "# lost on 3 December\nmallory\n", "trust/issuer-1.pem": issuerPEM])
        let first = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory, alice])), "KIOSK_BUNDLE_FILE": b1]))
        XCTAssertEqual(first.status, 0, first.stderr)
        let applied = first.of("bundle")
        XCTAssertEqual(applied.count, 1, first.stderr)
        XCTAssertEqual(applied.first?["result"], "applied")
        XCTAssertEqual(applied.first?["version"], "1")
        XCTAssertEqual(applied.first?["source"], "file")
        XCTAssertEqual(first.reasons, ["revoked", "valid"], first.stderr)
        XCTAssertEqual(linked, "bundles/v1")
        // The configured revocation list was never there: the bundle's is what denies.
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/revoked"))

        let again = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory, alice]))]))
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.of("bundle_in_force").first?["version"], "1", again.stderr)
        XCTAssertEqual(again.reasons, ["revoked", "valid"], again.stderr)

        let check = try KioskProcess.run(["check"], env: env())
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("# bundle: version 1 in force"), check.stdout)
        XCTAssertTrue(check.stdout.contains("revoked: \(state)/bundles/v1/revoked (bundle v1)"), check.stdout)
        XCTAssertTrue(check.stdout.contains("keys: \(state)/bundles/v1/trust (bundle v1)"), check.stdout)
        XCTAssertTrue(check.stdout.contains("event keys: \(trust)/pretix (configured)"), check.stdout)
        let doctor = try KioskProcess.run(["doctor"], env: env())
        XCTAssertTrue(doctor.stdout.contains("version 1 in force"), doctor.stdout)

        // A door behind: the file holds a newer version than the one in force (doctor says so).
        let b2 = try bundle(2, ["revoked": "mallory\nbob\n"])
        let behind = try KioskProcess.run(["doctor"], env: env(["KIOSK_BUNDLE_FILE": b2]))
        XCTAssertTrue(behind.stdout.contains("holds version 2, above the one in force (1)"), behind.stdout)
        // A wrong site key for one start: the kept bundle is not used, but kept for the right key.
        try site(["keygen", "--key", folder + "/other.key", "--public", folder + "/other.pem"])
        let wrong = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory])), "KIOSK_SITE_KEY": folder + "/other.pem"]))
        XCTAssertTrue(wrong.of("bundle_kept_unusable").first?["error"]?.contains("no longer verifies") == true, wrong.stderr)
        XCTAssertEqual(wrong.reasons, ["valid"], "the configured (missing) list: " + wrong.stderr)
        let right = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory]))]))
        XCTAssertEqual(right.of("bundle_in_force").first?["version"], "1", right.stderr)
        XCTAssertEqual(right.reasons, ["revoked"], right.stderr)

        // A kept file changed behind the kiosk's back: the bundle is not used, the configured files are.
        try "nobody\n".write(toFile: state + "/bundles/v1/revoked", atomically: false, encoding: .utf8)
        let tampered = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory]))]))
        XCTAssertTrue(tampered.of("bundle_kept_unusable").first?["error"]?.contains("differs from what the bundle signed") == true, tampered.stderr)
        XCTAssertEqual(tampered.reasons, ["valid"], "the configured (empty) list: " + tampered.stderr)
    }

    /// A bundle's `pins` (issue 54), written by `issue-credential pin set` in the site folder and
    /// signed by the site's tool: the kiosk keeps it 0600 and uses it in place of KIOSK_PINS_FILE
    /// (without a keypad, alice, listed, is denied `pin required`; bob is not listed and opens), and
    /// `check` says where it is read and what it holds, never a hash.
    func testABundleCarriesThePinsFile() throws {
        let dir = folder + "/site-pins"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [Checkout.root.appendingPathComponent("deploy/examples/issue-credential").path, "pin", "set", "--subject", "alice", "--file", dir + "/pins"]
        XCTAssertEqual(try Child.run(p, input: Data("4711\n".utf8)).status, 0)
        let b = dir + ".cose"
        try site(["sign", "--key", folder + "/site.key", "--folder", dir, "--version", "3", "--out", b])
        let run = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([try mint("alice"), try mint("bob")])), "KIOSK_BUNDLE_FILE": b,
                                                          "KIOSK_PINS_FILE": folder + "/no-pins"]))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.of("bundle").first?["result"], "applied", run.stderr)
        XCTAssertEqual(run.of("verdict").map { "\($0["credential"] ?? ""):\($0["reason"] ?? "")" }, ["alice:pin required", "bob:valid"], run.stderr)
        let kept = try FileManager.default.attributesOfItem(atPath: state + "/bundles/v3/pins")
        XCTAssertEqual(kept[.posixPermissions] as? Int, 0o600)
        let check = try KioskProcess.run(["check"], env: env(["KIOSK_PINS_FILE": folder + "/no-pins"]))
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("pins: \(state)/bundles/v3/pins (bundle v3)"), check.stdout)
        XCTAssertTrue(check.stdout.contains("# pins: \(state)/bundles/v3/pins: 1 subject(s), 0 with a duress= hash; mode 0600"), check.stdout)
        XCTAssertFalse(check.stdout.contains("scrypt$") || run.stderr.contains("scrypt$") || run.stderr.contains("4711"))
    }

    /// Each bad bundle refused with its reason, and nothing changed: the bundle in force stays,
    /// its folder the only one kept, the badge it revokes still denied.
    func testEachBadBundleIsRefusedWithItsReasonAndChangesNothing() throws {
        let mallory = try mint("mallory")
        let good = ["revoked": "mallory\n", "trust/issuer-1.pem": issuerPEM]
        let b2 = try bundle(2, good)
        let setUp = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([])), "KIOSK_BUNDLE_FILE": b2]))
        XCTAssertEqual(setUp.of("bundle").first?["result"], "applied", setUp.stderr)
        let inForce = try Data(contentsOf: URL(fileURLWithPath: state + "/bundles/v2/bundle.cose"))

        try site(["keygen", "--key", folder + "/rogue.key", "--public", folder + "/rogue.pem"])
        try site(["keygen", "--key", folder + "/rogue-ed.key", "--public", folder + "/rogue-ed.pem", "--alg", "EdDSA"])
        // A payload changed after signing: the revocation's name in the signed bytes.
        let signed3 = try bundle(3, ["revoked": "zzzzzz\n", "trust/issuer-1.pem": issuerPEM])
        var tampered = try [UInt8](Data(contentsOf: URL(fileURLWithPath: signed3)))
        let at = try XCTUnwrap((0..<(tampered.count - 6)).first { Array(tampered[$0..<$0 + 6]) == Array("zzzzzz".utf8) })
        tampered.replaceSubrange(at..<at + 6, with: Array("nobody".utf8))
        let tamperedPath = folder + "/tampered.cose"
        try Data(tampered).write(to: URL(fileURLWithPath: tamperedPath))
        let junkPath = folder + "/junk.cose"
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: URL(fileURLWithPath: junkPath))
        let big = String(repeating: "BEGIN:VCALENDAR\r\n", count: 70_000)  // 1.2 MB of holidays

        let cases: [(String, String, String?)] = [
            ("an older version", try bundle(1, good), "version"),
            ("the same version again", b2, nil),
            ("a tampered payload", tamperedPath, "signature"),
            ("signed by a credential issuer's key", try bundle(4, good, key: "issuer.key"), "signature"),
            ("signed by a rogue key", try bundle(5, good, key: "rogue.key"), "signature"),
            ("signed by a rogue Ed25519 key", try bundle(6, good, key: "rogue-ed.key"), "unknown key"),
            ("junk", junkPath, "malformed"),
            ("an oversized bundle", try bundle(7, good.merging(["holidays.ics": big]) { a, _ in a }, force: true), "too large"),
            ("rules that do not parse", try bundle(8, good.merging(["access": "allow staff sometimes\n"]) { a, _ in a }), "file"),
            ("a key that is not a key", try bundle(9, ["revoked": "\n", "trust/issuer-1.pem": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"]), "file"),
            ("a calendar that does not read", try bundle(10, good.merging(["holidays.ics": "BEGIN:VCALENDAR\n\u{0}\n", "access": "holidays /x.ics\nallow staff always\n"]) { a, _ in a }), "file"),
        ]
        for (what, path, reason) in cases {
            let r = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([mallory])), "KIOSK_BUNDLE_FILE": path]))
            XCTAssertEqual(r.status, 0, "\(what): \(r.stderr)")
            if let reason {
                XCTAssertEqual(r.of("bundle").map { $0["result"] ?? "" }, ["refused"], "\(what): \(r.stderr)")
                XCTAssertEqual(r.of("bundle").first?["reason"], reason, "\(what): \(r.stderr)")
            } else {
                XCTAssertEqual(r.of("bundle").count, 0, "\(what): a no-op, no event: \(r.stderr)")
                XCTAssertEqual(r.of("bundle_unchanged").first?["version"], "2", "\(what): \(r.stderr)")
            }
            XCTAssertEqual(r.reasons, ["revoked"], "\(what): the bundle in force still revokes: \(r.stderr)")
            XCTAssertEqual(linked, "bundles/v2", what)
            XCTAssertEqual(keptFolders, ["v2"], what)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/bundles/v2/bundle.cose")), inForce, what)
        }
    }

    /// The topic: a retained bundle taken at connect, a newer one while running, the version in
    /// force on `<topic>/state`, a newer one this door cannot take shown there too.
    func testBundlesFromARetainedTopicOnMosquitto() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        let broker = try MosquittoBroker()
        let topic = "site/acme/bundle"
        func publish(_ path: String) throws {
            try site(["publish", "--file", path, "--topic", topic, "--host", "127.0.0.1", "--port", String(broker.port)])
        }
        try publish(try bundle(1, ["revoked": "mallory\n"]))
        let states = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-1/state")
        let mallory = try mint("mallory"), bob = try mint("bob")
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 5)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env([
            "KIOSK_CAMERA": "replay:" + fifo.path, "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": "kiosk/door-1",
            "KIOSK_SITE_TOPIC": topic,
        ]))
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("bundle"), kiosk.text)
        XCTAssertEqual(kiosk.of("bundle").first?["result"], "applied", kiosk.text)
        XCTAssertEqual(kiosk.of("bundle").first?["source"], "topic", kiosk.text)
        XCTAssertFalse(states.waitFor { $0.contains { $0.text.contains("\"bundle\":1,") } }.isEmpty)
        fifo.feed(try FleetEndToEndTests.frame(Array(mallory.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)

        try publish(try bundle(2, ["revoked": "mallory\nbob\n"]))
        XCTAssertTrue(kiosk.waitFor("bundle", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("bundle").last?["version"], "2", kiosk.text)
        XCTAssertTrue(kiosk.waitFor("reloaded", count: 2), kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(Array(bob.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertTrue(kiosk.waitFor("credential", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] ?? "" }, ["revoked", "revoked"], kiosk.text)

        // A newer bundle whose rules this door cannot read: refused, and the state says so.
        try publish(try bundle(3, ["access": "allow staff sometimes\n"]))
        XCTAssertTrue(kiosk.waitFor("bundle", count: 3), kiosk.text)
        XCTAssertEqual(kiosk.of("bundle").last?["reason"], "file", kiosk.text)
        let seen = states.waitFor { $0.contains { $0.text.contains("\"bundle\":2,\"bundle_refused\":3") } }
        XCTAssertTrue(seen.contains { $0.text.contains("\"bundle\":2,\"bundle_refused\":3") }, "\(seen.map(\.text))")
        XCTAssertEqual(linked, "bundles/v2")
        fifo.feed(try FleetEndToEndTests.frame(nil))  // the replay's end: the kiosk stops
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
    }

    /// The file changed while the kiosk runs: taken within the poll (a second or two), and on SIGHUP.
    func testAChangedBundleFileIsTakenWhileRunning() throws {
        let path = folder + "/site.cose"
        try FileManager.default.copyItem(atPath: try bundle(1, ["revoked": "x\n"]), toPath: path)
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 1)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + fifo.path, "KIOSK_BUNDLE_FILE": path]))
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("bundle"), kiosk.text)
        let start = Date()
        _ = rename(try bundle(2, ["revoked": "y\n"]), path)
        XCTAssertTrue(kiosk.waitFor("bundle", count: 2, seconds: 5), kiosk.text)
        XCTAssertLessThan(Date().timeIntervalSince(start), 3.5)
        XCTAssertEqual(kiosk.of("bundle").last?["version"], "2", kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reloaded").last?["revoked"], "1", kiosk.text)
        // SIGHUP: the file read again; the same version is no change.
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("reloaded", count: 3), kiosk.text)
        XCTAssertEqual(kiosk.of("bundle").count, 2, kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(nil))  // the replay's end: the kiosk stops
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
    }

    /// SIGKILL at many points while a bundle is applied (the test hook pauses after each step):
    /// each restart finds the old set or the new one, whole, and verified.
    func testASIGKILLAtAnyStepOfAnApplyLeavesTheOldSetOrTheNewWhole() throws {
        let oldFiles = ["revoked": "old\n", "trust/issuer-1.pem": issuerPEM]
        let newFiles = ["revoked": "new-1\nnew-2\n", "trust/issuer-1.pem": issuerPEM, "trust/pretix/fair.pem": try ed25519PEM(),
                        "access": "allow staff always\n"]
        let b1 = try bundle(1, oldFiles), b2 = try bundle(2, newFiles)
        var seenOld = 0, seenNew = 0
        for delayMs in stride(from: 0, through: 1_300, by: 100) {
            try? FileManager.default.removeItem(atPath: state)
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            let setUp = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([])), "KIOSK_BUNDLE_FILE": b1]))
            XCTAssertEqual(setUp.of("bundle").first?["result"], "applied", setUp.stderr)
            let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo-\(delayMs)", count: 1)
            let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + fifo.path, "KIOSK_BUNDLE_FILE": b2,
                                                                   "TEST_KIOSK_BUNDLE_STEP_MS": "100"]))
            XCTAssertTrue(kiosk.waitFor("bundle_applying"), kiosk.text)
            usleep(UInt32(delayMs) * 1000)
            kiosk.kill9()
            _ = kiosk.wait()
            // What a restart finds: verified again, whole.
            let check = try KioskProcess.run(["check"], env: env())
            XCTAssertEqual(check.status, 0, "after \(delayMs) ms: \(check.stderr)")
            XCTAssertFalse(check.stdout.contains("not used"), "after \(delayMs) ms: \(check.stdout)")
            if check.stdout.contains("# bundle: version 1 in force") {
                seenOld += 1
                XCTAssertTrue(check.stdout.contains("1 revoked"), check.stdout)
            } else if check.stdout.contains("# bundle: version 2 in force") {
                seenNew += 1
                XCTAssertTrue(check.stdout.contains("2 revoked") && check.stdout.contains("1 event keys"), check.stdout)
            } else {
                XCTFail("after \(delayMs) ms neither set: \(check.stdout)")
            }
            // And the kiosk starts with it, and takes the new one when it was not yet in force.
            let restart = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([])), "KIOSK_BUNDLE_FILE": b2]))
            XCTAssertEqual(restart.status, 0, restart.stderr)
            XCTAssertEqual(linked, "bundles/v2", restart.stderr)
            XCTAssertEqual(keptFolders, ["v2"], "what a kill left half written is removed")
        }
        print("crash: \(seenOld + seenNew) kills during an apply: \(seenOld) restarts found the old set whole, \(seenNew) the new one")
        XCTAssertGreaterThan(seenOld, 0, "no kill came before the switch")
        XCTAssertGreaterThan(seenNew, 0, "no kill came after the switch")
    }

    func ed25519PEM() throws -> String {
        let priv = folder + "/event-\(UUID().uuidString.prefix(4)).key", pub = priv + ".pem"
        try peer.keygen("EdDSA", privatePath: priv, publicPath: pub)
        return try String(contentsOfFile: pub, encoding: .utf8)
    }

    /// A fleet: 20 kiosk processes on one broker all take a bundle published once; the time from
    /// the publication to the last `applied` is measured and printed (a figure for the manual,
    /// not an assertion: it depends on the machine's load).
    func testTwentyKiosksAllApplyABundlePublishedOnce() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        let broker = try MosquittoBroker()
        let topic = "site/acme/bundle"
        let count = 20
        var kiosks: [(FleetEndToEndTests.LiveKiosk, FleetEndToEndTests.FifoReplay)] = []
        defer { for (k, _) in kiosks where k.process.isRunning { k.kill9() } }
        for i in 0..<count {
            let stateDir = folder + "/state-\(i)"
            try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
            let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo-\(i)", count: 1)
            let kiosk = try FleetEndToEndTests.LiveKiosk(env: env([
                "KIOSK_CAMERA": "replay:" + fifo.path, "STATE_DIRECTORY": stateDir, "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)",
                "KIOSK_MQTT_TOPIC": "kiosk/door-\(i)", "KIOSK_SITE_TOPIC": topic, "KIOSK_LOG_LEVEL": "info",
            ]))
            kiosks.append((kiosk, fifo))
        }
        for (k, _) in kiosks { XCTAssertTrue(k.waitFor("mqtt_connected", seconds: 60), k.text) }
        let path = try bundle(1, ["revoked": "mallory\n"])
        let start = Date()
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-q", "1", "-r", "-f", path])
        var last = start
        for (k, _) in kiosks {
            XCTAssertTrue(k.waitFor("bundle", seconds: 60), k.text)
            if !k.of("bundle").isEmpty { last = max(last, Date()) }
        }
        let ms = last.timeIntervalSince(start) * 1000
        for (i, (k, _)) in kiosks.enumerated() {
            XCTAssertEqual(k.of("bundle").first?["result"], "applied", "kiosk \(i): \(k.text)")
            XCTAssertEqual(k.of("bundle").first?["version"], "1", "kiosk \(i)")
            XCTAssertEqual(try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/state-\(i)/bundle"), "bundles/v1", "kiosk \(i)")
        }
        print("fleet: \(count) kiosks applied bundle v1 \(Int(ms)) ms after it was published (from mosquitto_pub's start)")
        for (k, fifo) in kiosks {
            fifo.feed(try FleetEndToEndTests.frame(nil))
            XCTAssertEqual(k.wait(), 0, k.text)
        }
    }
}
