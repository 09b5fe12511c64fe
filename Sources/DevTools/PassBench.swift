// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Foundation
import Glibc
import Platform
import Policy

/// `kiosk-dev credentials`' passes: what one pass's verification costs, form 1 (the
/// issuer's ES256 signature, the claims, the cnf point read by OpenSSL, the proof) and form 2 (the
/// holder found by key_id, the proof), beside a KC1 credential's.
///
/// Minted once by harness/pass/peer.py (`cryptography`, `cbor2`, `cwt`) with keys made for this
/// bench: the issuer `bench-pass` (iss bench, aud door-1, exp 2100), one holder with an
/// uncompressed point and one with a compressed point, slot 360000000 (the wall clock is set to
/// it). A verification after the first finds the slot taken (`used`): every check and signature
/// is done by then and the store is not written, so the figure is the verification's alone; the
/// first (a grant) writes and fsyncs the store, whose cost is the disk's.
enum PassBench {
    static let issuerKey = """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEg9W3CjUOM5XRky+pSjPTTwS+1ljs
xuC8LdjunB/scFdil6AvIZJOiF0tU/bmOzgcbXXv7+hm59BVB34sYGg8Cg==
-----END PUBLIC KEY-----
"""
    static let holderKey = "pAECIAEhWCDwG_oceY00X_ZT5edqiElTot_a7mfjawQ3-8fU6kl08yJYIAwuUqDSFsfruIePcIT50nFNniUMeKLtFtuS2lk7HsyU"
    static let form1 = "4b48313a840158d48443a10126a1044a62656e63682d70617373587ea7016562656e6368026c62656e63682d686f6c6465720366646f6f722d31041a" +
        "f4865700051a6553f100061a6553f10008a101a401022001215820f01bfa1c798d345ff653e5e76a884953a2dfdaee67e36b0437fbc7d4ea4974f322" +
        "58200c2e52a0d216c7ebb8878f7084f9d2714d9e250c78a2ed16db92da593b1ecc945840635251027b70e3a8a63366ecb55351091ff76e431871b1d0" +
        "86399c6c0b004cc6df8d10f8c1a05210639640e0e832e15bd63d10e2118ee59cd423efb6125c7c141a15752a005840d662c0e4e70b6056d5bc6c7fa6" +
        "4cb2ef09031f37c6c3a8484024e295f1afca85cf7c700dc4ee1450ea3c65c023bff39f40d3684e0f6adc6396c18b3439f3e0d5"
    static let form2 = "4b48313a8402487e6e5d1d941959b01a15752a005840f32bb9c78699bd07e1b6e3064c01d1036de5feb596fabf36d1aceb277e1faf5337e81d273990" +
        "2c89b2ef4d24d86183bdbbd0c6b7b1644866eaa14c4e951821c7"
    static let form1Compressed = "4b48313a840158b38443a10126a1044a62656e63682d70617373585da7016562656e6368026c62656e63682d686f6c6465720366646f6f722d31041a" +
        "f4865700051a6553f100061a6553f10008a101a401022001215820e60c16cf501904601fe74971de9dbf92768ab4bec9d0726b49e8be6b3b29b3cd22" +
        "f45840116e527f102007326f548231a77918e72a2c31c5a61bc6509094f03179ace1d8bcc771228c75c35a0dadb4a26f79593c1551bf2a66ca51d09d" +
        "0be4e6f38bd0a71a15752a005840660f83b72c46dc122f8ed0bbc9966e2e2b7eb5bc5b837520311484e4991a8f9c6c7076c2145ef8d3dae48b3b2b42" +
        "ec7b54a3b471ba59970d5fc5e2e1a8997a3c"

    struct Figures {
        /// A phone seen before (its point read already: `HolderPoints`).
        var form1Us: Double
        var form1CompressedUs: Double
        var form2Us: Double
        /// What a phone not seen before adds: its point read by OpenSSL (uncompressed, compressed).
        var pointUs: Double
        var compressedPointUs: Double
    }

    /// The bench's verifier: the issuer's key, the form-2 holder, the wall clock at the slot.
    static func verifier(directory: String) throws -> CredentialVerifier {
        let keys = [TrustedKey(kid: Array("bench-pass".utf8), key: try PublicKey(pem: Array(issuerKey.utf8)), file: "bench-pass.pem")]
        let holders = try HolderKeys.parse("bench \(holderKey)\n")
        return CredentialVerifier(prefix: "KC1:", rules: CredentialRules(issuers: ["bench"], audience: "door-1", skewSeconds: 30,
                                                                         requireSyncedClock: false),
                                  antipassbackSeconds: 0, trust: CredentialTrust(keys: keys, holders: holders),
                                  store: UsedTokenStore(directory: directory), clock: MonotonicClock(), wallClock: { 360_000_000 * 5 + 2 })
    }

    /// A form-1 pass's cnf point (SEC1), as the verifier reads it.
    static func point(_ hex: String) throws -> [UInt8] {
        let pass = try Pass(bytes(hex))
        let message = try COSESign1(pass.credential)
        guard let key = try Confirmation.key(payload: message.payload) else { throw CryptoError("a bench pass without cnf") }
        return key.sec1
    }

    /// The pass granted once, then verified `iterations` times more (each `used`), untimed: for
    /// `kiosk-dev credentials --count`.
    static func repeatVerification(_ hex: String, iterations: Int, directory: String) throws {
        let verifier = try verifier(directory: directory)
        let payload = bytes(hex)
        guard verifier.verify(payload).granted else { throw CryptoError("the bench's pass was refused") }
        for _ in 0..<iterations where verifier.verify(payload).reason != .used {
            throw CryptoError("the bench's pass again: not used")
        }
    }

    static func run(iterations: Int, median: ([Double]) -> Double) throws -> Figures {
        let dir = NSTemporaryDirectory() + "kiosk-bench-passes-\(getpid())"
        mkdir(dir, 0o700)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let verifier = try verifier(directory: dir)
        func time(_ hex: String) throws -> Double {
            let payload = bytes(hex)
            let first = verifier.verify(payload)
            guard first.granted else { throw CryptoError("the bench's pass was refused: \(first.reason.rawValue)") }
            var samples: [Double] = []
            for _ in 0..<iterations {
                let t0 = monotonicNanoseconds()
                let o = verifier.verify(payload)
                samples.append(Double(monotonicNanoseconds() - t0) / 1e3)
                guard o.reason == .used else { throw CryptoError("the bench's pass again: \(o.reason.rawValue), not used") }
            }
            return median(samples)
        }
        // A new phone's point: read (and checked on the curve) by OpenSSL.
        let points = try [form1, form1Compressed].map { try PassBench.point($0) }
        func read(_ sec1: [UInt8]) throws -> Double {
            var samples: [Double] = []
            for _ in 0..<iterations {
                let t0 = monotonicNanoseconds()
                _ = try PublicKey(p256Point: sec1)
                samples.append(Double(monotonicNanoseconds() - t0) / 1e3)
            }
            return median(samples)
        }
        return Figures(form1Us: try time(form1), form1CompressedUs: try time(form1Compressed), form2Us: try time(form2),
                       pointUs: try read(points[0]), compressedPointUs: try read(points[1]))
    }

    /// The bytes of a hex string the code itself wrote (a bad one is a programming error).
    static func bytes(_ hex: String) -> [UInt8] { Hex.bytes(hex)! }
}
