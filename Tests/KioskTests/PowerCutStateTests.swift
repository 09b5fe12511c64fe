// SPDX-License-Identifier: Apache-2.0
import Commands
import Credentials
import Foundation
import Glibc
import Kiosk
import Policy
import TestSupport
import XCTest

/// Power cuts and the card, on the built `kiosk` binary: a state directory in RAM (/dev/shm, tmpfs) refuses
/// one-time credentials (`state volatile`) unless KIOSK_VOLATILE_STATE=accept, a value that is
/// neither is exit 78; a torn snapshot is said (`state_damaged`) and refuses them (`state
/// damaged`) while a credential without cti still opens; a log torn in its last record loses only
/// that record. And `doctor`'s state line, with injected readings.
final class PowerCutStateTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var peer: CredentialPeer!
    var shm = ""

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        folder = NSTemporaryDirectory() + "kiosk-powercut-\(UUID().uuidString.prefix(8))"
        shm = "/dev/shm/kiosk-powercut-\(UUID().uuidString.prefix(8))"
        for d in [trust, folder + "/state", shm] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
        try? FileManager.default.removeItem(atPath: shm)
    }

    var now: Int { Int(Date().timeIntervalSince1970) }

    func mint(_ claims: [String: Any] = [:]) throws -> String {
        var all: [String: Any] = ["1": "acme", "2": "alice", "4": now + 3600, "5": now - 60, "6": now - 60]
        all.merge(claims) { _, b in b }
        return try peer.sign(lib: "cwt", privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: all)
    }

    func run(_ codes: [String], state: String, _ more: [String: String] = [:], name: String = "replay") throws -> KioskProcess.Run {
        let env = DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_CAMERA": "replay:" + (try DoorFixtures.replay(codes, at: folder + "/" + name))]) { _, b in b }
            .merging(more) { _, b in b }
        return try KioskProcess.run(["run"], env: env)
    }

    func testAStateDirectoryInRAMRefusesOneTimeCredentialsUnlessAccepted() throws {
        guard StateDirectoryProbe.system.magicOf("/dev/shm") == StateDurability.tmpfsMagic else { throw XCTSkip("/dev/shm is not tmpfs here") }
        let once = try mint(["7": ["hex": "0e0e"]]), plain = try mint()
        let r = try run([once, plain], state: shm)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.of("credential").compactMap { $0["reason"] }, ["state volatile", "valid"], r.stderr)
        let v = try XCTUnwrap(r.of("state_volatile").first, r.stderr)
        XCTAssertEqual(v["folder"], shm)
        XCTAssertEqual(v["why"], "\(shm) is on tmpfs (in RAM)")
        XCTAssertTrue(v["lost"]?.contains("used one-time credentials") ?? false)
        let accepted = try run([once, once], state: shm, ["KIOSK_VOLATILE_STATE": "accept"], name: "accept")
        XCTAssertEqual(accepted.of("credential").compactMap { $0["reason"] }, ["valid", "used"], accepted.stderr)
        XCTAssertEqual(accepted.of("state_volatile").count, 1)
        let bad = try run([], state: shm, ["KIOSK_VOLATILE_STATE": "maybe"], name: "bad")
        XCTAssertEqual(bad.status, 78, bad.stderr)
        let e = try XCTUnwrap(bad.of("config_error").first, bad.stderr)
        XCTAssertEqual(e["var"], "KIOSK_VOLATILE_STATE")
        XCTAssertEqual(e["value"], "maybe")
        XCTAssertEqual(e["expected"], "refuse or accept")
        // On this folder (not in RAM) nothing is said.
        let disk = try run([once], state: folder + "/state", name: "disk")
        XCTAssertEqual(disk.of("state_volatile").count, 0, disk.stderr)
    }

    func testALockdownOnAStateDirectoryInRAMSaysItEndsAtTheNextPowerCut() throws {
        guard StateDirectoryProbe.system.magicOf("/dev/shm") == StateDurability.tmpfsMagic else { throw XCTSkip("/dev/shm is not tmpfs here") }
        try "kiosk-mode 1\nlockdown\n".write(toFile: shm + "/mode", atomically: true, encoding: .utf8)
        let r = try run([try mint()], state: shm)
        XCTAssertEqual(r.of("mode").compactMap { $0["mode"] }, ["lockdown"], r.stderr)
        XCTAssertEqual(r.of("state_volatile").compactMap { $0["lost"] }.last, "this lockdown: it ends at the next power cut", r.stderr)
        XCTAssertEqual(r.of("state_volatile").last?["folder"], shm)
    }

    func testATornModeFileKeepsALockdownAndSaysSo() throws {
        let state = folder + "/state"
        try "kiosk-mo".write(toFile: state + "/mode", atomically: true, encoding: .utf8)
        let r = try run([try mint()], state: state)
        XCTAssertEqual(r.of("mode").compactMap { $0["mode"] }, ["lockdown"], r.stderr)
        let d = try XCTUnwrap(r.of("state_damaged").first, r.stderr)
        XCTAssertEqual(d["file"], state + "/mode")
        XCTAssertTrue(d["did"]?.hasPrefix("kept the door in lockdown") ?? false, r.stderr)
        XCTAssertEqual(r.of("credential").compactMap { $0["reason"] }, ["lockdown"])
    }

    func testATornSnapshotRefusesAndATornLogRecordIsDropped() throws {
        let state = folder + "/state"
        let a = try mint(["7": ["hex": "0a"]]), b = try mint(["7": ["hex": "0b"]]), plain = try mint()
        XCTAssertEqual(try run([a, b], state: state, name: "first").of("credential").compactMap { $0["reason"] }, ["valid", "valid"])
        // The last record torn (a cut during b's grant, before its door opened): a is kept, b is not.
        let log = state + "/used-tokens.log"
        let whole = try Data(contentsOf: URL(fileURLWithPath: log))
        try whole.prefix(whole.count - 5).write(to: URL(fileURLWithPath: log))
        let torn = try run([a, b], state: state, name: "torn")
        XCTAssertEqual(torn.of("credential").compactMap { $0["reason"] }, ["used", "valid"], torn.stderr)
        XCTAssertEqual(torn.of("state_damaged").first?["file"], log, torn.stderr)
        XCTAssertTrue(torn.of("state_damaged").first?["did"]?.hasPrefix("recovered 1 of 1 complete records, dropped a torn tail of") ?? false, torn.stderr)
        // A snapshot of zero length: said, one-time credentials refused, a credential without cti opens.
        try Data().write(to: URL(fileURLWithPath: state + "/used-tokens"))
        let zero = try run([try mint(["7": ["hex": "0c"]]), plain], state: state, name: "zero")
        XCTAssertEqual(zero.status, 0, zero.stderr)
        XCTAssertEqual(zero.of("credential").compactMap { $0["reason"] }, ["state damaged", "valid"], zero.stderr)
        let d = try XCTUnwrap(zero.of("state_damaged").first, zero.stderr)
        XCTAssertEqual(d["file"], state + "/used-tokens")
        XCTAssertEqual(d["level"], "error")
        XCTAssertEqual(zero.doorOpenings, 1)
    }

    func testDoctorFailsAStateDirectoryInRAM() {
        // A scanner that keeps nothing there (no credentials, no strike, no broker): a warning.
        var plain = Doctor(configuration: Configuration())
        plain.environment = ["STATE_DIRECTORY": "/var/lib/kiosk"]
        plain.stateProbe = StateDirectoryProbe(magicOf: { _ in StateDurability.tmpfsMagic }, mountinfo: { nil })
        XCTAssertTrue(plain.state().map(\.line)[0].hasPrefix("WARN state: /"), "\(plain.state())")
        var config = Configuration()
        config.verdict = .credentials
        var d = Doctor(configuration: config)
        d.environment = ["STATE_DIRECTORY": "/var/lib/kiosk"]
        d.stateProbe = StateDirectoryProbe(magicOf: { _ in StateDurability.tmpfsMagic }, mountinfo: { nil })
        let line = d.state().map(\.line)
        XCTAssertEqual(line.count, 1)
        XCTAssertTrue(line[0].hasPrefix("FAIL state: /"), line[0])
        XCTAssertTrue(line[0].contains("KIOSK_VOLATILE_STATE=refuse"), line[0])
        d.stateProbe = StateDirectoryProbe(magicOf: { _ in 0xEF53 }, mountinfo: { nil })
        XCTAssertTrue(d.state().map(\.line)[0].hasPrefix("PASS state: "), "\(d.state())")
    }
}
