// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform

/// The one clock, moved by hand, in the manner of swift-nio's EmbeddedEventLoop: `advance` runs
/// what came due in (deadline, insertion) order, including work scheduled while advancing that is
/// due by the target; `sleep` is an advance by its length (and records it). Nothing runs on
/// another thread: a test of a 30 s back-off or a 3 s door strike takes microseconds.
public final class ManualClock: Clock, @unchecked Sendable {  // state guarded by `lock`
    private let lock = Lock()
    private var current: UInt64
    private var pending: [(at: UInt64, order: Int, work: @Sendable () -> Void)] = []
    private var scheduled = 0
    /// Every `sleep` asked for, in nanoseconds.
    public private(set) var sleeps: [UInt64] = []
    /// Called after each sleep (tests stop the service from here).
    public var afterSleep: () -> Void = {}

    public init(startNs: UInt64 = 1_000_000_000) { current = startNs }

    public var nowNs: UInt64 {
        get { lock.withLock { current } }
        set { advance(to: newValue) }
    }

    public func now() -> UInt64 { nowNs }

    public func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) {
        lock.withLock {
            scheduled += 1
            pending.append((current &+ ns, scheduled, work))
        }
    }

    /// Runs everything due by `target` (which may schedule more), then stands at `target`.
    public func advance(to target: UInt64) {
        while true {
            let next: (at: UInt64, order: Int, work: @Sendable () -> Void)? = lock.withLock {
                guard let i = pending.indices.filter({ pending[$0].at <= target })
                    .min(by: { (pending[$0].at, pending[$0].order) < (pending[$1].at, pending[$1].order) }) else { return nil }
                let task = pending.remove(at: i)
                current = max(current, task.at)
                return task
            }
            guard let next else { break }
            next.work()
        }
        lock.withLock { current = max(current, target) }
    }

    public func advance(byNs ns: UInt64) { advance(to: nowNs + ns) }
    /// To `ms` milliseconds on this clock (from 0: `ManualClock(startNs: 0)`).
    public func advance(toMs ms: Int) { advance(to: UInt64(ms) * 1_000_000) }
    public func advance(byMs ms: Int) { advance(byNs: UInt64(ms) * 1_000_000) }

    /// Work scheduled and not yet run.
    public var pendingCount: Int { lock.withLock { pending.count } }

    /// Every `sleep(untilNs:)` asked for: the deadlines.
    public private(set) var sleepDeadlines: [UInt64] = []

    /// An advance to the deadline (none when it has passed), recorded.
    public func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        guard stop.requested == nil else { return false }
        lock.withLock { sleepDeadlines.append(deadlineNs) }
        advance(to: deadlineNs)
        afterSleep()
        return stop.requested == nil
    }

    public func sleep(ns: UInt64, unless stop: StopSignal) -> Bool {
        guard stop.requested == nil else { return false }
        lock.withLock { sleeps.append(ns) }
        advance(byNs: ns)
        afterSleep()
        return stop.requested == nil
    }
}
