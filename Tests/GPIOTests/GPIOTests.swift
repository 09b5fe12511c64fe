// SPDX-License-Identifier: Apache-2.0
import Dispatch
import GPIO
import Platform
import TestSupport
import Glibc
import XCTest

final class SwitchedOutputTests: XCTestCase {
    func testRequestedInactiveUnderTheKioskNameActiveHigh() throws {
        let chip = FakeChip()
        var driven: [[Int]] = []
        let out = try SwitchedOutput(chip: chip, offset: 17, activeLow: false) { driven.append([$0, $1]) }
        XCTAssertEqual(chip.requested[17], "kiosk")
        XCTAssertEqual(chip.activeLow[17], false)
        XCTAssertEqual(chip.levels[17], [0])
        try out.set(active: true)
        try out.set(active: false)
        XCTAssertEqual(chip.levels[17], [0, 1, 0])
        XCTAssertEqual(driven, [[17, 0], [17, 1], [17, 0]])
    }

    func testActiveLowInvertsTheLevel() throws {
        let chip = FakeChip()
        let out = try SwitchedOutput(chip: chip, offset: 4, activeLow: true)
        try out.set(active: true)
        XCTAssertEqual(chip.levels[4], [1, 0])
        XCTAssertEqual(chip.activeLow[4], true, "the kernel is told the line is active-low (gpioinfo shows it)")
        out.shutDown()
        XCTAssertEqual(chip.levels[4], [1, 0, 1], "left inactive (high) on the way out")
        XCTAssertEqual(chip.released, [4])
    }

    /// A second SIGTERM shuts the outputs down on the signal thread while the frame loop may be
    /// driving the same line: no write may reach a released line, and the line ends inactive.
    func testShutDownFromAnotherThreadWhileDrivingIsSafe() throws {
        for _ in 0..<50 {
            let chip = FakeChip()
            let out = try SwitchedOutput(chip: chip, offset: 7, activeLow: true)
            let started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                started.signal()
                for i in 0..<2_000 { try? out.set(active: i % 2 == 0) }
                done.signal()
            }
            started.wait()
            out.shutDown()
            done.wait()
            XCTAssertEqual(chip.released, [7])
            XCTAssertEqual(chip.levels[7]?.last, 1, "inactive (high, active-low) after the shutdown")
            XCTAssertFalse(out.isActive)
        }
    }

    func testBusyLineNamesWhoHoldsIt() {
        let chip = FakeChip()
        chip.busy[5] = "door-lock.py"
        XCTAssertThrowsError(try SwitchedOutput(chip: chip, offset: 5, activeLow: false)) { error in
            XCTAssertTrue(String(describing: error).contains("door-lock.py"), "\(error)")
        }
    }
}

/// The read beep (`KIOSK_BEEP_MS`, the default `KIOSK_BEEP_READ`): a one-step pattern on the
/// buzzer's PatternPlayer, which replaced the single-beep Buzzer.
final class ReadBeepTests: XCTestCase {
    func testBeepLastsItsLengthWithoutBlocking() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0)
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: false), clock: clock)
        buzzer.play(onOffMilliseconds: [120])  // returns at once: the line is on, the off is scheduled
        XCTAssertEqual(chip.levels[18], [0, 1])
        clock.advance(toMs: 119)
        XCTAssertEqual(chip.levels[18], [0, 1])
        clock.advance(toMs: 120)
        XCTAssertEqual(chip.levels[18], [0, 1, 0])
    }

    func testASecondBeepDuringTheFirstLengthensIt() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0)
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: true), clock: clock)
        buzzer.play(onOffMilliseconds: [100])
        clock.advance(toMs: 60)
        buzzer.play(onOffMilliseconds: [100])  // stays on: no write, no glitch
        clock.advance(toMs: 100)  // the first beep's end no longer applies
        XCTAssertEqual(chip.levels[18], [1, 0])
        clock.advance(toMs: 160)
        XCTAssertEqual(chip.levels[18], [1, 0, 1])
    }

    func testShutDownMidBeepSilencesAndReleases() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0)
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: false), clock: clock)
        buzzer.play(onOffMilliseconds: [120])
        buzzer.shutDown()
        XCTAssertEqual(chip.levels[18], [0, 1, 0])
        XCTAssertEqual(chip.released, [18])
        clock.advance(toMs: 500)  // the scheduled end finds a released line and does nothing
        buzzer.play(onOffMilliseconds: [120])
        XCTAssertEqual(chip.levels[18], [0, 1, 0])
    }

    func testAFailedWriteIsReportedAndScanningGoesOn() throws {
        let chip = FakeChip(), clock = ManualClock(startNs: 0)
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: false), clock: clock)
        var errors: [String] = []
        buzzer.onError = { errors.append(String(describing: $0)) }
        chip.failWrites = true
        buzzer.play(onOffMilliseconds: [120])
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors[0].contains("line 18"))
    }

    func testRealSchedulerEndsTheBeep() throws {
        let chip = FakeChip()
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 3, activeLow: false), clock: MonotonicClock())
        let done = expectation(description: "beep ended")
        buzzer.play(onOffMilliseconds: [20])
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { done.fulfill() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(chip.levels[3], [0, 1, 0])
    }
}

/// The real libgpiod, as far as a machine without GPIO hardware allows.
final class LibgpiodTests: XCTestCase {
    /// Either API, but the shim must say which, and the version and the API must agree.
    func testLibraryNamesItsVersionAndAPI() {
        let version = LibgpiodChip.libraryVersion
        let api = LibgpiodChip.libraryAPI
        XCTAssertTrue(api == 1 || api == 2, "API \(api)")
        XCTAssertTrue(version.hasPrefix("libgpiod \(api)."), version)
        XCTAssertTrue(version.hasSuffix("(v\(api) API)"), version)
        let number = version.dropFirst("libgpiod ".count).prefix { $0 != " " }
        XCTAssertGreaterThanOrEqual(number.split(separator: ".").count, 2, "no version number in \(version)")
    }

    func testMissingChipIsAClearError() {
        let name = "gpiochip\(900 + Int(getpid() % 50))"
        XCTAssertThrowsError(try LibgpiodChip(name)) { error in
            let e = error as? GPIOError
            XCTAssertEqual(e?.chip, name)
            XCTAssertNotNil(e?.errno)
            XCTAssertTrue(String(describing: error).contains(name))
        }
        XCTAssertThrowsError(try LibgpiodChip("/dev/null")) { error in
            XCTAssertNotNil((error as? GPIOError)?.errno, "a device that is not a GPIO chip: \(error)")
        }
    }
}
