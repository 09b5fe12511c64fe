// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Policy
import TestSupport
import XCTest

/// The closed days of an iCalendar file through libical, against a file written by
/// PyPI's icalendar and expanded by recurring_ical_events (Tests/Peers/holidays.py): yearly
/// RRULEs, a multi-day closure, EXDATEs, RDATEs, an event without DTEND, a timed event left out;
/// compared day by day for two years. Files libical cannot read are refused.
final class HolidayTests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-holidays-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func peer(_ args: [String]) throws -> String {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [Checkout.root.appendingPathComponent("Tests/Peers/holidays.py").path] + args
        let run = try Child.run(p)
        XCTAssertEqual(run.status, 0, run.errors)
        return run.output
    }

    func testTwoYearsOfClosedDaysAsRecurringICalEventsExpandsThem() throws {
        let file = folder + "/holidays.ics"
        _ = try peer(["write", file])
        for (from, days) in [("2026-01-01", 730), ("2026-12-26", 400), ("2027-06-30", 1)] {
            let expected = Set(try peer(["expand", file, from, String(days)]).split(separator: "\n").map { LocalDate(String($0))! })
            let ours = try HolidayCalendar.closedDays(file, from: LocalDate(from)!, days: days)
            XCTAssertEqual(ours.sorted(), expected.sorted(), "from \(from) for \(days) days")
        }
        let two = try HolidayCalendar.closedDays(file, from: LocalDate("2026-01-01")!, days: 730)
        for (day, closed) in [("2026-12-25", true), ("2026-12-26", true), ("2026-12-27", false), ("2027-12-25", false),
                              ("2027-12-26", false), ("2026-08-03", true), ("2026-08-14", true), ("2026-08-15", false),
                              ("2027-05-01", false), ("2026-10-03", true), ("2026-01-07", false)] {
            XCTAssertEqual(two.contains(LocalDate(day)!), closed, day)
        }
        XCTAssertFalse(two.contains(LocalDate("2028-01-01")!), "the horizon is the last day")
    }

    func testTheRulesCloseOnTheCalendarsDays() throws {
        let ics = folder + "/holidays.ics"
        _ = try peer(["write", ics])
        let rules = folder + "/access"
        try "schedule office mon-fri 07:00-19:00\nholidays \(ics)\nallow visitor office\n".write(toFile: rules, atomically: true, encoding: .utf8)
        setenv("TZ", "UTC", 1)
        tzset()
        defer { unsetenv("TZ"); tzset() }
        // Read on 2026-12-20; 2026-12-25 is a Friday, 10:00 UTC (the whole occurrence an EXDATE names is gone: 2027-12-26 too).
        let door = try DoorRules.load(rules, now: 1_798_192_800 - 5 * 86_400)
        XCTAssertEqual(door.decide(groups: ["visitor"], now: 1_798_192_800, clockSynced: true), .holiday)
        XCTAssertEqual(door.decide(groups: ["visitor"], now: 1_798_192_800 - 86_400, clockSynced: true), .granted)
        XCTAssertTrue(door.summary.hasSuffix("holidays=\(door.holidays.count)"))
        XCTAssertTrue(door.holidays.contains(LocalDate("2027-12-24")!.adding(days: 8)), "New Year 2028: within the horizon")
        XCTAssertFalse(door.holidays.contains(LocalDate("2026-01-01")!), "before the day before the read")
        try "holidays \(folder)/missing.ics\n".write(toFile: rules, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try DoorRules.load(rules)) { XCTAssertEqual(String(describing: $0), "holidays \(self.folder)/missing.ics: no such file") }
    }

    func testFilesLibicalCannotReadAreRefused() throws {
        let from = LocalDate("2026-01-01")!
        func refused(_ text: String, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try HolidayCalendar.closedDays(text: Array(text.utf8), from: from), file: file, line: line) {
                XCTAssertTrue(String(describing: $0).contains(why), "\(text): \($0)", file: file, line: line)
            }
        }
        refused("", "not an iCalendar object")
        refused("hello", "not an iCalendar object")
        refused("BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nEND:VEVENT\r\n", "not an iCalendar object")
        refused("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:2026x101\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", "error")
        refused("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nRRULE:FREQ=SOMETIMES\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", "error")
        XCTAssertThrowsError(try HolidayCalendar.closedDays(text: [0x42, 0, 0x43], from: from))
        XCTAssertThrowsError(try HolidayCalendar.closedDays(text: [0x42, 0xff], from: from))
        XCTAssertThrowsError(try HolidayCalendar.closedDays(folder + "/missing.ics", from: from)) {
            XCTAssertTrue(String(describing: $0).contains("no such file"))
        }
        // An empty calendar: no closed day.
        XCTAssertEqual(try HolidayCalendar.closedDays(text: Array("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n".utf8), from: from), [])
    }
}
