// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import Glibc

/// Time for the service's own waits (back-off, stall detection, rate limits). The tests inject
/// one that moves only when told, so timing is asserted exactly and never flakes.
public protocol ServiceClock: AnyObject {
    /// Monotonic nanoseconds.
    func now() -> UInt64
    /// Waits `ns`, or less if `stop` is requested meanwhile. Returns false when stopped.
    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool
}

public final class SystemClock: ServiceClock {
    public init() {}

    public func now() -> UInt64 { monotonicNanoseconds() }

    public func sleep(ns: UInt64, unless stop: StopSignal) -> Bool {
        let end = now() + ns
        // Short slices keep a SIGTERM during a long back-off well within its one second.
        while stop.requested == nil {
            let t = now()
            if t >= end { return true }
            usleep(UInt32(min(end - t, 50_000_000) / 1000))
        }
        return false
    }
}

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

/// A GPIO write that fails while running (a loose connector, a driver hiccup) must not stop the
/// scanning, nor fill the journal: it is logged at most once a minute, with the count since.
public final class GPIOWriteFailures: @unchecked Sendable {  // guarded by `lock`
    private let logger: Logger
    private let clock: ServiceClock
    private var limit = RateLimit(intervalNs: 60_000_000_000)
    private let lock = NSLock()

    public init(logger: Logger, clock: ServiceClock = SystemClock()) {
        self.logger = logger
        self.clock = clock
    }

    public func report(_ error: Error) {
        lock.lock()
        let decision = limit.shouldSay(at: clock.now())
        lock.unlock()
        guard decision.say else { return }
        logger.warning("gpio_write_failed", ["error": .text(String(describing: error)), "since_last": .int(decision.suppressed)])
    }
}
