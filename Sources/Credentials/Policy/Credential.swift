// SPDX-License-Identifier: Apache-2.0
/// Why a credential was refused (interface.md 0.3, "Reasons"), or `valid`.
public enum CredentialReason: String, CaseIterable, Sendable {
    case valid
    case signature
    case unknownKey = "unknown key"
    case expired
    case notYetValid = "not yet valid"
    case wrongDoor = "wrong door"
    case wrongIssuer = "wrong issuer"
    case revoked
    case used
    case antipassback
    case malformed
    case clockNotSynchronized = "clock not synchronized"
    /// The clock is before the floor (a time that has certainly passed).
    case clockBehind = "clock behind"
    case notACredential = "not a credential"
    case storeFull = "store full"
    // The door's rules (interface.md 0.4)
    case noAccess = "no access"
    case outsideSchedule = "outside schedule"
    case holiday
    case lockdown
    // Passes bound to the holder's phone (interface.md 0.5)
    case stale
    case holderSignature = "holder signature"
    case noProof = "no proof"
    // The used-token store cannot be trusted (a state file that did not read and
    // could not be recovered), or its folder does not survive a power cut (KIOSK_VOLATILE_STATE).
    case stateDamaged = "state damaged"
    case stateVolatile = "state volatile"
    // A PIN and a duress code (interface.md 0.6): given by the keypad's gate, after the verifier.
    case wrongPIN = "wrong pin"
    case pinRequired = "pin required"
    case pinLocked = "pin locked"

    /// The rules' reason as the credential's (`granted`: valid).
    public init(_ access: AccessReason) {
        switch access {
        case .granted: self = .valid
        case .noAccess: self = .noAccess
        case .outsideSchedule: self = .outsideSchedule
        case .holiday: self = .holiday
        case .lockdown: self = .lockdown
        case .clockNotSynchronized: self = .clockNotSynchronized
        }
    }
}

/// Which kind of credential a code is (`CodeKind.of` decides, once, when the code is reported).
public enum CredentialKind: Equatable, Sendable {
    /// PREFIX + Base45 of [zlib of] COSE_Sign1; the Base45 text after the prefix.
    case signed
    /// `KT1:HOLDER:UNIXTIME:DIGITS`.
    case rotating
    /// An event ticket: a pretix_sig1 secret, recognised by its framing alone
    /// (`PretixSecret`: reversed base64, version 1, lengths that add up), not by a prefix.
    case ticket
    /// `KH1:` + CBOR: a pass bound to the holder's phone (`Pass`).
    case pass
    /// No credential (an outcome's kind for a code the verifier was not given).
    case none

    public static let rotatingPrefix = "KT1:"
    public static let defaultSignedPrefix = "KC1:"
}

/// One credential's verdict and what the log may say of it: never the token itself.
public struct CredentialOutcome: Equatable, Sendable {
    public var kind: CredentialKind
    public var reason: CredentialReason
    public var kid: String?
    public var iss: String?
    /// The verified subject (a signed credential's `sub`, a rotating code's holder): what the
    /// `scan` event shows as `credential`, and OSDP sends as the card read.
    public var sub: String?
    /// Hex.
    public var cti: String?
    public var exp: Int64?
    /// The first 8 bytes of the payload's SHA-256, hex.
    public var hash: String
    /// The credential's groups, once its signature is checked (a `first=GROUP` unlock
    /// begins with a grant to one of them).
    public var groups: [String] = []
    /// An event ticket's variation and date of a series, when it has them (its item
    /// is in `sub`, `pretix:NAME:ITEM`).
    public var variation: UInt64?
    public var subevent: UInt64?
    /// A pass's form (`pass1`, `pass2`), a form 2 holder's NAME, and the slot's start
    /// minus the door's time.
    public var form: String?
    public var holder: String?
    public var skewS: Int64?
    /// The door's rules ask this grant for the holder's PIN (`allow GROUP SCHEDULE pin`): the
    /// keypad's gate waits for it before the door opens (interface.md 0.6).
    public var pinRequired = false

    public var granted: Bool { reason == .valid }

    public init(kind: CredentialKind, reason: CredentialReason, kid: String? = nil, iss: String? = nil, sub: String? = nil,
                cti: String? = nil, exp: Int64? = nil, hash: String, variation: UInt64? = nil, subevent: UInt64? = nil) {
        self.kind = kind; self.reason = reason; self.kid = kid; self.iss = iss; self.sub = sub; self.cti = cti; self.exp = exp
        self.hash = hash
        self.variation = variation; self.subevent = subevent
    }
}

/// The settings a credential is judged by (the credentials' block of `Configuration`).
public struct CredentialRules: Equatable, Sendable {
    public var issuers: [String]?
    public var audience: String?
    public var skewSeconds: Int64
    public var requireSyncedClock: Bool
    /// How many times an event ticket opens (`KIOSK_TICKET_ENTRIES`); 0: any number.
    public var ticketEntries: Int
    /// How long after its slot begins a pass is still taken (`KIOSK_PASS_WINDOW_S`).
    public var passWindowSeconds: Int64
    public init(issuers: [String]? = nil, audience: String? = nil, skewSeconds: Int64 = 30, requireSyncedClock: Bool = true,
                ticketEntries: Int = 1, passWindowSeconds: Int64 = Int64(Pass.defaultWindowS)) {
        self.passWindowSeconds = passWindowSeconds
        self.issuers = issuers
        self.audience = audience
        self.skewSeconds = skewSeconds
        self.requireSyncedClock = requireSyncedClock
        self.ticketEntries = ticketEntries
    }
}

/// The checks of a signed credential once its signature has verified and its claims are read:
/// the first that fails is the reason. Pure: the time (Unix seconds), the clock's state and the
/// revocation list are given. What is left after (the used-token store, antipassback) needs state.
public enum CredentialCheck {
    public static func claims(_ c: CWTClaims, rules: CredentialRules, now: Int64, clockSynced: Bool,
                              isRevoked: (String) -> Bool) -> CredentialReason {
        if let issuers = rules.issuers, !issuers.contains(c.iss ?? "\u{0}") { return .wrongIssuer }
        if let aud = c.aud, aud != rules.audience { return .wrongDoor }
        if let sub = c.sub, isRevoked(sub) { return .revoked }
        if let cti = c.cti, isRevoked(PayloadBytes.hex(cti)) { return .revoked }
        if c.exp != nil || c.nbf != nil {
            if rules.requireSyncedClock && !clockSynced { return .clockNotSynchronized }
            if let nbf = c.nbf, now < nbf &- rules.skewSeconds { return .notYetValid }
            if let exp = c.exp, now > exp &+ rules.skewSeconds { return .expired }
        }
        return .valid
    }

    /// A rotating code's time and code: `expected` is the code the holder's secret gives for the
    /// claimed time's step (nil: no such holder).
    public static func rotating(_ code: RotatingCode, expected: String?, period: Int64, rules: CredentialRules, now: Int64,
                                clockSynced: Bool, isRevoked: (String) -> Bool) -> CredentialReason {
        guard let expected else { return .unknownKey }
        if isRevoked(code.holder) { return .revoked }
        if rules.requireSyncedClock && !clockSynced { return .clockNotSynchronized }
        let window = period + rules.skewSeconds
        if code.time > now &+ window { return .notYetValid }
        if code.time < now &- window { return .expired }
        return constantTimeEqual(Array(expected.utf8), Array(code.digits.utf8)) ? .valid : .signature
    }

    /// Compares without stopping at the first difference (a code's digits are a secret's output).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var d: UInt8 = 0
        for i in 0..<a.count { d |= a[i] ^ b[i] }
        return d == 0
    }
}

/// `KT1:HOLDER:UNIXTIME:DIGITS`: a holder's rotating code (RFC 6238 TOTP) and the time the
/// phone drew it at (Google Wallet's `{totp_timestamp_seconds}`).
public struct RotatingCode: Equatable, Sendable {
    public var holder: String
    public var time: Int64
    public var digits: String

    public init(holder: String, time: Int64, digits: String) {
        self.holder = holder
        self.time = time
        self.digits = digits
    }

    /// 1-64 printable ASCII characters, no space, no ':'.
    public static func isHolder(_ h: ArraySlice<UInt8>) -> Bool {
        (1...64).contains(h.count) && h.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ":") }
    }

    /// Nil for anything but the exact form: a holder of 1-64 printable characters without ':' or
    /// spaces, a decimal time of at most 12 digits, 6 to 10 digits.
    public init?(_ payload: [UInt8]) {
        guard payload.starts(with: CredentialKind.rotatingPrefix.utf8), payload.count <= 100 else { return nil }
        let parts = payload.dropFirst(4).split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let holder = parts[0], time = parts[1], digits = parts[2]
        guard RotatingCode.isHolder(holder),
              (1...12).contains(time.count), time.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              (6...10).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let t = Int64(String(decoding: time, as: UTF8.self)) else { return nil }
        self.holder = String(decoding: holder, as: UTF8.self)
        self.time = t
        self.digits = String(decoding: digits, as: UTF8.self)
    }
}

/// RFC 6238 (TOTP) over RFC 4226 (HOTP): the counter's message and the code from an HMAC-SHA1
/// result; the HMAC itself is OpenSSL's (the caller computes it).
public enum TOTP {
    /// T = floor(time / period) (RFC 6238 4.2), as the 8-byte big-endian message HOTP signs.
    public static func step(time: Int64, period: Int64) -> Int64 { time >= 0 ? time / period : -1 }

    public static func message(step: Int64) -> [UInt8] {
        (0..<8).reversed().map { UInt8((UInt64(bitPattern: step) >> (8 * UInt64($0))) & 0xff) }
    }

    /// Dynamic truncation (RFC 4226 5.3) of a 20-byte HMAC-SHA1, as `digits` decimal digits.
    public static func code(hmac: [UInt8], digits: Int) -> String {
        precondition(hmac.count >= 20 && (1...10).contains(digits))
        let o = Int(hmac[hmac.count - 1] & 0x0f)
        let binary = (UInt64(hmac[o] & 0x7f) << 24) | (UInt64(hmac[o + 1]) << 16) | (UInt64(hmac[o + 2]) << 8) | UInt64(hmac[o + 3])
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let s = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}

/// Base32 (RFC 4648 6) as TOTP secrets are written: case-insensitive, padding optional.
public enum Base32 {
    public static func decode(_ text: String) -> [UInt8]? {
        var bits: UInt64 = 0, count = 0
        var out: [UInt8] = []
        var padding = false
        for c in text.utf8 {
            if c == UInt8(ascii: "=") { padding = true; continue }
            guard !padding else { return nil }
            let v: UInt8
            switch c {
            case 65...90: v = c - 65
            case 97...122: v = c - 97
            case 50...55: v = c - 50 + 26
            default: return nil
            }
            bits = (bits << 5) | UInt64(v)
            count += 5
            if count >= 8 {
                out.append(UInt8((bits >> UInt64(count - 8)) & 0xff))
                count -= 8
            }
        }
        return out
    }
}

/// One line of the TOTP secrets file: `HOLDER BASE32SECRET [DIGITS [PERIOD]] [groups=a,b]`.
public struct TOTPSecret: Equatable, Sendable {
    public var holder: String
    public var secret: [UInt8]
    public var digits: Int
    public var period: Int64
    /// The holder's groups for the door's rules.
    public var groups: [String] = []

    public init(holder: String, secret: [UInt8], digits: Int, period: Int64, groups: [String] = []) {
        self.holder = holder; self.secret = secret; self.digits = digits; self.period = period; self.groups = groups
    }

    public static let defaultDigits = 6
    public static let defaultPeriod: Int64 = 30

    /// Parses a file; a bad line is an error naming its number and why, never its secret.
    public static func parseFile(_ text: String) -> Result<[TOTPSecret], CredentialFileError> {
        var out: [TOTPSecret] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmedOfBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            var f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            func bad(_ why: String) -> Result<[TOTPSecret], CredentialFileError> { .failure(CredentialFileError(line: i + 1, reason: why)) }
            var groups: [String] = []
            if f.count > 2, let last = f.last, last.hasPrefix("groups=") {
                let list = last.dropFirst(7).split(separator: ",", omittingEmptySubsequences: false)
                guard list.count <= CWTClaims.maxGroups, list.allSatisfy({ AccessRules.isGroup($0) }) else {
                    return bad("groups=GROUP[,GROUP]... (at most \(CWTClaims.maxGroups), each 1-64 letters, digits, '-', '_' or '.')")
                }
                groups = list.map(String.init)
                f.removeLast()
            }
            guard (2...4).contains(f.count) else { return bad("expected HOLDER BASE32SECRET [DIGITS [PERIOD]] [groups=GROUP,...]") }
            let holder = String(f[0])
            guard RotatingCode.isHolder(Array(holder.utf8)[...]) else { return bad("a holder of 1-64 printable characters without ':'") }
            guard let secret = Base32.decode(String(f[1])), secret.count >= 10 else { return bad("a secret that is not Base32 of at least 80 bits") }
            let digits = f.count > 2 ? Int(f[2]) : defaultDigits
            guard let digits, (6...10).contains(digits) else { return bad("DIGITS from 6 to 10") }
            let period = f.count > 3 ? Int64(f[3]) : defaultPeriod
            guard let period, (5...300).contains(period) else { return bad("PERIOD from 5 to 300 seconds") }
            guard !out.contains(where: { $0.holder == holder }) else { return bad("holder \(holder) is listed twice") }
            out.append(TOTPSecret(holder: holder, secret: secret, digits: digits, period: period, groups: groups))
        }
        return .success(out)
    }
}

public struct CredentialFileError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// The revocation list: one `sub`, rotating-code holder, cti (hex) or event ticket's secret (as
/// pretix's revoked secrets list it) a line; `#` comments.
public enum RevocationList {
    public static func parse(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").map { $0.trimmedOfBlanks }.filter { !$0.isEmpty && !$0.hasPrefix("#") })
    }
}

/// `KIOSK_ANTIPASSBACK_S`: a subject granted is denied again for that long. In memory, on the
/// injected clock (monotonic ns): a restart forgets it.
public struct Antipassback: Sendable {
    public let windowNs: UInt64
    private var grants: [String: UInt64] = [:]

    public init(seconds: Int) { windowNs = UInt64(max(0, seconds)) * 1_000_000_000 }

    public func blocks(_ subject: String, at now: UInt64) -> Bool {
        guard windowNs > 0, let t = grants[subject] else { return false }
        return now &- t < windowNs
    }

    public mutating func granted(_ subject: String, at now: UInt64) {
        guard windowNs > 0 else { return }
        grants[subject] = now
        // Forget what no longer blocks (bounded by the grants within one window).
        if grants.count > 1024 { grants = grants.filter { now &- $0.value < windowNs } }
    }
}
