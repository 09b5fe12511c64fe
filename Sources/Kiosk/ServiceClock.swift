// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Platform
import Policy

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

/// A GPIO write that fails while running (a loose connector, a driver hiccup) must not stop the
/// scanning, nor fill the journal: it is logged at most once a minute, with the count since.
public final class GPIOWriteFailures: @unchecked Sendable {  // guarded by `lock`
    private let logger: Logger
    private let clock: ServiceClock
    private var limit = RateLimit(intervalNs: 60_000_000_000)
    private let lock = Lock()

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

extension Configuration {
    /// The configuration from this environment, `KIOSK_ON_SCAN` checked against the file system.
    public static func read(environment: [String: String]) -> ConfigurationReading {
        read(environment: environment, isExecutableFile: Files.isExecutableFile)
    }
}
