// SPDX-License-Identifier: Apache-2.0

/// Decides which decoded codes are news. A kiosk scans forever: a code held in front of the
/// camera must be reported once, not thirty times a second. A code that was reported is not
/// reported again until it has been out of view for `windowNs` (`KIOSK_REPEAT_MS`).
///
/// Time is the frames' own timestamps, so the decision is the same on a replay as live.
public struct RepeatFilter {
    public struct Key: Hashable {
        public var symbology: Symbology
        public var bytes: [UInt8]
        public init(symbology: Symbology, bytes: [UInt8]) {
            self.symbology = symbology
            self.bytes = bytes
        }
    }

    public let windowNs: UInt64
    /// When each recently reported code was last seen.
    private var lastSeen: [Key: UInt64] = [:]

    public init(windowMilliseconds: Int) {
        windowNs = UInt64(windowMilliseconds) * 1_000_000
    }

    /// The codes seen in the frame at `timestampNs` that should be reported, in the order seen.
    public mutating func admit(_ seen: [DecodedSymbol], at timestampNs: UInt64) -> [DecodedSymbol] {
        forgetCodesOutOfView(at: timestampNs)
        var news: [DecodedSymbol] = []
        for symbol in seen {
            let key = Key(symbology: symbol.symbology, bytes: symbol.bytes)
            if lastSeen[key] == nil && !news.contains(where: { Key(symbology: $0.symbology, bytes: $0.bytes) == key }) {
                news.append(symbol)
            }
            lastSeen[key] = timestampNs
        }
        return news
    }

    /// How many codes are still remembered (for tests and stats).
    public var remembered: Int { lastSeen.count }

    private mutating func forgetCodesOutOfView(at now: UInt64) {
        // A timestamp that goes backwards (a camera restarted) must not keep codes forever.
        let window = windowNs
        let stale = { (seen: UInt64) in now < seen || now - seen >= window }
        // Rebuild the table only when something is to be forgotten: a held code costs nothing.
        guard lastSeen.values.contains(where: stale) else { return }
        lastSeen = lastSeen.filter { !stale($0.value) }
    }
}
