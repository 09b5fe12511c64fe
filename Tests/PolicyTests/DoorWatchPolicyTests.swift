// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The door's inputs with exact times: forced, held, the exit button, relock on
/// contact, the alarm's end, bounce filtered, tamper.
final class DoorWatchPolicyTests: XCTestCase {
    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func monitor(debounceMs: Int = 0, heldS: Int = 30, rexOpens: Bool = true, relockOnContact: Bool = false,
                 inputs: [DoorWatchPolicy.Input: Bool] = [.contact: false, .rex: false, .tamper: false]) -> DoorWatchPolicy {
        var m = DoorWatchPolicy(settings: .init(heldNs: UInt64(heldS) * 1_000_000_000, debounceNs: ms(debounceMs), rexOpens: rexOpens,
                                            relockOnContact: relockOnContact, releaseMilliseconds: 3000))
        let start = m.start(levels: inputs, at: 0)
        XCTAssertEqual(start, inputs[.contact] != nil ? [.doorState(.closed)] : [])
        return m
    }

    func testAGrantThenTheDoorOpenedAndClosedIsNoAlarm() {
        var m = monitor()
        XCTAssertEqual(m.release(at: ms(1000), milliseconds: 3000), [])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(2000)), [.contact(open: true, edgeNs: ms(2000)), .doorState(.open)])
        XCTAssertEqual(m.state, .open)
        XCTAssertEqual(m.nextDeadlineNs, ms(32_000), "the held limit")
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(6000)), [.contact(open: false, edgeNs: ms(6000)), .doorState(.closed)])
        XCTAssertEqual(m.state, .closed)
        XCTAssertNil(m.nextDeadlineNs)
    }

    func testOpenedWithoutAReleaseIsForcedAndClosingEndsIt() {
        var m = monitor()
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(500)),
                       [.contact(open: true, edgeNs: ms(500)), .forced(edgeNs: ms(500)), .doorState(.forced), .soundAlarm])
        XCTAssertNil(m.nextDeadlineNs, "a forced door is not held as well")
        XCTAssertEqual(m.tick(at: ms(100_000)), [])
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(4500)),
                       [.contact(open: false, edgeNs: ms(4500)), .alarmEnd(alarm: .forced, edgeNs: ms(4500), openNs: ms(4000)),
                        .silenceAlarm, .doorState(.closed)])
    }

    func testOpenedAfterTheReleaseRanOutIsForced() {
        var m = monitor()
        _ = m.release(at: ms(1000), milliseconds: 3000)
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(3999)).first, .contact(open: true, edgeNs: ms(3999)))
        XCTAssertEqual(m.state, .open, "1 ms before the strike shut: released")
        _ = m.edge(.contact, active: false, at: ms(5000))
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(6000)),
                       [.contact(open: true, edgeNs: ms(6000)), .forced(edgeNs: ms(6000)), .doorState(.forced), .soundAlarm])
        var n = monitor()
        _ = n.release(at: ms(1000), milliseconds: 3000)
        XCTAssertEqual(n.edge(.contact, active: true, at: ms(4000)).contains(.forced(edgeNs: ms(4000))), true, "at the strike's close: forced")
    }

    func testHeldOpenPastTheLimitExactlyThenClosed() {
        var m = monitor(heldS: 10)
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.edge(.contact, active: true, at: ms(1000))
        XCTAssertEqual(m.tick(at: ms(10_999)), [])
        XCTAssertEqual(m.tick(at: ms(11_000)), [.held(at: ms(11_000), openNs: ms(10_000)), .doorState(.held), .soundAlarm])
        XCTAssertEqual(m.state, .held)
        XCTAssertEqual(m.tick(at: ms(20_000)), [], "held once")
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(25_000)),
                       [.contact(open: false, edgeNs: ms(25_000)), .alarmEnd(alarm: .held, edgeNs: ms(25_000), openNs: ms(24_000)),
                        .silenceAlarm, .doorState(.closed)])
    }

    func testHeldIsSeenOnTheNextEdgeEvenWithoutATick() {
        var m = monitor(heldS: 10)
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.edge(.contact, active: true, at: ms(1000))
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(12_000)),
                       [.held(at: ms(11_000), openNs: ms(10_000)), .doorState(.held), .soundAlarm,
                        .contact(open: false, edgeNs: ms(12_000)), .alarmEnd(alarm: .held, edgeNs: ms(12_000), openNs: ms(11_000)),
                        .silenceAlarm, .doorState(.closed)])
    }

    func testTheExitButtonOpensTheStrikeAndReleasesTheDoor() {
        var m = monitor()
        XCTAssertEqual(m.edge(.rex, active: true, at: ms(100)), [.rex(edgeNs: ms(100), opensStrike: true), .openStrike(milliseconds: 3000)])
        XCTAssertEqual(m.edge(.rex, active: false, at: ms(300)), [.rexReleased(edgeNs: ms(300))], "the release of the button does nothing at the door")
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1500)), [.contact(open: true, edgeNs: ms(1500)), .doorState(.open)])
    }

    func testTheExitButtonWithoutTheStrikeStillReleasesTheDoor() {
        var m = monitor(rexOpens: false)
        XCTAssertEqual(m.edge(.rex, active: true, at: ms(100)), [.rex(edgeNs: ms(100), opensStrike: false)])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1500)), [.contact(open: true, edgeNs: ms(1500)), .doorState(.open)],
                       "walking out with the handle is not forcing the door")
    }

    func testRelockOnContactShutsTheStrikeWhenTheDoorShutsAfterOpening() {
        var m = monitor(relockOnContact: true)
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.edge(.contact, active: true, at: ms(500))
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(1500)),
                       [.contact(open: false, edgeNs: ms(1500)), .doorState(.closed), .closeStrike])
        XCTAssertFalse(m.isReleased)
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(2000)).contains(.forced(edgeNs: ms(2000))), true,
                       "once relocked the door is no longer released")
    }

    func testRelockByTimeLeavesTheStrikeAlone() {
        var m = monitor(relockOnContact: false)
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.edge(.contact, active: true, at: ms(500))
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(1500)), [.contact(open: false, edgeNs: ms(1500)), .doorState(.closed)])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(2000)), [.contact(open: true, edgeNs: ms(2000)), .doorState(.open)],
                       "still released until 3 s")
    }

    func testRelockOnContactNeedsTheDoorToHaveOpened() {
        var m = monitor(relockOnContact: true)
        XCTAssertEqual(m.edge(.rex, active: true, at: ms(100)), [.rex(edgeNs: ms(100), opensStrike: true), .openStrike(milliseconds: 3000)])
        XCTAssertEqual(m.tick(at: ms(200)), [])
        XCTAssertTrue(m.isReleased, "a shut door that never opened does not relock the strike")
    }

    func testBounceShorterThanTheDebounceIsFiltered() {
        var m = monitor(debounceMs: 20)
        // The contact chatters for 15 ms and settles shut again: nothing happened.
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1000)), [])
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(1005)), [])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1010)), [])
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(1015)), [])
        XCTAssertNil(m.nextDeadlineNs)
        XCTAssertEqual(m.tick(at: ms(2000)), [])
        XCTAssertEqual(m.state, .closed)
    }

    func testALevelThatHoldsForTheDebounceCountsFromItsFirstEdge() {
        var m = monitor(debounceMs: 20)
        _ = m.release(at: 0, milliseconds: 3000)
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1000)), [])
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(1003)), [])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(1006)), [])
        XCTAssertEqual(m.nextDeadlineNs, ms(1026))
        XCTAssertEqual(m.tick(at: ms(1025)), [])
        XCTAssertEqual(m.tick(at: ms(1026)), [.contact(open: true, edgeNs: ms(1006)), .doorState(.open)])
    }

    func testABounceOnTheExitButtonIsOnePress() {
        var m = monitor(debounceMs: 20)
        for (i, t) in [100, 102, 104, 106, 108].enumerated() { _ = m.edge(.rex, active: i % 2 == 0, at: ms(t)) }
        XCTAssertEqual(m.tick(at: ms(200)), [.rex(edgeNs: ms(108), opensStrike: true), .openStrike(milliseconds: 3000)])
        XCTAssertEqual(m.edge(.rex, active: false, at: ms(300)), [])
        XCTAssertEqual(m.tick(at: ms(400)), [.rexReleased(edgeNs: ms(300))])
    }

    func testTheNextEdgeSettlesWhatWasPendingFirst() {
        var m = monitor(debounceMs: 20)
        _ = m.edge(.rex, active: true, at: ms(100))
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(500)), [.rex(edgeNs: ms(100), opensStrike: true), .openStrike(milliseconds: 3000)])
        XCTAssertEqual(m.tick(at: ms(520)), [.contact(open: true, edgeNs: ms(500)), .doorState(.open)], "released by the button first")
    }

    func testADoorShutBeforeTheLimitButStillSettlingIsNotHeld() {
        var m = monitor(debounceMs: 20, heldS: 1)
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.edge(.contact, active: true, at: ms(100))
        _ = m.tick(at: ms(120))
        _ = m.edge(.contact, active: false, at: ms(1090))
        XCTAssertEqual(m.tick(at: ms(1110)), [.contact(open: false, edgeNs: ms(1090)), .doorState(.closed)])
    }

    func testTamperIsAnAlarmOfItsOwn() {
        var m = monitor()
        XCTAssertEqual(m.edge(.tamper, active: true, at: ms(50)), [.tamper(active: true, edgeNs: ms(50)), .soundAlarm])
        XCTAssertEqual(m.state, .closed, "the door is not affected")
        XCTAssertEqual(m.edge(.tamper, active: false, at: ms(950)), [.tamper(active: false, edgeNs: ms(950))])
    }

    func testTheDoorsAlarmEndDoesNotSilenceATamperAlarm() {
        var m = monitor()
        _ = m.edge(.contact, active: true, at: ms(10))
        _ = m.edge(.tamper, active: true, at: ms(20))
        XCTAssertEqual(m.edge(.contact, active: false, at: ms(30)),
                       [.contact(open: false, edgeNs: ms(30)), .alarmEnd(alarm: .forced, edgeNs: ms(30), openNs: ms(20)), .doorState(.closed)])
    }

    func testStartWithTheDoorOpenAndTheTamperLoopOpen() {
        var m = DoorWatchPolicy(settings: .init(heldNs: ms(5000), debounceNs: 0))
        XCTAssertEqual(m.start(levels: [.contact: true, .tamper: true], at: ms(100)),
                       [.contact(open: true, edgeNs: ms(100)), .doorState(.open), .tamper(active: true, edgeNs: ms(100)), .soundAlarm])
        XCTAssertEqual(m.tick(at: ms(5100)), [.held(at: ms(5100), openNs: ms(5000)), .doorState(.held), .soundAlarm])
    }

    func testInputsNotConfiguredAreIgnored() {
        var m = monitor(inputs: [.rex: false])
        XCTAssertEqual(m.inputs, [.rex])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(10)), [])
        XCTAssertEqual(m.edge(.tamper, active: true, at: ms(10)), [])
    }

    func testAStrikeShutEarlyEndsTheRelease() {
        var m = monitor()
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.strikeClosed(at: ms(100))
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(200)).contains(.forced(edgeNs: ms(200))), true)
    }

    func testAReleaseWhileReleasedKeepsTheLaterEnd() {
        var m = monitor()
        _ = m.release(at: 0, milliseconds: 3000)
        _ = m.release(at: ms(1000), milliseconds: 500)
        XCTAssertEqual(m.releasedUntilNs, ms(3000))
        _ = m.release(at: ms(2000), milliseconds: 5000)
        XCTAssertEqual(m.releasedUntilNs, ms(7000))
    }
}
