// SPDX-License-Identifier: Apache-2.0
import CPlatform
import Glibc

/// A mutex (pthread), for state shared by the frame loop and a worker thread: what Foundation's
/// NSLock did, without Foundation in the shipped binary.
public final class Lock: @unchecked Sendable {
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A lock with a condition variable whose timed waits are on CLOCK_MONOTONIC, so that a wall
/// clock set by NTP (a Pi has no real-time clock) never shortens or stretches a wait.
public final class Condition: @unchecked Sendable {
    private let mutex = Lock()
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }

    public func lock() { mutex.lock() }
    public func unlock() { mutex.unlock() }
    /// With the lock held: releases it until signalled, then holds it again.
    public func wait() { pthread_cond_wait(cond, mutex.mutex) }
    /// As `wait`, but no later than `deadlineNs` on CLOCK_MONOTONIC; false when that came first.
    public func wait(untilMonotonicNs deadlineNs: UInt64) -> Bool {
        var ts = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        return pthread_cond_timedwait(cond, mutex.mutex, &ts) == 0
    }
    public func signal() { pthread_cond_signal(cond) }
    public func broadcast() { pthread_cond_broadcast(cond) }
}

/// Starts `body` on a new detached thread named `name` (as `top` and `/proc/PID/task/*/comm` show it).
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box { let body: @Sendable () -> Void; let name: String; init(_ b: @escaping @Sendable () -> Void, _ n: String) { body = b; self.name = n } }
    let box = Unmanaged.passRetained(Box(body, name)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        kiosk_set_thread_name(box.name)
        box.body()
        return nil
    }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    pthread_detach(thread)
}

/// Lets the kernel end the calling thread's timed sleeps at most `ns` late instead of its default
/// 50 us (for the Wiegand sender, whose pulses are 20-100 us). 1 is the least; 0 would mean
/// "the default" again. False, with errno set, when the kernel refuses.
@discardableResult
public func setThreadTimerSlack(ns: UInt) -> Bool { kiosk_set_timer_slack(max(1, ns)) == 0 }

/// CLOCK_MONOTONIC in nanoseconds: the clock V4L2 stamps its buffers with, and `MonotonicClock`'s.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
