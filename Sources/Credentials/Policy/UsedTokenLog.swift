// SPDX-License-Identifier: Apache-2.0
/// The used-token store's journal, as values: one record a grant appended to
/// `used-tokens.log` (and fsynced) before the door opens, instead of the whole store rewritten;
/// the log read back into the state (`replay`), with a torn tail told from a damaged record;
/// and when the log is folded into the snapshot (`used-tokens`, `UsedTokens.fileText`). The
/// files themselves are the Credentials module's `UsedTokenStore`.
///
/// A record is one line, `KEY EXPIRY USES CRC\n`: the key, its expiry (`-`: never), how many
/// times it has been claimed so far (an absolute count, so that a record replayed twice, after a
/// compaction cut between its rename and the log's truncation, changes nothing), and the CRC-32
/// (8 lowercase hex digits) of the bytes before the space that precedes it. The line's end is its
/// length: a record cut anywhere has no line end or a checksum that fails.
public enum UsedTokenLog {
    public static let fileSuffix = ".log"

    /// The record of `key`'s state in `tokens` (after a claim), or nil when `tokens` does not hold it.
    public static func record(_ key: String, in tokens: UsedTokens) -> [UInt8]? {
        guard let expiry = tokens.entries[key] else { return nil }
        let body = Array("\(key) \(expiry.map(String.init) ?? "-") \(tokens.uses(of: key))".utf8)
        return body + Array(" \(CRC32.hex(CRC32.checksum(body)))\n".utf8)
    }

    /// What a log's bytes held.
    public struct Replay: Equatable, Sendable {
        /// Complete records read (and applied).
        public var records = 0
        /// Bytes from the start to the end of the last complete record: where the next record goes.
        public var goodLength = 0
        /// Bytes after the last complete record (a record cut by a power cut, zeros): never
        /// acknowledged, so nothing a door opened for; dropped.
        public var tornBytes = 0
        /// Lines that fail their check with a complete record after them (or within them: a
        /// line end lost): records that were acknowledged and are lost (a card that lied or rotted, never a power cut on a file
        /// system that keeps its promises).
        public var damagedRecords = 0
        public init() {}
    }

    /// Applies every complete record of `bytes` to `tokens`, in order.
    public static func replay(_ bytes: [UInt8], into tokens: inout UsedTokens) -> Replay {
        var r = Replay()
        var badSinceGood = 0
        var start = 0
        while start < bytes.count {
            guard let end = bytes[start...].firstIndex(of: 0x0A) else { break }
            if let (key, expiry, uses) = parseRecord(bytes[start..<end]) {
                tokens.set(key, until: expiry, uses: uses)
                r.records += 1
                r.damagedRecords += badSinceGood
                badSinceGood = 0
                r.goodLength = end + 1
            } else if end > start + 1,
                      // A record is at most 200 bytes: only the line's last 200 can start one.
                      let (key, expiry, uses) = (max(start + 1, end - 200)..<end).lazy.compactMap({ parseRecord(bytes[$0..<end]) }).first {
                // A line end lost (a byte changed): a damaged record, then a whole one.
                tokens.set(key, until: expiry, uses: uses)
                r.records += 1
                r.damagedRecords += badSinceGood + 1
                badSinceGood = 0
                r.goodLength = end + 1
            } else {
                badSinceGood += 1
            }
            start = end + 1
        }
        r.tornBytes = bytes.count - r.goodLength
        return r
    }

    static func parseRecord(_ line: ArraySlice<UInt8>) -> (String, Int64?, Int)? {
        guard line.count > 9, line.count <= 200, let space = line.lastIndex(of: 0x20) else { return nil }
        let body = line[line.startIndex..<space]
        guard line.endIndex - space == 9, let sum = UInt32(String(decoding: line[(space + 1)...], as: UTF8.self), radix: 16),
              line[(space + 1)...].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              CRC32.checksum(body) == sum else { return nil }
        let f = body.split(separator: 0x20, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard f.count == 3, UsedTokens.isKey(Substring(f[0])), let uses = Int(f[2]), uses >= 1 else { return nil }
        if f[1] == "-" { return (f[0], nil, uses) }
        guard let e = Int64(f[1]) else { return nil }
        return (f[0], e, uses)
    }

    /// The log is folded into a new snapshot once it holds as many bytes as the snapshot (so a
    /// grant costs about two records' worth of writes however large the store), and not before it
    /// holds `minimumBytes` (a small store is not rewritten every few grants).
    public static let minimumBytes = 64 << 10
    public static func shouldCompact(logBytes: Int, snapshotBytes: Int, minimumBytes: Int = UsedTokenLog.minimumBytes) -> Bool {
        logBytes >= max(minimumBytes, snapshotBytes)
    }
}

/// CRC-32 (IEEE 802.3, zlib's and PNG's: reflected polynomial 0xEDB88320, initial and final
/// XOR 0xFFFFFFFF): a check against torn and rotted bytes, not against anyone's intent.
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    /// 8 lowercase hex digits.
    public static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }
}
