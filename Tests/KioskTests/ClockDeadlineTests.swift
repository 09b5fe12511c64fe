// SPDX-License-Identifier: Apache-2.0
import Platform
import TestSupport
import XCTest

/// `Clock.sleep(untilNs:)`: absolute waits (the Wiegand sender's bit deadlines).
final class ClockDeadlineTests: XCTestCase {
    func testTheMonotonicClockNeverWakesBeforeTheDeadline() {
        let clock = MonotonicClock(), stop = StopSignal()
        for stepNs: UInt64 in [0, 50_000, 1_000_000, 3_000_000] {
            let deadline = clock.now() + stepNs
            XCTAssertTrue(clock.sleep(untilNs: deadline, unless: stop))
            XCTAssertGreaterThanOrEqual(clock.now(), deadline, "woke before the deadline (+\(stepNs) ns)")
        }
        XCTAssertTrue(clock.sleep(untilNs: clock.now() - 1_000_000, unless: stop), "a deadline passed: at once")
    }

    func testAStopEndsAnAbsoluteWait() {
        let clock = MonotonicClock(), stop = StopSignal()
        stop.request("test")
        let t = clock.now()
        XCTAssertFalse(clock.sleep(untilNs: t + 10_000_000_000, unless: stop))
        XCTAssertLessThan(clock.now() - t, 1_000_000_000)
    }

    func testTheManualClockStandsAtTheDeadlineAndRunsWhatCameDue() {
        let clock = ManualClock(startNs: 0), stop = StopSignal()
        let ran = Flag()
        clock.schedule(afterNs: 500) { ran.set() }
        XCTAssertTrue(clock.sleep(untilNs: 1000, unless: stop))
        XCTAssertEqual(clock.nowNs, 1000)
        XCTAssertTrue(ran.isSet)
        XCTAssertTrue(clock.sleep(untilNs: 10, unless: stop), "passed already")
        XCTAssertEqual(clock.nowNs, 1000, "time never goes back")
        XCTAssertEqual(clock.sleepDeadlines, [1000, 10])
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = Lock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
