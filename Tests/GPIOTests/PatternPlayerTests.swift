// SPDX-License-Identifier: Apache-2.0
import Dispatch
import GPIO
import Platform
import TestSupport
import XCTest

final class PatternPlayerTests: XCTestCase {
    func player(activeLow: Bool = false) throws -> (PatternPlayer, FakeChip, ManualClock, LineTimeline) {
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock)
        let player = PatternPlayer(output: try timeline.output(chip, offset: 18, activeLow: activeLow), clock: clock)
        return (player, chip, clock, timeline)
    }

    func testDeniedPatternExactOnOffTimes() throws {
        let (player, _, clock, timeline) = try player()
        clock.advance(toMs: 1000)
        player.play(onOffMilliseconds: [80, 80, 80, 80, 80])
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [1000, 1]], "the first sound at once, the rest scheduled")
        XCTAssertTrue(player.isPlaying)
        clock.advance(toMs: 5000)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [1000, 1], [1080, 0], [1160, 1], [1240, 0], [1320, 1], [1400, 0]])
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(clock.pendingCount, 0)
    }

    func testEachStepIsTimedFromThePatternStartToTheNanosecond() throws {
        let (player, _, clock, timeline) = try player()
        clock.advance(to: 7)
        player.play(onOffMilliseconds: [1, 2, 3])
        clock.advance(toMs: 100)
        XCTAssertEqual(timeline.edges(offset: 18).map(\.ns), [0, 7, 7 + 1_000_000, 7 + 3_000_000, 7 + 6_000_000] as [UInt64])
    }

    func testActiveLowInvertsTheLevels() throws {
        let (player, chip, clock, _) = try player(activeLow: true)
        player.play(onOffMilliseconds: [200, 200, 200])
        clock.advance(toMs: 1000)
        XCTAssertEqual(chip.levels[18], [1, 0, 1, 0, 1])
    }

    /// A verdict during the read beep: no click of the line, the new pattern's steps from now on.
    func testANewPatternCutsTheOnePlayingWhileItSounds() throws {
        let (player, _, clock, timeline) = try player()
        player.play(onOffMilliseconds: [400])
        clock.advance(toMs: 100)
        player.play(onOffMilliseconds: [80, 80, 80])
        clock.advance(toMs: 1000)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [0, 1], [180, 0], [260, 1], [340, 0]],
                       "still on from the first, off 80 ms after the cut, nothing at 400 ms")
    }

    func testANewPatternCutsAPauseWithItsFirstSoundAtOnce() throws {
        let (player, _, clock, timeline) = try player()
        player.play(onOffMilliseconds: [80, 80, 80, 80, 80])
        clock.advance(toMs: 100)  // in the first pause
        player.play(onOffMilliseconds: [400])
        clock.advance(toMs: 2000)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [0, 1], [80, 0], [100, 1], [500, 0]])
    }

    func testSilenceCutsNothingButSilenceDoes() throws {
        let (player, _, clock, timeline) = try player()
        player.play(onOffMilliseconds: [400])
        clock.advance(toMs: 50)
        player.play(onOffMilliseconds: [])  // KIOSK_BEEP_READ empty: the verdict's sound goes on
        clock.advance(toMs: 100)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [0, 1]])
        player.silence()
        clock.advance(toMs: 1000)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [0, 1], [100, 0]])
        XCTAssertFalse(player.isPlaying)
    }

    func testATrailingPauseKeepsThePatternPlayingButSwitchesNothing() throws {
        let (player, _, clock, timeline) = try player()
        player.play(onOffMilliseconds: [100, 50])
        clock.advance(toMs: 120)
        XCTAssertTrue(player.isPlaying)
        clock.advance(toMs: 150)
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 0], [0, 1], [100, 0]])
    }

    func testAnLEDLitForItsTime() throws {
        let (led, _, clock, timeline) = try player(activeLow: true)
        clock.advance(toMs: 10)
        led.light(milliseconds: 2000)
        clock.advance(toMs: 2009)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 1], [10, 0]])
        clock.advance(toMs: 2010)
        XCTAssertEqual(timeline.msLevels(offset: 18), [[0, 1], [10, 0], [2010, 1]])
    }

    func testShutDownMidPatternLeavesTheLineInactiveAndLaterPatternsDoNothing() throws {
        let (player, chip, clock, _) = try player(activeLow: true)
        player.play(onOffMilliseconds: [80, 80, 80, 80, 80])
        clock.advance(toMs: 20)
        player.shutDown()
        XCTAssertEqual(chip.levels[18], [1, 0, 1])
        XCTAssertEqual(chip.released, [18])
        clock.advance(toMs: 1000)
        player.play(onOffMilliseconds: [400])
        player.light(milliseconds: 100)
        player.silence()
        clock.advance(toMs: 2000)
        XCTAssertEqual(chip.levels[18], [1, 0, 1], "the scheduled steps and later patterns find a released line")
    }

    func testAFailedWriteIsReported() throws {
        let (player, chip, _, _) = try player()
        var errors: [String] = []
        player.onError = { errors.append(String(describing: $0)) }
        chip.failWrites = true
        player.play(onOffMilliseconds: [400])
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors[0].contains("line 18"), errors[0])
    }

    func testTheRealClockPlaysTheWholePattern() throws {
        let chip = FakeChip()
        let player = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 3, activeLow: false), clock: MonotonicClock())
        player.play(onOffMilliseconds: [20, 20, 20])
        let done = expectation(description: "pattern over")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(400)) { done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(chip.levels[3], [0, 1, 0, 1, 0])
    }
}
