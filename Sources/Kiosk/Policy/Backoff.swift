// SPDX-License-Identifier: Apache-2.0
/// How long to wait before reopening a lost camera: 0.5 s, doubling to a cap of 10 s.
public struct Backoff: Equatable {
    public var initialNs: UInt64 = 500_000_000
    public var capNs: UInt64 = 10_000_000_000

    public init() {}

    /// The wait before attempt `n` (1-based).
    public func delay(attempt n: Int) -> UInt64 {
        var d = initialNs
        for _ in 1..<max(1, n) where d < capNs { d *= 2 }
        return min(d, capNs)
    }
}

/// Says a recurring problem at most once per `intervalNs`, with how many times it happened since.
public struct RateLimit {
    public let intervalNs: UInt64
    private var lastSaidNs: UInt64?
    private var suppressed = 0

    public init(intervalNs: UInt64) { self.intervalNs = intervalNs }

    /// Whether to say it now, and how many occurrences went unsaid before this one.
    public mutating func shouldSay(at now: UInt64) -> (say: Bool, suppressed: Int) {
        if let last = lastSaidNs, now >= last, now - last < intervalNs {
            suppressed += 1
            return (false, 0)
        }
        defer { suppressed = 0 }
        lastSaidNs = now
        return (true, suppressed)
    }
}
