// SPDX-License-Identifier: Apache-2.0
/// A setup code (interface 0.6, "Set up at the door by a signed code"): the 4 bytes `KS1:` and
/// an untagged COSE_Sign1 (ES256 or EdDSA) whose payload is a CBOR map with text keys. Read as a
/// pass is: strictly (`CBORReader`), bounded in every length, and in two steps: the envelope and
/// the code's own site key first (the key that must verify it, or that a new door pins), the
/// settings only from a payload whose signature has verified (`SetupPayload`).
public enum SetupCode {
    public static let prefix = "KS1:"
    /// The longest code, prefix included: a site key, a network, a zone, three NTP servers, a
    /// password and a few settings are about 400 bytes (QR version 15 at level M holds 412).
    public static let maxBytes = 1200
    /// `exp - iat` at most: a code is made for one visit.
    public static let maxLifetimeS: Int64 = 86_400

    /// Whether a payload is a setup code at all (by its prefix): decided on the frame loop.
    public static func isSetupCode<C: Collection>(_ payload: C) -> Bool where C.Element == UInt8 {
        payload.starts(with: prefix.utf8)
    }

    /// The envelope: at most `maxBytes`, the prefix, an untagged COSE_Sign1 (an array of 4).
    public static func envelope(_ payload: [UInt8]) throws(SetupRefusal) -> COSESign1 {
        guard payload.count <= maxBytes else { throw SetupRefusal(.malformed, "a code of \(payload.count) bytes (at most \(maxBytes))") }
        guard isSetupCode(payload) else { throw SetupRefusal(.malformed, "no \(prefix) prefix") }
        let body = Array(payload.dropFirst(prefix.utf8.count))
        guard body.first == 0x84 else { throw SetupRefusal(.malformed, "not an untagged COSE_Sign1 (an array of 4)") }
        do {
            return try COSESign1(body)
        } catch {
            throw SetupRefusal(.malformed, "\(error)")
        }
    }

    /// The key the code says signed it (`site_key`), read from the payload before its signature
    /// is checked (it is what the signature is checked with): only this claim is looked at, and
    /// it must suit the envelope's algorithm (ES256: EC2 P-256; EdDSA: OKP Ed25519).
    public static func claimedSiteKey(_ envelope: COSESign1) throws(SetupRefusal) -> SetupSiteKey {
        let map = try SetupPayload.map(envelope.payload)
        guard let item = map.first(where: { $0.key == .text("site_key") })?.value else { throw SetupRefusal(.malformed, "no site_key") }
        let key: SetupSiteKey
        do { key = try SetupSiteKey(item) } catch { throw SetupRefusal(.malformed, "site_key: \(error)") }
        guard key.algorithm == envelope.algorithm else {
            throw SetupRefusal(.malformed, "signed with \(envelope.algorithm.name), but the site_key is for \(key.algorithm.name)")
        }
        return key
    }
}

/// Why a code is refused: the `setup` event's `reason` (interface 0.6) and what to say.
public struct SetupRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// Setup is not open (`KIOSK_SETUP`, the window, the exit button).
        case closed
        case signature
        /// Another site's code, or a door with no site key that is neither new nor opened by its button.
        case site
        case expired
        case used
        case wrongDoor
        case malformed
        /// A value the configuration refuses, or a variable a code may not set.
        case refused(String)

        public var text: String {
            switch self {
            case .closed: return "closed"
            case .signature: return "signature"
            case .site: return "site"
            case .expired: return "expired"
            case .used: return "used"
            case .wrongDoor: return "wrong door"
            case .malformed: return "malformed"
            case .refused(let name): return "refused \(name)"
            }
        }
    }

    public let reason: Reason
    /// What went wrong, for the log and the command's message: never a secret's value.
    public let detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.text): \(detail)" }
}

/// The site's public key as a code carries it: a COSE_Key (RFC 9052 7, RFC 9053 7.1/7.2), EC2
/// P-256 `{1: 2, -1: 1, -2: x, -3: y}` or OKP Ed25519 `{1: 1, -1: 6, -2: x}`, nothing else in
/// the map. Pinned as the PEM file `KIOSK_SITE_KEY` names (its SubjectPublicKeyInfo).
public struct SetupSiteKey: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case p256(x: [UInt8], y: [UInt8])
        case ed25519([UInt8])
    }

    public let kind: Kind

    public init(_ item: CBOR) throws {
        guard case .map(let pairs) = item else { throw CBORError("a COSE_Key that is not a map") }
        func bytes(_ label: CBOR, _ name: String) throws -> [UInt8] {
            guard case .bytes(let b)? = item[label], b.count == 32 else { throw CBORError("no \(name) of 32 bytes") }
            return b
        }
        switch (item[.unsigned(1)], item[.negative(0)]) {
        case (.unsigned(2)?, .unsigned(1)?):
            guard pairs.count == 4 else { throw CBORError("an EC2 key that is not {1: 2, -1: 1, -2: x, -3: y}") }
            kind = .p256(x: try bytes(.negative(1), "x (-2)"), y: try bytes(.negative(2), "y (-3)"))
        case (.unsigned(1)?, .unsigned(6)?):
            guard pairs.count == 3 else { throw CBORError("an OKP key that is not {1: 1, -1: 6, -2: x}") }
            kind = .ed25519(try bytes(.negative(1), "x (-2)"))
        default:
            throw CBORError("a key that is neither EC2 P-256 nor OKP Ed25519")
        }
    }

    public init(kind: Kind) { self.kind = kind }

    public var algorithm: COSESign1.Algorithm {
        if case .p256 = kind { return .es256 }
        return .edDSA
    }

    public var item: CBOR {
        switch kind {
        case .p256(let x, let y): return .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)),
                                              CBORPair(.negative(1), .bytes(x)), CBORPair(.negative(2), .bytes(y))])
        case .ed25519(let x): return .map([CBORPair(.unsigned(1), .unsigned(1)), CBORPair(.negative(0), .unsigned(6)),
                                          CBORPair(.negative(1), .bytes(x))])
        }
    }

    /// The DER SubjectPublicKeyInfo (RFC 5480 for P-256, RFC 8410 for Ed25519): fixed headers
    /// and the point; what OpenSSL and Python's `cryptography` write for these keys.
    public var subjectPublicKeyInfo: [UInt8] {
        switch kind {
        case .p256(let x, let y):
            return [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
                    0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04] + x + y
        case .ed25519(let x):
            return [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + x
        }
    }

    /// The key as a PEM file (`-----BEGIN PUBLIC KEY-----`, 64 characters a line).
    public var pem: String {
        let b64 = Array(Base64.encode(subjectPublicKeyInfo))
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var i = 0
        while i < b64.count {
            lines.append(String(b64[i..<min(i + 64, b64.count)]))
            i += 64
        }
        return (lines + ["-----END PUBLIC KEY-----"]).joined(separator: "\n") + "\n"
    }

    /// The DER of a PEM public key file (the pinned `KIOSK_SITE_KEY`), nil when it holds no one
    /// `PUBLIC KEY` block of base64: to compare with a code's key, byte for byte.
    public static func der(pem: String) -> [UInt8]? {
        let lines = pem.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { String($0).trimmedOfBlanks }
        guard let begin = lines.firstIndex(of: "-----BEGIN PUBLIC KEY-----"),
              let end = lines[begin...].firstIndex(of: "-----END PUBLIC KEY-----") else { return nil }
        return Base64.decode(lines[(begin + 1)..<end].joined())
    }
}
