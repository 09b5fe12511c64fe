// SPDX-License-Identifier: Apache-2.0
/// The used-token store's content (one-time credentials' cti, rotating codes' steps, event
/// tickets' entries), as a value:
/// what is in it, whether a token may be claimed, and its file's text, read back strictly. The
/// file itself (written to a temporary file, fsynced, renamed, the folder fsynced) is the
/// Credentials module's `UsedTokenStore`.
public struct UsedTokens: Equatable, Sendable {
    /// At most this many entries: one line each of at most ~160 bytes, so the file stays under
    /// 1.6 MB and a rewrite under a few tens of ms on an SD card.
    public static let defaultCapacity = 10_000
    /// The snapshot's first line: version 2 ends with the CRC-32 of what precedes its end line
    /// ; version 1 (0.4 and before, no checksum) is still read.
    static let header = "kiosk-used-tokens 2"
    static let headerVersion1 = "kiosk-used-tokens 1"

    public let capacity: Int
    /// Key to expiry (Unix seconds; nil: never, a one-time credential without exp).
    public private(set) var entries: [String: Int64?] = [:]
    /// How many times a key was claimed, where more than once (a credential with `uses`, issue
    /// 33); a key not here was claimed once.
    public private(set) var counts: [String: Int] = [:]

    public init(capacity: Int = UsedTokens.defaultCapacity) { self.capacity = capacity }

    public static func signedKey(cti: [UInt8]) -> String { "c:" + PayloadBytes.hex(cti) }
    public static func rotatingKey(holder: String, step: Int64) -> String { "t:" + PayloadBytes.hex(Array(holder.utf8)) + ":" + String(step) }
    /// An event ticket: the SHA-256 of its signed payload (the caller hashes), so one
    /// ticket is one entry whatever key signed it and however often pretix is asked for it.
    public static func ticketKey(payloadDigest: [UInt8]) -> String { "p:" + PayloadBytes.hex(payloadDigest) }

    public enum Claim: Equatable, Sendable { case fresh, used, full }

    public func contains(_ key: String) -> Bool { entries[key] != nil }

    /// How many times `key` was claimed (0: never).
    public func uses(of key: String) -> Int { entries[key] == nil ? 0 : counts[key] ?? 1 }

    /// Entries past their expiry (`now`, Unix seconds, beyond `skew`) are dropped first; then a
    /// key claimed `uses` times already is `used`; a known key claimed fewer times is counted
    /// once more (`fresh`); a new one is added (`fresh`) unless the store is `full`.
    public mutating func claim(_ key: String, until expiry: Int64?, now: Int64, skew: Int64, uses: Int = 1) -> Claim {
        dropExpired(now: now, skew: skew)
        let claimed = self.uses(of: key)
        if claimed >= max(1, uses) { return .used }
        if claimed > 0 {
            counts[key] = claimed + 1
            return .fresh
        }
        guard entries.count < capacity else { return .full }
        entries[key] = .some(expiry)
        return .fresh
    }

    /// A journal's record (`UsedTokenLog`): `key` until `expiry`, claimed `uses` times. Replayed
    /// twice it changes nothing, and never lowers a count already known.
    public mutating func set(_ key: String, until expiry: Int64?, uses: Int) {
        let n = max(uses, self.uses(of: key))
        entries[key] = .some(expiry)
        counts[key] = n > 1 ? n : nil
    }

    public mutating func forget(_ key: String) {
        entries[key] = nil
        counts[key] = nil
    }

    public mutating func dropExpired(now: Int64, skew: Int64) {
        entries = entries.filter { _, e in e.map { $0 &+ skew >= now } ?? true }
        if !counts.isEmpty { counts = counts.filter { entries[$0.key] != nil } }
    }

    /// The file (the snapshot): a header, `KEY EXPIRY` lines (`-` for never; `KEY
    /// EXPIRY USES` for a key claimed more than once), and `end COUNT CRC` (the CRC-32 of every
    /// byte before that line), so that a file cut anywhere or with a byte changed reads as
    /// damaged, never as a shorter list. Version 1 (0.4 and before) had no CRC.
    public var fileText: String {
        var s = UsedTokens.header + "\n"
        for (k, e) in entries.sorted(by: { $0.key < $1.key }) {
            s += "\(k) \(e.map(String.init) ?? "-")" + (counts[k].map { " \($0)" } ?? "") + "\n"
        }
        return s + "end \(entries.count) \(CRC32.hex(CRC32.checksum(s.utf8)))\n"
    }

    public struct Damaged: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Reads a file back: exactly the form `fileText` writes, or `Damaged` saying where it is not.
    public static func parse(_ text: String, capacity: Int = UsedTokens.defaultCapacity) -> Result<UsedTokens, Damaged> {
        var t = UsedTokens(capacity: capacity)
        guard !text.isEmpty else { return .failure(Damaged(description: "zero length")) }
        guard text.hasSuffix("\n") else { return .failure(Damaged(description: "the last line is cut")) }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        let version1 = lines.first == Substring(UsedTokens.headerVersion1)
        guard version1 || lines.first == Substring(UsedTokens.header) else { return .failure(Damaged(description: "no header")) }
        let endFields = lines.last.map { $0.split(separator: " ", omittingEmptySubsequences: false) } ?? []
        guard endFields.count == (version1 ? 2 : 3), endFields[0] == "end", let count = Int(endFields[1]), lines.count == count + 2 else {
            return .failure(Damaged(description: "no end line with the count of entries"))
        }
        if !version1 {
            let body = text.utf8.dropLast(lines.last!.utf8.count + 1)
            guard endFields[2].utf8.count == 8, UInt32(endFields[2], radix: 16) == CRC32.checksum(body) else {
                return .failure(Damaged(description: "the checksum fails"))
            }
        }
        for (i, line) in lines.dropFirst().dropLast().enumerated() {
            let f = line.split(separator: " ", omittingEmptySubsequences: false)
            guard f.count == 2 || f.count == 3, isKey(f[0]), t.entries[String(f[0])] == nil else {
                return .failure(Damaged(description: "line \(i + 2) is not KEY EXPIRY [USES]"))
            }
            if f.count == 3 {
                guard let n = Int(f[2]), n >= 2, f[2].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), f[2].first != "0" else {
                    return .failure(Damaged(description: "line \(i + 2) has a count of uses that is not 2 or more"))
                }
                t.counts[String(f[0])] = n
            }
            if f[1] == "-" {
                t.entries[String(f[0])] = .some(nil)
            } else if let e = Int64(f[1]) {
                t.entries[String(f[0])] = .some(e)
            } else {
                return .failure(Damaged(description: "line \(i + 2) has no expiry"))
            }
        }
        return .success(t)
    }

    static func isKey(_ k: Substring) -> Bool {
        (k.hasPrefix("c:") || k.hasPrefix("t:") || k.hasPrefix("p:") || k.hasPrefix("s:") || k.hasPrefix("n:") || k.hasPrefix("l:")) && k.count <= 160 && k.utf8.dropFirst(2).allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || $0 == UInt8(ascii: ":")
        }
    }
}
