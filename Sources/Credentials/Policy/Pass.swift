// SPDX-License-Identifier: Apache-2.0
/// Passes bound to the holder's phone (interface.md 0.5): `KH1:` and one CBOR array,
/// `[1, credential, slot, proof]` (form 1: an issuer's CWT with `cnf`) or `[2, key_id, slot,
/// proof]` (form 2: a holder on the door's list). Pure: what the bytes say and what the door
/// decides of the time and the replay state; the hashes and signatures are the shell's (OpenSSL).
public struct Pass: Equatable, Sendable {
    public static let prefix = "KH1:"
    /// The longest pass, prefix included: a form-1 pass is about 210 bytes.
    public static let maxBytes = 1024
    /// A slot is 5 seconds of the phone's clock.
    public static let slotSeconds: Int64 = 5
    /// `KIOSK_PASS_WINDOW_S`'s bounds and default.
    public static let windowRange: ClosedRange<Int> = 5...120
    public static let defaultWindowS = 15
    /// The bytes a form 2 pass names its holder by: the thumbprint's first 8.
    public static let keyIDBytes = 8

    public enum Form: Int, Sendable {
        case selfContained = 1
        case holder = 2
        /// As the `credential` event says it.
        public var name: String { self == .selfContained ? "pass1" : "pass2" }
    }

    public let form: Form
    /// Form 1: the credential byte string's contents (an untagged COSE_Sign1); form 2: the key_id.
    public let credential: [UInt8]
    /// floor(Unix time / 5) by the phone's clock.
    public let slot: Int64
    /// ES256, r||s.
    public let proof: [UInt8]

    /// Whether a payload is a pass at all (by its prefix): decided on the frame loop.
    public static func isPass<C: Collection>(_ payload: C) -> Bool where C.Element == UInt8 {
        payload.starts(with: prefix.utf8)
    }

    /// The pass in `payload`, or why not: at most `maxBytes`, the prefix, then exactly one array
    /// of 4 read strictly (`CBORReader`: definite lengths, shortest forms, nothing after it; two
    /// levels deep at most), the form 1 or 2, a credential of 1 to 900 bytes or a key_id of 8,
    /// a slot from 0 to 2^32-1 (4 bytes in the signed message), a proof of 64 bytes.
    public init(_ payload: [UInt8]) throws {
        guard payload.count <= Pass.maxBytes else { throw CBORError("a pass of \(payload.count) bytes (at most \(Pass.maxBytes))") }
        guard Pass.isPass(payload) else { throw CBORError("no KH1: prefix") }
        let body = Array(payload.dropFirst(Pass.prefix.utf8.count))
        guard case .array(let parts) = try CBORReader.decode(body, maxDepth: 1, maxItems: 5), parts.count == 4 else {
            throw CBORError("not an array of 4")
        }
        guard case .unsigned(let f) = parts[0], let form = Form(rawValue: Int(clamping: f)) else { throw CBORError("a form other than 1 or 2") }
        guard case .bytes(let credential) = parts[1] else { throw CBORError("a credential or key_id that is not a byte string") }
        switch form {
        case .selfContained:
            guard (1...900).contains(credential.count), credential[0] == 0x84 else {
                throw CBORError("a credential that is not an untagged COSE_Sign1 of at most 900 bytes")
            }
        case .holder:
            guard credential.count == Pass.keyIDBytes else { throw CBORError("a key_id that is not \(Pass.keyIDBytes) bytes") }
        }
        guard case .unsigned(let slot) = parts[2], slot <= UInt64(UInt32.max) else { throw CBORError("a slot that is not 0 to 2^32-1") }
        guard case .bytes(let proof) = parts[3], proof.count == 64 else { throw CBORError("a proof that is not 64 bytes") }
        self.form = form
        self.credential = credential
        self.slot = Int64(slot)
        self.proof = proof
    }

    /// A pass's payload (the peers' and the tests' side; the door only reads).
    public static func encode(form: Form, credential: [UInt8], slot: Int64, proof: [UInt8]) -> [UInt8] {
        Array(prefix.utf8) + CBOREncoder.encode(.array([.unsigned(UInt64(form.rawValue)), .bytes(credential), .unsigned(UInt64(slot)), .bytes(proof)]))
    }

    /// What the proof signs: `KH1 proof`, 0x00, the form, the slot (big-endian, 4 bytes), and
    /// `digest`: the SHA-256 of the credential's bytes (form 1) or of the key_id (form 2).
    public static func proofMessage(form: Form, slot: Int64, digest: [UInt8]) -> [UInt8] {
        precondition(digest.count == 32 && (0...Int64(UInt32.max)).contains(slot))
        let s = UInt32(slot)
        return Array("KH1 proof".utf8) + [0, UInt8(form.rawValue), UInt8(s >> 24), UInt8((s >> 16) & 0xff), UInt8((s >> 8) & 0xff), UInt8(s & 0xff)] + digest
    }

    /// The slot's start minus the door's time (the event's `skew_s`).
    public static func skew(slot: Int64, now: Int64) -> Int64 { slot &* slotSeconds &- now }

    /// Whether the slot is taken now: it starts at most `window` seconds before `now` and at most
    /// 5 s after it (a phone's clock a little ahead); else `stale`.
    public static func isFresh(slot: Int64, now: Int64, window: Int64) -> Bool {
        let skew = skew(slot: slot, now: now)
        return skew >= -window && skew <= slotSeconds
    }
}

/// A holder's key as a COSE_Key (RFC 9052 7, RFC 9053 7.1.1): `{1: 2, -1: 1, -2: x, -3: y}`, EC2
/// on P-256, `y` 32 bytes or a bool (the sign bit of a compressed point). Nothing else in the map
/// (a private key `-4` least of all).
public struct HolderKey: Equatable, Sendable {
    public enum Y: Equatable, Sendable {
        case bytes([UInt8])
        case sign(Bool)
    }

    public let x: [UInt8]
    public let y: Y

    public init(x: [UInt8], y: Y) throws {
        guard x.count == 32 else { throw CBORError("an x that is not 32 bytes") }
        if case .bytes(let b) = y, b.count != 32 { throw CBORError("a y that is not 32 bytes") }
        self.x = x
        self.y = y
    }

    public init(_ item: CBOR) throws {
        guard case .map(let pairs) = item, pairs.count == 4 else { throw CBORError("a COSE_Key that is not a map of 4: {1: 2, -1: 1, -2: x, -3: y}") }
        guard item[.unsigned(1)] == .unsigned(2) else { throw CBORError("a key type (1) other than EC2 (2)") }
        guard item[.negative(0)] == .unsigned(1) else { throw CBORError("a curve (-1) other than P-256 (1)") }
        guard case .bytes(let x) = item[.negative(1)] else { throw CBORError("no x (-2) of 32 bytes") }
        switch item[.negative(2)] {
        case .bytes(let y)?: try self.init(x: x, y: .bytes(y))
        case .bool(let b)?: try self.init(x: x, y: .sign(b))
        default: throw CBORError("no y (-3): 32 bytes or a bool")
        }
    }

    /// From a COSE_Key's bytes, read strictly (one map, nothing after it).
    public init(bytes: [UInt8]) throws {
        guard bytes.count <= 200 else { throw CBORError("a COSE_Key of \(bytes.count) bytes") }
        try self.init(try CBORReader.decode(bytes, maxDepth: 1, maxItems: 9))
    }

    /// The SEC1 point OpenSSL reads: 0x04||x||y, or 0x02/0x03||x (compressed; 0x03: y odd).
    public var sec1: [UInt8] {
        switch y {
        case .bytes(let y): return [0x04] + x + y
        case .sign(let odd): return [odd ? 0x03 : 0x02] + x
        }
    }

    /// The COSE_Key in deterministic encoding (RFC 8949 4.2.1: keys in bytewise order 1, -1, -2,
    /// -3): the input of its thumbprint (RFC 9679 3), its SHA-256 the shell's.
    public var thumbprintInput: [UInt8] { CBOREncoder.encode(HolderKey.item(self)) }

    /// The key_id a form 2 pass names it by: the thumbprint's first 8 bytes.
    public static func keyID(thumbprint: [UInt8]) -> [UInt8] { Array(thumbprint.prefix(Pass.keyIDBytes)) }
}

/// A credential's confirmation key (RFC 8747 3.1): claim 8, `cnf`, `{1: COSE_Key}`. Read from a
/// payload whose signature has verified; nil when there is no `cnf`.
public enum Confirmation {
    public static func key(payload: [UInt8]) throws -> HolderKey? {
        guard case .map(let pairs) = try CBORReader.decode(payload) else { throw CBORError("claims that are not a map") }
        guard let cnf = pairs.first(where: { $0.key == .unsigned(8) })?.value else { return nil }
        guard case .map(let methods) = cnf, methods.count == 1, let k = cnf[.unsigned(1)] else {
            throw CBORError("a cnf that is not {1: COSE_Key}")
        }
        return try HolderKey(k)
    }
}

/// One line of the holders file (`KIOSK_HOLDERS_FILE`): `NAME KEY [groups=a,b]`, KEY the base64url
/// (no padding) of the holder's COSE_Key.
public struct PassHolder: Equatable, Sendable {
    public var name: String
    public var key: HolderKey
    public var groups: [String]
    /// The line of the file it was read from (1-based; 0: not from a file).
    public var line: Int

    public init(name: String, key: HolderKey, groups: [String] = [], line: Int = 0) {
        self.name = name; self.key = key; self.groups = groups; self.line = line
    }

    /// Most holders a door lists.
    public static let maxHolders = 10_000

    /// Parses a file; a bad line is an error naming its number and why. Blank lines and `#`
    /// comments are skipped; a NAME (1-64 printable characters, no ':') or KEY listed twice is an
    /// error. Whether the key is a point of the curve is the shell's check (OpenSSL), after this.
    public static func parseFile(_ text: String) -> Result<[PassHolder], CredentialFileError> {
        var out: [PassHolder] = []
        var keys: Set<[UInt8]> = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmedOfBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            func bad(_ why: String) -> Result<[PassHolder], CredentialFileError> { .failure(CredentialFileError(line: i + 1, reason: why)) }
            var f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            var groups: [String] = []
            if f.count == 3, let last = f.last, last.hasPrefix("groups=") {
                let list = last.dropFirst(7).split(separator: ",", omittingEmptySubsequences: false)
                guard list.count <= CWTClaims.maxGroups, list.allSatisfy({ AccessRules.isGroup($0) }) else {
                    return bad("groups=GROUP[,GROUP]... (at most \(CWTClaims.maxGroups), each 1-64 letters, digits, '-', '_' or '.')")
                }
                groups = list.map(String.init)
                f.removeLast()
            }
            guard f.count == 2 else { return bad("expected NAME KEY [groups=GROUP,...]") }
            let name = String(f[0])
            guard RotatingCode.isHolder(Array(name.utf8)[...]) else { return bad("a NAME of 1-64 printable characters without ':'") }
            guard let bytes = Base64URL.decode(f[1]) else { return bad("a KEY that is not base64url without padding") }
            let key: HolderKey
            do { key = try HolderKey(bytes: bytes) } catch { return bad("a KEY that is not a P-256 COSE_Key {1: 2, -1: 1, -2: x, -3: y}: \(error)") }
            guard !out.contains(where: { $0.name == name }) else { return bad("holder \(name) is listed twice") }
            guard keys.insert(key.x).inserted else { return bad("the key of \(name) is listed twice") }
            guard out.count < maxHolders else { return bad("more than \(maxHolders) holders") }
            out.append(PassHolder(name: name, key: key, groups: groups, line: i + 1))
        }
        return .success(out)
    }

    /// The holders file's line for it (as `issue-credential holder add` writes it).
    public var fileLine: String {
        "\(name) \(Base64URL.encode(CBOREncoder.encode(HolderKey.item(key))))" + (groups.isEmpty ? "" : " groups=" + groups.joined(separator: ","))
    }
}

extension HolderKey {
    /// The COSE_Key as a CBOR map, in deterministic order (1, -1, -2, -3).
    public static func item(_ k: HolderKey) -> CBOR {
        let yItem: CBOR
        switch k.y {
        case .bytes(let b): yItem = .bytes(b)
        case .sign(let s): yItem = .bool(s)
        }
        return .map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)), CBORPair(.negative(1), .bytes(k.x)), CBORPair(.negative(2), yItem)])
    }
}

/// base64url without padding (RFC 4648 5): strict, the unused bits of the last character zero.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var bits: UInt32 = 0, count = 0
        for c in chars {
            let v: UInt8
            switch c {
            case 65...90: v = c - 65
            case 97...122: v = c - 97 + 26
            case 48...57: v = c - 48 + 52
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            default: return nil
            }
            bits = (bits << 6) | UInt32(v)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8((bits >> UInt32(count)) & 0xff))
            }
        }
        // The bits left over must be zero (one encoding per byte string).
        guard bits & ((1 << UInt32(count)) - 1) == 0 else { return nil }
        return out
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)], alphabet[Int((n >> 6) & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        if bytes.count - i == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)]]
        } else if bytes.count - i == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int((n >> 12) & 63)], alphabet[Int((n >> 6) & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The replay state of passes in the used-token store: one entry a credential or holder, `s:` +
/// its id, whose expiry says the last slot accepted (`slot * 5 + 5 + 120`: the moment no window
/// takes that slot any more, so the entry lasts exactly as long as it can matter). A later slot
/// replaces it; the same slot or an earlier one is `used`. Keyed on the slot, never on the
/// signature's bytes: a second signature of an accepted slot (ECDSA's (r, n-s)) is `used` too.
extension UsedTokens {
    /// Form 1 with a cti: `s:1:` + the cti; form 1 without: `s:2:` + the credential's SHA-256;
    /// form 2: `s:3:` + the holder's NAME (its UTF-8, hex).
    public static func passKey(cti: [UInt8]) -> String { "s:1:" + PayloadBytes.hex(cti) }
    public static func passKey(credentialDigest: [UInt8]) -> String { "s:2:" + PayloadBytes.hex(credentialDigest) }
    public static func passKey(holder: String) -> String { "s:3:" + PayloadBytes.hex(Array(holder.utf8)) }

    static let passEntryLife = Pass.slotSeconds + Int64(Pass.windowRange.upperBound)

    public static func passExpiry(slot: Int64) -> Int64 { slot * Pass.slotSeconds + passEntryLife }

    /// The last slot accepted under `key`, if its entry is still there.
    public func lastSlot(_ key: String) -> Int64? {
        guard let e = entries[key], let expiry = e else { return nil }
        return (expiry - UsedTokens.passEntryLife) / Pass.slotSeconds
    }

    /// Accepts `slot` under `key` when it is later than the last one accepted: `fresh` (the
    /// entry now says `slot`), `used`, or `full`.
    public mutating func claimSlot(_ key: String, slot: Int64, now: Int64, skew: Int64) -> Claim {
        dropExpired(now: now, skew: skew)
        if let last = lastSlot(key) {
            if slot <= last { return .used }
            forget(key)
        }
        return claim(key, until: UsedTokens.passExpiry(slot: slot), now: now, skew: skew)
    }
}
