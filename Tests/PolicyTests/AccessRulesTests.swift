// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The access rules' pure core: the file's every line kind read strictly, each bad
/// line refused with its number and what is accepted, and the decision from a wall clock, the
/// credential's groups and the closed days: each boundary minute, windows across midnight and
/// the day they belong to, holidays, `always`, an unsynchronised clock, a lockdown.
final class AccessRulesTests: XCTestCase {
    /// interface.md 0.4's example, as it is written there.
    static let example = """
        schedule office   mon-fri 07:00-19:00, sat 09:00-13:00
        schedule nights   mon-sun 22:00-06:00
        holidays          /etc/kiosk/holidays.ics    # closed days: the all-day events of an iCalendar file (RFC 5545), RRULEs honoured
        allow  staff      always
        allow  visitor    office
        allow  cleaning   nights   holidays          # 'holidays': also on closed days
        lockdown-allow    security                   # during a lockdown, only these groups open
        unlock            office   first=staff       # free passage in the window, from the first grant of a staff member that day
        pretix 42         visitor                    # event tickets: item 42 (or 42/VARIATION) is group visitor
        """

    func rules(_ text: String = example) throws -> AccessRules { try AccessRules.parse(text) }
    func at(_ date: String, _ h: Int, _ m: Int) -> WallClock { WallClock(date: LocalDate(date)!, hour: h, minute: m) }

    // MARK: the calendar

    func testDatesAndWeekdays() {
        XCTAssertEqual(LocalDate("1970-01-01")!.dayNumber, 0)
        XCTAssertEqual(LocalDate("1970-01-01")!.weekday, .thu)
        XCTAssertEqual(LocalDate("2026-03-29")!.weekday, .sun, "Europe's spring DST Sunday")
        XCTAssertEqual(LocalDate("2026-11-01")!.weekday, .sun, "the USA's autumn DST Sunday")
        XCTAssertEqual(LocalDate("2000-02-29")!.weekday, .tue)
        XCTAssertEqual(LocalDate("1969-12-31")!.dayNumber, -1)
        XCTAssertEqual(LocalDate("2028-03-01")!.adding(days: -1), LocalDate("2028-02-29"))
        XCTAssertEqual(LocalDate("2026-12-31")!.adding(days: 1), LocalDate("2027-01-01"))
        XCTAssertNil(LocalDate("2026-02-29"))
        XCTAssertNil(LocalDate("2026-13-01"))
        XCTAssertNil(LocalDate("2026-1-01"))
        // Every day of 1900-2100 round-trips, and the weekdays advance one a day.
        var d = LocalDate("1900-01-01")!
        XCTAssertEqual(d.weekday, .mon)
        var w = 0
        while d.year < 2100 {
            XCTAssertEqual(LocalDate(dayNumber: d.dayNumber), d)
            XCTAssertEqual(d.weekday.rawValue, w)
            let next = d.adding(days: 1)
            XCTAssertEqual(next.dayNumber, d.dayNumber + 1)
            XCTAssertEqual(LocalDate(next.description), next)
            d = next
            w = (w + 1) % 7
        }
    }

    // MARK: reading the file

    func testTheInterfacesExampleReadsAsWritten() throws {
        let r = try rules()
        XCTAssertEqual(r.schedules.keys.sorted(), ["nights", "office"])
        XCTAssertEqual(r.schedules["office"]?.windows, [
            AccessWindow(days: [.mon, .tue, .wed, .thu, .fri], start: 420, end: 1140),
            AccessWindow(days: [.sat], start: 540, end: 780),
        ])
        XCTAssertEqual(r.schedules["nights"]?.windows, [AccessWindow(days: Weekday.allCases, start: 1320, end: 360)])
        XCTAssertTrue(r.schedules["nights"]!.windows[0].crossesMidnight)
        XCTAssertEqual(r.holidaysFile, "/etc/kiosk/holidays.ics")
        XCTAssertEqual(r.allows.map { "\($0.group) \($0.schedule) \($0.onHolidays)" },
                       ["staff always false", "visitor office false", "cleaning nights true"])
        XCTAssertEqual(r.lockdownAllow, ["security"])
        XCTAssertEqual(r.unlocks, [AccessUnlock(schedule: "office", firstGroup: "staff", line: 8)])
        XCTAssertEqual(r.pretix, [AccessPretix(item: 42, variation: nil, group: "visitor")])
    }

    func testEveryFormEachLineKindAccepts() throws {
        let r = try rules("""
            # a comment line, and blank lines

            schedule late fri-mon 20:00-02:00,sun 00:00-24:00 ,  wed 06:30-07:00
            schedule a.b_c-1 tue 23:00-00:00
            allow g1 late
            allow g1 a.b_c-1 holidays
            allow g2 undefined-later
            schedule undefined-later sat 00:00-23:59
            lockdown-allow one two three
            unlock always
            unlock late first=g2
            pretix 7/3 g2
            pretix 7 g1
            """)
        XCTAssertEqual(r.schedules["late"]?.windows, [
            AccessWindow(days: [.fri, .sat, .sun, .mon], start: 1200, end: 120),
            AccessWindow(days: [.sun], start: 0, end: 1440),
            AccessWindow(days: [.wed], start: 390, end: 420),
        ])
        XCTAssertEqual(r.schedules["a.b_c-1"]?.windows, [AccessWindow(days: [.tue], start: 1380, end: 0)])
        XCTAssertEqual(r.lockdownAllow, ["one", "two", "three"])
        XCTAssertEqual(r.unlocks.map(\.firstGroup), [nil, "g2"])
        XCTAssertEqual(r.pretix, [AccessPretix(item: 7, variation: 3, group: "g2"), AccessPretix(item: 7, variation: nil, group: "g1")])
        XCTAssertNil(r.holidaysFile)
        XCTAssertEqual(try rules(""), AccessRules(), "an empty file: no rules (no one opens)")
    }

    func testABadLineOfEachKindIsRefusedWithItsNumberAndWhatIsAccepted() {
        let cases: [(String, Int, String)] = [
            ("frobnicate x", 1, "a line starts with schedule, holidays, allow, lockdown-allow, unlock or pretix; got 'frobnicate'"),
            ("# ok\nAllow staff always", 2, "a line starts with schedule"),
            ("schedule office", 1, "expected schedule NAME DAYS HH:MM-HH:MM"),
            ("schedule office mon-fri", 1, "expected schedule NAME DAYS HH:MM-HH:MM"),
            ("schedule office mon-fri 07:00-19:00,", 1, "got ''"),
            ("schedule office mon-fri 07:00-19:00 sat", 1, "expected schedule NAME"),
            ("schedule office monday 07:00-19:00", 1, "DAYS as a day (mon, tue, wed, thu, fri, sat, sun) or a range of them (mon-fri); got 'monday'"),
            ("schedule office mon-fri-sat 07:00-19:00", 1, "DAYS as a day"),
            ("schedule office mon-fri 7:00-19:00", 1, "a window HH:MM-HH:MM (00:00-23:59, the end also 24:00, not equal to the start); got '7:00-19:00'"),
            ("schedule office mon-fri 07:00-19:60", 1, "a window HH:MM-HH:MM"),
            ("schedule office mon-fri 24:00-06:00", 1, "a window HH:MM-HH:MM"),
            ("schedule office mon-fri 24:01-06:00", 1, "a window HH:MM-HH:MM"),
            ("schedule office mon-fri 07:00-07:00", 1, "a window HH:MM-HH:MM"),
            ("schedule office mon-fri 07:00", 1, "a window HH:MM-HH:MM"),
            ("schedule always mon 07:00-08:00", 1, "'always' is built in"),
            ("schedule of/fice mon 07:00-08:00", 1, "a schedule NAME of 1-64 letters"),
            ("schedule o mon 07:00-08:00\nschedule o tue 07:00-08:00", 2, "schedule o is already defined on line 1"),
            ("holidays", 1, "expected holidays /ABSOLUTE/PATH.ics"),
            ("holidays relative.ics", 1, "expected holidays /ABSOLUTE/PATH.ics"),
            ("holidays /a.ics /b.ics", 1, "expected holidays /ABSOLUTE/PATH.ics"),
            ("holidays /a.ics\nholidays /b.ics", 2, "one holidays line (the first is line 1)"),
            ("allow staff", 1, "expected allow GROUP SCHEDULE [holidays]"),
            ("allow staff always sometimes", 1, "expected allow GROUP SCHEDULE [holidays]"),
            ("allow st@ff always", 1, "a GROUP of 1-64 letters"),
            ("allow staff nights", 1, "schedule nights is not defined (always)"),
            ("schedule office mon 07:00-08:00\n\nallow staff nights", 3, "schedule nights is not defined (always, office)"),
            ("lockdown-allow", 1, "expected lockdown-allow GROUP [GROUP]..."),
            ("lockdown-allow a b!", 1, "a GROUP of 1-64 letters, digits, '-', '_' or '.'; got 'b!'"),
            ("unlock", 1, "expected unlock SCHEDULE [first=GROUP]"),
            ("unlock always last=staff", 1, "expected unlock SCHEDULE [first=GROUP] [pin]; got 'last=staff'"),
            ("unlock always first=", 1, "expected unlock SCHEDULE [first=GROUP]"),
            ("unlock office", 1, "schedule office is not defined"),
            ("pretix 42", 1, "expected pretix ITEM[/VARIATION] GROUP"),
            ("pretix x42 visitor", 1, "expected pretix ITEM[/VARIATION] GROUP"),
            ("pretix 42/ visitor", 1, "expected pretix ITEM[/VARIATION] GROUP"),
            ("pretix 42/1/2 visitor", 1, "expected pretix ITEM[/VARIATION] GROUP"),
            ("pretix 42 vis itor", 1, "expected pretix ITEM[/VARIATION] GROUP"),
            ("pretix 42 visitor\npretix 42 staff", 2, "item 42 is given a group twice"),
            (String(repeating: "#", count: AccessRules.maxBytes + 1), 0, "a file of at most"),
        ]
        for (text, line, reason) in cases {
            XCTAssertThrowsError(try AccessRules.parse(text), text) { error in
                let e = error as! AccessRulesError
                XCTAssertEqual(e.line, line, text)
                XCTAssertTrue(e.reason.contains(reason), "\(text): \(e.reason)")
                XCTAssertTrue(e.description.hasPrefix("line \(line): "))
            }
        }
    }

    // MARK: deciding

    func testEachBoundaryMinuteOfAWeekOfOfficeHours() throws {
        let r = try rules()
        // 2026-03-02 is a Monday: every minute of that week, against the schedule as a person reads it.
        for day in 0..<7 {
            let date = LocalDate("2026-03-02")!.adding(days: day)
            for minute in 0..<1440 {
                let open = day < 5 ? (420..<1140).contains(minute) : day == 5 ? (540..<780).contains(minute) : false
                let reason = r.decide(groups: ["visitor"], at: WallClock(date: date, minute: minute), holidays: [], clockSynced: true)
                XCTAssertEqual(reason, open ? .granted : .outsideSchedule, "\(date) minute \(minute)")
            }
        }
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-03-02", 6, 59), holidays: [], clockSynced: true), .outsideSchedule)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-03-02", 7, 0), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-03-02", 18, 59), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-03-02", 19, 0), holidays: [], clockSynced: true), .outsideSchedule)
    }

    func testANightWindowBelongsToTheDayItStartsAndCrossesMidnight() throws {
        let r = try rules("""
            schedule fri-night fri 22:00-06:00
            schedule to-midnight sat 22:00-00:00
            allow cleaning fri-night
            allow late to-midnight
            """)
        func cleaning(_ c: WallClock) -> AccessReason { r.decide(groups: ["cleaning"], at: c, holidays: [], clockSynced: true) }
        // 2026-03-06 is a Friday.
        XCTAssertEqual(cleaning(at("2026-03-06", 21, 59)), .outsideSchedule)
        XCTAssertEqual(cleaning(at("2026-03-06", 22, 0)), .granted)
        XCTAssertEqual(cleaning(at("2026-03-06", 23, 59)), .granted)
        XCTAssertEqual(cleaning(at("2026-03-07", 0, 0)), .granted, "Saturday morning: Friday's window")
        XCTAssertEqual(cleaning(at("2026-03-07", 5, 59)), .granted)
        XCTAssertEqual(cleaning(at("2026-03-07", 6, 0)), .outsideSchedule)
        XCTAssertEqual(cleaning(at("2026-03-07", 22, 0)), .outsideSchedule, "Saturday starts no window")
        XCTAssertEqual(cleaning(at("2026-03-06", 3, 0)), .outsideSchedule, "Friday morning belongs to Thursday")
        func late(_ c: WallClock) -> AccessReason { r.decide(groups: ["late"], at: c, holidays: [], clockSynced: true) }
        XCTAssertEqual(late(at("2026-03-07", 21, 59)), .outsideSchedule)
        XCTAssertEqual(late(at("2026-03-07", 22, 0)), .granted)
        XCTAssertEqual(late(at("2026-03-07", 23, 59)), .granted)
        XCTAssertEqual(late(at("2026-03-08", 0, 0)), .outsideSchedule, "22:00-00:00 ends at midnight")
    }

    func testAWrappingDayRangeAndAWholeDay() throws {
        let r = try rules("schedule weekend fri-mon 00:00-24:00\nallow g weekend")
        let monday = LocalDate("2026-03-02")!
        let open = (0..<7).map { r.decide(groups: ["g"], at: WallClock(date: monday.adding(days: $0), minute: 0), holidays: [], clockSynced: true) == .granted }
        XCTAssertEqual(open, [true, false, false, false, true, true, true])
        XCTAssertEqual(r.decide(groups: ["g"], at: at("2026-03-02", 23, 59), holidays: [], clockSynced: true), .granted)
    }

    func testHolidaysCloseSchedulesByTheDayAWindowStarted() throws {
        let r = try rules()
        let christmas: Set<LocalDate> = [LocalDate("2026-12-25")!]  // a Friday
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-12-25", 10, 0), holidays: christmas, clockSynced: true), .holiday)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-12-24", 10, 0), holidays: christmas, clockSynced: true), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-12-25", 20, 0), holidays: christmas, clockSynced: true), .outsideSchedule,
                       "outside the window the reason is the schedule, not the day")
        XCTAssertEqual(r.decide(groups: ["staff"], at: at("2026-12-25", 10, 0), holidays: christmas, clockSynced: true), .granted,
                       "always is open on closed days")
        XCTAssertEqual(r.decide(groups: ["cleaning"], at: at("2026-12-25", 23, 0), holidays: christmas, clockSynced: true), .granted,
                       "allow ... holidays")
        // Without 'holidays' on the allow line: a window started on the eve runs to its end, one
        // started on the closed day does not open.
        let strict = try rules("schedule nights mon-sun 22:00-06:00\nallow cleaning nights")
        XCTAssertEqual(strict.decide(groups: ["cleaning"], at: at("2026-12-25", 3, 0), holidays: christmas, clockSynced: true), .granted)
        XCTAssertEqual(strict.decide(groups: ["cleaning"], at: at("2026-12-25", 23, 0), holidays: christmas, clockSynced: true), .holiday)
        XCTAssertEqual(strict.decide(groups: ["cleaning"], at: at("2026-12-26", 3, 0), holidays: christmas, clockSynced: true), .holiday)
        XCTAssertEqual(strict.decide(groups: ["cleaning"], at: at("2026-12-26", 23, 0), holidays: christmas, clockSynced: true), .granted)
    }

    func testGroupsNoAccessAndTheBestOfSeveralLines() throws {
        let r = try rules()
        XCTAssertEqual(r.decide(groups: [], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: true), .noAccess)
        XCTAssertEqual(r.decide(groups: ["security"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: true), .noAccess,
                       "lockdown-allow alone opens only in a lockdown")
        XCTAssertEqual(r.decide(groups: ["visitor", "cleaning"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor", "cleaning"], at: at("2026-03-02", 23, 0), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor", "cleaning"], at: at("2026-03-02", 20, 0), holidays: [], clockSynced: true), .outsideSchedule)
        XCTAssertEqual(r.decide(groups: ["Staff"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: true), .noAccess,
                       "group names are compared exactly")
        let two = try rules("schedule a mon 08:00-09:00\nschedule b mon 17:00-18:00\nallow g a\nallow g b")
        XCTAssertEqual(two.decide(groups: ["g"], at: at("2026-03-02", 8, 30), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(two.decide(groups: ["g"], at: at("2026-03-02", 17, 30), holidays: [], clockSynced: true), .granted)
        XCTAssertEqual(two.decide(groups: ["g"], at: at("2026-03-02", 12, 0), holidays: [], clockSynced: true), .outsideSchedule)
    }

    func testAnUnsynchronisedClockOpensOnlyAlways() throws {
        let r = try rules()
        XCTAssertEqual(r.decide(groups: ["staff"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: false), .granted)
        XCTAssertEqual(r.decide(groups: ["visitor"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: false), .clockNotSynchronized)
        XCTAssertEqual(r.decide(groups: ["nobody"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: false), .noAccess)
    }

    func testALockdownOpensOnlyLockdownAllow() throws {
        let r = try rules()
        XCTAssertEqual(r.decide(groups: ["staff"], at: at("2026-03-02", 10, 0), holidays: [], clockSynced: true, lockdown: true), .lockdown)
        XCTAssertEqual(r.decide(groups: ["security"], at: at("2026-03-02", 3, 0), holidays: [], clockSynced: false, lockdown: true), .granted)
    }
}

/// Where a credential's groups come from: the CWT's text claim `groups`, read
/// strictly, and `groups=` at the end of a TOTP file's line.
final class CredentialGroupsTests: XCTestCase {
    func claims(_ groups: CBOR) throws -> CWTClaims {
        try CWTClaims(payload: CBOREncoder.encode(.map([CBORPair(.unsigned(2), .text("alice")), CBORPair(.text("groups"), groups)])))
    }

    func testTheGroupsClaimIsAnArrayOfNames() throws {
        XCTAssertEqual(try claims(.array([.text("staff"), .text("night-shift")])).groups, ["staff", "night-shift"])
        XCTAssertEqual(try claims(.array([])).groups, [])
        XCTAssertNil(try CWTClaims(payload: CBOREncoder.encode(.map([CBORPair(.unsigned(2), .text("alice"))]))).groups)
        for wrong: CBOR in [.text("staff"), .array([.bytes([1])]), .array([.text("")]), .array([.text("a b")]),
                            .array([.text(String(repeating: "g", count: 65))]),
                            .array(Array(repeating: .text("g"), count: CWTClaims.maxGroups + 1)), .unsigned(1)] {
            XCTAssertThrowsError(try claims(wrong), "\(wrong)")
        }
        // Another text claim is not read (a CWT may carry claims of its own).
        XCTAssertNil(try CWTClaims(payload: CBOREncoder.encode(.map([CBORPair(.text("group"), .text("x"))]))).groups)
    }

    func testTheTOTPFilesGroups() throws {
        let file = "alice JBSWY3DPEHPK3PXPJBSWY3DP groups=staff,cleaning\nbob JBSWY3DPEHPK3PXPJBSWY3DP 8 60 groups=visitor\ncarol JBSWY3DPEHPK3PXPJBSWY3DP 8\n"
        let s = try TOTPSecret.parseFile(file).get()
        XCTAssertEqual(s.map(\.groups), [["staff", "cleaning"], ["visitor"], []])
        XCTAssertEqual(s.map(\.digits), [6, 8, 8])
        XCTAssertEqual(s[1].period, 60)
        for bad in ["alice JBSWY3DPEHPK3PXPJBSWY3DP groups=", "alice JBSWY3DPEHPK3PXPJBSWY3DP groups=a,,b",
                    "alice JBSWY3DPEHPK3PXPJBSWY3DP groups=a b", "alice JBSWY3DPEHPK3PXPJBSWY3DP 6 30 30 groups=a"] {
            guard case .failure(let e) = TOTPSecret.parseFile(bad) else { XCTFail(bad); continue }
            XCTAssertEqual(e.line, 1)
        }
        guard case .failure(let e) = TOTPSecret.parseFile("alice JBSWY3DPEHPK3PXPJBSWY3DP groups=a!") else { return XCTFail() }
        XCTAssertTrue(e.reason.hasPrefix("groups=GROUP[,GROUP]..."), e.reason)
    }

    func testTheRulesReasonsAreTheCredentialsReasons() {
        XCTAssertEqual(CredentialReason(.granted), .valid)
        XCTAssertEqual(["no access", "outside schedule", "holiday", "lockdown", "clock not synchronized"],
                       [AccessReason.noAccess, .outsideSchedule, .holiday, .lockdown, .clockNotSynchronized].map { CredentialReason($0).rawValue })
    }
}

/// `uses`: the claim read strictly, counted in the used-token store's content, and
/// its file written and read back (a 0.3 file still reads; a torn count is damage).
final class CredentialUsesTests: XCTestCase {
    func claims(_ pairs: [CBORPair]) throws -> CWTClaims { try CWTClaims(payload: CBOREncoder.encode(.map(pairs))) }

    func testTheUsesClaimNeedsACtiAndAPositiveCount() throws {
        XCTAssertEqual(try claims([CBORPair(.unsigned(7), .bytes([1])), CBORPair(.text("uses"), .unsigned(3))]).uses, 3)
        XCTAssertNil(try claims([CBORPair(.unsigned(7), .bytes([1]))]).uses)
        XCTAssertThrowsError(try claims([CBORPair(.text("uses"), .unsigned(3))]), "no cti: uses cannot be counted")
        for wrong: CBOR in [.unsigned(0), .negative(0), .text("3"), .unsigned(UInt64(CWTClaims.maxUses) + 1)] {
            XCTAssertThrowsError(try claims([CBORPair(.unsigned(7), .bytes([1])), CBORPair(.text("uses"), wrong)]), "\(wrong)")
        }
    }

    func testAKeyOpensAsManyTimesAsItsUses() {
        var t = UsedTokens(capacity: 2)
        XCTAssertEqual((1...3).map { _ in t.claim("c:01", until: 100, now: 0, skew: 0, uses: 3) }, [.fresh, .fresh, .fresh])
        XCTAssertEqual(t.claim("c:01", until: 100, now: 0, skew: 0, uses: 3), .used, "the fourth showing")
        XCTAssertEqual(t.uses(of: "c:01"), 3)
        XCTAssertEqual(t.claim("c:02", until: 100, now: 0, skew: 0), .fresh)
        XCTAssertEqual(t.claim("c:02", until: 100, now: 0, skew: 0), .used, "no uses: once, as in 0.3")
        XCTAssertEqual(t.claim("c:03", until: 100, now: 0, skew: 0, uses: 5), .full, "a new key needs room; a counted one does not")
        XCTAssertEqual(t.claim("c:01", until: 100, now: 0, skew: 0, uses: 4), .fresh, "counting a known key takes no room")
        // The file: the counts read back; a 0.3 file reads; a bad count is damage.
        let text = t.fileText
        let body = "kiosk-used-tokens 2\nc:01 100 4\nc:02 100\n"  // Version 2 ends with its CRC-32
        XCTAssertEqual(text, body + "end 2 \(CRC32.hex(CRC32.checksum(Array(body.utf8))))\n")
        XCTAssertEqual(try UsedTokens.parse(text, capacity: 2).get(), t)
        XCTAssertEqual(try UsedTokens.parse("kiosk-used-tokens 1\nc:02 100\nend 1\n").get().uses(of: "c:02"), 1)
        for bad in ["kiosk-used-tokens 1\nc:01 100 1\nend 1\n", "kiosk-used-tokens 1\nc:01 100 x\nend 1\n",
                    "kiosk-used-tokens 1\nc:01 100 02\nend 1\n", "kiosk-used-tokens 1\nc:01 100 3 4\nend 1\n"] {
            guard case .failure = UsedTokens.parse(bad) else { XCTFail(bad); continue }
        }
        // Expired entries go with their counts.
        t.dropExpired(now: 200, skew: 0)
        XCTAssertEqual(t.uses(of: "c:01"), 0)
        XCTAssertEqual(t.counts, [:])
    }
}

/// What `kiosk check` shows of the rules: each schedule open or closed now and its
/// next change, on wall-clock minutes, closed days and midnight-crossing windows included.
final class AccessRulesShownTests: XCTestCase {
    func at(_ date: String, _ h: Int, _ m: Int) -> WallClock { WallClock(date: LocalDate(date)!, hour: h, minute: m) }

    func testNextChangesOfEachSchedule() throws {
        let r = try AccessRules.parse(AccessRulesTests.example)
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-02", 10, 0), holidays: []), at("2026-03-02", 19, 0))
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-06", 19, 0), holidays: []), at("2026-03-07", 9, 0), "Friday evening: Saturday 09:00")
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-07", 13, 0), holidays: []), at("2026-03-09", 7, 0))
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-02", 6, 59), holidays: []), at("2026-03-02", 7, 0))
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-06", 10, 0), holidays: [LocalDate("2026-03-09")!]), at("2026-03-06", 19, 0))
        XCTAssertEqual(r.nextChange("office", after: at("2026-03-06", 20, 0), holidays: [LocalDate("2026-03-07")!, LocalDate("2026-03-09")!]),
                       at("2026-03-10", 7, 0), "closed days skipped")
        XCTAssertEqual(r.nextChange("nights", after: at("2026-03-02", 23, 0), holidays: []), at("2026-03-03", 6, 0))
        XCTAssertNil(r.nextChange("always", after: at("2026-03-02", 23, 0), holidays: []))
        XCTAssertTrue(r.isOpen("always", at: at("2026-03-02", 3, 0), holidays: [LocalDate("2026-03-02")!]))
        XCTAssertFalse(r.isOpen("undefined", at: at("2026-03-02", 10, 0), holidays: []))
        XCTAssertEqual(r.understood(at: at("2026-03-02", 10, 0), holidays: []), [
            "schedule nights: mon,tue,wed,thu,fri,sat,sun 22:00-06:00; closed now, opens mon 2026-03-02 22:00",
            "schedule office: mon,tue,wed,thu,fri 07:00-19:00, sat 09:00-13:00; open now, closes mon 2026-03-02 19:00",
            "allow staff always",
            "allow visitor office",
            "allow cleaning nights (also on closed days)",
            "lockdown-allow security",
            "unlock office first=staff: its window is open now (from the first grant to staff in it), ends mon 2026-03-02 19:00",
            "pretix 42 visitor",
        ])
        XCTAssertEqual(r.understood(at: at("2026-03-07", 14, 0), holidays: [LocalDate("2026-03-09")!]).filter { $0.hasPrefix("unlock") },
                       ["unlock office first=staff: no window now, next begins tue 2026-03-10 07:00"], "Saturday after 13:00, Monday closed")
    }

    /// `pin` on the lines (interface.md 0.6): a grant waits for the PIN when every line that opens
    /// says so; in a lockdown by the `lockdown-allow ... pin` groups; by an open `unlock ... first=G pin`.
    func testPINLines() throws {
        let r = try AccessRules.parse("""
            schedule office mon-fri 08:00-18:00
            allow vault always pin
            allow staff office
            allow staff always holidays pin
            allow guard always pin
            lockdown-allow guard pin
            lockdown-allow chief
            unlock office first=boss pin
            allow boss always
            """)
        let monday = at("2026-12-07", 10, 0), night = at("2026-12-07", 22, 0)
        XCTAssertEqual(r.decision(groups: ["vault"], at: monday, holidays: [], clockSynced: true).pin, true)
        XCTAssertEqual(r.decision(groups: ["staff"], at: monday, holidays: [], clockSynced: true).pin, false)  // office opens without
        XCTAssertEqual(r.decision(groups: ["staff"], at: night, holidays: [], clockSynced: true).pin, true)  // only the pin line opens
        XCTAssertEqual(r.decision(groups: ["staff", "vault"], at: monday, holidays: [], clockSynced: true).pin, false)
        XCTAssertTrue(r.decision(groups: ["guard"], at: night, holidays: [], clockSynced: true, lockdown: true) == (.granted, true))
        XCTAssertTrue(r.decision(groups: ["guard", "chief"], at: night, holidays: [], clockSynced: true, lockdown: true) == (.granted, false))
        XCTAssertTrue(r.decision(groups: ["vault"], at: night, holidays: [], clockSynced: true, lockdown: true) == (.lockdown, false))
        XCTAssertTrue(r.decision(groups: ["boss"], at: monday, holidays: [], clockSynced: true) == (.granted, true))
        XCTAssertTrue(r.decision(groups: ["boss"], at: night, holidays: [], clockSynced: true) == (.granted, false))
        XCTAssertTrue(r.decision(groups: ["nobody"], at: monday, holidays: [], clockSynced: true) == (.noAccess, false))
        XCTAssertEqual(r.decide(groups: ["vault"], at: monday, holidays: [], clockSynced: false), .granted)
        XCTAssertThrowsError(try AccessRules.parse("unlock always pin\n"))
        XCTAssertThrowsError(try AccessRules.parse("allow g always holidays pin extra\n"))
        XCTAssertThrowsError(try AccessRules.parse("allow g pin\n"))
    }
}
