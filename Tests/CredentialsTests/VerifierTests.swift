// SPDX-License-Identifier: Apache-2.0
import CZlib
import Credentials
import Crypto
import Foundation
import Platform
import Policy
import TestSupport
import XCTest

/// The verifier in-process on credentials from the independent peer (cwt, pycose,
/// pyotp), with an injected wall clock and clock state; TOTP on RFC 6238's appendix B through
/// OpenSSL's HMAC; the zlib cap; the store's file across instances.
final class VerifierTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-cred-\(UUID().uuidString.prefix(8))"
        for d in [trust, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    final class Synced: ClockSynchronization, @unchecked Sendable {
        var value = true
        var isSynchronized: Bool { value }
    }

    final class Wall: @unchecked Sendable { var now: Int64 = 1_800_000_000 }

    func peer() throws -> CredentialPeer {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        return try CredentialPeer(python: python)
    }

    func verifier(_ c: Configuration = Configuration(), wall: Wall, synced: Synced, clock: ManualClock = ManualClock(), store: UsedTokenStore? = nil)
        throws -> CredentialVerifier {
        var c = c
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        let (t, problems) = CredentialFiles.load(c, [:])
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        return CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: c.antipassbackS, trust: t,
                                  store: store ?? UsedTokenStore(directory: state), clock: clock, wallClock: { wall.now }, synchronization: synced)
    }

    /// RFC 6238 appendix B, SHA-1 rows: the HMAC is OpenSSL's, the truncation ours.
    func testTOTPOnRFC6238AppendixB() throws {
        let secret = Array("12345678901234567890".utf8)
        for (time, code) in [(59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
                             (2_000_000_000, "69279037"), (20_000_000_000, "65353130")] as [(Int64, String)] {
            let mac = try Crypto.hmacSHA1(key: secret, data: TOTP.message(step: TOTP.step(time: time, period: 30)))
            XCTAssertEqual(TOTP.code(hmac: mac, digits: 8), code, "T=\(time)")
        }
    }

    func testZlibIsCappedAndStrict() throws {
        let small = Array("hello".utf8)
        let packed = try deflate(small)
        XCTAssertEqual(CredentialVerifier.coseBytes(Array(Base45.encode(packed).utf8)), small)
        // A bomb: 1 MB of zeros in about a kilobyte; it stops at the cap and is refused.
        let bomb = try deflate([UInt8](repeating: 0, count: 1 << 20))
        XCTAssertLessThan(bomb.count, CredentialVerifier.maxEncodedBytes)
        var out = [UInt8](repeating: 0, count: CredentialVerifier.maxInflatedBytes)
        var n = 0
        XCTAssertEqual(kiosk_inflate(bomb, bomb.count, &out, out.count, &n), KIOSK_INFLATE_TOO_LARGE.rawValue)
        XCTAssertNil(CredentialVerifier.coseBytes(Array(Base45.encode(bomb).utf8)))
        XCTAssertNil(CredentialVerifier.coseBytes(Array(Base45.encode(Array(packed.dropLast(2))).utf8)), "truncated stream")
        XCTAssertNil(CredentialVerifier.coseBytes(Array(Base45.encode(packed + [0]).utf8)), "a byte after the stream")
        var corrupt = packed
        corrupt[4] ^= 0xff
        XCTAssertNil(CredentialVerifier.coseBytes(Array(Base45.encode(corrupt).utf8)), "corrupt data")
    }

    /// zlib through the peer's python (an independent deflate).
    func deflate(_ bytes: [UInt8]) throws -> [UInt8] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", "import sys, zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read(), 9))"]
        return Array(try Child.run(p, input: Data(bytes)).stdout)
    }

    func testTrustDirectoryNamesKidsAndRefusesWhatIsNoKey() throws {
        XCTAssertEqual(TrustDirectory.kid(fromFileName: "issuer-1.pem"), Array("issuer-1".utf8))
        XCTAssertEqual(TrustDirectory.kid(fromFileName: "issuer-1.2.pem"), Array("issuer-1".utf8))
        XCTAssertEqual(TrustDirectory.kid(fromFileName: "hex-00ff.pem"), [0x00, 0xff])
        XCTAssertEqual(TrustDirectory.kid(fromFileName: "hex-00ff.3.pem"), [0x00, 0xff])
        XCTAssertNil(TrustDirectory.kid(fromFileName: "hex-0.pem"))
        XCTAssertEqual(TrustDirectory.kidText([0x00, 0xff]), "hex-00ff")
        try "not a key".write(toFile: trust + "/bad.pem", atomically: true, encoding: .utf8)
        try "ignored".write(toFile: trust + "/README", atomically: true, encoding: .utf8)
        let (keys, problems) = TrustDirectory.load(trust)
        XCTAssertTrue(keys.isEmpty)
        XCTAssertEqual(problems.map(\.file), ["bad.pem"])
    }

    func testSignedCredentialsFromTheIndependentPeer() throws {
        let peer = try peer()
        let wall = Wall(), synced = Synced()
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
        try peer.keygen("EdDSA", privatePath: folder + "/ed.key", publicPath: trust + "/hex-0102.pem")
        try peer.keygen("ES256", privatePath: folder + "/other.key", publicPath: folder + "/other.pem")
        var c = Configuration()
        c.credentialIssuers = ["acme"]
        c.credentialAudience = "door-1"
        let v = try verifier(c, wall: wall, synced: synced)
        let now = Int(wall.now)
        func mint(_ claims: [String: Any], key: String = "es.key", alg: String = "ES256", kid: Any = "issuer-1", lib: String = "cwt",
                  zlib: Bool = true, tagged: Bool = false) throws -> [UInt8] {
            var all: [String: Any] = ["1": "acme", "2": "alice", "4": now + 3600, "5": now - 60, "6": now - 60]
            all.merge(claims) { _, b in b }
            return Array(try peer.sign(lib: lib, privatePath: folder + "/" + key, alg: alg, kid: kid, claims: all, zlib: zlib, tagged: tagged).utf8)
        }
        let good = try mint([:])
        let o = v.verify(good)
        XCTAssertEqual(o.reason, .valid)
        XCTAssertEqual(o.sub, "alice")
        XCTAssertEqual(o.kid, "issuer-1")
        XCTAssertEqual(o.hash, PayloadBytes.hex(Array(try Crypto.sha256(good).prefix(8))))
        XCTAssertEqual(v.verify(try mint([:], key: "ed.key", alg: "EdDSA", kid: ["hex": "0102"], lib: "pycose", zlib: false)).reason, .valid,
                       "EdDSA, kid protected and binary, untagged, no zlib (pycose)")
        XCTAssertEqual(v.verify(try mint([:], tagged: true)).reason, .valid, "tags 61 and 18")
        XCTAssertEqual(v.verify(try mint(["4": now - 100])).reason, .expired)
        XCTAssertEqual(v.verify(try mint(["5": now + 100])).reason, .notYetValid)
        XCTAssertEqual(v.verify(try mint(["3": "door-2"])).reason, .wrongDoor)
        XCTAssertEqual(v.verify(try mint(["1": "evil"])).reason, .wrongIssuer)
        XCTAssertEqual(v.verify(try mint([:], key: "other.key")).reason, .signature, "a key not trusted under a trusted kid")
        XCTAssertEqual(v.verify(try mint([:], key: "other.key", kid: "nobody")).reason, .unknownKey)
        XCTAssertEqual(v.verify(try mint([:], alg: "ES256", kid: ["hex": "0102"])).reason, .unknownKey, "ES256 under an Ed25519 kid")
        // One flipped bit anywhere in the signed bytes: signature (or malformed), never valid.
        synced.value = false
        XCTAssertEqual(v.verify(try mint([:])).reason, .clockNotSynchronized)
        synced.value = true
        let once = try mint(["7": ["hex": "c0ffee"]])
        XCTAssertEqual(v.verify(once).reason, .valid)
        XCTAssertEqual(v.verify(once).reason, .used)
        // The store is on disk: a new verifier (a restart) still knows it.
        XCTAssertEqual(try verifier(c, wall: wall, synced: synced).verify(once).reason, .used)
        try "# list\nalice\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        XCTAssertEqual(try verifier(c, wall: wall, synced: synced).verify(good).reason, .revoked)
    }

    func testAKidSharedByTwoKeysTriesEach() throws {
        let peer = try peer()
        let wall = Wall(), synced = Synced()
        try peer.keygen("ES256", privatePath: folder + "/a.key", publicPath: trust + "/shared.pem")
        try peer.keygen("EdDSA", privatePath: folder + "/b.key", publicPath: trust + "/shared.2.pem")
        try peer.keygen("ES256", privatePath: folder + "/c.key", publicPath: trust + "/shared.3.pem")
        let v = try verifier(wall: wall, synced: synced)
        XCTAssertEqual(v.currentTrust.keys.count, 3)
        for (key, alg) in [("a.key", "ES256"), ("b.key", "EdDSA"), ("c.key", "ES256")] {
            let t = try peer.sign(privatePath: folder + "/" + key, alg: alg, kid: "shared", claims: ["2": "s-\(key)", "4": Int(wall.now) + 60])
            XCTAssertEqual(v.verify(Array(t.utf8)).reason, .valid, key)
        }
    }

    func testRotatingCodesFromPyotp() throws {
        let peer = try peer()
        let wall = Wall(), synced = Synced(), clock = ManualClock()
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        try "carol \(secret)\n".write(toFile: folder + "/totp", atomically: true, encoding: .utf8)
        var c = Configuration()
        c.totpFile = folder + "/totp"
        c.clockSkewS = 5
        c.antipassbackS = 0
        let v = try verifier(c, wall: wall, synced: synced, clock: clock)
        let now = Int(wall.now)
        let code = Array(try peer.totp(secret: secret, holder: "carol", time: now).utf8)
        XCTAssertEqual(v.verify(code).reason, .valid)
        XCTAssertEqual(v.verify(code).reason, .used, "the same step twice")
        XCTAssertEqual(v.verify(Array(try peer.totp(secret: secret, holder: "carol", time: now - 60).utf8)).reason, .expired)
        XCTAssertEqual(v.verify(Array(try peer.totp(secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", holder: "carol", time: now + 30).utf8)).reason,
                       .signature, "another secret's code")
        XCTAssertEqual(v.verify(Array(try peer.totp(secret: secret, holder: "mallory", time: now).utf8)).reason, .unknownKey)
        synced.value = false
        XCTAssertEqual(v.verify(Array(try peer.totp(secret: secret, holder: "carol", time: now + 30).utf8)).reason, .clockNotSynchronized)
    }

    func testAntipassback() throws {
        let peer = try peer()
        let wall = Wall(), synced = Synced(), clock = ManualClock()
        try peer.keygen("EdDSA", privatePath: folder + "/k", publicPath: trust + "/k.pem")
        var c = Configuration()
        c.antipassbackS = 60
        let v = try verifier(c, wall: wall, synced: synced, clock: clock)
        func pass(_ n: Int) throws -> [UInt8] {
            Array(try peer.sign(privatePath: folder + "/k", alg: "EdDSA", kid: "k", claims: ["2": "alice", "4": Int(wall.now) + 3600, "7": ["hex": String(format: "%02x", n)]]).utf8)
        }
        XCTAssertEqual(v.verify(try pass(1)).reason, .valid)
        XCTAssertEqual(v.verify(try pass(2)).reason, .antipassback)
        clock.advance(byNs: 61_000_000_000)
        XCTAssertEqual(v.verify(try pass(2)).reason, .valid, "antipassback did not use up the ticket")
    }

    func testHostileInputIsMalformed() throws {
        try "carol GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n".write(toFile: folder + "/totp", atomically: true, encoding: .utf8)
        var c = Configuration()
        c.totpFile = folder + "/totp"
        let v = try verifier(c, wall: Wall(), synced: Synced())
        func enc(_ bytes: [UInt8]) -> [UInt8] { Array(("KC1:" + Base45.encode(bytes)).utf8) }
        let cose = CBOREncoder.encode(.tagged(18, .array([.bytes(CBOREncoder.encode(.map([CBORPair(.unsigned(1), .negative(6))]))), .map([]),
                                                          .bytes([0xa0]), .bytes([UInt8](repeating: 0, count: 64))])))
        let cases: [(String, [UInt8])] = [
            ("not Base45", Array("KC1:abc~".utf8)),
            ("truncated Base45", Array(enc(cose).dropLast(1))),
            ("oversized Base45", Array(("KC1:" + String(repeating: "00", count: 3000)).utf8)),
            ("invalid zlib", enc([0x78, 0x9c, 0xff, 0xff, 0xff])),
            ("CBOR wrong type", enc(CBOREncoder.encode(.map([])))),
            ("deep nesting", enc([UInt8](repeating: 0x81, count: 200) + [0])),
            ("huge length", enc([0x84, 0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])),
            ("duplicate keys", enc(CBOREncoder.encode(.array([.bytes([0xa2, 0x01, 0x26, 0x01, 0x27]), .map([]), .bytes([]), .bytes([])])))),
            ("empty", Array("KC1:".utf8)),
            ("a KT1 that is not one", Array("KT1:carol".utf8)),
        ]
        for (name, payload) in cases { XCTAssertEqual(v.verify(payload).reason, .malformed, name) }
        XCTAssertEqual(v.verify(enc(cose)).reason, .unknownKey, "well formed, no such kid")
        XCTAssertEqual(v.verify(Array("HELLO".utf8)).reason, .notACredential)
    }

    func testTheStoreSurvivesARestartAndATornFileDenies() throws {
        let s = UsedTokenStore(directory: state, capacity: 2)
        XCTAssertEqual(s.claim("c:01", until: 2_000_000_000, now: 1_000, skew: 0), .fresh)
        XCTAssertEqual(UsedTokenStore(directory: state).claim("c:01", until: 2_000_000_000, now: 1_000, skew: 0), .used)
        XCTAssertEqual(s.claim("c:02", until: nil, now: 1_000, skew: 0), .fresh)
        XCTAssertEqual(s.claim("c:03", until: nil, now: 1_000, skew: 0), .full)
        // A torn snapshot (the journal's records kept beside it) cannot be trusted.
        var t = UsedTokens()
        _ = t.claim("c:01", until: nil, now: 0, skew: 0)
        try String(t.fileText.dropLast(3)).write(toFile: state + "/used-tokens", atomically: true, encoding: .utf8)
        let torn = UsedTokenStore(directory: state)
        XCTAssertNotNil(torn.damage)
        guard case .unavailable = torn.claim("c:09", until: nil, now: 1_000, skew: 0) else { return XCTFail("a torn store must not grant") }
        // A store folder that cannot be written: the claim fails, nothing is granted.
        let ro = UsedTokenStore(directory: folder + "/no-such-folder")
        guard case .unavailable = ro.claim("c:01", until: nil, now: 1_000, skew: 0) else { return XCTFail("an unwritable store must not grant") }
    }
}
