// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The credentials' pure parts: Base45 on RFC 9285's vectors, the strict CBOR reader
/// on what it must refuse, COSE_Sign1's parts and Sig_structure, the claims' types, TOTP's
/// truncation on RFC 4226's own HMAC values, the checks' order, the store's strict read-back.
final class CredentialPolicyTests: XCTestCase {
    // MARK: Base45

    func testBase45OnRFC9285sVectors() {
        for (text, plain) in [("BB8", "AB"), ("%69 VD92EX0", "Hello!!"), ("UJCLQE7W581", "base-45"), ("QED8WEX0", "ietf!"), ("", "")] {
            XCTAssertEqual(Base45.decode(b(text), maxOutput: 100), b(plain), text)
            XCTAssertEqual(Base45.encode(b(plain)), text)
        }
    }

    func testBase45RefusesWhatIsNotBase45() {
        XCTAssertNil(Base45.decode(b("GGW"), maxOutput: 10), "65536 is over a group's range (RFC 9285 6)")
        XCTAssertNil(Base45.decode(b("BB"), maxOutput: 10), "two characters over 255 (11 + 11 * 45)")
        XCTAssertNil(Base45.decode(b(":~"), maxOutput: 10), "outside the alphabet")
        XCTAssertNil(Base45.decode(b("bb8"), maxOutput: 10), "lower case is not in the alphabet")
        XCTAssertNil(Base45.decode(b("BB8A"), maxOutput: 10), "a dangling character (length 3n+1)")
        XCTAssertNil(Base45.decode(b("%69 VD92EX0"), maxOutput: 6), "more than maxOutput")
        XCTAssertNil(Base45.decode(b("Z:"), maxOutput: 10), "35 + 44*45 > 255")
    }

    // MARK: CBOR

    func testCBORReadsWhatCredentialsUse() throws {
        XCTAssertEqual(try CBORReader.decode([0x18, 0x64]), .unsigned(100))
        XCTAssertEqual(try CBORReader.decode([0x26]), .negative(6))
        XCTAssertEqual(try CBORReader.decode([0x26]).int, -7)
        XCTAssertEqual(try CBORReader.decode([0x43, 1, 2, 3]), .bytes([1, 2, 3]))
        XCTAssertEqual(try CBORReader.decode([0x62, 0x68, 0x69]), .text("hi"))
        XCTAssertEqual(try CBORReader.decode([0xa1, 0x01, 0x26]), .map([CBORPair(.unsigned(1), .negative(6))]))
        XCTAssertEqual(try CBORReader.decode([0xd2, 0x80]), .tagged(18, .array([])))
        XCTAssertEqual(try CBORReader.decode([0x1b, 0, 0, 0, 1, 0, 0, 0, 0]), .unsigned(1 << 32))
        let item = CBOR.array([.text("Signature1"), .bytes([0xa1, 1, 0x26]), .bytes([]), .map([CBORPair(.unsigned(2), .text("x"))]), .bool(true), .null])
        XCTAssertEqual(try CBORReader.decode(CBOREncoder.encode(item)), item)
    }

    func testCBORRefusesWhatAStrictReaderMust() {
        let hostile: [(String, [UInt8])] = [
            ("empty", []),
            ("truncated integer", [0x19, 0x01]),
            ("non-shortest integer", [0x18, 0x05]),
            ("non-shortest length", [0x58, 0x01, 0xff]),
            ("indefinite array", [0x9f, 0x01, 0xff]),
            ("indefinite bytes", [0x5f, 0x41, 0x00, 0xff]),
            ("reserved info", [0x1c]),
            ("float", [0xf9, 0x3c, 0x00]),
            ("double", [0xfb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]),
            ("simple value 16", [0xf0]),
            ("huge byte length", [0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ("huge array", [0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ("huge map", [0xbb, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ("text not UTF-8", [0x62, 0xc3, 0x28]),
            ("duplicate key", [0xa2, 0x01, 0x01, 0x01, 0x02]),
            ("duplicate text key", [0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02]),
            ("trailing byte", [0x01, 0x01]),
            ("deep nesting", [UInt8](repeating: 0x81, count: 20) + [0x01]),
            ("deep tags", [UInt8](repeating: 0xc1, count: 20) + [0x01]),
        ]
        for (name, bytes) in hostile {
            XCTAssertThrowsError(try CBORReader.decode(bytes), name)
        }
        // Many small items: a count limit, not a memory one.
        XCTAssertThrowsError(try CBORReader.decode(CBOREncoder.head(4, 5000) + [UInt8](repeating: 0, count: 5000)))
    }

    // MARK: COSE and CWT

    /// A COSE_Sign1 as a test writes it.
    func sign1(protected: CBOR = .map([CBORPair(.unsigned(1), .negative(6)), CBORPair(.unsigned(4), .bytes(Array("k1".utf8)))]),
               unprotected: CBOR = .map([]), payload: CBOR = .bytes([0xa0]), signature: CBOR = .bytes([UInt8](repeating: 1, count: 64)),
               tag: UInt64? = 18) -> [UInt8] {
        let protectedBytes: CBOR = .bytes(protected == .map([]) ? [] : CBOREncoder.encode(protected))
        let body = CBOR.array([protectedBytes, unprotected, payload, signature])
        return CBOREncoder.encode(tag.map { .tagged($0, body) } ?? body)
    }

    func testCOSESign1PartsAndSigStructure() throws {
        let m = try COSESign1(sign1())
        XCTAssertEqual(m.algorithm, .es256)
        XCTAssertEqual(m.kid, Array("k1".utf8))
        XCTAssertEqual(m.payload, [0xa0])
        // RFC 9052 4.4: ["Signature1", protected, h'', payload].
        XCTAssertEqual(m.toBeSigned, [0x84, 0x6a] + Array("Signature1".utf8) + [0x47, 0xa2, 0x01, 0x26, 0x04, 0x42, 0x6b, 0x31, 0x40, 0x41, 0xa0])
        // Untagged, kid unprotected, EdDSA; inside CWT's tag 61.
        let u = try COSESign1(sign1(protected: .map([CBORPair(.unsigned(1), .negative(7))]),
                                    unprotected: .map([CBORPair(.unsigned(4), .bytes([0xff, 0x00]))]), tag: nil))
        XCTAssertEqual(u.algorithm, .edDSA)
        XCTAssertEqual(u.kid, [0xff, 0x00])
        XCTAssertNoThrow(try COSESign1(CBOREncoder.encode(.tagged(61, try CBORReader.decode(sign1())))))
    }

    func testCOSESign1RefusesWhatIsNotOneToCheck() {
        let alg = CBORPair(.unsigned(1), .negative(6))
        let cases: [(String, [UInt8])] = [
            ("another tag", sign1(tag: 98)),
            ("no alg", sign1(protected: .map([CBORPair(.unsigned(4), .bytes([1]))]))),
            ("alg RS256", sign1(protected: .map([CBORPair(.unsigned(1), .negative(256))]))),
            ("alg as text", sign1(protected: .map([CBORPair(.unsigned(1), .text("ES256"))]))),
            ("alg unprotected only", sign1(protected: .map([]), unprotected: .map([alg]))),
            ("alg in both", sign1(unprotected: .map([alg]))),
            ("detached payload", sign1(payload: .null)),
            ("signature as text", sign1(signature: .text("x"))),
            ("kid as text", sign1(protected: .map([alg, CBORPair(.unsigned(4), .text("k"))]))),
            ("unprotected not a map", CBOREncoder.encode(.array([.bytes(CBOREncoder.encode(.map([alg]))), .array([]), .bytes([]), .bytes([])]))),
            ("three parts", CBOREncoder.encode(.array([.bytes([]), .map([]), .bytes([])]))),
            ("a header label that is bytes", sign1(unprotected: .map([CBORPair(.bytes([1]), .unsigned(1))]))),
        ]
        for (name, bytes) in cases { XCTAssertThrowsError(try COSESign1(bytes), name) }
    }

    func testCWTClaimsAndTheirTypes() throws {
        let claims = CBOR.map([CBORPair(.unsigned(1), .text("acme")), CBORPair(.unsigned(2), .text("alice")), CBORPair(.unsigned(3), .text("door-1")),
                               CBORPair(.unsigned(4), .unsigned(2000)), CBORPair(.unsigned(5), .unsigned(1000)), CBORPair(.unsigned(6), .unsigned(999)),
                               CBORPair(.unsigned(7), .bytes([9, 9])), CBORPair(.text("extra"), .array([]))])
        XCTAssertEqual(try CWTClaims(payload: CBOREncoder.encode(claims)),
                       CWTClaims(iss: "acme", sub: "alice", aud: "door-1", exp: 2000, nbf: 1000, iat: 999, cti: [9, 9]))
        for (key, wrong) in [(1, CBOR.unsigned(1)), (2, .bytes([1])), (3, .array([.text("a")])), (4, .text("2000")), (5, .bool(true)),
                             (7, .text("id")), (7, .bytes([])), (7, .bytes([UInt8](repeating: 0, count: 65))), (2, .text(String(repeating: "x", count: 257)))] {
            XCTAssertThrowsError(try CWTClaims(payload: CBOREncoder.encode(.map([CBORPair(.unsigned(UInt64(key)), wrong)]))), "claim \(key) as \(wrong)")
        }
        XCTAssertThrowsError(try CWTClaims(payload: CBOREncoder.encode(.array([]))))
        XCTAssertEqual(try CWTClaims(payload: CBOREncoder.encode(.map([CBORPair(.unsigned(4), .negative(0))]))).exp, -1)
    }

    // MARK: the checks

    func testTheClaimsChecksInOrder() {
        let rules = CredentialRules(issuers: ["acme"], audience: "door-1", skewSeconds: 30, requireSyncedClock: true)
        let good = CWTClaims(iss: "acme", sub: "alice", aud: "door-1", exp: 2000, nbf: 1000, cti: [1])
        func check(_ c: CWTClaims, now: Int64 = 1500, synced: Bool = true, revoked: Set<String> = [], rules r: CredentialRules? = nil) -> CredentialReason {
            CredentialCheck.claims(c, rules: r ?? rules, now: now, clockSynced: synced, isRevoked: { revoked.contains($0) })
        }
        XCTAssertEqual(check(good), .valid)
        var c = good; c.iss = "evil"
        XCTAssertEqual(check(c), .wrongIssuer)
        c = good; c.iss = nil
        XCTAssertEqual(check(c), .wrongIssuer)
        XCTAssertEqual(check(c, rules: CredentialRules(issuers: nil, audience: "door-1")), .valid, "unset: any trusted key")
        c = good; c.aud = "door-2"
        XCTAssertEqual(check(c), .wrongDoor)
        c = good; c.aud = nil
        XCTAssertEqual(check(c), .valid, "no aud: any door")
        XCTAssertEqual(check(good, rules: CredentialRules(issuers: ["acme"], audience: nil)), .wrongDoor, "an aud at a door with no id")
        XCTAssertEqual(check(good, revoked: ["alice"]), .revoked)
        XCTAssertEqual(check(good, revoked: ["01"]), .revoked, "cti in hex")
        XCTAssertEqual(check(good, synced: false), .clockNotSynchronized)
        XCTAssertEqual(check(good, synced: false, rules: CredentialRules(issuers: ["acme"], audience: "door-1", requireSyncedClock: false)), .valid)
        c = good; c.exp = nil; c.nbf = nil
        XCTAssertEqual(check(c, synced: false), .valid, "not time-bound: the clock does not matter")
        XCTAssertEqual(check(good, now: 969), .notYetValid)
        XCTAssertEqual(check(good, now: 970), .valid, "nbf - skew")
        XCTAssertEqual(check(good, now: 2030), .valid, "exp + skew")
        XCTAssertEqual(check(good, now: 2031), .expired)
    }

    func testRotatingCodeFormAndWindow() {
        XCTAssertEqual(RotatingCode(b("KT1:carol:1700000000:123456")), RotatingCode(holder: "carol", time: 1_700_000_000, digits: "123456"))
        for bad in ["KT1:carol:1700000000:12345", "KT1::1:123456", "KT1:a b:1:123456", "KT1:c:-1:123456", "KT1:c:1:12345a",
                    "KT1:c:1:123456:7", "KT2:c:1:123456", "KT1:c:1234567890123:123456", "KT1:c:1:12345678901"] {
            XCTAssertNil(RotatingCode(b(bad)), bad)
        }
        let rules = CredentialRules(skewSeconds: 5)
        let code = RotatingCode(holder: "carol", time: 1000, digits: "123456")
        func check(now: Int64, expected: String? = "123456", synced: Bool = true) -> CredentialReason {
            CredentialCheck.rotating(code, expected: expected, period: 30, rules: rules, now: now, clockSynced: synced, isRevoked: { $0 == "dave" })
        }
        XCTAssertEqual(check(now: 1000), .valid)
        XCTAssertEqual(check(now: 1035), .valid)
        XCTAssertEqual(check(now: 1036), .expired)
        XCTAssertEqual(check(now: 964), .notYetValid)
        XCTAssertEqual(check(now: 1000, expected: "654321"), .signature)
        XCTAssertEqual(check(now: 1000, expected: nil), .unknownKey)
        XCTAssertEqual(check(now: 1000, synced: false), .clockNotSynchronized)
        XCTAssertEqual(CredentialCheck.rotating(RotatingCode(holder: "dave", time: 1000, digits: "1"), expected: "1", period: 30, rules: rules,
                                                now: 1000, clockSynced: true, isRevoked: { $0 == "dave" }), .revoked)
    }

    /// RFC 4226 appendix D gives HMAC-SHA-1("12345678901234567890", count) for counts 0-9 and the
    /// six-digit HOTP values: the truncation checked without any HMAC here.
    func testTOTPTruncationOnRFC4226AppendixD() {
        let macs = ["cc93cf18508d94934c64b65d8ba7667fb7cde4b0", "75a48a19d4cbe100644e8ac1397eea747a2d33ab",
                    "0bacb7fa082fef30782211938bc1c5e70416ff44", "66c28227d03a2d5529262ff016a1e6ef76557ece",
                    "a904c900a64b35909874b33e61c5938a8e15ed1c", "a37e783d7b7233c083d4f62926c7a25f238d0316",
                    "bc9cd28561042c83f219324d3c607256c03272ae", "a4fb960c0bc06e1eabb804e5b397cdc4b45596fa",
                    "1b3c89f65e6c9e883012052823443f048b4332db", "1637409809a679dc698207310c8c7fc07290d9e5"]
        let codes = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (mac, code) in zip(macs, codes) { XCTAssertEqual(TOTP.code(hmac: hex(mac), digits: 6), code) }
        XCTAssertEqual(TOTP.step(time: 59, period: 30), 1)
        XCTAssertEqual(TOTP.message(step: 0x23523EC), [0, 0, 0, 0, 0x02, 0x35, 0x23, 0xEC], "RFC 6238 appendix B's T for 1111111109")
    }

    func testBase32AndTheSecretsFile() throws {
        XCTAssertEqual(Base32.decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"), b("12345678901234567890"))
        XCTAssertEqual(Base32.decode("mzxw6ytb"), b("fooba"))
        XCTAssertEqual(Base32.decode("MZXW6YQ="), b("foob"))
        XCTAssertNil(Base32.decode("MZXW1"))
        XCTAssertNil(Base32.decode("MZ=XW"))
        let text = "# badges\ncarol GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\ndave GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ 8 60\n"
        let secrets = try TOTPSecret.parseFile(text).get()
        XCTAssertEqual(secrets.map(\.holder), ["carol", "dave"])
        XCTAssertEqual(secrets.map(\.digits), [6, 8])
        XCTAssertEqual(secrets.map(\.period), [30, 60])
        for bad in ["carol", "carol NOT-BASE32!", "carol GEZDGNBV", "carol GEZDGNBVGY3TQOJQ 5", "carol GEZDGNBVGY3TQOJQ 6 1",
                    "a:b GEZDGNBVGY3TQOJQ", "carol GEZDGNBVGY3TQOJQ\ncarol GEZDGNBVGY3TQOJQ"] {
            guard case .failure(let e) = TOTPSecret.parseFile(bad) else { return XCTFail(bad) }
            XCTAssertFalse(e.description.contains("GEZDGNBV"), "an error never shows the secret: \(e)")
        }
    }

    func testRevocationListAndAntipassback() {
        XCTAssertEqual(RevocationList.parse("# gone\nalice\n  bob \n\n0a0b\n"), ["alice", "bob", "0a0b"])
        var a = Antipassback(seconds: 10)
        XCTAssertFalse(a.blocks("alice", at: 0))
        a.granted("alice", at: 1_000_000_000)
        XCTAssertTrue(a.blocks("alice", at: 10_999_999_999))
        XCTAssertFalse(a.blocks("alice", at: 11_000_000_000))
        XCTAssertFalse(a.blocks("bob", at: 2_000_000_000))
        var off = Antipassback(seconds: 0)
        off.granted("alice", at: 0)
        XCTAssertFalse(off.blocks("alice", at: 1))
    }

    // MARK: the used-token store's content

    func testUsedTokensClaimExpireAndBound() {
        var t = UsedTokens(capacity: 2)
        XCTAssertEqual(t.claim("c:01", until: 100, now: 50, skew: 10), .fresh)
        XCTAssertEqual(t.claim("c:01", until: 100, now: 60, skew: 10), .used)
        XCTAssertEqual(t.claim("c:02", until: nil, now: 60, skew: 10), .fresh)
        XCTAssertEqual(t.claim("c:03", until: 200, now: 60, skew: 10), .full, "full: denied, never granted")
        XCTAssertEqual(t.claim("c:03", until: 200, now: 111, skew: 10), .fresh, "c:01 is past exp + skew: dropped")
        XCTAssertFalse(t.contains("c:01"))
        XCTAssertTrue(t.contains("c:02"), "no exp: kept")
    }

    func testUsedTokensFileReadsBackExactlyOrIsDamaged() throws {
        var t = UsedTokens()
        _ = t.claim(UsedTokens.signedKey(cti: [1, 2]), until: 100, now: 0, skew: 0)
        _ = t.claim(UsedTokens.rotatingKey(holder: "carol", step: 7), until: nil, now: 0, skew: 0)
        let text = t.fileText
        XCTAssertEqual(try UsedTokens.parse(text).get(), t)
        // Cut anywhere, it is damaged, never a shorter list.
        for cut in 0..<text.utf8.count {
            let part = String(decoding: Array(text.utf8).prefix(cut), as: UTF8.self)
            XCTAssertThrowsError(try UsedTokens.parse(part).get(), "cut at \(cut)")
        }
        for bad in [text.replacing("end 2", with: "end 1"), text.replacing(" 100", with: " x"),
                    text.replacing("c:0102", with: "c:XY"), "kiosk-used-tokens 1\nc:01 1\nc:01 1\nend 2\n"] {
            XCTAssertThrowsError(try UsedTokens.parse(bad).get(), bad)
        }
    }

    // MARK: the configuration's credentials block, the verdict given directly, the scan message

    func testTheCredentialsSettings() {
        func read(_ env: [String: String]) -> ConfigurationReading { Configuration.read(environment: env, isExecutableFile: { _ in false }) }
        let d = read(["KIOSK_VERDICT": "credentials"])
        XCTAssertTrue(d.errors.isEmpty)
        let c = d.configuration
        XCTAssertEqual(c.verdict, .credentials)
        XCTAssertEqual(c.credentialPrefix, "KC1:")
        XCTAssertEqual(c.trustDir, "/etc/kiosk/trust")
        XCTAssertEqual(c.revokedFile, "/etc/kiosk/revoked")
        XCTAssertNil(c.totpFile)
        XCTAssertNil(c.credentialIssuers)
        XCTAssertEqual(c.credentialRules, CredentialRules(issuers: nil, audience: nil, skewSeconds: 30, requireSyncedClock: true))
        XCTAssertEqual(c.antipassbackS, 0)
        XCTAssertEqual(c.readPattern, .silent, "the verdict speaks, as in hook mode")
        let set = read(["KIOSK_VERDICT": "credentials", "KIOSK_CREDENTIAL_ISSUERS": "acme, beta", "KIOSK_CREDENTIAL_AUDIENCE": "door-1",
                        "KIOSK_CLOCK_SKEW_S": "300", "KIOSK_ANTIPASSBACK_S": "600", "KIOSK_REQUIRE_SYNCED_CLOCK": "0", "KIOSK_CREDENTIAL_PREFIX": "HC1:"])
        XCTAssertTrue(set.errors.isEmpty, "\(set.errors)")
        XCTAssertEqual(set.configuration.credentialRules, CredentialRules(issuers: ["acme", "beta"], audience: "door-1", skewSeconds: 300, requireSyncedClock: false))
        XCTAssertEqual(set.configuration.credentialPrefix, "HC1:")
        for (name, bad) in [("KIOSK_CREDENTIAL_PREFIX", "KT1:"), ("KIOSK_CREDENTIAL_PREFIX", "K"), ("KIOSK_CREDENTIAL_PREFIX", "KC 1:"),
                            ("KIOSK_CREDENTIAL_PREFIX", String(repeating: "K", count: 17)), ("KIOSK_TRUST_DIR", "trust"),
                            ("KIOSK_CLOCK_SKEW_S", "301"), ("KIOSK_ANTIPASSBACK_S", "-1"), ("KIOSK_REQUIRE_SYNCED_CLOCK", "yes"),
                            ("KIOSK_TOTP_FILE", "secrets"), ("KIOSK_REVOKED_FILE", "/etc/kiosk/"), ("KIOSK_CREDENTIAL_ISSUERS", "a,,b"),
                            ("KIOSK_CREDENTIAL_AUDIENCE", "door 1")] {
            let r = read(["KIOSK_VERDICT": "credentials", name: bad])
            XCTAssertEqual(r.errors.map(\.variable), [name], "\(name)=\(bad)")
        }
        // Outside credentials mode they do nothing, and say so.
        let ignored = read(["KIOSK_TRUST_DIR": "/srv/trust"])
        XCTAssertTrue(ignored.errors.isEmpty)
        XCTAssertEqual(ignored.warnings.map(\.variable), ["KIOSK_TRUST_DIR"])
        XCTAssertNotNil(ignored.warnings.first?.reason)
        // Wiegand's controller decides: not with a built-in verdict either.
        XCTAssertEqual(read(["KIOSK_VERDICT": "credentials", "KIOSK_WIEGAND_D0_LINE": "5", "KIOSK_WIEGAND_D1_LINE": "6"]).errors.map(\.variable), ["KIOSK_VERDICT"])
        XCTAssertTrue(Configuration.credentialVariables.allSatisfy(Configuration.variables.contains))
    }

    func testAVerdictGivenDirectlyDecidesOnceAndNotAfterTheDeadline() {
        var p = VerdictWaitPolicy(reportedNs: 1_000, limitMs: 2)
        let v = p.given(Verdict(result: .granted, reason: "valid", elapsedNs: 0, subject: "alice"), at: 501_000)
        XCTAssertEqual(v, Verdict(result: .granted, reason: "valid", elapsedNs: 500_000, subject: "alice"))
        XCTAssertNil(p.given(Verdict(result: .denied, reason: "used", elapsedNs: 0), at: 600_000), "once")
        XCTAssertNil(p.check(at: 5_000_000))
        var late = VerdictWaitPolicy(reportedNs: 0, limitMs: 2)
        XCTAssertEqual(late.given(Verdict(result: .granted, reason: "valid", elapsedNs: 0), at: 2_000_000)?.result, .error,
                       "a grant that comes at the deadline does not open the door")
    }

    func testAScanMessageOfACredentialCarriesNoPayload() {
        let token = Array("KC1:SECRET-TOKEN".utf8)
        let m = ScanMessage(id: "r-1", symbology: "QR-Code", bytes: token, timeMs: 0, frame: 3, latencyMs: 1, verdict: "granted",
                            credential: ScanCredential(subject: "alice", hash: "0011223344556677", reason: "valid"))
        XCTAssertEqual(m.json, #"{"id":"r-1","symbology":"QR-Code","credential":"alice","hash":"0011223344556677","reason":"valid","time":"1970-01-01T00:00:00.000Z","frame":3,"latency_ms":1.0,"verdict":"granted"}"#)
        let unverified = ScanMessage(id: "r-2", symbology: "QR-Code", bytes: [], timeMs: 0, frame: 3, latencyMs: 1, verdict: "denied",
                                     credential: ScanCredential(subject: nil, hash: "00", reason: "signature"))
        XCTAssertTrue(unverified.json.contains(#""credential":null,"hash":"00","reason":"signature""#), unverified.json)
    }
}
