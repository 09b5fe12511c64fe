// SPDX-License-Identifier: Apache-2.0
// The kiosk's cryptography in Swift types: every operation is OpenSSL's (Sources/CCrypto, loaded
// on first use); nothing here computes a hash, a signature or a cipher itself.
import CCrypto
import Platform

public struct CryptoError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum Crypto {
    /// Loads libcrypto if it is not yet: a kiosk that needs it calls this at start, so that a
    /// missing library is an error then (exit 69, naming it) and not a denied door later.
    public static func load() throws {
        var err = [CChar](repeating: 0, count: 256)
        if kiosk_crypto_load(&err, err.count) != 0 {
            throw CryptoError("\(library): \(String(cBuffer: err))")
        }
    }

    /// Called last by a thread that used libcrypto, before it tells anyone it is done: its
    /// thread-local state is freed now, not by the thread's exit racing the process's exit
    /// (OpenSSL's atexit cleanup assumes no other thread still runs; openssl/openssl#6214).
    public static func threadEnds() { kiosk_crypto_thread_stop() }

    /// The library file it loads ("libcrypto.so.3"), and its version once loaded.
    public static var library: String { String(cString: kiosk_crypto_library()) }
    public static var version: String? { kiosk_crypto_version().map { String(cString: $0) } }

    public static func sha256(_ data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        guard kiosk_sha256(data, data.count, &out) == 0 else { throw failure("SHA-256") }
        return out
    }

    public static func hmacSHA1(key: [UInt8], data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        guard kiosk_hmac_sha1(key, key.count, data, data.count, &out) == 0 else { throw failure("HMAC-SHA1") }
        return out
    }

    public static func hmacSHA256(key: [UInt8], data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        guard kiosk_hmac_sha256(key, key.count, data, data.count, &out) == 0 else { throw failure("HMAC-SHA256") }
        return out
    }

    /// AES-128 without padding; `data.count` must be a multiple of 16.
    public static func aes128ECBEncrypt(key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try checkAES(key: key, iv: nil, data)
        var out = [UInt8](repeating: 0, count: data.count)
        guard kiosk_aes128_ecb_encrypt(key, data, &out, data.count) == 0 else { throw failure("AES-128-ECB") }
        return out
    }

    public static func aes128CBCEncrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try checkAES(key: key, iv: iv, data)
        var out = [UInt8](repeating: 0, count: data.count)
        guard kiosk_aes128_cbc_encrypt(key, iv, data, &out, data.count) == 0 else { throw failure("AES-128-CBC") }
        return out
    }

    public static func aes128CBCDecrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try checkAES(key: key, iv: iv, data)
        var out = [UInt8](repeating: 0, count: data.count)
        guard kiosk_aes128_cbc_decrypt(key, iv, data, &out, data.count) == 0 else { throw failure("AES-128-CBC") }
        return out
    }

    public static func randomBytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard kiosk_random_bytes(&out, count) == 0 else { throw failure("random bytes") }
        return out
    }

    /// scrypt (RFC 7914) of `password` with `salt`: N = 2^`logN`, `r`, `p`, `length` bytes.
    public static func scrypt(password: [UInt8], salt: [UInt8], logN: Int, r: Int, p: Int, length: Int) throws -> [UInt8] {
        guard (1...30).contains(logN), r > 0, p > 0, length > 0 else { throw CryptoError("scrypt needs LOGN 1-30, r and p above 0") }
        var out = [UInt8](repeating: 0, count: length)
        guard kiosk_scrypt(password, password.count, salt, salt.count, UInt64(1) << UInt64(logN), UInt64(r), UInt64(p),
                           &out, length) == 0 else { throw failure("scrypt") }
        return out
    }

    /// Whether `a` and `b` are equal, compared in a time that does not depend on where they
    /// differ (OpenSSL's CRYPTO_memcmp); of different lengths: false.
    public static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) throws -> Bool {
        guard a.count == b.count else { return false }
        let rc = kiosk_equal_in_constant_time(a, b, a.count)
        guard rc >= 0 else { throw failure("CRYPTO_memcmp") }
        return rc == 1
    }

    private static func checkAES(key: [UInt8], iv: [UInt8]?, _ data: [UInt8]) throws {
        guard key.count == 16, iv == nil || iv!.count == 16, data.count % 16 == 0 else {
            throw CryptoError("AES-128 needs a 16-byte key and IV and whole 16-byte blocks")
        }
    }

    private static func failure(_ what: String) -> CryptoError {
        do { try load() } catch { return error as? CryptoError ?? CryptoError("\(error)") }
        return CryptoError("\(what) failed in \(library)")
    }
}

/// An issuer's public key (a PEM file of the trust directory).
public final class PublicKey: @unchecked Sendable {
    public enum Kind: String, Sendable { case ecP256 = "EC P-256", ed25519 = "Ed25519" }

    public let kind: Kind
    private let key: OpaquePointer

    /// Throws for a file that is not a public key, or a key of another type (the error says which).
    public init(pem: [UInt8]) throws {
        var err = [CChar](repeating: 0, count: 256)
        var kind: Int32 = 0
        guard let key = kiosk_public_key_from_pem(pem, pem.count, &kind, &err, err.count) else {
            throw CryptoError(String(cBuffer: err))
        }
        switch Int(kind) {
        case Int(KIOSK_KEY_EC_P256.rawValue): self.kind = .ecP256
        case Int(KIOSK_KEY_ED25519.rawValue): self.kind = .ed25519
        default:
            kiosk_public_key_free(key)
            throw CryptoError(String(cBuffer: err))
        }
        self.key = key
    }

    /// A holder's P-256 key from its SEC1 point: 0x04||x||y, or 0x02/0x03||x (a
    /// compressed point). Throws unless OpenSSL decodes it to a point on the curve.
    public init(p256Point point: [UInt8]) throws {
        var err = [CChar](repeating: 0, count: 256)
        guard let key = kiosk_public_key_from_p256_point(point, point.count, &err, err.count) else {
            throw CryptoError(String(cBuffer: err))
        }
        self.kind = .ecP256
        self.key = key
    }

    deinit { kiosk_public_key_free(key) }

    /// ES256 (COSE alg -7, signature r||s) or Ed25519 (COSE alg -8), by the key's kind: true only
    /// for a signature that verifies. A signature that is not 64 bytes is false.
    public func verify(message: [UInt8], signature: [UInt8]) throws -> Bool {
        guard signature.count == 64 else { return false }
        let rc = kind == .ecP256
            ? kiosk_verify_es256(key, message, message.count, signature)
            : kiosk_verify_ed25519(key, message, message.count, signature)
        if rc < 0 { throw CryptoError("\(kind.rawValue) verification could not run in \(Crypto.library)") }
        return rc == 1
    }
}
