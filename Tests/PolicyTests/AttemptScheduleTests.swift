// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class AttemptScheduleTests: XCTestCase {
    func testAnUnreadPresentationGetsEachAttemptInTurnAfterItsFirstDecode() {
        var s = AttemptSchedule(count: 3)
        let plans = (0..<8).map { _ -> Int? in
            let p = s.plan()
            s.decoded(attempt: p, read: false, attemptRead: false)
            return p
        }
        XCTAssertEqual(plans, [nil, 0, 1, 2, 0, 1, 2, 0], "the first decode as before, then one attempt a decode, round and round")
    }

    func testTheWinnerIsGivenFirstUntilItReadsNothingOrThePresentationEnds() {
        var s = AttemptSchedule(count: 3)
        XCTAssertNil(s.plan())
        s.decoded(attempt: nil, read: false, attemptRead: false)
        XCTAssertEqual(s.plan(), 0)
        s.decoded(attempt: 0, read: false, attemptRead: false)
        XCTAssertEqual(s.plan(), 1)
        s.decoded(attempt: 1, read: true, attemptRead: true)
        XCTAssertEqual(s.winner, 1)
        XCTAssertEqual([s.plan(), s.plan()], [1, 1], "the hand moves, the winner stays first")
        s.decoded(attempt: 1, read: true, attemptRead: false)
        XCTAssertEqual(s.winner, 1, "plain zbar read it this time: the winner stays")
        s.decoded(attempt: 1, read: false, attemptRead: false)
        XCTAssertNil(s.winner, "it read nothing: the round goes on")
        XCTAssertEqual(s.plan(), 2)
        s.nothingHeld()
        XCTAssertNil(s.plan(), "a new presentation starts with its first decode")
        XCTAssertEqual(s.plan(), 0)
    }

    func testNoAttemptsAndALateAnswer() {
        var none = AttemptSchedule(count: 0)
        XCTAssertEqual((0..<4).map { _ in none.plan() }, [nil, nil, nil, nil])
        var s = AttemptSchedule(count: 2)
        // Planned twice before the first answer comes (the worker is a frame behind).
        XCTAssertNil(s.plan())
        XCTAssertEqual(s.plan(), 0)
        s.decoded(attempt: nil, read: false, attemptRead: false)
        s.decoded(attempt: 0, read: true, attemptRead: true)
        XCTAssertEqual(s.plan(), 0)
        s.decoded(attempt: 7, read: true, attemptRead: true)  // not an attempt of this list: ignored
        XCTAssertEqual(s.winner, 0)
    }
}
