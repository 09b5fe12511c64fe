// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The pure core of passes: the reader of `KH1:` (strict, bounded), the COSE_Key and
/// its thumbprint's input, the proof's message, the window and the replay rule, the holders file.
/// No C here: the hashes and signatures are checked in CredentialsTests against the peer's.
final class PassTests: XCTestCase {
    let x = [UInt8](repeating: 0x11, count: 32), y = [UInt8](repeating: 0x22, count: 32)
    let proof = [UInt8](repeating: 0x33, count: 64)

    func testBothFormsRead() throws {
        let p2 = Pass.encode(form: .holder, credential: [1, 2, 3, 4, 5, 6, 7, 8], slot: 360_000_000, proof: proof)
        XCTAssertEqual(Array(p2.prefix(4)), Array("KH1:".utf8))
        let a = try Pass(p2)
        XCTAssertEqual(a.form, .holder)
        XCTAssertEqual(a.credential, [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(a.slot, 360_000_000)
        XCTAssertEqual(a.proof, proof)
        XCTAssertEqual(p2.count, 4 + 1 + 1 + 9 + 5 + 2 + 64, "form 2 is about 80 bytes")
        let p1 = Pass.encode(form: .selfContained, credential: [0x84, 0x40, 0xa0, 0x40, 0x40], slot: 7, proof: proof)
        XCTAssertEqual(try Pass(p1).form, .selfContained)
        XCTAssertEqual(Pass.Form.selfContained.name, "pass1")
        XCTAssertEqual(Pass.Form.holder.name, "pass2")
    }

    func testWhatIsRefused() {
        func pass(_ items: [CBOR]) -> [UInt8] { Array("KH1:".utf8) + CBOREncoder.encode(.array(items)) }
        let id = CBOR.bytes([UInt8](repeating: 9, count: 8))
        let bad: [(String, [UInt8])] = [
            ("no prefix", CBOREncoder.encode(.array([.unsigned(2), id, .unsigned(1), .bytes(proof)]))),
            ("3 items", pass([.unsigned(2), id, .unsigned(1)])),
            ("5 items", pass([.unsigned(2), id, .unsigned(1), .bytes(proof), .null])),
            ("form 0", pass([.unsigned(0), id, .unsigned(1), .bytes(proof)])),
            ("form as text", pass([.text("2"), id, .unsigned(1), .bytes(proof)])),
            ("key_id of 7", pass([.unsigned(2), .bytes([1, 2, 3, 4, 5, 6, 7]), .unsigned(1), .bytes(proof)])),
            ("tagged credential", pass([.unsigned(1), .bytes([0xd2, 0x84, 0x40, 0xa0, 0x40, 0x40]), .unsigned(1), .bytes(proof)])),
            ("negative slot", pass([.unsigned(2), id, .negative(0), .bytes(proof)])),
            ("slot 2^32", pass([.unsigned(2), id, .unsigned(1 << 32), .bytes(proof)])),
            ("proof of 65", pass([.unsigned(2), id, .unsigned(1), .bytes(proof + [0])])),
            ("nested", pass([.unsigned(2), .array([id]), .unsigned(1), .bytes(proof)])),
            ("not shortest", Array("KH1:".utf8) + [0x84, 0x18, 0x02] + CBOREncoder.encode(id) + [0x01] + CBOREncoder.encode(.bytes(proof))),
            ("a byte after", pass([.unsigned(2), id, .unsigned(1), .bytes(proof)]) + [0]),
            ("truncated", Array(pass([.unsigned(2), id, .unsigned(1), .bytes(proof)]).dropLast())),
            ("1 KiB", Pass.encode(form: .selfContained, credential: [0x84] + [UInt8](repeating: 0, count: 900), slot: 1, proof: proof)),
        ]
        for (what, bytes) in bad { XCTAssertThrowsError(try Pass(bytes), what) }
        XCTAssertNoThrow(try Pass(pass([.unsigned(2), id, .unsigned(UInt64(UInt32.max)), .bytes(proof)])))
    }

    func testTheProofsMessage() {
        let digest = [UInt8](repeating: 0xab, count: 32)
        let m = Pass.proofMessage(form: .holder, slot: 0x0102_0304, digest: digest)
        XCTAssertEqual(m, Array("KH1 proof".utf8) + [0x00, 0x02, 0x01, 0x02, 0x03, 0x04] + digest)
        XCTAssertEqual(m.count, 9 + 1 + 1 + 4 + 32)
    }

    func testTheWindow() {
        let now: Int64 = 1_800_000_002
        let slot = now / 5  // began 2 s ago
        XCTAssertEqual(Pass.skew(slot: slot, now: now), -2)
        XCTAssertTrue(Pass.isFresh(slot: slot, now: now, window: 15))
        XCTAssertTrue(Pass.isFresh(slot: slot - 2, now: now, window: 15), "began 12 s ago")
        XCTAssertFalse(Pass.isFresh(slot: slot - 3, now: now, window: 15), "began 17 s ago")
        XCTAssertTrue(Pass.isFresh(slot: slot + 1, now: now, window: 15), "begins in 3 s")
        XCTAssertFalse(Pass.isFresh(slot: slot + 2, now: now, window: 15), "begins in 8 s")
        XCTAssertTrue(Pass.isFresh(slot: slot - 23, now: now, window: 120))
        XCTAssertFalse(Pass.isFresh(slot: slot - 24, now: now, window: 120))
    }

    func testTheReplayRuleIsTheSlotAndSurvivesTheFile() {
        var t = UsedTokens()
        let key = UsedTokens.passKey(holder: "alice")
        let now: Int64 = 1_800_000_000, slot = now / 5
        XCTAssertEqual(t.claimSlot(key, slot: slot, now: now, skew: 30), .fresh)
        XCTAssertEqual(t.lastSlot(key), slot)
        XCTAssertEqual(t.claimSlot(key, slot: slot, now: now, skew: 30), .used)
        XCTAssertEqual(t.claimSlot(key, slot: slot - 1, now: now, skew: 30), .used)
        XCTAssertEqual(t.claimSlot(key, slot: slot + 1, now: now + 5, skew: 30), .fresh)
        XCTAssertEqual(t.entries.count, 1, "one entry a holder, whatever the slots")
        XCTAssertEqual(t.claimSlot(UsedTokens.passKey(cti: [1, 2]), slot: slot, now: now, skew: 30), .fresh, "another credential")
        guard case .success(let back) = UsedTokens.parse(t.fileText) else { return XCTFail("the file reads back") }
        XCTAssertEqual(back, t)
        var later = back
        XCTAssertEqual(later.claimSlot(key, slot: slot + 1, now: now + 5, skew: 30), .used)
        // Once no window takes the slot, the entry goes; a pass of that slot would be stale anyway.
        later.dropExpired(now: slot * 5 + 5 + 120 + 31, skew: 30)
        XCTAssertNil(later.lastSlot(UsedTokens.passKey(cti: [1, 2])))
    }

    func testTheCOSEKeyAndItsThumbprintInput() throws {
        let k = try HolderKey(x: x, y: .bytes(y))
        XCTAssertEqual(k.sec1, [0x04] + x + y)
        // RFC 9679 3: the four members, deterministic CBOR: a4 01 02 20 01 21 58 20 x 22 58 20 y.
        XCTAssertEqual(k.thumbprintInput, [0xa4, 0x01, 0x02, 0x20, 0x01, 0x21, 0x58, 0x20] + x + [0x22, 0x58, 0x20] + y)
        XCTAssertEqual(try HolderKey(bytes: k.thumbprintInput), k)
        let c = try HolderKey(x: x, y: .sign(true))
        XCTAssertEqual(c.sec1, [0x03] + x)
        XCTAssertEqual(try HolderKey(x: x, y: .sign(false)).sec1, [0x02] + x)
        XCTAssertEqual(c.thumbprintInput.suffix(2), [0x22, 0xf5])
        // Key order in the map as given does not matter to the reader; a private key does.
        let reordered = CBOREncoder.encode(.map([CBORPair(.negative(2), .bytes(y)), CBORPair(.negative(1), .bytes(x)),
                                                 CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1))]))
        XCTAssertEqual(try HolderKey(bytes: reordered), k)
        for bad: CBOR in [
            .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)), CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .bytes(y)),
                  CBORPair(.negative(3), .bytes(x))]),
            .map([CBORPair(.unsigned(1), .unsigned(1)), CBORPair(.negative(0), .unsigned(6)), CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .bytes(y))]),
            .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(2)), CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .bytes(y))]),
            .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)), CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .bytes(Array(y.prefix(31))))]),
            .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)), CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .null)]),
            .array([]),
        ] {
            XCTAssertThrowsError(try HolderKey(bytes: CBOREncoder.encode(bad)))
        }
    }

    func testTheConfirmationClaim() throws {
        let k = try HolderKey(x: x, y: .bytes(y))
        func claims(_ extra: [CBORPair]) -> [UInt8] { CBOREncoder.encode(.map([CBORPair(.unsigned(2), .text("alice"))] + extra)) }
        XCTAssertNil(try Confirmation.key(payload: claims([])))
        XCTAssertEqual(try Confirmation.key(payload: claims([CBORPair(.unsigned(8), .map([CBORPair(.unsigned(1), HolderKey.item(k))]))])), k)
        XCTAssertThrowsError(try Confirmation.key(payload: claims([CBORPair(.unsigned(8), .map([CBORPair(.unsigned(3), .bytes([1]))]))])), "a kid, not a key")
        XCTAssertThrowsError(try Confirmation.key(payload: claims([CBORPair(.unsigned(8), .bytes([1]))])))
    }

    func testBase64URL() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xff) }
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
            XCTAssertFalse(Base64URL.encode(bytes).contains("="))
        }
        XCTAssertEqual(Base64URL.encode(Array("hello?>".utf8)), "aGVsbG8_Pg")
        XCTAssertNil(Base64URL.decode("aGVsbG8_Pg=="), "no padding")
        XCTAssertNil(Base64URL.decode("aGVsbG8/Pg"), "not the URL alphabet")
        XCTAssertNil(Base64URL.decode("aGVsbG8_Ph"), "bits left over that are not zero")
        XCTAssertNil(Base64URL.decode("a"))
    }

    func testTheHoldersFile() throws {
        let k = try HolderKey(x: x, y: .bytes(y)), k2 = try HolderKey(x: y, y: .sign(false))
        let key = Base64URL.encode(k.thumbprintInput), key2 = Base64URL.encode(k2.thumbprintInput)
        let text = "# holders\n\nalice \(key) groups=staff,night\n\tbob\t\(key2)\n"
        guard case .success(let list) = PassHolder.parseFile(text) else { return XCTFail("reads") }
        XCTAssertEqual(list.map(\.name), ["alice", "bob"])
        XCTAssertEqual(list[0].groups, ["staff", "night"])
        XCTAssertEqual(list[0].line, 3)
        XCTAssertEqual(list[1].key, k2)
        XCTAssertEqual(list[0].fileLine, "alice \(key) groups=staff,night")
        let bad: [(String, String)] = [
            ("alice\n", "line 1: expected NAME KEY [groups=GROUP,...]"),
            ("alice \(key) extra\n", "line 1: expected NAME KEY [groups=GROUP,...]"),
            ("# c\nal:ice \(key)\n", "line 2: a NAME of 1-64 printable characters without ':'"),
            ("alice \(key)=\n", "line 1: a KEY that is not base64url without padding"),
            ("alice \(key) groups=a,,b\n", "line 1: groups=GROUP[,GROUP]... (at most 32, each 1-64 letters, digits, '-', '_' or '.')"),
            ("alice \(key)\nalice \(key2)\n", "line 2: holder alice is listed twice"),
            ("alice \(key)\nbob \(key)\n", "line 2: the key of bob is listed twice"),
        ]
        for (file, error) in bad {
            guard case .failure(let e) = PassHolder.parseFile(file) else { XCTFail(file); continue }
            XCTAssertEqual(e.description, error)
        }
        guard case .failure(let e) = PassHolder.parseFile("alice \(Base64URL.encode([0xa1, 0x01, 0x02]))\n") else { return XCTFail("not a key") }
        XCTAssertTrue(e.description.hasPrefix("line 1: a KEY that is not a P-256 COSE_Key"), e.description)
    }

    func testTheVariables() {
        func read(_ env: [String: String]) -> ConfigurationReading {
            Configuration.read(environment: ["KIOSK_VERDICT": "credentials"].merging(env) { _, b in b }, isExecutableFile: { _ in false })
        }
        let c = read([:]).configuration
        XCTAssertEqual(c.holdersFile, "/etc/kiosk/holders")
        XCTAssertEqual(c.passWindowS, 15)
        XCTAssertEqual(c.credentialRules.passWindowSeconds, 15)
        XCTAssertEqual(read(["KIOSK_PASS_WINDOW_S": "120", "KIOSK_HOLDERS_FILE": "/srv/h"]).configuration.credentialRules.passWindowSeconds, 120)
        for (name, value) in [("KIOSK_PASS_WINDOW_S", "4"), ("KIOSK_PASS_WINDOW_S", "121"), ("KIOSK_PASS_WINDOW_S", "15s"),
                              ("KIOSK_HOLDERS_FILE", "holders"), ("KIOSK_HOLDERS_FILE", "/etc/kiosk/"),
                              ("KIOSK_CREDENTIAL_PREFIX", "KH1:"), ("KIOSK_CREDENTIAL_PREFIX", "KH"), ("KIOSK_CREDENTIAL_PREFIX", "KH1:X")] {
            let r = read([name: value])
            XCTAssertEqual(r.errors.map(\.variable), [name], "\(name)=\(value)")
            XCTAssertEqual(r.errors.first?.value, value)
        }
        XCTAssertTrue(read(["KIOSK_PASS_WINDOW_S": "4"]).errors.first?.expected.contains("5 to 120") ?? false)
        XCTAssertEqual(CodeKind.of(Array("KH1:".utf8) + [0x84], signedPrefix: "KC1:"), .credential(.pass))
    }
}
