// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Foundation
import Platform
import Policy
import TestSupport
import XCTest

/// Event tickets in the verifier, in-process, on tickets pretix itself minted (PyPI's
/// pretix: its Sig1TicketSecretGenerator with a stand-in event, Tests/Peers/pretix_tickets.py),
/// the events' keys as pretix's API gives them; an injected wall clock and clock state.
final class TicketVerifierTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var tickets: String { trust + "/pretix" }
    var state: String { folder + "/state" }
    var pretix: PretixPeer!

    /// One pretix for the class: Django's start takes seconds; events are named anew by each test.
    nonisolated(unsafe) static var shared: PretixPeer?

    override func setUpWithError() throws {
        guard let python = PretixPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        folder = NSTemporaryDirectory() + "kiosk-ticket-\(UUID().uuidString.prefix(8))"
        for d in [tickets, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        if TicketVerifierTests.shared == nil { TicketVerifierTests.shared = try PretixPeer(python: python) }
        pretix = TicketVerifierTests.shared
    }

    override func tearDownWithError() throws {
        pretix = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    final class Synced: ClockSynchronization, @unchecked Sendable {
        var value = true
        var isSynchronized: Bool { value }
    }

    final class Wall: @unchecked Sendable { var now: Int64 = 1_800_000_000 }

    func b(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// An event of pretix's, its key written as pretix's API gives it (base64 of the PEM) or as PEM.
    @discardableResult
    func event(_ name: String, file: String? = nil, asPEM: Bool = false) throws -> String {
        let (validKey, pem) = try pretix.event(name)
        try (asPEM ? pem : validKey + "\n").write(toFile: tickets + "/" + (file ?? name + ".pem"), atomically: true, encoding: .utf8)
        return validKey
    }

    func verifier(_ c: Configuration = Configuration(), wall: Wall = Wall(), synced: Synced = Synced(), clock: ManualClock = ManualClock())
        throws -> CredentialVerifier {
        var c = c
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        c.verdict = .credentials
        let (t, problems) = CredentialFiles.load(c, [:])
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        return CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: c.antipassbackS, trust: t,
                                  store: UsedTokenStore(directory: state), clock: clock, wallClock: { wall.now }, synchronization: synced)
    }

    func testPretixsTicketsAreJudgedAsPretixMeantThem() throws {
        XCTAssertEqual(try pretix.version(), "2026.8.0", "the pin in the Makefile")
        try event("conf")
        try event("other")
        let wall = Wall(), synced = Synced()
        let now = Int(wall.now)
        let v = try verifier(wall: wall, synced: synced)
        let granted = try pretix.mint(event: "conf", item: 42, variation: 7, subevent: 3, validFrom: now - 3600, validUntil: now + 3600)
        let open = try pretix.mint(event: "conf", item: 43)
        let expired = try pretix.mint(event: "conf", item: 42, validFrom: now - 7200, validUntil: now - 3600)
        let early = try pretix.mint(event: "conf", item: 42, validFrom: now + 3600, validUntil: now + 7200)
        _ = try pretix.event("stranger")  // an event whose key this door does not have
        let elsewhere = try pretix.mint(event: "stranger", item: 42)
        let otherTrusted = try pretix.mint(event: "other", item: 5)

        let o = v.verify(b(granted))
        XCTAssertEqual(o.reason, .valid)
        XCTAssertEqual(o.kind, .ticket)
        XCTAssertEqual(o.kid, "conf")
        XCTAssertEqual(o.sub, "pretix:conf:42")
        XCTAssertEqual(o.exp, Int64(now + 3600))
        XCTAssertEqual(o.variation, 7)
        XCTAssertEqual(o.subevent, 3)
        XCTAssertEqual(o.hash, CredentialVerifier.shortHash(b(granted)))
        let openOutcome = v.verify(b(open))
        XCTAssertEqual(openOutcome.reason, .valid, "open-ended: no valid from, no valid until")
        XCTAssertNil(openOutcome.exp)
        XCTAssertNil(openOutcome.variation)
        XCTAssertNil(openOutcome.subevent)
        XCTAssertEqual(v.verify(b(expired)).reason, .expired)
        XCTAssertEqual(v.verify(b(early)).reason, .notYetValid)
        let other = v.verify(b(otherTrusted))
        XCTAssertEqual(other.reason, .valid, "each event's key is tried")
        XCTAssertEqual(other.sub, "pretix:other:5")
        XCTAssertEqual(other.kid, "other")
        let stranger = v.verify(b(elsewhere))
        XCTAssertEqual(stranger.reason, .signature, "another event's ticket: no trusted key signed it")
        XCTAssertNil(stranger.sub, "nothing is read of a payload no trusted key signed")
        // Within the skew, and just past it.
        let edge = try pretix.mint(event: "conf", item: 42, validFrom: now + 30, validUntil: now + 100)
        XCTAssertEqual(v.verify(b(edge)).reason, .valid)
        wall.now += 131
        XCTAssertEqual(v.verify(b(edge)).reason, .expired)
        // A time-bound ticket waits for a synchronised clock; an open-ended one does not.
        wall.now = Int64(now)
        synced.value = false
        XCTAssertEqual(v.verify(b(try pretix.mint(event: "conf", item: 42, validUntil: now + 60))).reason, .clockNotSynchronized)
        XCTAssertEqual(v.verify(b(try pretix.mint(event: "conf", item: 42))).reason, .valid)
    }

    func testAPayloadChangedUnderItsSignatureIsRefused() throws {
        try event("conf")
        let v = try verifier()
        let secret = try pretix.mint(event: "conf", item: 42)
        let s = try XCTUnwrap(PretixSecret(b(secret)))
        XCTAssertEqual(v.verify(b(secret)).reason, .valid)
        // The item 42 (0x2a) made 43, every other byte as pretix signed it.
        var payload = s.payload
        let at = try XCTUnwrap(payload.firstIndex(of: 0x2a))
        payload[at] = 0x2b
        XCTAssertEqual(try PretixTicket(payload: payload).item, 43, "still a well-formed ticket")
        let changed = PretixSecret.text(payload: payload, signature: s.signature)
        XCTAssertEqual(v.verify(b(changed)).reason, .signature)
        var signature = s.signature
        signature[10] ^= 1
        XCTAssertEqual(v.verify(b(PretixSecret.text(payload: s.payload, signature: signature))).reason, .signature)
        XCTAssertEqual(v.verify(b(secret)).reason, .used, "the real one was counted once")
    }

    func testARevokedSecretAsPretixListsItIsDenied() throws {
        try event("conf")
        let old = try pretix.mint(event: "conf", item: 42), new = try pretix.mint(event: "conf", item: 42)
        // What pretix's revokedsecrets API gives, one `secret` a line.
        try "# revoked by pretix\n\(old)\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let v = try verifier()
        XCTAssertEqual(v.verify(b(old)).reason, .revoked)
        XCTAssertEqual(v.verify(b(new)).reason, .valid)
        // Revoked before it could use up an entry: the store has only the new one.
        XCTAssertEqual(v.store.count, 1)
    }

    func testEntriesAreCountedOneTwoOrNot() throws {
        try event("conf")
        let once = try pretix.mint(event: "conf", item: 42), twice = try pretix.mint(event: "conf", item: 42)
        let v1 = try verifier()
        XCTAssertEqual([v1.verify(b(once)).reason, v1.verify(b(once)).reason], [.valid, .used], "KIOSK_TICKET_ENTRIES=1 (the default)")
        var c = Configuration()
        c.ticketEntries = 2
        let v2 = try verifier(c)
        XCTAssertEqual([v2.verify(b(twice)).reason, v2.verify(b(twice)).reason, v2.verify(b(twice)).reason], [.valid, .valid, .used])
        XCTAssertEqual(v2.verify(b(once)).reason, .valid, "the store counted once for it; two are allowed now")
        c.ticketEntries = 0
        let unlimited = try pretix.mint(event: "conf", item: 42)
        let v0 = try verifier(c)
        for _ in 0..<5 { XCTAssertEqual(v0.verify(b(unlimited)).reason, .valid, "KIOSK_TICKET_ENTRIES=0: not counted") }
        XCTAssertEqual(v0.store.uses(of: try ticketKey(unlimited)), 0)
        // A restart reads the counts back.
        c.ticketEntries = 2
        let again = try verifier(c)
        XCTAssertEqual(again.store.uses(of: try ticketKey(twice)), 2)
        XCTAssertEqual(again.verify(b(twice)).reason, .used)
    }

    func ticketKey(_ secret: String) throws -> String {
        UsedTokens.ticketKey(payloadDigest: try Crypto.sha256(try XCTUnwrap(PretixSecret(b(secret))).payload))
    }

    func testAnEntryLastsAsLongAsTheTicketAndAntipassbackIsPerTicket() throws {
        try event("conf")
        let wall = Wall(), clock = ManualClock()
        var c = Configuration()
        c.ticketEntries = 2
        c.antipassbackS = 60
        let v = try verifier(c, wall: wall, clock: clock)
        let now = Int(wall.now)
        let a = try pretix.mint(event: "conf", item: 42, validUntil: now + 100), b2 = try pretix.mint(event: "conf", item: 42)
        XCTAssertEqual(v.verify(b(a)).reason, .valid)
        XCTAssertEqual(v.verify(b(b2)).reason, .valid, "antipassback is the ticket's, not the item's")
        XCTAssertEqual(v.verify(b(a)).reason, .antipassback)
        clock.advance(to: clock.now() + 61_000_000_000)
        XCTAssertEqual(v.verify(b(a)).reason, .valid)
        // Past its validity the entry is dropped from the store (the ticket is expired anyway).
        wall.now += 200
        _ = v.verify(b(b2))
        XCTAssertEqual(v.store.uses(of: try ticketKey(a)), 0)
    }

    func testTheDoorsRulesGiveATicketItsGroup() throws {
        try event("conf")
        let rules = folder + "/access"
        try """
            allow visitor always
            allow vip     always
            pretix 42        visitor
            pretix 42/7      vip
            pretix 50 visitor subevent=3
            """.write(toFile: rules, atomically: true, encoding: .utf8)
        var c = Configuration()
        c.accessFile = rules
        c.ticketEntries = 0
        let v = try verifier(c)
        let cases: [(Int, Int, Int, CredentialReason)] = [
            (42, 0, 0, .valid), (42, 7, 0, .valid), (42, 9, 12, .valid), (43, 0, 0, .noAccess),
            (50, 0, 3, .valid), (50, 0, 4, .noAccess), (50, 0, 0, .noAccess),
        ]
        for (item, variation, subevent, reason) in cases {
            let t = try pretix.mint(event: "conf", item: item, variation: variation, subevent: subevent)
            XCTAssertEqual(v.verify(b(t)).reason, reason, "\(item)/\(variation) subevent \(subevent)")
        }
        // A ticket refused by the rules does not use up an entry.
        c.ticketEntries = 1
        let counted = try verifier(c)
        let t = try pretix.mint(event: "conf", item: 43)
        XCTAssertEqual(counted.verify(b(t)).reason, .noAccess)
        XCTAssertEqual(counted.store.uses(of: try ticketKey(t)), 0)
    }

    func testKeysAsPEMOrAsPretixsBase64AndWhatIsNoKey() throws {
        let validKey = try event("conf")
        try event("fest", file: "fest.pem", asPEM: true)
        try event("fest", file: "fest.2.pem")  // a second key of the same event (pretix rotated it)
        try "ignored".write(toFile: tickets + "/README", atomically: true, encoding: .utf8)
        try validKey.write(toFile: tickets + "/.hidden.pem", atomically: true, encoding: .utf8)
        var (keys, problems) = TicketKeys.load(trustDir: trust)
        XCTAssertEqual(problems.map(\.description), [])
        XCTAssertEqual(keys.map { "\($0.name) \($0.file) \($0.form) \($0.key.kind.rawValue)" },
                       ["conf conf.pem base64 of PEM Ed25519", "fest fest.2.pem base64 of PEM Ed25519", "fest fest.pem PEM Ed25519"])
        // The second key of fest signs too: both are tried.
        let v = try verifier()
        XCTAssertEqual(v.verify(b(try pretix.mint(event: "fest", item: 1))).sub, "pretix:fest:1")
        // An API answer pasted with line breaks in its base64 is the same key.
        let wrapped = stride(from: 0, to: validKey.count, by: 64).map { String(Array(validKey)[$0..<min($0 + 64, validKey.count)]) }.joined(separator: "\n")
        try wrapped.write(toFile: tickets + "/conf.pem", atomically: true, encoding: .utf8)
        XCTAssertEqual(TicketKeys.load(trustDir: trust).keys.count, 3)
        // What is no event's key: said for its file.
        try "not a key".write(toFile: tickets + "/bad.pem", atomically: true, encoding: .utf8)
        // The base64 of a key's DER, not of its PEM.
        try "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJAFfwV6lsXTgDgiBCKG7kJ/+1wQNR6ZQksFvNPynpVGAlhEqUesCNM80mdMLQA9E+5C3und48bJgbd4Pahb/rg=="
            .write(toFile: tickets + "/raw.pem", atomically: true, encoding: .utf8)
        try "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJAFfwV6lsXTgDgiBCKG7kJ/+1wQN\nR6ZQksFvNPynpVGAlhEqUesCNM80mdMLQA9E+5C3und48bJgbd4Pahb/rg==\n-----END PUBLIC KEY-----\n"
            .write(toFile: tickets + "/ec.pem", atomically: true, encoding: .utf8)
        try validKey.write(toFile: tickets + "/a b.pem", atomically: true, encoding: .utf8)
        (keys, problems) = TicketKeys.load(trustDir: trust)
        XCTAssertEqual(keys.count, 3)
        XCTAssertEqual(problems.map(\.file), ["pretix/a b.pem", "pretix/bad.pem", "pretix/ec.pem", "pretix/raw.pem"])
        XCTAssertTrue(problems[2].reason.contains("a EC P-256 key: pretix_sig1 tickets are signed with Ed25519"), problems[2].reason)
        XCTAssertTrue(problems[3].reason.contains("neither a PEM public key nor the base64 of one"), problems[3].reason)
        // The kiosk refuses to start on them (exit 78 at the edge); a reload keeps what it had.
        var c = Configuration()
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        XCTAssertEqual(CredentialFiles.load(c, [:]).problems.count, 4)
        // No pretix folder at all: no tickets, no problem; a trust directory with only events' keys is enough.
        try FileManager.default.removeItem(atPath: tickets)
        XCTAssertTrue(TicketKeys.load(trustDir: trust).problems.isEmpty)
        XCTAssertEqual(CredentialFiles.load(c, [:]).problems.map(\.reason), [
            "no issuer key (KID.pem) there, no event's key (pretix/NAME.pem) and no TOTP secret: no credential could be granted",
        ])
        XCTAssertEqual(TicketKeys.name(fromFileName: "conf.pem"), "conf")
        XCTAssertEqual(TicketKeys.name(fromFileName: "conf.12.pem"), "conf")
        XCTAssertEqual(TicketKeys.name(fromFileName: "conf-2026.pem"), "conf-2026")
        XCTAssertNil(TicketKeys.name(fromFileName: "con:f.pem"), "':' would make pretix:NAME:ITEM ambiguous")
        XCTAssertNil(TicketKeys.name(fromFileName: ".pem"))
    }

    func testNoEventKeyIsUnknownKeyAndHostileTicketsAreMalformed() throws {
        try event("conf")
        let secret = try pretix.mint(event: "conf", item: 42)
        // Only an issuer's key: a ticket is an unknown key's.
        try FileManager.default.removeItem(atPath: tickets)
        try "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA2VnyoS23a1nXdCROMN4SrfuKWLRl3dINA4+bIM3NewI=\n-----END PUBLIC KEY-----\n"
            .write(toFile: trust + "/issuer.pem", atomically: true, encoding: .utf8)
        XCTAssertEqual(try verifier().verify(b(secret)).reason, .unknownKey)
        try FileManager.default.createDirectory(atPath: tickets, withIntermediateDirectories: true)
        try event("conf")
        let v = try verifier()
        // A valid signature of the event's key over bytes that are no Ticket: signed by pretix's
        // own _sign_payload, refused by the reader after the signature verified.
        for (what, payload) in [
            ("garbage", Array("this is not protobuf at all".utf8)),
            ("a huge varint", [0x10] + [UInt8](repeating: 0xff, count: 11) + [0x01]),
            ("a varint past 64 bits", [0x10] + [UInt8](repeating: 0xff, count: 9) + [0x02]),
            ("the item as bytes", [0x12, 0x01, 0x2a]),
            ("a length past the end", [0x10, 0x2a, 0x0a, 0x7f, 0x41]),
            ("a group", [0x10, 0x2a, 0x4b]),
            ("no item", [0x0a, 0x01, 0x41]),
            ("the item twice", [0x10, 0x2a, 0x10, 0x2b]),
        ] as [(String, [UInt8])] {
            let signed = try pretix.sign(event: "conf", payload: payload)
            XCTAssertNotNil(PretixSecret(b(signed)), what)
            let o = v.verify(b(signed))
            XCTAssertEqual(o.reason, .malformed, what)
            XCTAssertEqual(o.kid, "conf", "\(what): the signature verified")
            XCTAssertNil(o.sub, what)
        }
        // pretix's framing of a payload it would write, with unknown fields: taken.
        XCTAssertEqual(v.verify(b(try pretix.sign(event: "conf", payload: [0x10, 0x2a, 0x38, 0x01, 0x4a, 0x01, 0x41]))).reason, .valid)
        // Truncated and oversized framings never reach a key: not even a ticket.
        let real = b(secret)
        for cut in [real.count - 4, real.count / 2, 8] {
            XCTAssertEqual(CodeKind.of(Array(real.suffix(cut)), signedPrefix: "KC1:"), .plain, "cut to \(cut)")
        }
        var raw = Base64.decode(Array(real.reversed()))!
        raw[1] = 0xff; raw[2] = 0xff
        let oversized = Array(String(Base64.encode(raw).reversed()).utf8)
        XCTAssertEqual(CodeKind.of(oversized, signedPrefix: "KC1:"), .plain)
        XCTAssertEqual(v.verify(oversized).reason, .notACredential)
    }
}
