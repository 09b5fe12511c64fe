// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class StrikePolicyTests: XCTestCase {
    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func testShutAtStartOpenForItsTimeOnAGrant() {
        var door = StrikePolicy(openMilliseconds: 3000)
        XCTAssertFalse(door.isOpen)
        XCTAssertEqual(door.tick(at: ms(100)), [])
        XCTAssertEqual(door.grant(at: ms(1000)), [.opened(at: ms(1000), untilNs: ms(4000))])
        XCTAssertTrue(door.isOpen)
        XCTAssertEqual(door.closesAtNs, ms(4000))
        XCTAssertEqual(door.tick(at: ms(4000) - 1), [])
        XCTAssertEqual(door.tick(at: ms(4000)), [.closed(at: ms(4000), reason: .timeUp)])
        XCTAssertFalse(door.isOpen)
        XCTAssertEqual(door.tick(at: ms(5000)), [], "closed once")
    }

    func testAGrantWhileOpenExtendsToTheLaterEnd() {
        var door = StrikePolicy(openMilliseconds: 3000)
        _ = door.grant(at: ms(0))
        XCTAssertEqual(door.grant(at: ms(2000)), [.extended(at: ms(2000), untilNs: ms(5000))])
        XCTAssertEqual(door.tick(at: ms(3000)), [], "the first grant's end no longer applies")
        XCTAssertTrue(door.isOpen)
        XCTAssertEqual(door.tick(at: ms(5000)), [.closed(at: ms(5000), reason: .timeUp)])
    }

    func testAGrantLateInTheTickDoesNotStretchAnOpeningAlreadyOver() {
        var door = StrikePolicy(openMilliseconds: 3000)
        _ = door.grant(at: ms(0))
        // The tick for 3000 ms has not run yet when a grant comes at 3500 ms.
        XCTAssertEqual(door.grant(at: ms(3500)), [.closed(at: ms(3000), reason: .timeUp), .opened(at: ms(3500), untilNs: ms(6500))])
        XCTAssertEqual(door.closesAtNs, ms(6500))
    }

    func testForcedCloseAtOnceAndGrantsOpenItAgainAfter() {
        var door = StrikePolicy(openMilliseconds: 3000)
        XCTAssertEqual(door.forceClose(at: ms(10), reason: "camera_lost"), [], "already shut: nothing to say")
        _ = door.grant(at: ms(100))
        XCTAssertEqual(door.forceClose(at: ms(500), reason: "camera_lost"), [.closed(at: ms(500), reason: .forced("camera_lost"))])
        XCTAssertFalse(door.isOpen)
        XCTAssertEqual(door.tick(at: ms(3100)), [], "the forced close took the time-up with it")
        XCTAssertEqual(door.grant(at: ms(4000)), [.opened(at: ms(4000), untilNs: ms(7000))])
    }

    func testCloseReasonsForTheDoorEvent() {
        XCTAssertEqual(StrikePolicy.CloseReason.timeUp.text, "time")
        XCTAssertEqual(StrikePolicy.CloseReason.forced("stop").text, "stop")
        XCTAssertEqual(StrikePolicy.defaultOpenMilliseconds, 3000)
    }
}
