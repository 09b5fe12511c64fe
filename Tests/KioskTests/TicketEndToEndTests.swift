// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// Issue 34 on the built `kiosk` binary: event tickets minted by pretix itself (PyPI's pretix, its
/// Sig1TicketSecretGenerator: Tests/Peers/pretix_tickets.py), the events' keys written as
/// pretix's API gives them, shown as QR codes in replayed frames and judged by
/// `KIOSK_VERDICT=credentials` with the strike on simulated GPIO. Every output is searched for
/// the secrets.
final class TicketEndToEndTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var tickets: String { trust + "/pretix" }
    var state: String { folder + "/state" }
    var pretix: PretixPeer!
    /// Every secret shown: none may appear in any output.
    var secrets: [String] = []
    var now: Int { Int(Date().timeIntervalSince1970) }

    /// One pretix for the class (Django's start takes seconds); each test names its own events.
    nonisolated(unsafe) static var shared: PretixPeer?

    override func setUpWithError() throws {
        guard let python = PretixPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        folder = NSTemporaryDirectory() + "kiosk-ticket-e2e-\(UUID().uuidString.prefix(8))"
        for d in [tickets, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        if TicketEndToEndTests.shared == nil { TicketEndToEndTests.shared = try PretixPeer(python: python) }
        pretix = TicketEndToEndTests.shared
    }

    override func tearDownWithError() throws {
        pretix = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A new event at pretix; its key in the kiosk's trust directory as pretix's API gives it
    /// (`valid_keys.pretix_sig1`), unless `trusted` is false. Event names are made unique per test.
    @discardableResult
    func event(_ name: String, trusted: Bool = true) throws -> String {
        let (validKey, _) = try pretix.event(folder + name)
        if trusted { try (validKey + "\n").write(toFile: tickets + "/\(name).pem", atomically: true, encoding: .utf8) }
        return validKey
    }

    func mint(_ event: String, item: Int, variation: Int = 0, subevent: Int = 0, from: Int? = nil, until: Int? = nil) throws -> String {
        let s = try pretix.mint(event: folder + event, item: item, variation: variation, subevent: subevent, validFrom: from, validUntil: until)
        secrets.append(s)
        return s
    }

    func env(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state).merging(more) { _, b in b }
    }

    func replay(_ codes: [String], name: String = "replay") throws -> String {
        try DoorFixtures.replay(codes, at: folder + "/" + name)
    }

    func run(_ args: [String] = ["run"], env: [String: String]) throws -> KioskProcess.Run { try KioskProcess.run(args, env: env) }

    /// No secret, nor a 16-character piece of one's start or end, in `text`.
    func assertNoSecret(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for s in secrets {
            for piece in [s, String(s.prefix(16)), String(s.suffix(16)), String(s.dropFirst(40).prefix(16))] {
                XCTAssertFalse(text.contains(piece), "\(what) carries a ticket's secret (\(piece))", file: file, line: line)
            }
        }
    }

    // MARK: the tests

    func testEachTicketGetsItsVerdictAndOnlyTheValidOnesOpenTheDoor() throws {
        try event("conf")
        try event("elsewhere", trusted: false)
        let granted = try mint("conf", item: 42, variation: 7, subevent: 3, from: now - 3600, until: now + 3600)
        let open = try mint("conf", item: 43)
        let expired = try mint("conf", item: 42, from: now - 7200, until: now - 3600)
        let early = try mint("conf", item: 42, from: now + 3600, until: now + 7200)
        let stranger = try mint("elsewhere", item: 42)
        let revoked = try mint("conf", item: 42)
        // pretix's own framing and signature over a changed payload: item 42 made 43.
        let real = try XCTUnwrap(PretixSecret(Array((try mint("conf", item: 42)).utf8)))
        var payload = real.payload
        payload[try XCTUnwrap(payload.firstIndex(of: 0x2a))] = 0x2b
        let changed = PretixSecret.text(payload: payload, signature: real.signature)
        let garbage = try pretix.sign(event: folder + "conf", payload: Array("no protobuf here".utf8))
        secrets += [changed, garbage]
        try "# pretix's revokedsecrets\n\(revoked)\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            (granted, "valid"), (open, "valid"), (expired, "expired"), (early, "not yet valid"), (stranger, "signature"),
            (changed, "signature"), (revoked, "revoked"), (garbage, "malformed"), (granted, "used"),
        ]
        let r = try run(env: env(["KIOSK_CAMERA": "replay:" + (try replay(cases.map(\.0)))]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.reasons, cases.map(\.1), r.stderr)
        XCTAssertEqual(r.of("verdict").map { $0["result"] ?? "" }, cases.map { $0.1 == "valid" ? "granted" : "denied" })
        XCTAssertEqual(r.doorOpenings, 2, r.stderr)
        let first = try XCTUnwrap(r.of("credential").first)
        XCTAssertEqual(first["sub"], "pretix:conf:42")
        XCTAssertEqual(first["kid"], "conf")
        XCTAssertEqual(first["variation"], "7")
        XCTAssertEqual(first["subevent"], "3")
        XCTAssertEqual(Double(try XCTUnwrap(first["exp"].flatMap { Int($0) })), Double(now + 3600), accuracy: 120)
        XCTAssertEqual(r.of("credential")[1]["sub"], "pretix:conf:43")
        XCTAssertNil(r.of("credential")[1]["subevent"])
        XCTAssertEqual(r.of("credential")[7]["kid"], "conf", "the garbage was signed by the event's key")
        // The scan events: credential=pretix:NAME:ITEM and the hash, never data.
        let scans = r.of("scan")
        XCTAssertEqual(scans.count, cases.count)
        XCTAssertEqual(scans[0]["credential"], "pretix:conf:42")
        XCTAssertEqual(scans[0]["hash"]?.count, 16)
        XCTAssertNil(scans[0]["data"])
        XCTAssertNil(scans[4]["credential"], "nothing verified, nothing named")
        XCTAssertEqual(r.of("credentials_reloaded").first?["ticket_keys"], "1")
        assertNoSecret(r.stderr, "the log")
        assertNoSecret(r.stdout, "stdout")
    }

    func testTheDoorsRulesGiveTicketsTheirGroupsWithADateOfASeries() throws {
        try event("series")
        try """
            allow visitor always
            pretix 42 visitor subevent=3    # this door: the date 3 of the series
            pretix 50 visitor
            """.write(toFile: folder + "/access", atomically: true, encoding: .utf8)
        let cases = [
            (try mint("series", item: 42, subevent: 3), "valid"), (try mint("series", item: 42, subevent: 4), "no access"),
            (try mint("series", item: 50, variation: 2, subevent: 9), "valid"), (try mint("series", item: 51), "no access"),
        ]
        let r = try run(env: env(["KIOSK_ACCESS_FILE": folder + "/access", "KIOSK_CAMERA": "replay:" + (try replay(cases.map(\.0)))]))
        XCTAssertEqual(r.reasons, cases.map(\.1), r.stderr)
        XCTAssertEqual(r.of("credentials_reloaded").first?["rules"], "schedules=0 allow=1 lockdown_allow=0 unlock=0 pretix=2 holidays=0")
        let check = try run(["check"], env: env(["KIOSK_ACCESS_FILE": folder + "/access"]))
        XCTAssertTrue(check.stdout.contains("# access: pretix 42 visitor subevent=3"), check.stdout)
        assertNoSecret(r.stderr, "the log")
    }

    /// KIOSK_TICKET_ENTRIES=1 and 2: the entry is on disk when the door opens; a kiosk killed
    /// then still counts it after a restart.
    func testEntriesAreKeptAcrossASIGKILLAndARestart() throws {
        try event("gig")
        for entries in [1, 2] {
            let ticket = try mint("gig", item: 42, until: now + 3600)
            let e = env(["KIOSK_TICKET_ENTRIES": String(entries)])
            // A third frame is never fed: the kiosk waits for it, so the SIGKILL finds it running.
            let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo\(entries)", count: 3)
            let kiosk = try FleetEndToEndTests.LiveKiosk(env: e.merging(["KIOSK_CAMERA": "replay:" + fifo.path]) { _, b in b })
            XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
            fifo.feed(try FleetEndToEndTests.frame(Array(ticket.utf8)))
            XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
            fifo.feed(try FleetEndToEndTests.frame(nil))
            XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
            kiosk.kill9()
            XCTAssertEqual(kiosk.wait(), -SIGKILL)
            XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["valid"], kiosk.text)
            let again = try run(env: e.merging(["KIOSK_CAMERA": "replay:" + (try replay([ticket, ticket], name: "again\(entries)"))]) { _, b in b })
            XCTAssertEqual(again.reasons, entries == 1 ? ["used", "used"] : ["valid", "used"], "KIOSK_TICKET_ENTRIES=\(entries): " + again.stderr)
            XCTAssertEqual(again.doorOpenings, entries - 1)
            assertNoSecret(kiosk.text + again.stderr, "the log")
        }
        // The entries in the journal, a record each (KIOSK_TICKET_ENTRIES=2: twice).
        let store = try String(contentsOfFile: state + "/used-tokens.log", encoding: .utf8)
        XCTAssertEqual(Set(store.split(separator: "\n").filter { $0.hasPrefix("p:") }.map { $0.split(separator: " ")[0] }).count, 2, store)
        assertNoSecret(store, "the used-token store")
        // 0: any number, not counted.
        let free = try mint("gig", item: 42)
        let any = try run(env: env(["KIOSK_TICKET_ENTRIES": "0", "KIOSK_CAMERA": "replay:" + (try replay([free, free, free], name: "free"))]))
        XCTAssertEqual(any.reasons, ["valid", "valid", "valid"], any.stderr)
    }

    func testKeysReloadOnSIGHUPAndDoctorListsThem() throws {
        let confKey = try event("conf")
        let festKey = try event("fest", trusted: false)
        let ticket = try mint("fest", item: 7)
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 4)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + fifo.path]))
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(Array(ticket.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
        // fest's key arrives, as PEM this time (base64-decoded from its valid_keys).
        let pem = String(decoding: Base64.decode(festKey)!, as: UTF8.self)
        try pem.write(toFile: tickets + "/fest.pem", atomically: true, encoding: .utf8)
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reloaded").last?["ticket_keys"], "2", kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(Array(ticket.utf8)))
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
        XCTAssertEqual(kiosk.of("credential").map { $0["reason"] }, ["signature", "valid"], kiosk.text)
        XCTAssertEqual(kiosk.of("credential").last?["sub"], "pretix:fest:7")
        assertNoSecret(kiosk.text, "the log")

        let doctor = try run(["doctor"], env: env())
        XCTAssertTrue(doctor.stdout.contains("PASS pretix: event conf: Ed25519 key (base64 of PEM) in \(tickets)/conf.pem"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PASS pretix: event fest: Ed25519 key (PEM) in \(tickets)/fest.pem"), doctor.stdout)
        let check = try run(["check"], env: env(["KIOSK_TICKET_ENTRIES": "3"]))
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("# credentials: 0 keys, 0 revoked, 0 TOTP holders, 2 event keys (pretix)"), check.stdout)
        XCTAssertTrue(check.stdout.contains("KIOSK_TICKET_ENTRIES=3"), check.stdout)
        XCTAssertFalse(doctor.stdout.contains(confKey) || check.stdout.contains(confKey), "a key is named, not printed")
        // A file that is no event's key stops the start (78) and is named; a reload keeps the keys.
        try "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJAFfwV6lsXTgDgiBCKG7kJ/+1wQN\nR6ZQksFvNPynpVGAlhEqUesCNM80mdMLQA9E+5C3und48bJgbd4Pahb/rg==\n-----END PUBLIC KEY-----\n"
            .write(toFile: tickets + "/ec.pem", atomically: true, encoding: .utf8)
        let bad = try run(env: env(["KIOSK_CAMERA": "replay:" + (try replay([], name: "none"))]))
        XCTAssertEqual(bad.status, 78, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("pretix/ec.pem: a EC P-256 key: pretix_sig1 tickets are signed with Ed25519"), bad.stderr)
        let badDoctor = try run(["doctor"], env: env())
        XCTAssertTrue(badDoctor.stdout.contains("FAIL pretix: \(trust)/pretix/ec.pem: a EC P-256 key"), badDoctor.stdout)
    }

    /// The program and the broker hear of tickets without their secrets.
    func testTheProgramAndTheBrokerNeverSeeASecret() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        try event("conf")
        let broker = try MosquittoBroker()
        let topic = "kt-\(UUID().uuidString.prefix(6))/door"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/scan")
        let program = folder + "/program", heard = folder + "/heard"
        try "#!/bin/sh\n{ cat; echo \"env=$KIOSK_CODE|$KIOSK_CREDENTIAL_RESULT|$KIOSK_CREDENTIAL_SUB\"; } >> \(heard)\nexit 1\n"
            .write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        let good = try mint("conf", item: 42, subevent: 5), bad = try mint("conf", item: 42, from: now - 7200, until: now - 3600)
        let r = try run(env: env(["KIOSK_ON_SCAN": program, "KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic,
                                  "KIOSK_MQTT_DISCOVERY": "", "KIOSK_CAMERA": "replay:" + (try replay([good, bad]))]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.reasons, ["valid", "expired"], r.stderr)
        let messages = sub.waitFor { $0.filter { $0.topic == topic + "/scan" }.count >= 2 }.filter { $0.topic == topic + "/scan" }
        let scans = messages.map { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] ?? [:] }
        XCTAssertEqual(scans.count, 2)
        XCTAssertEqual(scans.first?["credential"] as? String, "pretix:conf:42")
        XCTAssertEqual((scans.first?["hash"] as? String)?.count, 16)
        XCTAssertNil(scans.first?["data"])
        XCTAssertNil(scans.first?["data_base64"])
        XCTAssertEqual(scans.map { $0["verdict"] as? String }, ["granted", "denied"])
        XCTAssertEventually("four lines from the scan program", within: 10) {
            ((try? String(contentsOfFile: heard, encoding: .utf8)) ?? "").split(separator: "\n").count >= 4
        }
        let said = (try? String(contentsOfFile: heard, encoding: .utf8)) ?? ""
        XCTAssertTrue(said.contains("result=granted reason=valid kid=conf sub=pretix:conf:42"), said)
        XCTAssertTrue(said.contains("subevent=5"), said)
        XCTAssertTrue(said.contains("|granted|pretix:conf:42"), said)
        XCTAssertTrue(said.contains("reason=expired"), said)
        assertNoSecret(said, "the program's stdin and environment")
        assertNoSecret(messages.map(\.text).joined(separator: "\n"), "the MQTT scan messages")
        assertNoSecret(r.stderr, "the log")
        let json = try run(env: env(["KIOSK_LOG_FORMAT": "json", "KIOSK_CAMERA": "replay:" + (try replay([good], name: "json"))]))
        XCTAssertTrue(json.stderr.contains("\"credential\":\"pretix:conf:42\""), json.stderr)
        assertNoSecret(json.stderr, "the JSON log")
    }
}
