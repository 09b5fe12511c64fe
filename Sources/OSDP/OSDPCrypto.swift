// SPDX-License-Identifier: Apache-2.0
import Crypto
import Policy

/// The Secure Channel's AES-128 and random bytes: OpenSSL's libcrypto (Sources/Crypto).
public struct OpenSSLCipher: OSDPCipher {
    public init() {}

    public func encrypt(key: [UInt8], iv: [UInt8]?, _ data: [UInt8]) throws -> [UInt8] {
        if let iv { return try Crypto.aes128CBCEncrypt(key: key, iv: iv, data) }
        return try Crypto.aes128ECBEncrypt(key: key, data)
    }

    public func decrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        try Crypto.aes128CBCDecrypt(key: key, iv: iv, data)
    }

    public func random(_ count: Int) throws -> [UInt8] { try Crypto.randomBytes(count) }

    /// Loads libcrypto now (a missing library is said at start, not at the first session).
    public static func load() throws { try Crypto.load() }
}
