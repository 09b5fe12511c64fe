// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPIO
@testable import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

/// The door's watcher on FakeChip's inputs: edges raised by the test reach the log and
/// the strike through the watcher's own thread; the lines go back on shutdown.
final class DoorWatchTests: XCTestCase {
    let contact = 5, rex = 6, tamper = 7, strike = 22, buzzer = 18

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ l: String) { lock.lock(); list.append(l); lock.unlock() }
        var events: [String] { lock.lock(); defer { lock.unlock() }; return list.map(Logfmt.fields).compactMap { $0["event"] } }
    }

    func testEdgesOnTheFakeChipOpenTheStrikeAndAreLoggedAndTheLinesGoBack() throws {
        let chip = FakeChip(), lines = Lines()
        chip.initialInputLevels[tamper] = 1  // the tamper loop open at start: an alarm from the first instant
        let logger = Logger(level: .debug) { lines.add($0) }
        var c = Configuration()
        c.doorMs = 200
        let reader = DoorReader(configuration: c, lines: .init(buzzer: try SwitchedOutput(chip: chip, offset: buzzer, activeLow: false),
                                                               door: try SwitchedOutput(chip: chip, offset: strike, activeLow: false)),
                                logger: logger, clock: MonotonicClock())
        let inputs: [DoorWatchPolicy.Input: DoorWatch.Input] = [
            .contact: .init(line: try chip.requestInput(offset: contact, consumer: "kiosk", activeLow: false, bias: .pullUp, debounceMicroseconds: 0), activeLow: false),
            .rex: .init(line: try chip.requestInput(offset: rex, consumer: "kiosk", activeLow: true, bias: .pullUp, debounceMicroseconds: 0), activeLow: true),
            .tamper: .init(line: try chip.requestInput(offset: tamper, consumer: "kiosk", activeLow: false, bias: .pullUp, debounceMicroseconds: 0), activeLow: false),
        ]
        XCTAssertEqual(chip.inputBias[contact], .pullUp)
        let watch = DoorWatch(settings: .init(heldNs: 60_000_000_000, debounceNs: 5_000_000, releaseMilliseconds: 200),
                              inputs: inputs, door: reader, alarmPattern: .alarm, logger: logger)
        watch.start()
        XCTAssertEqual(lines.events, ["tamper", "beep"])
        // The exit button (active-low: pressed is 0), with a 2 ms bounce the 5 ms debounce filters.
        let t = monotonicNanoseconds()
        chip.raise(rex, level: 0, at: t - 4_000_000)
        chip.raise(rex, level: 1, at: t - 2_000_000)
        chip.raise(rex, level: 0, at: t)
        XCTAssertEventually("the strike opens", { chip.levels[strike]?.last == 1 }, "\(lines.events)")
        chip.raise(contact, level: 1)
        XCTAssertEventually("the door open") { watch.state == .open }
        chip.raise(contact, level: 0)
        XCTAssertEventually("the door closed") { watch.state == .closed }
        // The state changes before its line is logged (on the watcher's thread): wait for the line.
        XCTAssertEventually("two door_contact lines", { lines.events.filter { $0 == "door_contact" }.count >= 2 }, "\(lines.events)")
        XCTAssertEqual(lines.events.filter { ["rex", "door_contact", "door_forced", "tamper"].contains($0) },
                       ["tamper", "rex", "door_contact", "door_contact"], "one press, no alarm: \(lines.events)")
        XCTAssertEqual(watch.counters.rex, 1)
        XCTAssertEqual(watch.counters.opened, 1)
        watch.shutDown()
        reader.shutDown()
        XCTAssertEqual(Set(chip.released).intersection([contact, rex, tamper]), [contact, rex, tamper])
    }

    /// A press and its release read together (the watcher was late: a loaded machine, qemu), with
    /// the stamps of where they happened: a press of 200 ms is a press, however late it is read;
    /// two edges 2 ms apart are a bounce, however they are read (one rex: the press's).
    func testBothEdgesOfAPressInOneReadAreJudgedByTheirOwnTimes() throws {
        let chip = FakeChip(), lines = Lines()
        let logger = Logger(level: .debug) { lines.add($0) }
        var c = Configuration()
        c.doorMs = 200
        let reader = DoorReader(configuration: c, lines: .init(buzzer: try SwitchedOutput(chip: chip, offset: buzzer, activeLow: false),
                                                               door: try SwitchedOutput(chip: chip, offset: strike, activeLow: false)),
                                logger: logger, clock: MonotonicClock())
        let line = try chip.requestInput(offset: rex, consumer: "kiosk", activeLow: true, bias: .pullUp, debounceMicroseconds: 0)
        let watch = DoorWatch(settings: .init(heldNs: 60_000_000_000, debounceNs: 20_000_000, releaseMilliseconds: 200),
                              inputs: [.rex: .init(line: line, activeLow: true)], door: reader, alarmPattern: .alarm, logger: logger)
        watch.start()
        defer {
            watch.shutDown()
            reader.shutDown()
        }
        let input = try XCTUnwrap(chip.input(rex))
        // A bounce, down and up 2 ms apart; 48 ms later a press of 200 ms that ended now: read
        // together.
        let t = monotonicNanoseconds()
        input.raise([(0, t - 250_000_000), (1, t - 248_000_000), (0, t - 200_000_000), (1, t)])
        XCTAssertEventually("the press's rex line", { lines.events.contains("rex") }, "\(lines.events)")
        XCTAssertEventually("the strike opens", { chip.levels[strike]?.contains(1) == true }, "\(lines.events)")
        XCTAssertEqual(watch.counters.rex, 1, "the press, not the bounce: \(lines.events)")
        XCTAssertEqual(lines.events.filter { $0 == "rex" }.count, 1, "\(lines.events)")
    }
}
