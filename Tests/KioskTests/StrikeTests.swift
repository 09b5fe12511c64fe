// SPDX-License-Identifier: Apache-2.0
import Dispatch
import GPIO
import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

final class StrikeTests: XCTestCase {
    let strikeLine = 23

    final class Changes: @unchecked Sendable {
        private let lock = Lock()
        private var list: [StrikePolicy.Change] = []
        func append(_ c: StrikePolicy.Change) { lock.withLock { list.append(c) } }
        var all: [StrikePolicy.Change] { lock.withLock { list } }
    }

    func door(activeLow: Bool = false, openMs: Int = 3000) throws -> (Strike, FakeChip, ManualClock, LineTimeline, Changes) {
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock), changes = Changes()
        let door = Strike(output: try timeline.output(chip, offset: strikeLine, activeLow: activeLow), openMilliseconds: openMs,
                              clock: clock) { changes.append($0) }
        return (door, chip, clock, timeline, changes)
    }

    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func testInactiveAtStartOpenExactlyForTheDoorTime() throws {
        let (door, _, clock, timeline, changes) = try door()
        XCTAssertEqual(timeline.msLevels(offset: strikeLine), [[0, 0]], "requested shut")
        clock.advance(toMs: 1000)
        door.grant()
        XCTAssertTrue(door.isOpen)
        clock.advance(toMs: 3999)
        XCTAssertEqual(timeline.msLevels(offset: strikeLine), [[0, 0], [1000, 1]])
        clock.advance(to: ms(4000) - 1)
        XCTAssertTrue(door.isOpen)
        clock.advance(toMs: 4000)
        XCTAssertEqual(timeline.edges(offset: strikeLine).map { [$0.ns, UInt64($0.level)] }, [[0, 0], [ms(1000), 1], [ms(4000), 0]])
        XCTAssertFalse(door.isOpen)
        XCTAssertEqual(changes.all, [.opened(at: ms(1000), untilNs: ms(4000)), .closed(at: ms(4000), reason: .timeUp)])
    }

    func testAGrantDuringAnOpenDoorExtendsIt() throws {
        let (door, chip, clock, timeline, changes) = try door()
        door.grant()
        clock.advance(toMs: 2000)
        door.grant()
        clock.advance(toMs: 3000)
        XCTAssertTrue(door.isOpen, "the first grant's time is up, the second's is not")
        XCTAssertEqual(chip.levels[strikeLine], [0, 1], "no click between the two")
        clock.advance(toMs: 6000)
        XCTAssertEqual(timeline.msLevels(offset: strikeLine), [[0, 0], [0, 1], [5000, 0]])
        XCTAssertEqual(changes.all, [.opened(at: 0, untilNs: ms(3000)), .extended(at: ms(2000), untilNs: ms(5000)),
                                     .closed(at: ms(5000), reason: .timeUp)])
    }

    func testActiveLowStrike() throws {
        let (door, chip, clock, _, _) = try door(activeLow: true)
        door.grant()
        clock.advance(toMs: 3000)
        XCTAssertEqual(chip.levels[strikeLine], [1, 0, 1])
    }

    func testCameraLossShutsTheDoorAtOnceAndGrantsOpenItAgainLater() throws {
        let (door, _, clock, timeline, changes) = try door()
        door.grant()
        clock.advance(toMs: 500)
        door.forceClose(reason: "camera_lost")
        XCTAssertFalse(door.isOpen)
        clock.advance(toMs: 4000)  // the scheduled close finds the door shut
        door.grant()
        clock.advance(toMs: 8000)
        XCTAssertEqual(timeline.msLevels(offset: strikeLine), [[0, 0], [0, 1], [500, 0], [4000, 1], [7000, 0]])
        XCTAssertEqual(changes.all.filter { if case .closed = $0 { return true }; return false },
                       [.closed(at: ms(500), reason: .forced("camera_lost")), .closed(at: ms(7000), reason: .timeUp)])
    }

    func testShutDownLeavesTheStrikeInactiveAndReleasedAndLaterGrantsDoNothing() throws {
        let (door, chip, clock, _, changes) = try door(activeLow: true)
        door.grant()
        clock.advance(toMs: 100)
        door.shutDown()
        XCTAssertEqual(chip.levels[strikeLine], [1, 0, 1])
        XCTAssertEqual(chip.released, [strikeLine])
        XCTAssertEqual(changes.all.last, .closed(at: ms(100), reason: .forced("stop")))
        door.grant()
        door.forceClose(reason: "camera_lost")
        clock.advance(toMs: 10_000)
        XCTAssertEqual(chip.levels[strikeLine], [1, 0, 1])
        XCTAssertFalse(door.isOpen)
        door.shutDown()
        XCTAssertEqual(changes.all.count, 2, "opened, closed: nothing after the stop")
    }

    func testShutDownWhenShutSaysNothing() throws {
        let (door, chip, _, _, changes) = try door()
        door.shutDown()
        XCTAssertEqual(chip.levels[strikeLine], [0])
        XCTAssertEqual(chip.released, [strikeLine])
        XCTAssertEqual(changes.all, [])
    }

    func testAFailedWriteIsReportedAndTheDoorStillTimesOut() throws {
        let (door, chip, clock, _, changes) = try door()
        var errors: [String] = []
        door.onError = { errors.append(String(describing: $0)) }
        chip.failWrites = true
        door.grant()
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors[0].contains("line 23"), errors[0])
        clock.advance(toMs: 3000)
        XCTAssertEqual(changes.all.count, 2)
    }

    func testTheRealClockClosesTheDoor() throws {
        let chip = FakeChip()
        let door = Strike(output: try SwitchedOutput(chip: chip, offset: strikeLine, activeLow: false), openMilliseconds: 30,
                              clock: MonotonicClock())
        door.grant()
        let done = expectation(description: "door time over")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(chip.levels[strikeLine], [0, 1, 0])
        XCTAssertFalse(door.isOpen)
    }
}
