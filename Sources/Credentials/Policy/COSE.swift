// SPDX-License-Identifier: Apache-2.0
/// A COSE_Sign1 message (RFC 9052 4.2) as a signed credential carries it, parsed far enough to
/// check its signature and no further: the payload stays bytes until the signature has verified
/// (`CWTClaims` reads it then).
public struct COSESign1: Equatable, Sendable {
    /// COSE algorithm identifiers (RFC 9053): the two the kiosk accepts.
    public enum Algorithm: Int64, Sendable {
        case es256 = -7
        case edDSA = -8
        public var name: String { self == .es256 ? "ES256" : "EdDSA" }
    }

    /// The protected header exactly as encoded (the signature covers these bytes).
    public let protectedBytes: [UInt8]
    public let algorithm: Algorithm
    /// From the protected header, else the unprotected one; empty when neither has one.
    public let kid: [UInt8]
    /// The payload exactly as encoded (not yet trusted).
    public let payload: [UInt8]
    public let signature: [UInt8]

    /// Tag 18 (COSE_Sign1), optionally inside CWT's tag 61 (RFC 8392 6), or untagged. Throws for
    /// anything else: another tag, a detached payload, an algorithm other than ES256 or EdDSA or
    /// one not in the protected header, a header label repeated or of the wrong type.
    public init(_ bytes: [UInt8]) throws {
        var item = try CBORReader.decode(bytes)
        if case .tagged(61, let inner) = item { item = inner }
        if case .tagged(18, let inner) = item { item = inner }
        guard case .array(let parts) = item, parts.count == 4 else { throw CBORError("not a COSE_Sign1 array of 4") }
        guard case .bytes(let protectedBytes) = parts[0], case .map(let unprotected) = parts[1],
              case .bytes(let payload) = parts[2], case .bytes(let signature) = parts[3] else {
            throw CBORError("a COSE_Sign1 part of the wrong type")
        }
        // An empty protected header is the empty string (RFC 9052 3); else a map.
        let protected: [CBORPair]
        if protectedBytes.isEmpty {
            protected = []
        } else {
            guard case .map(let m) = try CBORReader.decode(protectedBytes) else { throw CBORError("a protected header that is not a map") }
            protected = m
        }
        for pair in protected + unprotected {
            guard pair.key.int != nil || { if case .text = pair.key { return true } else { return false } }() else {
                throw CBORError("a header label that is neither an integer nor text")
            }
        }
        // alg (label 1) must be protected: an attacker must not choose how the signature is read.
        guard let alg = protected.first(where: { $0.key == .unsigned(1) })?.value.int, let a = Algorithm(rawValue: alg) else {
            throw CBORError("no ES256 or EdDSA algorithm in the protected header")
        }
        if unprotected.contains(where: { $0.key == .unsigned(1) }) { throw CBORError("an algorithm in the unprotected header") }
        let kidValue = protected.first(where: { $0.key == .unsigned(4) })?.value ?? unprotected.first(where: { $0.key == .unsigned(4) })?.value
        var kid: [UInt8] = []
        if let kidValue {
            guard case .bytes(let k) = kidValue, k.count <= 256 else { throw CBORError("a kid that is not a byte string of at most 256 bytes") }
            kid = k
        }
        self.protectedBytes = protectedBytes
        self.algorithm = a
        self.kid = kid
        self.payload = payload
        self.signature = signature
    }

    /// What the signature signs: Sig_structure ["Signature1", protected, external_aad h'', payload]
    /// (RFC 9052 4.4).
    public var toBeSigned: [UInt8] {
        CBOREncoder.encode(.array([.text("Signature1"), .bytes(protectedBytes), .bytes([]), .bytes(payload)]))
    }
}

/// The claims of a CWT (RFC 8392 3.1) the kiosk reads, from a payload whose signature has
/// verified. A claim present with the wrong type makes the credential malformed.
public struct CWTClaims: Equatable, Sendable {
    public var iss: String?
    public var sub: String?
    public var aud: String?
    public var exp: Int64?
    public var nbf: Int64?
    public var iat: Int64?
    public var cti: [UInt8]?
    /// The text claim `groups`: the holder's groups for the door's rules; nil: absent.
    public var groups: [String]?
    /// The text claim `uses`: how many times the credential opens (with a cti).
    public var uses: Int?
    public static let maxUses = 1_000_000

    /// Longest iss, sub and aud; longest cti (a store entry each).
    public static let maxTextBytes = 256
    public static let maxCTIBytes = 64
    /// Most groups a credential may name.
    public static let maxGroups = 32

    public init(iss: String? = nil, sub: String? = nil, aud: String? = nil, exp: Int64? = nil, nbf: Int64? = nil,
                iat: Int64? = nil, cti: [UInt8]? = nil) {
        self.iss = iss; self.sub = sub; self.aud = aud; self.exp = exp; self.nbf = nbf; self.iat = iat; self.cti = cti
    }

    public init(payload: [UInt8]) throws {
        guard case .map(let pairs) = try CBORReader.decode(payload) else { throw CBORError("claims that are not a map") }
        func text(_ v: CBOR) throws -> String {
            guard case .text(let s) = v, s.utf8.count <= CWTClaims.maxTextBytes else { throw CBORError("a text claim of the wrong type or too long") }
            return s
        }
        // NumericDate (RFC 8392 2): whole seconds; a float is refused (the reader has none).
        func date(_ v: CBOR) throws -> Int64 {
            guard let n = v.int else { throw CBORError("a date claim that is not an integer") }
            return n
        }
        for p in pairs {
            switch p.key {
            case .unsigned(1): iss = try text(p.value)
            case .unsigned(2): sub = try text(p.value)
            case .unsigned(3): aud = try text(p.value)
            case .unsigned(4): exp = try date(p.value)
            case .unsigned(5): nbf = try date(p.value)
            case .unsigned(6): iat = try date(p.value)
            case .unsigned(7):
                guard case .bytes(let b) = p.value, !b.isEmpty, b.count <= CWTClaims.maxCTIBytes else {
                    throw CBORError("a cti that is not a byte string of 1 to \(CWTClaims.maxCTIBytes) bytes")
                }
                cti = b
            case .text("groups"):
                guard case .array(let items) = p.value, items.count <= CWTClaims.maxGroups else {
                    throw CBORError("a groups claim that is not an array of at most \(CWTClaims.maxGroups) texts")
                }
                groups = try items.map {
                    guard case .text(let g) = $0, AccessRules.isGroup(g) else {
                        throw CBORError("a group that is not 1-64 letters, digits, '-', '_' or '.'")
                    }
                    return g
                }
            case .text("uses"):
                guard case .unsigned(let n) = p.value, (1...UInt64(CWTClaims.maxUses)).contains(n) else {
                    throw CBORError("a uses claim that is not an unsigned integer from 1 to \(CWTClaims.maxUses)")
                }
                uses = Int(n)
            default: continue
            }
        }
        // Uses are counted by the cti: without one they could not be.
        if uses != nil && cti == nil { throw CBORError("a uses claim without a cti") }
    }
}
