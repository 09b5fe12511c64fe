// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import GPIO
import Platform
import TestSupport
import XCTest

/// A clock whose absolute waits all wake `lateNs` after their deadline (a busy Pi): a sender that
/// waited relative times would add the lateness up, bit after bit.
final class LateClock: Clock, @unchecked Sendable {
    let manual: ManualClock
    let lateNs: UInt64
    init(_ manual: ManualClock, lateNs: UInt64) { self.manual = manual; self.lateNs = lateNs }
    func now() -> UInt64 { manual.now() }
    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool { manual.sleep(ns: ns + lateNs, unless: stop) }
    func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        manual.sleep(untilNs: max(deadlineNs, manual.now()) + lateNs, unless: stop)
    }
    func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) { manual.schedule(afterNs: ns, work) }
}

/// A clock on which one wait (the `which`-th, 0-based) wakes `lateNs` late (the sender's thread
/// had no core for a while); every other wait ends on its deadline.
final class OnceLateClock: Clock, @unchecked Sendable {
    let manual = ManualClock(startNs: 0)
    let which: Int
    let lateNs: UInt64
    private let lock = Lock()
    private var count = 0
    init(which: Int, lateNs: UInt64) { self.which = which; self.lateNs = lateNs }
    func now() -> UInt64 { manual.now() }
    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool { sleep(untilNs: now() + ns, unless: stop) }
    func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        let n = lock.withLock { count += 1; return count - 1 }
        return manual.sleep(untilNs: max(deadlineNs, manual.now()) + (n == which ? lateNs : 0), unless: stop)
    }
    func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) { manual.schedule(afterNs: ns, work) }
}

/// A clock on which waits from the `blockFrom`-th on (0-based) do not end until a stop: the
/// sender held mid-frame, as long as a test needs (at most `holdLimitNs` of real time: then the
/// wait ends, `gaveUp` says so and the test fails rather than hangs).
final class HoldingClock: Clock, @unchecked Sendable {
    let manual = ManualClock(startNs: 0)
    let blockFrom: Int
    let held = DispatchSemaphore(value: 0)
    private let lock = Lock()
    private var count = 0
    private var timedOut = false
    static let holdLimitNs: UInt64 = 30_000_000_000
    var gaveUp: Bool { lock.withLock { timedOut } }
    init(blockFrom: Int) { self.blockFrom = blockFrom }
    func now() -> UInt64 { manual.now() }
    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool { sleep(untilNs: now() + ns, unless: stop) }
    func sleep(untilNs deadlineNs: UInt64, unless stop: StopSignal) -> Bool {
        let n = lock.withLock { count += 1; return count - 1 }
        guard n >= blockFrom else { return manual.sleep(untilNs: deadlineNs, unless: stop) }
        held.signal()
        let limit = monotonicNanoseconds() + HoldingClock.holdLimitNs
        while stop.requested == nil {
            guard monotonicNanoseconds() < limit else {
                lock.withLock { timedOut = true }
                return false
            }
            usleep(1000)
        }
        return false
    }
    func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) { manual.schedule(afterNs: ns, work) }
}

final class WiegandSenderTests: XCTestCase {
    /// H10301, facility 18, card 36963 (worked out by hand in PolicyTests' WiegandTests).
    let h10301 = "0" + "00010010" + "1001000001100011" + "1"
    /// The same credential in 34 bits.
    let bits34 = "0" + "0000000000010010" + "1001000001100011" + "1"
    let d0 = 5, d1 = 6

    func bits(_ s: String) -> [Bool] { s.map { $0 == "1" } }

    struct Pulse: Equatable { let bit: Bool; let startNs: UInt64; let widthNs: UInt64 }

    /// The pulses on D0 and D1 in time order, read back from the recorded edges (a pulse is the
    /// wire going low and back high).
    func pulses(_ timeline: LineTimeline, idle: Int = 1) -> [Pulse] {
        var result: [Pulse] = []
        for (offset, bit) in [(d0, false), (d1, true)] {
            let edges = timeline.edges(offset: offset).dropFirst()  // the request, at idle
            var start: UInt64?
            for e in edges {
                if e.level != idle { XCTAssertNil(start, "two falls in a row on line \(offset)"); start = e.ns }
                else if let s = start { result.append(Pulse(bit: bit, startNs: s, widthNs: e.ns - s)); start = nil }
            }
            XCTAssertNil(start, "line \(offset) left low")
        }
        return result.sorted { $0.startNs < $1.startNs }
    }

    func makeSender(clock: Clock, timeline: LineTimeline, chip: FakeChip, pulseUs: Int = 50, intervalUs: Int = 2000,
                    activeLow: Bool = true, queueLimit: Int = 8) throws -> WiegandSender {
        WiegandSender(d0: try timeline.output(chip, offset: d0, activeLow: activeLow),
                      d1: try timeline.output(chip, offset: d1, activeLow: activeLow),
                      pulseMicroseconds: pulseUs, intervalMicroseconds: intervalUs, clock: clock, queueLimit: queueLimit)
    }

    func sendAndWait(_ sender: WiegandSender, _ frames: [[Bool]]) {
        let sent = DispatchSemaphore(value: 0)
        sender.onSent = { _, _ in sent.signal() }
        for f in frames { sender.send(f) }
        for _ in frames { XCTAssertEqual(sent.wait(timeout: .now() + 10), .success, "frame sent") }
    }

    func testA26BitFrameBitByBitWithItsPulseWidthsAndIntervals() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 1_000_000_000), timeline = LineTimeline(clock: clock)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip)
        XCTAssertEqual(chip.levels[d0], [1], "idle high from the request")
        XCTAssertEqual(chip.levels[d1], [1])
        XCTAssertEqual(chip.activeLow[d0], true)
        sendAndWait(sender, [bits(h10301)])
        let p = pulses(timeline)
        XCTAssertEqual(p.map(\.bit), bits(h10301), "the frame's bits, parities included, in order")
        XCTAssertEqual(p.count, 26)
        XCTAssertEqual(Set(p.map(\.widthNs)), [50_000], "every pulse 50 us")
        let start = p[0].startNs
        XCTAssertEqual(start, 1_000_000_000, "the first bit at once")
        XCTAssertEqual(p.map(\.startNs), (0..<26).map { start + UInt64($0) * 2_000_000 }, "a bit every 2000 us, start to start")
        XCTAssertEqual(chip.levels[d0]?.count, 1 + 2 * 17, "17 zero bits on D0")
        XCTAssertEqual(chip.levels[d1]?.count, 1 + 2 * 9, "9 one bits on D1")
        XCTAssertEqual(sender.sent, 1)
        sender.shutDown()
        XCTAssertEqual(chip.levels[d0]?.last, 1)
        XCTAssertEqual(chip.levels[d1]?.last, 1)
    }

    func testA34BitFrameAtOtherTimings() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip, pulseUs: 20, intervalUs: 200)
        sendAndWait(sender, [bits(bits34)])
        let p = pulses(timeline)
        XCTAssertEqual(p.map(\.bit), bits(bits34))
        XCTAssertEqual(Set(p.map(\.widthNs)), [20_000])
        XCTAssertEqual(p.map(\.startNs), (0..<34).map { p[0].startNs + UInt64($0) * 200_000 })
        sender.shutDown()
    }

    /// Every wake-up 30 us late: the pulses start 30 us after their deadlines, each of them (not
    /// 30 us more per bit), and last at least their width.
    func testLateWakeUpsDoNotAccumulate() throws {
        let chip = FakeChip(), manual = ManualClock(startNs: 0)
        let clock = LateClock(manual, lateNs: 30_000), timeline = LineTimeline(clock: manual)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip)
        sendAndWait(sender, [bits(h10301)])
        let p = pulses(timeline)
        XCTAssertEqual(p.count, 26)
        let deadline0 = p[0].startNs - 30_000
        XCTAssertEqual(p.map(\.startNs), (0..<26).map { deadline0 + UInt64($0) * 2_000_000 + 30_000 })
        XCTAssertEqual(Set(p.map(\.widthNs)), [80_000], "50 us from the edge actually driven, plus the late wake-up")
        sender.shutDown()
    }

    /// Bit 3's start (the 7th wait: two per bit) wakes 4.5 ms late, past the deadlines of bits 4
    /// and 5: they follow one pulse width apart, and bit 6 is back on its deadline.
    func testAVeryLateBitIsCaughtUpWithoutPulsesRunningTogether() throws {
        let chip = FakeChip(), clock = OnceLateClock(which: 6, lateNs: 4_500_000), timeline = LineTimeline(clock: clock.manual)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip)
        sendAndWait(sender, [bits(h10301)])
        let p = pulses(timeline)
        XCTAssertEqual(p.map(\.bit), bits(h10301), "every bit, in order")
        XCTAssertEqual(Set(p.map(\.widthNs)), [50_000])
        let s = p[0].startNs
        let bit3 = s + 6_000_000 + 4_500_000
        XCTAssertEqual(p[3].startNs, bit3)
        XCTAssertEqual(p[4].startNs, bit3 + 100_000, "a pulse width after bit 3's pulse ended")
        XCTAssertEqual(p[5].startNs, bit3 + 200_000)
        XCTAssertEqual(p[6...].map(\.startNs), (6..<26).map { s + UInt64($0) * 2_000_000 }, "back on the deadlines")
        sender.shutDown()
    }

    func testFramesAreKeptApartByTheFrameGap() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip)
        XCTAssertEqual(sender.frameGapNs, 100_000_000)
        sendAndWait(sender, [bits("1010"), bits("0110")])
        let p = pulses(timeline)
        XCTAssertEqual(p.map(\.bit), bits("10100110"))
        let firstEnd = p[3].startNs + p[3].widthNs
        XCTAssertEqual(p[4].startNs, firstEnd + 100_000_000, "the second frame 100 ms after the first one's last pulse")
        sender.shutDown()
    }

    func testAnOpenCollectorStageIsDrivenActiveHigh() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip, activeLow: false)
        sendAndWait(sender, [bits("01")])
        XCTAssertEqual(chip.levels[d0], [0, 1, 0], "the pin high while the transistor pulls the wire low")
        XCTAssertEqual(chip.levels[d1], [0, 1, 0])
        sender.shutDown()
    }

    /// The sender held in its first pulse: `send` still returns at once, a full queue drops its
    /// oldest frame, and a stop leaves both lines high, released, with nothing more sent.
    func testSendNeverWaitsAndShutDownMidPulseLeavesTheLinesIdle() throws {
        let chip = FakeChip(), clock = HoldingClock(blockFrom: 1), timeline = LineTimeline(clock: clock)
        let sender = try makeSender(clock: clock, timeline: timeline, chip: chip, queueLimit: 3)
        sender.send(bits(h10301))
        XCTAssertEqual(clock.held.wait(timeout: .now() + 10), .success, "the sender is mid-pulse")
        XCTAssertEqual(chip.levels[d0], [1, 0], "the first bit (0) is on D0, low")
        for _ in 0..<5 { XCTAssertTrue(sender.send(bits(h10301))) }
        XCTAssertEqual(sender.dropped, 2, "five into a queue of three")
        XCTAssertFalse(sender.isIdle)
        sender.shutDown()
        XCTAssertFalse(clock.gaveUp, "held until the stop, not until the hold's limit")
        XCTAssertEqual(chip.levels[d0], [1, 0, 1], "back high at the stop")
        XCTAssertEqual(chip.levels[d1], [1])
        XCTAssertEqual(Set(chip.released), [d0, d1])
        XCTAssertEqual(sender.sent, 0, "the cut frame is not counted as sent")
        XCTAssertFalse(sender.send(bits(h10301)), "nothing is taken after the stop")
        XCTAssertTrue(sender.isIdle)
    }

    /// On the real clock (no timing asserted here: see the dev measurement): each bit reaches its
    /// line, and both end high.
    func testTheRealClockSendsTheWholeFrame() throws {
        let chip = FakeChip()
        let sender = WiegandSender(d0: try SwitchedOutput(chip: chip, offset: d0, activeLow: true),
                                   d1: try SwitchedOutput(chip: chip, offset: d1, activeLow: true),
                                   pulseMicroseconds: 50, intervalMicroseconds: 500, clock: MonotonicClock())
        sendAndWait(sender, [bits(h10301)])
        XCTAssertEqual(chip.levels[d0], [1] + Array(repeating: [0, 1], count: 17).flatMap { $0 })
        XCTAssertEqual(chip.levels[d1], [1] + Array(repeating: [0, 1], count: 9).flatMap { $0 })
        sender.shutDown()
        XCTAssertEqual(Set(chip.released), [d0, d1])
    }
}
