// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// Event tickets' pure parts: the pretix_sig1 framing read strictly, the payload's
/// bounded protobuf reader on what it must take and refuse, the checks' order, the door's
/// `pretix` lines, the store's ticket entries. The signature is the verifier's (CredentialsTests,
/// with tickets pretix itself minted); here two secrets pretix 2026.8.0 minted once are kept as
/// vectors of its framing and payload.
final class PretixTicketTests: XCTestCase {
    /// Minted by pretix 2026.8.0's Sig1TicketSecretGenerator (Tests/Peers/pretix_tickets.py):
    /// item 42, variation 7, subevent 3, valid from 1700000000 until 2000000000.
    static let dated = "=ww8fh3kANufT1XYgd0eSTIyNVL1Z/Z/5yR8GEN1wCht2JhxB55rpMfa4bJzW0HWUB3b3nBeEwiC5axZZlbtCowB5aNqACjBq+s4AiyAgcAGqABT6ZmTxdlYklTCKAEAdAQA"
    static let datedPayload = "0a0939646257714e667a4c102a180720032880e2cfaa063080a8d6b907"
    /// Item 42, no variation, no date, no validity (pretix writes the two times as 0).
    static let open = "=4gLLArco5Vbz3nbL1hd2PrMauCfzYnYBwQWEQVG5If6OjyLYyn2BwUilsTUNLeqK2IOIvMTeBCbEhxl/blR16DAwAAKqARcVFWQOFka21WCKAEARAQA"
    static let openPayload = "0a096d766a414e41615571102a28003000"

    // MARK: the framing

    func testPretixsOwnSecretsAreReadAsPretixWroteThem() throws {
        let s = try XCTUnwrap(PretixSecret(b(Self.dated)))
        XCTAssertEqual(s.payload, hex(Self.datedPayload))
        XCTAssertEqual(s.signature.count, 64)
        XCTAssertEqual(PretixSecret.text(payload: s.payload, signature: s.signature), Self.dated, "written back exactly")
        let t = try PretixTicket(payload: s.payload)
        XCTAssertEqual(t, PretixTicket(seed: "9dbWqNfzL", item: 42, variation: 7, subevent: 3, validFrom: 1_700_000_000, validUntil: 2_000_000_000))
        let o = try XCTUnwrap(PretixSecret(b(Self.open)))
        XCTAssertEqual(o.payload, hex(Self.openPayload))
        XCTAssertEqual(try PretixTicket(payload: o.payload), PretixTicket(seed: "mvjANAaUq", item: 42), "0 for a time is no time, as pretix's scanners read it")
        XCTAssertEqual(CodeKind.of(b(Self.dated), signedPrefix: "KC1:"), .credential(.ticket))
        XCTAssertEqual(CodeKind.of(b(Self.open), signedPrefix: "KC1:"), .credential(.ticket))
    }

    /// The frame with these lengths and bytes, as the text pretix would write for it.
    func framed(_ raw: [UInt8]) -> [UInt8] { Array(String(Base64.encode(raw).reversed()).utf8) }
    func frame(version: UInt8 = 1, payloadLength: Int? = nil, signatureLength: Int = 64, payload: [UInt8] = [0x10, 0x2a],
               signature: [UInt8]? = nil) -> [UInt8] {
        let sig = signature ?? [UInt8](repeating: 0xab, count: 64)
        let n = payloadLength ?? payload.count
        return [version, UInt8(n >> 8 & 0xff), UInt8(n & 0xff), UInt8(signatureLength >> 8 & 0xff), UInt8(signatureLength & 0xff)] + payload + sig
    }

    func testTheFramingIsReadStrictly() throws {
        XCTAssertNotNil(PretixSecret(framed(frame())), "the form itself")
        let withSlash = framed(frame(signature: [UInt8](repeating: 0xff, count: 64)))
        XCTAssertNotNil(PretixSecret(withSlash))
        let urlSafe = withSlash.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }
        XCTAssertNotEqual(urlSafe, withSlash, "the text has a '/' or a '+' to change")
        let refused: [(String, [UInt8])] = [
            ("version 2", framed(frame(version: 2))),
            ("version 0", framed(frame(version: 0))),
            ("a payload length one too long", framed(frame(payloadLength: 3))),
            ("a payload length one too short", framed(frame(payloadLength: 1))),
            ("a payload length of 65535", framed(frame(payloadLength: 0xffff))),
            ("a payload length past 255 (libpretixsync's shift by 2 would read 0x0102 as 6)", framed(frame(payloadLength: 0x0102))),
            ("a signature length of 65535", framed(frame(signatureLength: 0xffff))),
            ("a signature length of 63 with 64 bytes", framed(frame(signatureLength: 63))),
            ("a 63-byte signature", framed(frame(signatureLength: 63, signature: [UInt8](repeating: 1, count: 63)))),
            ("a 65-byte signature", framed(frame(signatureLength: 65, signature: [UInt8](repeating: 1, count: 65)))),
            ("an empty payload", framed(frame(payload: []))),
            ("a byte after the signature", framed(frame() + [0])),
            ("only the header", framed([1, 0, 2, 0, 64])),
            ("nothing", []),
            ("not reversed", Array(Base64.encode(frame()).utf8)),
            ("no padding", Array(framed(frame()).drop(while: { $0 == UInt8(ascii: "=") }))),
            ("URL-safe base64", urlSafe),
            ("a line break", Array(framed(frame()).prefix(20)) + [0x0a] + Array(framed(frame()).dropFirst(20))),
            ("a space", [0x20] + framed(frame())),
            ("longer than 1024 characters", framed(frame(payload: [UInt8](repeating: 0x10, count: 800)))),
        ]
        for (what, text) in refused {
            XCTAssertNil(PretixSecret(text), what)
            XCTAssertNotEqual(CodeKind.of(text, signedPrefix: "KC1:"), .credential(.ticket), what)
        }
        // Every cut of a real secret.
        let real = b(Self.dated)
        for n in 0..<real.count { XCTAssertNil(PretixSecret(real.prefix(n)), "cut to \(n)"); XCTAssertNil(PretixSecret(real.suffix(n)), "the last \(n)") }
    }

    func testOneTicketHasOneText() throws {
        // The last character of the base64 (the first of the secret) carries unused bits: pretix
        // writes them 0. A text with them set decodes to the same bytes and must not be taken, or
        // a revoked secret could come back spelled another way.
        var text = b(Self.dated)
        XCTAssertEqual(text[0], UInt8(ascii: "="))
        XCTAssertEqual(text[1], UInt8(ascii: "w"), "110000: one '=', so the last two bits are unused")
        for c in b("xyz") {
            text[1] = c
            XCTAssertNil(PretixSecret(text), "\(Character(UnicodeScalar(c)))")
        }
    }

    func testCodesThatAreNoTicketStayNoTicket() {
        for code in ["4006381333931", "HELLO-WORLD", "AAAAAAAA", "https://example.com/", "KT1:carol:1700000000:123456", "QUFBQUFBQUE="] {
            XCTAssertNotEqual(CodeKind.of(b(code), signedPrefix: "KC1:"), .credential(.ticket), code)
        }
        XCTAssertEqual(CodeKind.of(b("KC1:" + Self.dated), signedPrefix: "KC1:"), .credential(.signed), "the signed prefix first")
    }

    // MARK: the payload (protobuf)

    func ticket(_ hexPayload: String) throws -> PretixTicket { try PretixTicket(payload: hex(hexPayload)) }
    func refused(_ hexPayload: String, _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ticket(hexPayload), hexPayload, file: file, line: line) { error in
            let e = error as! PretixTicketError
            XCTAssertTrue(e.description.contains(reason), "\(hexPayload): \(e.description)", file: file, line: line)
        }
    }

    func testThePayloadsFieldsUnknownOnesSkipped() throws {
        XCTAssertEqual(try ticket("102a"), PretixTicket(item: 42))
        XCTAssertEqual(try ticket("102a18072003"), PretixTicket(item: 42, variation: 7, subevent: 3))
        XCTAssertEqual(try ticket("2003102a"), PretixTicket(item: 42, subevent: 3), "in any order")
        // field 7 varint, field 8 fixed64, field 9 bytes, field 10 fixed32, field 536870911 varint
        XCTAssertEqual(try ticket("102a" + "3801" + "410102030405060708" + "4a03616263" + "5501020304" + "f8ffffff0f05"), PretixTicket(item: 42))
        XCTAssertEqual(try ticket("0a00102a"), PretixTicket(item: 42), "an empty seed")
        XCTAssertEqual(try ticket("102a28ffffffffffffffff7f"), PretixTicket(item: 42, validFrom: Int64.max), "the largest time")
        XCTAssertEqual(try ticket("10ffffffffffffffff7f"), PretixTicket(item: UInt64(Int64.max)), "the largest id")
        XCTAssertEqual(try ticket("10aa80808000"), PretixTicket(item: 42), "a varint written longer than it needs (protobuf allows it)")
    }

    func testHostilePayloadsAreRefused() {
        refused("", "no item")
        refused("1800", "no item")
        refused("1000", "no item")
        refused("102a102a", "field 2 twice")
        refused("0a01410a0141102a", "field 1 twice")
        refused("0a02c328102a", "not UTF-8")
        refused("122a", "field 2 with wire type 2")
        refused("0d2a000000102a", "field 1 with wire type 5")
        refused("102a2d00000000", "field 5 with wire type 5")
        refused("102a3901", "a fixed field cut short")
        refused("102a3101", "field 6 with wire type 1")
        refused("102a4a05616263", "a length of 5 with 3 bytes left")
        refused("102a4affffffffffffffff01", "a length of")
        refused("102a4b", "a group")
        refused("102a4c", "a group")
        refused("102a4e", "wire type 6")
        refused("102a4f", "wire type 7")
        refused("02", "field number 0")
        refused("80808080808080808080", "a varint beyond 64 bits or 10 bytes")
        refused("10ffffffffffffffffff02", "a varint beyond 64 bits or 10 bytes")
        refused("10ffffffffffffffffff0f", "a varint beyond 64 bits or 10 bytes")
        refused("10ffffffffffffffffffff01", "a varint beyond 64 bits or 10 bytes")
        refused("10" + String(repeating: "ff", count: 400) + "01", "a varint beyond 64 bits or 10 bytes")
        refused("1080", "a varint cut short")
        refused("10", "a varint cut short")
        refused("80808080808001", "a tag beyond 32 bits")
        refused("10ffffffffffffffffff01", "a negative item")
        refused("102a18ffffffffffffffffff01", "a negative variation")
        refused("102a20ffffffffffffffffff01", "a negative subevent")
        refused("102a28ffffffffffffffffff01", "a validity before 1970")
        refused("102a30ffffffffffffffffff01", "a validity before 1970")
        refused(String(repeating: "3801", count: 200) + "102a" + String(repeating: "00", count: 200), "more than 512 bytes")
        // Every cut of a real payload is a ticket or a refusal, never a crash; those that keep the
        // item are tickets with the fields that are whole.
        let real = hex(Self.datedPayload)
        for n in 0...real.count { _ = try? PretixTicket(payload: Array(real.prefix(n))) }
    }

    // MARK: the checks

    func testTheChecksOrder() {
        let rules = CredentialRules(skewSeconds: 30, requireSyncedClock: true)
        let t = PretixTicket(item: 42, validFrom: 1000, validUntil: 2000)
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 1500, clockSynced: true, revoked: false), .valid)
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 1500, clockSynced: true, revoked: true), .revoked)
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 5000, clockSynced: false, revoked: true), .revoked, "revoked first, as a signed credential's")
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 1500, clockSynced: false, revoked: false), .clockNotSynchronized)
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 969, clockSynced: true, revoked: false), .notYetValid)
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 970, clockSynced: true, revoked: false), .valid, "the skew before")
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 2030, clockSynced: true, revoked: false), .valid, "the skew after")
        XCTAssertEqual(TicketCheck.ticket(t, rules: rules, now: 2031, clockSynced: true, revoked: false), .expired)
        let open = PretixTicket(item: 42)
        XCTAssertEqual(TicketCheck.ticket(open, rules: rules, now: 0, clockSynced: false, revoked: false), .valid, "no time: the clock is not asked")
        XCTAssertEqual(TicketCheck.ticket(PretixTicket(item: 1, validUntil: 2000), rules: rules, now: 3000, clockSynced: true, revoked: false), .expired)
        XCTAssertEqual(TicketCheck.ticket(PretixTicket(item: 1, validFrom: 2000), rules: rules, now: 3000, clockSynced: true, revoked: false), .valid)
        let lax = CredentialRules(skewSeconds: 0, requireSyncedClock: false)
        XCTAssertEqual(TicketCheck.ticket(t, rules: lax, now: 2001, clockSynced: false, revoked: false), .expired)
    }

    // MARK: the door's pretix lines

    func testPretixLinesGiveATicketTheGroupOfTheMostSpecificLine() throws {
        let r = try AccessRules.parse("""
            allow visitor always
            pretix 42         visitor
            pretix 42/7       vip
            pretix 42 day-3 subevent=3
            pretix 42/7 vip-3 subevent=3
            pretix 43/1       staff
            """)
        XCTAssertEqual(r.pretix.count, 5)
        XCTAssertEqual(r.groups(forTicket: 42, variation: 0, subevent: 0), ["visitor"])
        XCTAssertEqual(r.groups(forTicket: 42, variation: 9, subevent: 5), ["visitor"], "any variation, any date")
        XCTAssertEqual(r.groups(forTicket: 42, variation: 7, subevent: 0), ["vip"], "the variation's line first")
        XCTAssertEqual(r.groups(forTicket: 42, variation: 1, subevent: 3), ["day-3"], "the date's line first")
        XCTAssertEqual(r.groups(forTicket: 42, variation: 7, subevent: 3), ["vip-3"])
        XCTAssertEqual(r.groups(forTicket: 43, variation: 1, subevent: 0), ["staff"])
        XCTAssertEqual(r.groups(forTicket: 43, variation: 2, subevent: 0), [], "no line for this variation")
        XCTAssertEqual(r.groups(forTicket: 44, variation: 0, subevent: 0), [], "no line for this item")
        XCTAssertEqual(r.understood(at: WallClock(date: LocalDate(year: 2026, month: 3, day: 2), minute: 600), holidays: []).filter { $0.hasPrefix("pretix") },
                       ["pretix 42 visitor", "pretix 42/7 vip", "pretix 42 day-3 subevent=3", "pretix 42/7 vip-3 subevent=3", "pretix 43/1 staff"])
        // Only the dates named open: a door for one date of a series.
        let oneDate = try AccessRules.parse("allow guest always\npretix 42 guest subevent=3\n")
        XCTAssertEqual(oneDate.groups(forTicket: 42, variation: 0, subevent: 3), ["guest"])
        XCTAssertEqual(oneDate.groups(forTicket: 42, variation: 0, subevent: 4), [])
        XCTAssertEqual(oneDate.groups(forTicket: 42, variation: 0, subevent: 0), [])
    }

    func testABadPretixLineIsRefused() {
        for (text, reason) in [
            ("pretix 42 visitor subevent=", "expected pretix ITEM[/VARIATION] GROUP [subevent=ID]"),
            ("pretix 42 visitor subevent=0", "got 'subevent=0'"),
            ("pretix 42 visitor subevent=x", "got 'subevent=x'"),
            ("pretix 42 visitor date=3", "got 'date=3'"),
            ("pretix 42 visitor subevent=3 extra", "expected pretix ITEM[/VARIATION] GROUP [subevent=ID]"),
            ("pretix 42 a subevent=3\npretix 42 b subevent=3", "item 42 of subevent 3 is given a group twice"),
        ] {
            XCTAssertThrowsError(try AccessRules.parse(text), text) { error in
                XCTAssertTrue((error as! AccessRulesError).reason.contains(reason), "\(text): \(error)")
            }
        }
        XCTAssertNoThrow(try AccessRules.parse("pretix 42 a subevent=3\npretix 42 b subevent=4\npretix 42 c"))
    }

    // MARK: entries in the store

    func testATicketsEntriesAreCountedAndReadBack() throws {
        let key = UsedTokens.ticketKey(payloadDigest: [UInt8](repeating: 0xab, count: 32))
        XCTAssertEqual(key, "p:" + String(repeating: "ab", count: 32))
        var t = UsedTokens()
        XCTAssertEqual(t.claim(key, until: 2000, now: 1000, skew: 30, uses: 2), .fresh)
        XCTAssertEqual(t.claim(key, until: 2000, now: 1001, skew: 30, uses: 2), .fresh)
        XCTAssertEqual(t.claim(key, until: 2000, now: 1002, skew: 30, uses: 2), .used)
        XCTAssertEqual(t.claim("p:01", until: nil, now: 1002, skew: 30), .fresh)
        let back = try UsedTokens.parse(t.fileText).get()
        XCTAssertEqual(back, t)
        XCTAssertEqual(back.uses(of: key), 2)
        let body = "kiosk-used-tokens 2\np:01 -\n\(key) 2000 2\n"  // Version 2 ends with its CRC-32
        XCTAssertEqual(back.fileText, body + "end 2 \(CRC32.hex(CRC32.checksum(Array(body.utf8))))\n")
        // Gone once the ticket is past its validity (and the skew).
        var later = back
        later.dropExpired(now: 2031, skew: 30)
        XCTAssertFalse(later.contains(key))
        XCTAssertTrue(later.contains("p:01"), "an open-ended ticket stays")
    }
}
