// SPDX-License-Identifier: Apache-2.0
/// A site bundle (interface.md 0.4 "Site bundles"): a building's rules, holidays,
/// revocations and keys in one COSE_Sign1 signed by the site's own key. Verify, then parse: the
/// envelope is read far enough to check the signature (`envelope`), the edge checks it with
/// `KIOSK_SITE_KEY`, and only then is the payload read (`init(verifiedPayload:)`), by the strict
/// CBOR reader, with every size bounded and every name from the list.
public struct SiteBundle: Equatable, Sendable {
    /// Why a bundle was not taken: the `reason` of the `bundle` event, exactly these words.
    public enum Reason: String, Sendable, CaseIterable {
        case signature
        case unknownKey = "unknown key"
        case version
        case malformed
        case tooLarge = "too large"
        case file
    }

    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let reason: Reason
        /// What exactly (for the log's `error` field; never the bytes themselves).
        public let detail: String
        /// The bundle's version, when it was read from a verified payload (nil: not known).
        public let version: UInt64?
        public init(_ reason: Reason, _ detail: String, version: UInt64? = nil) {
            self.reason = reason
            self.detail = detail
            self.version = version
        }
        public var description: String { "\(reason.rawValue): \(detail)" }
    }

    /// What a file of the bundle is to the kiosk.
    public enum Kind: String, Sendable {
        /// `access`: replaces `KIOSK_ACCESS_FILE`.
        case access
        /// `holidays.ics`: what a `holidays` line of the rules reads.
        case holidays
        /// `revoked`: replaces `KIOSK_REVOKED_FILE`.
        case revoked
        /// `trust/KID.pem`: the issuers' keys, as a set.
        case trustKey
        /// `trust/pretix/NAME.pem`: the events' keys, as a set.
        case eventKey
        /// `holders`: replaces `KIOSK_HOLDERS_FILE`.
        case holders
        /// `pins`: replaces `KIOSK_PINS_FILE` (interface.md 0.6).
        case pins
    }

    public struct File: Equatable, Sendable {
        /// The name in the bundle, which is also its path under the bundle's folder.
        public let name: String
        public let kind: Kind
        public let bytes: [UInt8]
    }

    /// A whole bundle at most (the COSE_Sign1's bytes): a site's rules, calendar, revocations and
    /// a few hundred keys fit many times over.
    public static let maxBytes = 1 << 20
    public static let maxFiles = 256
    /// A PEM public key is some hundred bytes; the trust directory reads at most this much.
    public static let maxKeyBytes = 65_536
    /// The access rules' own limit (AccessRules.maxBytes); the others are bounded by `maxBytes`.
    public static func maxBytes(of kind: Kind) -> Int {
        switch kind {
        case .access: return AccessRules.maxBytes
        case .trustKey, .eventKey: return maxKeyBytes
        case .holidays, .revoked, .holders, .pins: return maxBytes
        }
    }

    public let version: UInt64
    /// Unix time the site signed it (said in the log; the version decides, not this).
    public let issued: Int64
    /// In name order.
    public let files: [File]

    public init(version: UInt64, issued: Int64, files: [File]) {
        self.version = version
        self.issued = issued
        self.files = files.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    public func carries(_ kind: Kind) -> Bool { files.contains { $0.kind == kind } }

    /// The bytes' size, then the COSE_Sign1 around the payload (nothing of the payload is read).
    public static func envelope(_ bytes: [UInt8]) throws(Refusal) -> COSESign1 {
        guard bytes.count <= maxBytes else { throw Refusal(.tooLarge, "\(bytes.count) bytes, at most \(maxBytes)") }
        do {
            return try COSESign1(bytes)
        } catch {
            throw Refusal(.malformed, "not a COSE_Sign1 the kiosk reads: \(error)")
        }
    }

    /// The payload, once its signature has verified: a map of `version`, `issued`, `files`.
    public init(verifiedPayload payload: [UInt8]) throws(Refusal) {
        let item: CBOR
        do {
            // 256 files are 513 items with their map; up to 1000 or so are read to be said `too large`
            // (the reader's default bound; more are malformed).
            item = try CBORReader.decode(payload, maxDepth: 4)
        } catch {
            throw Refusal(.malformed, "a payload that is not CBOR the kiosk reads: \(error)")
        }
        guard case .map(let pairs) = item else { throw Refusal(.malformed, "a payload that is not a map") }
        var version: UInt64?, issued: Int64?, entries: [CBORPair]?
        for p in pairs {
            switch p.key {
            case .text("version"):
                guard case .unsigned(let v) = p.value, v <= UInt64(Int64.max) else { throw Refusal(.malformed, "a version that is not an unsigned integer") }
                version = v
            case .text("issued"):
                guard case .unsigned(let t) = p.value, t <= UInt64(Int64.max) else { throw Refusal(.malformed, "an issued time that is not an unsigned integer") }
                issued = Int64(t)
            case .text("files"):
                guard case .map(let e) = p.value else { throw Refusal(.malformed, "files that are not a map of name to bytes") }
                entries = e
            default:
                continue  // a later site tool's addition: not the kiosk's to refuse
            }
        }
        guard let version else { throw Refusal(.malformed, "no version") }
        guard version > 0 else { throw Refusal(.malformed, "version 0 (a bundle's versions start at 1)") }
        guard let issued else { throw Refusal(.malformed, "no issued time", version: version) }
        guard let entries else { throw Refusal(.malformed, "no files", version: version) }
        guard entries.count <= SiteBundle.maxFiles else { throw Refusal(.tooLarge, "\(entries.count) files, at most \(SiteBundle.maxFiles)", version: version) }
        let files = try entries.map { entry throws(Refusal) in
            guard case .text(let name) = entry.key, case .bytes(let bytes) = entry.value else {
                throw Refusal(.malformed, "a file that is not a text name and a byte string", version: version)
            }
            guard let kind = SiteBundle.kind(ofName: name) else {
                throw Refusal(.file, "\(SiteBundle.shown(name)): not a name a bundle may carry (access, holidays.ics, revoked, holders, pins, trust/KID.pem, trust/pretix/NAME.pem)",
                              version: version)
            }
            guard bytes.count <= SiteBundle.maxBytes(of: kind) else {
                throw Refusal(.tooLarge, "\(name): \(bytes.count) bytes, at most \(SiteBundle.maxBytes(of: kind))", version: version)
            }
            return File(name: name, kind: kind, bytes: bytes)
        }
        self.init(version: version, issued: issued, files: files)
    }

    /// What a name is, or nil when a bundle may not carry it. Only these: `access`,
    /// `holidays.ics`, `revoked`, `trust/STEM.pem`, `trust/pretix/STEM.pem`, where STEM is 1 to 64
    /// letters, digits, '-', '_' or '.', not starting with '.' (the kiosk's loaders skip hidden
    /// files): never a '/', '..', NUL or anything a path could be made to mean elsewhere.
    public static func kind(ofName name: String) -> Kind? {
        switch name {
        case "access": return .access
        case "holidays.ics": return .holidays
        case "revoked": return .revoked
        case "holders": return .holders
        case "pins": return .pins
        default: break
        }
        let pretix = "trust/pretix/", trust = "trust/"
        if name.hasPrefix(pretix) { return isKeyFile(name.dropFirst(pretix.count)) ? .eventKey : nil }
        if name.hasPrefix(trust) { return isKeyFile(name.dropFirst(trust.count)) ? .trustKey : nil }
        return nil
    }

    static func isKeyFile(_ file: Substring) -> Bool {
        guard file.hasSuffix(".pem") else { return false }
        let stem = file.dropLast(4)
        return AccessRules.isName(stem) && !stem.hasPrefix(".") && !stem.utf8.contains(0x2f)
    }

    /// A name as a log line may show it: printable ASCII as it is, anything else `\xHH`, at most 80.
    static func shown(_ name: String) -> String {
        var out = ""
        for b in name.utf8.prefix(80) {
            if b >= 0x20 && b < 0x7f && b != 0x5c { out.unicodeScalars.append(Unicode.Scalar(b)) } else {
                let hex = Array("0123456789abcdef".unicodeScalars)
                out += "\\x"
                out.unicodeScalars.append(hex[Int(b >> 4)])
                out.unicodeScalars.append(hex[Int(b & 15)])
            }
        }
        return out
    }

    /// What a bundle of `version` is, beside the one in force (nil: none yet).
    public enum Standing: Equatable, Sendable {
        case newer
        /// The one in force again (a retained message at each connection, a file read twice): nothing to do.
        case same
        case older
    }

    public static func standing(of version: UInt64, inForce: UInt64?) -> Standing {
        guard let inForce else { return .newer }
        return version > inForce ? .newer : version == inForce ? .same : .older
    }

    /// The algorithm a site key of `ed25519` (else EC P-256) signs with: a bundle that says
    /// another is refused `unknown key` before any signature check.
    public static func algorithm(forEd25519 ed25519: Bool) -> COSESign1.Algorithm { ed25519 ? .edDSA : .es256 }
}
