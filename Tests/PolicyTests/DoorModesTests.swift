// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The door's modes as a pure value: precedence (emergency, lockdown, a
/// commanded unlock, an unlock window), `first=GROUP`, `until`, the unsynchronised clock, the
/// state that survives a restart and its strict read-back. Not wired to the service yet.
final class DoorModesTests: XCTestCase {
    let rules = try! AccessRules.parse(AccessRulesTests.example)
    let monday = LocalDate("2026-03-02")!
    /// Unix seconds of 2026-03-02 00:00 in a zone at UTC (the modes take both; only `until` uses it).
    let t0: Int64 = 1_772_409_600

    func at(_ day: Int, _ h: Int, _ m: Int) -> (Int64, WallClock) {
        (t0 + Int64(day * 86_400 + h * 3600 + m * 60), WallClock(date: monday.adding(days: day), hour: h, minute: m))
    }

    func eval(_ m: inout DoorModes, _ t: (Int64, WallClock), synced: Bool = true, emergency: Bool = false, holidays: Set<LocalDate> = []) -> DoorModeReason? {
        m.evaluate(now: t.0, clock: t.1, rules: rules, holidays: holidays, clockSynced: synced, emergency: emergency)
    }

    func testFirstStaffGrantUnlocksTheOfficeWindowForThatDayOnly() {
        var m = DoorModes()
        XCTAssertNil(eval(&m, at(0, 8, 0)), "office hours, but no staff member yet")
        XCTAssertEqual(m.mode, .normal)
        m.granted(groups: ["visitor"], at: at(0, 8, 5).1, rules: rules, holidays: [])
        XCTAssertNil(eval(&m, at(0, 8, 5)))
        m.granted(groups: ["staff"], at: at(0, 8, 10).1, rules: rules, holidays: [])
        XCTAssertEqual(eval(&m, at(0, 8, 10)), .first)
        XCTAssertEqual(m.mode, .unlock)
        XCTAssertNil(eval(&m, at(0, 18, 59)))
        XCTAssertEqual(eval(&m, at(0, 19, 0)), .schedule, "the window's end")
        XCTAssertEqual(m.mode, .normal)
        XCTAssertNil(eval(&m, at(1, 8, 0)), "the next day needs its own first grant")
        m.granted(groups: ["staff"], at: at(0, 20, 0).1, rules: rules, holidays: [])
        XCTAssertNil(eval(&m, at(1, 8, 1)), "a grant outside the window counts for nothing")
        // A closed day: the window does not open, a staff grant changes nothing.
        m.granted(groups: ["staff"], at: at(2, 9, 0).1, rules: rules, holidays: [monday.adding(days: 2)])
        XCTAssertNil(eval(&m, at(2, 9, 0), holidays: [monday.adding(days: 2)]))
    }

    func testAPlainUnlockWindowAndTheUnsynchronisedClock() throws {
        let r = try AccessRules.parse("schedule lunch mon-fri 12:00-13:00\nunlock lunch")
        var m = DoorModes()
        func e(_ t: (Int64, WallClock), synced: Bool = true) -> DoorModeReason? {
            m.evaluate(now: t.0, clock: t.1, rules: r, holidays: [], clockSynced: synced, emergency: false)
        }
        XCTAssertNil(e(at(0, 11, 59)))
        XCTAssertEqual(e(at(0, 12, 0)), .schedule)
        XCTAssertNil(e(at(0, 12, 30), synced: false), "a running window goes on")
        XCTAssertEqual(e(at(0, 13, 0)), .schedule)
        XCTAssertNil(e(at(1, 12, 0), synced: false), "no window starts on an unsynchronised clock")
        XCTAssertEqual(m.mode, .normal)
        XCTAssertEqual(e(at(1, 12, 1)), .schedule, "once synchronised, the window is open")
    }

    func testPrecedenceCommandsAndUntil() {
        var m = DoorModes()
        let (now, clock) = at(0, 21, 0)
        XCTAssertEqual(m.command(.unlock(until: now), now: now), "until is not in the future")
        XCTAssertEqual(m.command(.unlock(until: now + 24 * 3600 + 1), now: now), "until is more than 24 h ahead")
        XCTAssertNil(eval(&m, (now, clock)))
        XCTAssertNil(m.command(.unlock(until: now + 600), now: now))
        XCTAssertEqual(eval(&m, (now, clock)), .command)
        XCTAssertEqual(m.mode, .unlock)
        XCTAssertNil(m.command(.lockdown, now: now))
        XCTAssertEqual(eval(&m, (now + 1, clock)), .command)
        XCTAssertEqual(m.mode, .lockdown, "lockdown above a commanded unlock")
        XCTAssertEqual(eval(&m, (now + 2, clock), emergency: true), .input)
        XCTAssertEqual(m.mode, .emergency, "the input above all")
        XCTAssertEqual(eval(&m, (now + 3, clock)), .input, "the input gone: the lockdown again, because the input ended")
        XCTAssertNil(m.command(.normal, now: now))
        XCTAssertEqual(eval(&m, (now + 4, clock)), .command)
        XCTAssertEqual(m.mode, .normal, "normal ends both the lockdown and the unlock")
        XCTAssertNil(m.command(.unlock(until: now + 600), now: now))
        XCTAssertEqual(eval(&m, (now + 5, clock)), .command)
        XCTAssertEqual(eval(&m, (now + 600, clock)), .until)
        XCTAssertEqual(m.mode, .normal)
        XCTAssertEqual(eval(&m, (now + 601, clock), emergency: true), .input)
        XCTAssertEqual(eval(&m, (now + 602, clock)), .input, "back to normal when the input ends")
    }

    func testWhatSurvivesARestart() {
        var m = DoorModes()
        let (now, clock) = at(0, 21, 0)
        XCTAssertEqual(m.persisted, "kiosk-mode 1\n")
        _ = m.command(.lockdown, now: now)
        _ = m.command(.unlock(until: now + 600), now: now)
        XCTAssertEqual(m.persisted, "kiosk-mode 1\nlockdown\nunlock \(now + 600)\n")
        var back = DoorModes.restore(m.persisted)!
        XCTAssertEqual(back.evaluate(now: now, clock: clock, rules: rules, holidays: [], clockSynced: true, emergency: false), .restart)
        XCTAssertEqual(back.mode, .lockdown)
        var unlock = DoorModes.restore("kiosk-mode 1\nunlock \(now + 600)\n")!
        XCTAssertEqual(unlock.evaluate(now: now, clock: clock, rules: rules, holidays: [], clockSynced: true, emergency: false), .restart)
        XCTAssertEqual(unlock.mode, .unlock)
        var late = DoorModes.restore("kiosk-mode 1\nunlock \(now + 600)\n")!
        XCTAssertNil(late.evaluate(now: now + 600, clock: clock, rules: rules, holidays: [], clockSynced: true, emergency: false),
                     "an unlock whose time passed while the kiosk was down ends")
        XCTAssertEqual(late.mode, .normal)
        for bad in ["", "kiosk-mode 1", "kiosk-mode 2\n", "kiosk-mode 1\nlockdown\nlockdown\n", "kiosk-mode 1\nunlock x\n",
                    "kiosk-mode 1\nunlock -5\n", "kiosk-mode 1\nopen\n", "kiosk-mode 1\n\n"] {
            XCTAssertNil(DoorModes.restore(bad), bad)
        }
        XCTAssertEqual(DoorModes.restore("kiosk-mode 1\n")?.lockdown, false)
    }

    func testALockdownDecidesByLockdownAllow() {
        XCTAssertEqual(rules.decide(groups: ["staff"], at: at(0, 10, 0).1, holidays: [], clockSynced: true, lockdown: true), .lockdown)
        XCTAssertEqual(rules.decide(groups: ["security"], at: at(0, 10, 0).1, holidays: [], clockSynced: true, lockdown: true), .granted)
    }
}
