// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Platform
import Policy

/// A GPIO write that fails while running (a loose connector, a driver hiccup) must not stop the
/// scanning, nor fill the journal: it is logged at most once a minute, with the count since.
public final class GPIOWriteFailures: @unchecked Sendable {  // guarded by `lock`
    private let logger: Logger
    private let clock: Clock
    private var limit = RateLimit(intervalNs: 60_000_000_000)
    private let lock = Lock()

    public init(logger: Logger, clock: Clock) {
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
    /// The configuration from this environment, `KIOSK_ON_SCAN` checked against the file system,
    /// the default MQTT topic from this machine's name.
    public static func read(environment: [String: String]) -> ConfigurationReading {
        read(environment: environment, isExecutableFile: Files.isExecutableFile, hostname: Files.hostname())
    }
}
