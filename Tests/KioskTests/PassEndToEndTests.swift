// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// Issue 43 on the built `kiosk` binary: passes made by the independent peer (harness/pass/peer.py:
/// `cryptography`, `cbor2`, `cwt`; no code of the kiosk's), drawn as byte-mode QR codes into
/// replayed frames, judged by `KIOSK_VERDICT=credentials` with the strike on simulated GPIO.
/// Every reason the contract gives a pass, the events' new fields, and no pass's bytes in any
/// output.
final class PassEndToEndTests: XCTestCase {
    var fixture: PassFolder!
    var folder: String { fixture.path }
    var trust: String { fixture.trust }
    var state: String { fixture.state }
    var holders: String { fixture.holders }
    var peer: PassPeer { fixture.peer }
    /// Every pass shown: none may appear in any output.
    var shown: [[UInt8]] = []

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        fixture = try PassFolder(name: "kiosk-pass-e2e")
    }
    override func tearDown() { fixture?.remove() }

    var now: Int { Int(Date().timeIntervalSince1970) }

    func env(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_HOLDERS_FILE": holders, "KIOSK_CREDENTIAL_AUDIENCE": "door-1"]) { _, b in b }.merging(more) { _, b in b }
    }

    /// A replay folder of 480-pixel frames: an empty one, then each payload's QR code (its exact
    /// bytes, one 8-bit segment) followed by an empty frame.
    func replay(_ payloads: [[UInt8]], name: String = "replay") throws -> String {
        let dir = folder + "/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var frames = [try FleetEndToEndTests.frame(nil, size: 480)]
        for p in payloads { frames += [try FleetEndToEndTests.frame(p, size: 480), try FleetEndToEndTests.frame(nil, size: 480)] }
        for (i, f) in frames.enumerated() { try Data(f).write(to: URL(fileURLWithPath: dir + String(format: "/%04d.pgm", i))) }
        shown += payloads
        return dir
    }

    func credential(_ claims: [String: Any] = [:], key: String = "issuer.key", holder: PassPeer.Holder?) throws -> [UInt8] {
        try fixture.credential(claims, key: key, holder: holder, now: now)
    }

    /// No pass, nor 12 bytes of its CBOR (as hex or as the raw bytes), in `text`.
    func assertNoPass(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(text.utf8)
        for p in shown {
            let body = Array(p.dropFirst(4))
            for piece in [Array(body.prefix(12)), Array(body.suffix(12))] where piece.count == 12 {
                XCTAssertFalse(text.contains(PayloadBytes.hex(piece)), "\(what) carries a pass as hex", file: file, line: line)
                XCTAssertFalse(bytes.indices.contains { bytes[$0...].starts(with: piece) }, "\(what) carries a pass's bytes", file: file, line: line)
            }
        }
    }

    func testEveryReasonOfAPassOnTheReleaseBinary() throws {
        let alice = try peer.holder(privatePath: folder + "/alice.key"), bob = try peer.holder(privatePath: folder + "/bob.key", compressed: true)
        let eve = try peer.holder(privatePath: folder + "/eve.key"), mallory = try peer.holder(privatePath: folder + "/mallory.key")
        let carol = try peer.holder(privatePath: folder + "/carol.key")
        try peer.issuer(privatePath: folder + "/forger.key", publicPath: folder + "/forger.pem")
        try "alice \(alice.key) groups=staff\nbob \(bob.key)\nmallory \(mallory.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        try "mallory\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let slot = Int64(now / 5)
        let granted = try peer.pass(form: 2, holder: alice, slot: slot)
        let carolsCredential = try credential(["2": "carol", "7": ["hex": "0ca201"]], holder: carol)
        let kc1 = Array(("KC1:" + Base45.encode(carolsCredential)).utf8)
        let good = try peer.pass(form: 2, holder: bob, slot: slot)
        let oversized = Pass.encode(form: .selfContained, credential: [0x84] + [UInt8](repeating: 0x41, count: 1050), slot: slot,
                                    proof: [UInt8](repeating: 7, count: 64))
        let cases: [([UInt8], String)] = [
            (granted, "valid"),
            (granted, "used"),
            (try peer.pass(form: 2, holder: alice, slot: slot, malleate: true), "used"),
            (try peer.pass(form: 2, holder: alice, slot: slot - 7), "stale"),
            (try peer.pass(form: 2, holder: alice, signer: eve, slot: slot + 1), "holder signature"),
            (try peer.pass(form: 1, credential: try credential(["2": "dave"], key: "forger.key", holder: alice), holder: alice, slot: slot), "signature"),
            (try peer.pass(form: 2, holder: mallory, slot: slot), "revoked"),
            (kc1, "no proof"),
            (Array(good.dropLast(3)), "malformed"),
            (oversized, "malformed"),
            (try peer.pass(form: 1, credential: carolsCredential, holder: carol, slot: slot), "valid"),
            (good, "valid"),
        ]
        XCTAssertGreaterThan(oversized.count, Pass.maxBytes)
        let r = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay(cases.map(\.0)))]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.reasons, cases.map(\.1), r.stderr)
        XCTAssertEqual(r.doorOpenings, 3, r.stderr)
        let events = r.of("credential")
        guard events.count == cases.count else { return }
        XCTAssertEqual(events[0]["form"], "pass2")
        XCTAssertEqual(events[0]["holder"], "alice")
        XCTAssertEqual(events[0]["sub"], "alice")
        XCTAssertNotNil(events[0]["skew_s"].flatMap { Int($0) }.map { (-15...5).contains($0) }, r.stderr)
        XCTAssertEqual(events[10]["form"], "pass1")
        XCTAssertEqual(events[10]["sub"], "carol")
        XCTAssertEqual(events[10]["cti"], "0ca201")
        XCTAssertNil(events[10]["holder"])
        XCTAssertEqual(events[7]["sub"], "carol", "the KC1 credential's signature verified: its sub is said")
        XCTAssertNil(events[7]["form"])
        XCTAssertEqual(r.of("credentials_reloaded").first?["pass_holders"], "3")
        // The scan events: credential=SUB or the holder's NAME and the hash, never the data.
        let scans = r.of("scan")
        XCTAssertEqual(scans.count, cases.count)
        XCTAssertEqual(scans.first?["credential"], "alice")
        XCTAssertEqual(scans.first?["hash"]?.count, 16)
        for s in scans { XCTAssertNil(s["data"] ?? s["data_hex"], "\(s)") }
        assertNoPass(r.stderr, "the log")
        assertNoPass(r.stdout, "stdout")
        // The state holds the slots (public facts), no pass and no key.
        // The snapshot and the log appended to since (each grant's record).
        let store = ["/used-tokens", "/used-tokens.log"].compactMap { try? String(contentsOfFile: state + $0, encoding: .utf8) }.joined()
        XCTAssertFalse(store.isEmpty, "the used-token store holds the slots")
        XCTAssertTrue(store.contains("s:3:" + PayloadBytes.hex(Array("alice".utf8))), store)
        assertNoPass(store, "the used-token store")
        assertNoSecretOnTheDoor(holderKeys: ["alice.key", "bob.key", "eve.key", "mallory.key", "carol.key"])
    }

    /// The door holds public keys only: no file of its state, trust directory or holders file is
    /// a private key, nor holds the body of any holder's private key (the keys the phones keep).
    func assertNoSecretOnTheDoor(holderKeys: [String], file: StaticString = #filePath, line: UInt = #line) {
        let bodies = holderKeys.compactMap { try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
            .map { $0.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined() }
        XCTAssertEqual(bodies.count, holderKeys.count, "the peer wrote every holder's private key", file: file, line: line)
        var looked = 0
        for root in [state, trust, holders] {
            var paths = [root]
            if let walk = FileManager.default.enumerator(atPath: root) { paths = walk.compactMap { root + "/" + ($0 as! String) } + [root] }
            for path in paths {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                looked += 1
                let text = String(decoding: data, as: UTF8.self)
                XCTAssertFalse(text.contains("PRIVATE KEY"), "\(path) holds a private key", file: file, line: line)
                for body in bodies where !body.isEmpty {
                    XCTAssertFalse(text.replacingOccurrences(of: "\n", with: "").contains(body), "\(path) holds a holder's private key", file: file, line: line)
                }
            }
        }
        XCTAssertGreaterThanOrEqual(looked, 3, "the state, the trust directory and the holders file were read", file: file, line: line)
    }

    /// `deploy/examples/issue-credential` with the peers' python.
    func issueCredential(_ args: [String]) throws -> (status: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CredentialPeer.python!)
        p.arguments = [Checkout.root.appendingPathComponent("deploy/examples/issue-credential").path] + args
        p.standardError = FileHandle.nullDevice
        let run = try Child.run(p)
        return (run.status, run.output)
    }

    func testCheckCountsTheHoldersAndAWrongWindowStopsTheKiosk() throws {
        let alice = try peer.holder(privatePath: folder + "/alice.key"), bob = try peer.holder(privatePath: folder + "/bob.key", compressed: true)
        // The admin's tool writes the lines, from the page's link or the bare key.
        XCTAssertEqual(try issueCredential(["holder", "add", "--name", "alice", "--key", alice.link, "--file", holders]).status, 0)
        XCTAssertEqual(try issueCredential(["holder", "add", "--name", "bob", "--key", bob.key, "--groups", "night", "--file", holders]).status, 0)
        XCTAssertEqual(try issueCredential(["holder", "add", "--name", "eve", "--key", bob.key, "--file", holders]).status, 1, "a key listed already")
        var offCurve = Array(alice.key)
        offCurve[offCurve.count - 2] = offCurve[offCurve.count - 2] == "A" ? "B" : "A"
        XCTAssertEqual(try issueCredential(["holder", "add", "--name", "eve", "--key", String(offCurve), "--file", holders]).status, 1, "not a point")
        XCTAssertEqual(try String(contentsOfFile: holders, encoding: .utf8).split(separator: "\n").count, 2)
        let check = try KioskProcess.run(["check"], env: env())
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("2 pass holders"), check.stdout)
        let doctor = try KioskProcess.run(["doctor"], env: env())
        XCTAssertTrue(doctor.stdout.contains("PASS holders: \(holders): 2 pass holders (public keys)"), doctor.stdout)
        for (value, status) in [("4", Int32(78)), ("121", 78), ("fifteen", 78), ("120", 0)] {
            let r = try KioskProcess.run(["check"], env: env(["KIOSK_PASS_WINDOW_S": value]))
            XCTAssertEqual(r.status, status, r.stderr)
            if status == 78 {
                XCTAssertTrue(r.stderr.contains("KIOSK_PASS_WINDOW_S") && r.stderr.contains(value) && r.stderr.contains("seconds from 5 to 120"), r.stderr)
            }
        }
        // A bad line stops the kiosk, named by its number.
        try "alice \(alice.key)\nbob AAAA\n".write(toFile: holders, atomically: true, encoding: .utf8)
        let bad = try KioskProcess.run(["check"], env: env())
        XCTAssertEqual(bad.status, 78)
        XCTAssertTrue(bad.stderr.contains("KIOSK_HOLDERS_FILE") && bad.stderr.contains("line 2"), bad.stderr)
    }

    func testSIGHUPReloadsTheHolders() throws {
        let alice = try peer.holder(privatePath: folder + "/alice.key"), bob = try peer.holder(privatePath: folder + "/bob.key")
        try "alice \(alice.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 2, size: 480)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + fifo.path]))
        // `ready` (after the first frame, 0000.pgm): the reload is registered by then. A SIGHUP
        // between the credentials' first load and that is ignored (signal_ignored): under
        // qemu-user the arm64 tier's SIGHUP fell there after `credentials_reloaded`.
        XCTAssertTrue(kiosk.waitFor("ready"), kiosk.text)
        try "alice \(alice.key)\nbob \(bob.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("reloaded"), kiosk.text)
        let pass = try peer.pass(form: 2, holder: bob, slot: Int64(now / 5))
        shown.append(pass)
        fifo.feed(try FleetEndToEndTests.frame(pass, size: 480))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(nil, size: 480))
        _ = kiosk.wait()
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["valid"], kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reloaded").last?["pass_holders"], "2", kiosk.text)
        assertNoPass(kiosk.text, "the log")
    }
}
