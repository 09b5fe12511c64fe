// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc

/// Asks the frame loop to stop. Set by SIGTERM/SIGINT (or by a test); read by the loop between
/// frames and while it waits for the camera, which it never does for long.
public final class StopSignal: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var reason: String?

    public init() {}

    public func request(_ why: String) {
        lock.lock()
        defer { lock.unlock() }
        if reason == nil { reason = why }
    }

    public var requested: String? {
        lock.lock()
        defer { lock.unlock() }
        return reason
    }
}

/// The one clock of the service: everything that waits or times itself (the frame loop's back-off
/// and stall detection, the buzzer's and the torch's timers, stats, rate limits) takes it, so that
/// a test moves time by hand (`ManualClock` in TestSupport) and a 30 s back-off takes microseconds.
/// Monotonic: a Pi without a real-time clock has its wall clock set by NTP after boot, and no wait
/// may jump with it.
public protocol Clock: AnyObject, Sendable {
    /// Monotonic nanoseconds.
    func now() -> UInt64
    /// Waits `ns`, or less if `stop` is requested meanwhile. Returns false when stopped.
    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool
    /// Runs `work` once, `ns` from now, on the clock's own thread (never the caller's).
    func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void)
    /// Waits until the clock reads `deadlineNs` (at once when it has passed), or less if `stop` is
    /// requested meanwhile. Returns false when stopped. A loop that waits for deadlines it adds up
    /// from one start (the Wiegand bits) keeps its rhythm: a late wake-up delays that step only.
    func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool
    /// The same clock whose scheduled work runs on a thread of its own (`label`): for work that may
    /// block (a file written and fsynced) and must not hold up the other timers (the buzzer's
    /// steps, the strike, the verdicts' deadlines), which share one thread. A manual clock is its
    /// own lane: a test moves one time for all.
    func lane(_ label: String) -> Clock
}

extension Clock {
    public func lane(_ label: String) -> Clock { self }

    /// For clocks that have only relative waits: as close as `sleep(ns:)` gets.
    public func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        let t = now()
        return sleep(ns: deadlineNs > t ? deadlineNs - t : 0, unless: stop)
    }
}

/// CLOCK_MONOTONIC; scheduled work runs on a private serial queue.
public final class MonotonicClock: Clock, @unchecked Sendable {  // the queue is thread-safe
    private let queue: DispatchQueue

    public init(label: String = "kiosk.clock") { queue = DispatchQueue(label: label) }

    /// The last stretch of an absolute wait is spun on the clock rather than slept: a sleeping
    /// thread wakes tens of microseconds late and may wait for a core, which would stretch a
    /// 20-100 us Wiegand pulse by half or more and put each bit late. At most this long per wait
    /// (a 26-bit frame: some 5 ms of CPU).
    public static let spinNs: UInt64 = 150_000

    public func now() -> UInt64 { monotonicNanoseconds() }

    public func lane(_ label: String) -> Clock { MonotonicClock(label: label) }

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

    /// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to `spinNs` before the deadline, then a
    /// spin to it: the wake-up is due at the deadline itself, however long the caller took since
    /// it computed it. Slept in slices of at most 50 ms, so that a stop is seen as soon as by
    /// `sleep(ns:)`. Only a wake-up later than `spinNs` (the kernel's timer slack, 50 us by
    /// default unless `setThreadTimerSlack` lowers it, plus waiting for a core) makes it late.
    public func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        while stop.requested == nil {
            let t = now()
            if t >= deadlineNs { return true }
            if deadlineNs - t <= MonotonicClock.spinNs {
                while now() < deadlineNs {}
                return true
            }
            // Wake a little early and spin the rest: the edge is then on time, not as late as
            // the kernel's wake-up.
            let wake = min(deadlineNs - MonotonicClock.spinNs, t + 50_000_000)
            var ts = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
            // EINTR (a signal handled on this thread) only means: look again.
            _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil)
        }
        return false
    }

    public func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) {
        // DispatchTime is CLOCK_MONOTONIC on Linux.
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(ns, UInt64(Int.max)))), execute: work)
    }
}
