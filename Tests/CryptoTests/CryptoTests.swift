// SPDX-License-Identifier: Apache-2.0
// The shim against published vectors (FIPS 180-2, RFC 2202, FIPS-197, SP 800-38A, RFC 8032) and
// against signatures made by the openssl command: OpenSSL's answers, reached through dlopen.
import Crypto
import Foundation
import Policy
import TestSupport
import XCTest

final class CryptoTests: XCTestCase {
    func testSHA256OfABC() throws {
        XCTAssertEqual(hex(try Crypto.sha256(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hex(try Crypto.sha256([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// A thread's libcrypto state freed before it ends (`Crypto.threadEnds`, what the bundles',
    /// credentials' and OSDP threads do last): twice is harmless, and libcrypto goes on working on
    /// other threads and on a thread that uses it again after.
    func testAThreadFreesItsStateBeforeItEnds() throws {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        @Sendable func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
        let done = expectation(description: "threads")
        done.expectedFulfillmentCount = 4
        for _ in 0..<4 {
            Thread.detachNewThread {
                let first = try? Crypto.sha256(Array("abc".utf8))
                Crypto.threadEnds()
                Crypto.threadEnds()
                let again = try? Crypto.sha256(Array("abc".utf8))
                Crypto.threadEnds()
                XCTAssertEqual(first.map(hex), abc)
                XCTAssertEqual(again.map(hex), abc)
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(hex(try Crypto.sha256(Array("abc".utf8))), abc)
    }

    func testHMACSHA1RFC2202() throws {
        XCTAssertEqual(hex(try Crypto.hmacSHA1(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8))),
                       "b617318655057264e28bc0b6fb378c8ef146be00")
        XCTAssertEqual(hex(try Crypto.hmacSHA1(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))),
                       "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        XCTAssertEqual(hex(try Crypto.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    func testAES128() throws {
        // FIPS-197 appendix C.1
        let key = bytes("000102030405060708090a0b0c0d0e0f")
        XCTAssertEqual(hex(try Crypto.aes128ECBEncrypt(key: key, bytes("00112233445566778899aabbccddeeff"))),
                       "69c4e0d86a7b0430d8cdb78070b4c55a")
        // SP 800-38A F.2.1 / F.2.2, two blocks
        let k = bytes("2b7e151628aed2a6abf7158809cf4f3c"), iv = bytes("000102030405060708090a0b0c0d0e0f")
        let plain = bytes("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let cipher = try Crypto.aes128CBCEncrypt(key: k, iv: iv, plain)
        XCTAssertEqual(hex(cipher), "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2")
        XCTAssertEqual(try Crypto.aes128CBCDecrypt(key: k, iv: iv, cipher), plain)
        XCTAssertThrowsError(try Crypto.aes128ECBEncrypt(key: key, [1, 2, 3]))
        XCTAssertThrowsError(try Crypto.aes128CBCEncrypt(key: [1], iv: iv, plain))
    }

    func testRandomBytesDiffer() throws {
        let a = try Crypto.randomBytes(16), b = try Crypto.randomBytes(16)
        XCTAssertEqual(a.count, 16)
        XCTAssertNotEqual(a, b)
    }

    func testEd25519RFC8032() throws {
        let key1 = try PublicKey(pem: ed25519PEM("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        XCTAssertEqual(key1.kind, .ed25519)
        let sig1 = bytes("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        XCTAssertTrue(try key1.verify(message: [], signature: sig1))
        XCTAssertFalse(try key1.verify(message: [0], signature: sig1))
        let key2 = try PublicKey(pem: ed25519PEM("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"))
        var sig2 = bytes("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
        XCTAssertTrue(try key2.verify(message: [0x72], signature: sig2))
        XCTAssertFalse(try key1.verify(message: [0x72], signature: sig2), "another key")
        sig2[10] ^= 1
        XCTAssertFalse(try key2.verify(message: [0x72], signature: sig2), "a flipped bit")
        XCTAssertFalse(try key2.verify(message: [0x72], signature: Array(sig2.prefix(63))), "short")
    }

    /// A key and a signature made by the openssl command; the DER signature turned into COSE's r||s.
    func testES256AgainstOpensslCommand() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-crypto-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let message = Array("Sig_structure bytes".utf8)
        try Data(message).write(to: dir.appendingPathComponent("msg"))
        try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "key.pem"], in: dir)
        try openssl(["ec", "-in", "key.pem", "-pubout", "-out", "pub.pem"], in: dir)
        try openssl(["dgst", "-sha256", "-sign", "key.pem", "-out", "sig.der", "msg"], in: dir)
        let key = try PublicKey(pem: Array(try Data(contentsOf: dir.appendingPathComponent("pub.pem"))))
        XCTAssertEqual(key.kind, .ecP256)
        let sig = try rawSignature(der: Array(try Data(contentsOf: dir.appendingPathComponent("sig.der"))))
        XCTAssertTrue(try key.verify(message: message, signature: sig))
        XCTAssertFalse(try key.verify(message: message + [0], signature: sig))
        var bad = sig
        bad[40] ^= 0x80
        XCTAssertFalse(try key.verify(message: message, signature: bad))

        // A P-384 key is named, not accepted.
        try openssl(["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", "k384.pem"], in: dir)
        try openssl(["ec", "-in", "k384.pem", "-pubout", "-out", "p384.pem"], in: dir)
        XCTAssertThrowsError(try PublicKey(pem: Array(try Data(contentsOf: dir.appendingPathComponent("p384.pem"))))) {
            XCTAssertTrue("\($0)".contains("secp384r1"), "\($0)")
        }
    }

    /// A holder's point (`PublicKey(p256Point:)`), both SEC1 forms of a key the openssl command
    /// made: each verifies that key's signature. Refused: a point off the curve (a bit of y
    /// flipped), a compressed x with no point (x = 1: 1 - 3 + b is not a square mod p, by Euler's
    /// criterion with Python's pow), a coordinate not below p (x = p + 5, though x = 5 has a
    /// point), and encodings that are not P-256's. Then two threads read points at once (the
    /// shim's one copy of P-256's parameters) and get the same answers.
    func testAHoldersPointIsReadAndCheckedOnTheCurve() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-points-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let message = Array("KH1 proof".utf8)
        try Data(message).write(to: dir.appendingPathComponent("msg"))
        try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "key.pem"], in: dir)
        try openssl(["ec", "-in", "key.pem", "-pubout", "-outform", "DER", "-out", "pub.der"], in: dir)
        try openssl(["ec", "-in", "key.pem", "-pubout", "-outform", "DER", "-conv_form", "compressed", "-out", "pubc.der"], in: dir)
        try openssl(["dgst", "-sha256", "-sign", "key.pem", "-out", "sig.der", "msg"], in: dir)
        let sig = try rawSignature(der: Array(try Data(contentsOf: dir.appendingPathComponent("sig.der"))))
        // The SubjectPublicKeyInfo ends with the point: 65 bytes, or 33 compressed.
        let point = Array(Array(try Data(contentsOf: dir.appendingPathComponent("pub.der"))).suffix(65))
        let compressed = Array(Array(try Data(contentsOf: dir.appendingPathComponent("pubc.der"))).suffix(33))
        XCTAssertEqual(point.first, 0x04)
        XCTAssertTrue(compressed.first == 0x02 || compressed.first == 0x03)
        for p in [point, compressed] {
            let key = try PublicKey(p256Point: p)
            XCTAssertEqual(key.kind, .ecP256)
            XCTAssertTrue(try key.verify(message: message, signature: sig), "\(p.count) bytes")
            XCTAssertFalse(try key.verify(message: message + [0], signature: sig))
        }
        let p256 = bytes("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        let offCurve = Array(point.dropLast()) + [point[64] ^ 1]
        let pPlus5 = bytes("ffffffff00000001000000000000000000000001000000000000000000000004")
        let five = [UInt8](repeating: 0, count: 31) + [5], one = [UInt8](repeating: 0, count: 31) + [1]
        XCTAssertNoThrow(try PublicKey(p256Point: [0x02] + five), "x = 5 has a point")
        let refused: [(String, [UInt8])] = [
            ("off the curve", offCurve), ("no point at x = 1", [0x02] + one), ("nor its other y", [0x03] + one),
            ("x = p + 5", [0x02] + pPlus5), ("x = p", [0x03] + p256), ("y = p", [0x04] + five + p256),
            ("hybrid form", [0x06] + Array(point.dropFirst())), ("short", Array(point.dropLast())),
            ("compressed, long", compressed + [0]), ("infinity", [0x00]), ("empty", []),
        ]
        for (what, p) in refused {
            XCTAssertThrowsError(try PublicKey(p256Point: p), what)
        }
        XCTAssertThrowsError(try PublicKey(p256Point: offCurve)) { XCTAssertTrue("\($0)".contains("not a point of P-256"), "\($0)") }

        let done = expectation(description: "threads")
        done.expectedFulfillmentCount = 2
        for t in 0..<2 {
            Thread.detachNewThread {
                var right = 0
                for i in 0..<300 {
                    let p = [point, compressed, offCurve, [0x02] + one][(i + t) % 4]
                    let read = (try? PublicKey(p256Point: p)) != nil
                    if read == ((i + t) % 4 < 2) { right += 1 }
                }
                Crypto.threadEnds()
                XCTAssertEqual(right, 300, "thread \(t)")
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 60)
    }

    func testNotAKey() {
        XCTAssertThrowsError(try PublicKey(pem: Array("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n".utf8)))
        XCTAssertThrowsError(try PublicKey(pem: []))
    }

    func testLoadedOnFirstUseAndNamed() throws {
        try Crypto.load()
        XCTAssertEqual(Crypto.library, "libcrypto.so.3")
        XCTAssertTrue(Crypto.version?.hasPrefix("OpenSSL 3.") ?? false, Crypto.version ?? "nil")
    }

    // MARK: helpers

    private func ed25519PEM(_ rawHex: String) -> [UInt8] {
        let spki = bytes("302a300506032b6570032100") + bytes(rawHex)
        return Array("-----BEGIN PUBLIC KEY-----\n\(Data(spki).base64EncodedString())\n-----END PUBLIC KEY-----\n".utf8)
    }

    /// SEQUENCE { INTEGER r, INTEGER s } to r||s, each left-padded to 32 bytes.
    private func rawSignature(der: [UInt8]) throws -> [UInt8] {
        var i = 2
        XCTAssertEqual(der[0], 0x30)
        var out: [UInt8] = []
        for _ in 0..<2 {
            XCTAssertEqual(der[i], 0x02)
            let n = Int(der[i + 1])
            var v = Array(der[(i + 2)..<(i + 2 + n)])
            while v.count > 32 && v.first == 0 { v.removeFirst() }
            out += [UInt8](repeating: 0, count: 32 - v.count) + v
            i += 2 + n
        }
        return out
    }

    private func openssl(_ args: [String], in dir: URL) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = args
        p.currentDirectoryURL = dir
        let run = try Child.run(p)
        XCTAssertEqual(run.status, 0, "openssl \(args.joined(separator: " ")): \(run.errors)")
    }

    private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
    private func bytes(_ h: String) -> [UInt8] { Hex.bytes(h)! }
}
