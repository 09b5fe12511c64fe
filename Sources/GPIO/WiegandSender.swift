// SPDX-License-Identifier: Apache-2.0
import Platform

/// Sends Wiegand frames to an access controller on two lines, from a thread of its own.
///
/// On the wire both lines idle high; a 0 bit pulls D0 low for the pulse width, a 1 bit pulls D1
/// low. Each line is a `SwitchedOutput` whose *active* state is the pulse (the wire low): with a
/// level shifter between the Pi pin and the 5 V line the pin itself goes low, so request it
/// active-low (`activeLow: true`, the usual case); with an open-collector NPN stage per line the
/// pin goes high to pull the line low, so request it active-high. Either way the lines are
/// requested inactive (idle) and left inactive when sending stops.
///
/// Bit `i` of a frame starts at `start + i * interval`: each start is an absolute deadline
/// (`Clock.sleep(untilNs:)`, `clock_nanosleep` with `TIMER_ABSTIME` on the real clock), so a late
/// wake-up delays that one edge and never the rest of the frame (a bit whose deadline has passed
/// starts at least a pulse width after the last pulse ended, and the next ones are back on
/// their deadlines). A pulse ends `pulse` after the
/// edge was actually driven, so a late start never shortens it (a 20 us pulse could vanish);
/// lateness only ever lengthens it. Frames are at least `frameGapNs` apart (end of one to the
/// start of the next), which is how a controller tells where one ends.
///
/// `send` only queues (the frame loop never waits); a full queue drops its oldest frame and
/// counts it.
public final class WiegandSender: @unchecked Sendable {  // state guarded by `condition`
    public let d0: SwitchedOutput
    public let d1: SwitchedOutput
    public let pulseNs: UInt64
    public let intervalNs: UInt64
    public let frameGapNs: UInt64
    public let queueLimit: Int
    private let clock: Clock
    private let condition = Condition()
    private let stop = StopSignal()
    private var queue: [[Bool]] = []
    private var sending = false
    private var stopping = false
    private var finished = false
    private var droppedCount = 0
    private var sentCount = 0
    /// After each frame, on the sender's thread: its bits and when its first bit started.
    public var onSent: (_ bits: [Bool], _ startedNs: UInt64) -> Void = { _, _ in }
    /// A line could not be driven (the frame goes on; the controller will refuse its parity).
    public var onError: (Error) -> Void = { _ in }

    /// Starts the sender's thread. `frameGapNs` defaults to the larger of 100 ms and ten bit
    /// intervals: controllers end a frame after some 20-50 ms without a pulse.
    public init(d0: SwitchedOutput, d1: SwitchedOutput, pulseMicroseconds: Int, intervalMicroseconds: Int,
                clock: Clock, queueLimit: Int = 8, frameGapNs: UInt64? = nil) {
        precondition(pulseMicroseconds > 0 && pulseMicroseconds < intervalMicroseconds, "a pulse fits within its bit interval")
        self.d0 = d0
        self.d1 = d1
        pulseNs = UInt64(pulseMicroseconds) * 1000
        intervalNs = UInt64(intervalMicroseconds) * 1000
        self.frameGapNs = frameGapNs ?? max(100_000_000, 10 * UInt64(intervalMicroseconds) * 1000)
        self.queueLimit = max(1, queueLimit)
        self.clock = clock
        startThread(name: "kiosk.wiegand") { [self] in self.work() }
    }

    /// Queues a frame; never blocks. False when the sender has been shut down.
    @discardableResult
    public func send(_ bits: [Bool]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        if queue.count >= queueLimit {
            queue.removeFirst()
            droppedCount += 1
        }
        queue.append(bits)
        condition.signal()
        return true
    }

    /// Frames dropped from a full queue, and frames sent to their last bit.
    public var dropped: Int { condition.lock(); defer { condition.unlock() }; return droppedCount }
    public var sent: Int { condition.lock(); defer { condition.unlock() }; return sentCount }
    /// Nothing queued, nothing on the wire.
    public var isIdle: Bool { condition.lock(); defer { condition.unlock() }; return queue.isEmpty && !sending }

    /// Stops sending (a frame on the wire is cut at its next edge: the controller drops a short
    /// frame), leaves both lines idle and releases them, and returns when the thread is done:
    /// within one bit interval. Call it on every way out (the thread holds the sender until
    /// then), never from `onSent`.
    public func shutDown() {
        condition.lock()
        stopping = true
        queue.removeAll()
        stop.request("shut down")
        condition.broadcast()
        condition.unlock()
        // Idle at once, even mid-pulse; the thread's later writes find released lines.
        d0.shutDown()
        d1.shutDown()
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func work() {
        // Pulses are 20-100 us: the default 50 us of timer slack would stretch them by half.
        setThreadTimerSlack(ns: 1)
        var earliestNs: UInt64 = 0
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let bits = queue.removeFirst()
            sending = true
            condition.unlock()

            let startNs = max(clock.now(), earliestNs)
            let complete = transmit(bits, from: startNs)
            // From the last pulse's actual end: a frame that ran late keeps its gap too.
            earliestNs = clock.now() + frameGapNs

            condition.lock()
            sending = false
            if complete { sentCount += 1 }
            condition.unlock()
            if complete { onSent(bits, startNs) }
        }
    }

    /// False when a stop cut the frame.
    private func transmit(_ bits: [Bool], from startNs: UInt64) -> Bool {
        var lastPulseEndNs: UInt64 = 0
        for (i, bit) in bits.enumerated() {
            // On its deadline; after a wake-up so late that the deadline has passed, no sooner
            // than a pulse width after the last pulse, so that two pulses never run together.
            let edge = max(startNs + UInt64(i) * intervalNs, i == 0 ? 0 : lastPulseEndNs + pulseNs)
            guard clock.sleep(untilNs: edge, unless: stop) else { return false }
            let line = bit ? d1 : d0
            drive(line, true)
            let pulseEnded = clock.sleep(untilNs: clock.now() + pulseNs, unless: stop)
            drive(line, false)
            lastPulseEndNs = clock.now()
            guard pulseEnded else { return false }
        }
        return true
    }

    private func drive(_ line: SwitchedOutput, _ pulse: Bool) {
        do { try line.set(active: pulse) } catch { onError(error) }
    }
}
