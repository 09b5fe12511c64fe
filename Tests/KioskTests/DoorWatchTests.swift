// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPIO
@testable import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

/// The door's watcher on FakeChip's inputs (issue 25): edges raised by the test reach the log and
/// the strike through the watcher's own thread; the lines go back on shutdown.
final class DoorWatchTests: XCTestCase {
    let contact = 5, rex = 6, tamper = 7, strike = 22, buzzer = 18

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ l: String) { lock.lock(); list.append(l); lock.unlock() }
        var events: [String] { lock.lock(); defer { lock.unlock() }; return list.map(Logfmt.fields).compactMap { $0["event"] } }
    }

    func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while !condition() { if Date() > deadline { return false }; usleep(2000) }
        return true
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
        chip.raise(rex, level: 0)
        chip.raise(rex, level: 1)
        chip.raise(rex, level: 0)
        XCTAssertTrue(waitUntil { chip.levels[strike]?.last == 1 }, "the strike opens: \(lines.events)")
        chip.raise(contact, level: 1)
        XCTAssertTrue(waitUntil { watch.state == .open })
        chip.raise(contact, level: 0)
        XCTAssertTrue(waitUntil { watch.state == .closed })
        // The state changes before its line is logged (on the watcher's thread): wait for the line.
        XCTAssertTrue(waitUntil { lines.events.filter { $0 == "door_contact" }.count >= 2 }, "\(lines.events)")
        XCTAssertEqual(lines.events.filter { ["rex", "door_contact", "door_forced", "tamper"].contains($0) },
                       ["tamper", "rex", "door_contact", "door_contact"], "one press, no alarm: \(lines.events)")
        XCTAssertEqual(watch.counters.rex, 1)
        XCTAssertEqual(watch.counters.opened, 1)
        watch.shutDown()
        reader.shutDown()
        XCTAssertEqual(Set(chip.released).intersection([contact, rex, tamper]), [contact, rex, tamper])
    }
}
