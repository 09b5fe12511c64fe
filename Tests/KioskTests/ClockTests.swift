// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Platform
import TestSupport
import XCTest

/// The manual clock's rules, which every timed test relies on.
final class ManualClockTests: XCTestCase {
    final class Trace: @unchecked Sendable {
        let lock = Lock()
        var events: [String] = []
        func add(_ e: String) { lock.withLock { events.append(e) } }
    }

    func testDueWorkRunsInDeadlineThenInsertionOrder() {
        let clock = ManualClock(startNs: 0), trace = Trace()
        clock.schedule(afterNs: 30) { trace.add("c@30") }
        clock.schedule(afterNs: 10) { trace.add("a@10") }
        clock.schedule(afterNs: 10) { trace.add("b@10") }
        clock.schedule(afterNs: 50) { trace.add("d@50") }
        clock.advance(to: 30)
        XCTAssertEqual(trace.events, ["a@10", "b@10", "c@30"])
        XCTAssertEqual(clock.now(), 30)
        XCTAssertEqual(clock.pendingCount, 1)
        clock.advance(to: 49)
        XCTAssertEqual(trace.events.count, 3, "not due yet")
        clock.advance(to: 50)
        XCTAssertEqual(trace.events.last, "d@50")
    }

    func testWorkScheduledWhileAdvancingRunsInTheSameAdvanceWhenDue() {
        let clock = ManualClock(startNs: 0), trace = Trace()
        clock.schedule(afterNs: 10) {
            trace.add("first@\(clock.now())")
            clock.schedule(afterNs: 5) { trace.add("second@\(clock.now())") }     // due at 15
            clock.schedule(afterNs: 100) { trace.add("late@\(clock.now())") }    // due at 110
        }
        clock.schedule(afterNs: 20) { trace.add("third@\(clock.now())") }
        clock.advance(to: 50)
        XCTAssertEqual(trace.events, ["first@10", "second@15", "third@20"], "each runs at its own deadline")
        XCTAssertEqual(clock.now(), 50)
        clock.advance(byNs: 60)
        XCTAssertEqual(trace.events.last, "late@110")
    }

    func testSleepIsAnAdvanceAndStopsEarlyWhenAsked() {
        let clock = ManualClock(startNs: 0), trace = Trace(), stop = StopSignal()
        clock.schedule(afterNs: 500) { trace.add("beep off") }
        XCTAssertTrue(clock.sleep(ns: 1_000, unless: stop))
        XCTAssertEqual(trace.events, ["beep off"])
        XCTAssertEqual(clock.now(), 1_000)
        XCTAssertEqual(clock.sleeps, [1_000])
        stop.request("SIGTERM")
        XCTAssertFalse(clock.sleep(ns: 1_000, unless: stop))
        XCTAssertEqual(clock.now(), 1_000, "a stopped sleep does not move time")
    }

    /// The production clock: monotonic, and its scheduled work runs on its own thread.
    func testTheMonotonicClockRunsWorkLater() {
        let clock = MonotonicClock()
        let t0 = clock.now()
        let done = expectation(description: "ran")
        clock.schedule(afterNs: 20_000_000) { done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertGreaterThanOrEqual(clock.now() - t0, 20_000_000)
    }
}
