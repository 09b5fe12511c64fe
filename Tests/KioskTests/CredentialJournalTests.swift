// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Foundation
@testable import Kiosk
import Platform
import Policy
import Systemd
import TestSupport
import XCTest

/// What journald would be given: the service in credentials mode, in-process, logging
/// to a journal sink, on replayed frames of credentials from the independent peer. Every field of
/// every entry (MESSAGE and the KIOSK_* fields) is free of the tokens; the `credential` entries
/// carry their fields for `journalctl KIOSK_EVENT=credential KIOSK_REASON=...`.
final class CredentialJournalTests: XCTestCase {
    final class Journal: JournalSink, @unchecked Sendable {  // the Logger holds its lock around send
        var entries: [[(name: String, value: [UInt8])]] = []
        func send(_ fields: [(name: String, value: [UInt8])]) -> Bool {
            entries.append(fields)
            return true
        }
        func of(_ event: String) -> [[String: String]] {
            entries.map { Dictionary($0.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }, uniquingKeysWith: { a, _ in a }) }
                .filter { $0["KIOSK_EVENT"] == event }
        }
    }

    func testTheJournalsFieldsNeverCarryAToken() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let folder = NSTemporaryDirectory() + "kiosk-cred-journal-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for d in ["trust", "state", "replay"] { try FileManager.default.createDirectory(atPath: folder + "/" + d, withIntermediateDirectories: true) }
        let peer = try CredentialPeer(python: python)
        try peer.keygen("EdDSA", privatePath: folder + "/k", publicPath: folder + "/trust/door.pem")
        let now = Int(Date().timeIntervalSince1970)
        func mint(_ claims: [String: Any]) throws -> String {
            try peer.sign(privatePath: folder + "/k", alg: "EdDSA", kid: "door", claims: ["2": "alice", "4": now + 600].merging(claims) { _, b in b })
        }
        let tokens = [try mint(["7": ["hex": "0a0b"]]), try mint(["4": now - 600, "5": now - 1200])]
        var frames = [try FleetEndToEndTests.frame(nil)]
        for t in tokens { frames += [try FleetEndToEndTests.frame(Array(t.utf8)), try FleetEndToEndTests.frame(nil)] }
        for (i, f) in frames.enumerated() { try Data(f).write(to: URL(fileURLWithPath: folder + String(format: "/replay/%04d.pgm", i))) }

        var c = Configuration()
        c.verdict = .credentials
        c.trustDir = folder + "/trust"
        c.revokedFile = folder + "/revoked"
        c.uprightROI = NormalizedRect(x: 0, y: 0, width: 1, height: 1)
        c.repeatMs = 0
        c.requireSyncedClock = false
        let (trust, problems) = CredentialFiles.load(c, [:])
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        let journal = Journal()
        let logger = Logger(level: .debug, journal: journal) { _ in XCTFail("nothing goes past the journal") }
        let clock = MonotonicClock()
        let verifier = CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: 0, trust: trust,
                                          store: UsedTokenStore(directory: folder + "/state"), clock: clock)
        let worker = CredentialWorker(verifier: verifier)
        let door = DoorReader(configuration: c, lines: .init(), logger: logger, clock: clock)
        let service = ScanService(configuration: c, source: ReplaySource(directory: folder + "/replay", fps: 30), features: ScanFeatures(door: door, credentials: worker), logger: logger, stop: StopSignal(), clock: MonotonicClock())
        XCTAssertEqual(try service.run(), .sourceEnded)
        worker.shutDown()

        XCTAssertEqual(journal.of("credential").map { $0["KIOSK_REASON"] }, ["valid", "expired"])
        XCTAssertEqual(journal.of("credential").first?["KIOSK_SUB"], "alice")
        XCTAssertEqual(journal.of("credential").first?["KIOSK_CTI"], "0a0b")
        XCTAssertEqual(journal.of("scan").map { $0["KIOSK_CREDENTIAL"] }, ["alice", "alice"])
        XCTAssertEqual(journal.of("verdict").map { $0["KIOSK_RESULT"] }, ["granted", "denied"])
        XCTAssertTrue(journal.of("scan").allSatisfy { $0["KIOSK_DATA"] == nil })
        for entry in journal.entries {
            for field in entry {
                let value = String(decoding: field.value, as: UTF8.self)
                for t in tokens {
                    let body = String(t.dropFirst(4))
                    XCTAssertFalse(value.contains(body.prefix(20)) || value.contains(body.suffix(20)), "\(field.name) carries a token")
                }
            }
        }
    }
}
