// SPDX-License-Identifier: Apache-2.0
/// A window of a schedule: on each of `days`, from `start` (minute of the day) to `end` (1-1440).
/// An end at or before the start crosses midnight: the window belongs to the day it starts on
/// and ends on the next (`sat 22:00-06:00` is open from Saturday 22:00 to Sunday 06:00).
public struct AccessWindow: Equatable, Sendable, CustomStringConvertible {
    /// Bit `Weekday.rawValue` set for each day the window starts on.
    public var days: UInt8
    public var start: Int
    public var end: Int

    public init(days: [Weekday], start: Int, end: Int) {
        self.days = days.reduce(0) { $0 | (1 << UInt8($1.rawValue)) }
        self.start = start
        self.end = end
    }

    public var crossesMidnight: Bool { end <= start }

    public func startsOn(_ d: Weekday) -> Bool { days & (1 << UInt8(d.rawValue)) != 0 }

    /// The day the window that is open at `clock` started on, or nil when it is closed then.
    public func openSince(_ clock: WallClock) -> LocalDate? {
        let m = clock.minute
        if startsOn(clock.weekday) && m >= start && (crossesMidnight || m < end) { return clock.date }
        if crossesMidnight && m < end {
            let yesterday = clock.date.adding(days: -1)
            if startsOn(yesterday.weekday) { return yesterday }
        }
        return nil
    }

    public var description: String {
        func hm(_ x: Int) -> String { let h = x / 60, m = x % 60; return "\(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m)" }
        let names = Weekday.allCases.filter(startsOn).map(\.name).joined(separator: ",")
        return "\(names) \(hm(start))-\(hm(end))"
    }
}

/// A named weekly schedule (`schedule NAME ...`), or the built-in `always`.
public struct AccessSchedule: Equatable, Sendable {
    public var name: String
    public var windows: [AccessWindow]
    public var isAlways: Bool { name == AccessRules.always }

    public init(name: String, windows: [AccessWindow]) {
        self.name = name
        self.windows = windows
    }
}

/// `allow GROUP SCHEDULE [holidays] [pin]`.
public struct AccessAllow: Equatable, Sendable {
    public var group: String
    public var schedule: String
    /// Also on the closed days of the `holidays` file.
    public var onHolidays: Bool
    /// A grant by this line waits for the holder's PIN (interface.md 0.6).
    public var pin: Bool
    public var line: Int
    public init(group: String, schedule: String, onHolidays: Bool, pin: Bool = false, line: Int) {
        self.group = group; self.schedule = schedule; self.onHolidays = onHolidays; self.pin = pin; self.line = line
    }
}

/// `unlock SCHEDULE [first=GROUP] [pin]` (the modes; read and checked, acted on by the mode machine).
public struct AccessUnlock: Equatable, Sendable {
    public var schedule: String
    public var firstGroup: String?
    /// While its window is open, a member of `firstGroup` (whose grant unlocks) is asked for a PIN.
    public var pin: Bool
    public var line: Int
    public init(schedule: String, firstGroup: String?, pin: Bool = false, line: Int) {
        self.schedule = schedule; self.firstGroup = firstGroup; self.pin = pin; self.line = line
    }
}

/// `pretix ITEM[/VARIATION] GROUP [subevent=ID]`: pretix's product (and variation)
/// ids, and for an event series the date's id, as the ticket's signed payload carries them.
public struct AccessPretix: Equatable, Sendable {
    public var item: UInt64
    public var variation: UInt64?
    public var group: String
    /// Only the tickets of this date of a series; nil: of any date (or of no series).
    public var subevent: UInt64?
    public init(item: UInt64, variation: UInt64?, group: String, subevent: UInt64? = nil) {
        self.item = item; self.variation = variation; self.group = group; self.subevent = subevent
    }

    /// Whether the line is about a ticket of this product, variation and date.
    public func matches(item: UInt64, variation: UInt64, subevent: UInt64) -> Bool {
        self.item == item && (self.variation ?? variation) == variation && (self.subevent ?? subevent) == subevent
    }

    /// How much the line names: the date first, then the variation (the most specific line wins).
    var specificity: Int { (subevent != nil ? 2 : 0) + (variation != nil ? 1 : 0) }

    /// The line as written (`42/7 visitor subevent=3`).
    public var description: String {
        "\(item)" + (variation.map { "/\($0)" } ?? "") + " \(group)" + (subevent.map { " subevent=\($0)" } ?? "")
    }
}

/// A bad line of the rules file: its number and what the line may be.
public struct AccessRulesError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// Why the rules let a credential in, or not (interface.md 0.4). `clockNotSynchronized` is 0.3's
/// reason, given when only a schedule could have opened and the clock cannot be trusted.
public enum AccessReason: String, Equatable, Sendable {
    case granted
    case noAccess = "no access"
    case outsideSchedule = "outside schedule"
    case holiday
    case lockdown
    case clockNotSynchronized = "clock not synchronized"
}

/// One door's rules (`KIOSK_ACCESS_FILE`, interface.md 0.4): who may enter, and when. Parsed
/// strictly, whole or not at all; decided from the wall clock the edge reads, the credential's
/// groups and the closed days (`holidays`) the edge expanded from the iCalendar file.
public struct AccessRules: Equatable, Sendable {
    /// The built-in schedule that is always open, on closed days too, and the only one that
    /// opens while the clock is not synchronised.
    public static let always = "always"
    /// Longer files are refused (a door's rules are a page).
    public static let maxBytes = 1 << 20

    public var schedules: [String: AccessSchedule] = [:]
    public var allows: [AccessAllow] = []
    /// The iCalendar file of closed days (`holidays PATH`), read at the edge.
    public var holidaysFile: String?
    public var lockdownAllow: Set<String> = []
    /// The `lockdown-allow ... pin` groups: asked for a PIN in a lockdown.
    public var lockdownPIN: Set<String> = []
    public var unlocks: [AccessUnlock] = []
    public var pretix: [AccessPretix] = []

    public init() {}

    public static let lineKinds = "schedule, holidays, allow, lockdown-allow, unlock or pretix"

    /// Parses the whole file; the first bad line is the error. `#` starts a comment anywhere.
    public static func parse(_ text: String) throws(AccessRulesError) -> AccessRules {
        var rules = AccessRules()
        var scheduleLines: [String: Int] = [:]
        var holidaysLine = 0
        var lineNumber = 0
        func fail(_ why: String) -> AccessRulesError { AccessRulesError(line: lineNumber, reason: why) }
        guard text.utf8.count <= maxBytes else { throw AccessRulesError(line: 0, reason: "a file of at most \(maxBytes) bytes") }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = raw
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let keyword = words.first else { continue }
            let args = Array(words.dropFirst())
            switch keyword {
            case "schedule":
                let form = "schedule NAME DAYS HH:MM-HH:MM[, DAYS HH:MM-HH:MM]... (DAYS: mon-fri, sat, ...)"
                guard args.count >= 3 else { throw fail("expected \(form)") }
                let name = String(args[0])
                guard isName(name) else { throw fail("a schedule NAME of 1-64 letters, digits, '-', '_' or '.'") }
                guard name != always else { throw fail("'always' is built in: choose another schedule name") }
                if let first = scheduleLines[name] { throw fail("schedule \(name) is already defined on line \(first)") }
                let spec = args.dropFirst().joined(separator: " ")
                var windows: [AccessWindow] = []
                for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
                    let f = part.split(separator: " ")
                    guard f.count == 2 else { throw fail("expected \(form); got '\(part.trimmedOfBlanks)'") }
                    guard let days = parseDays(f[0]) else {
                        throw fail("DAYS as a day (mon, tue, wed, thu, fri, sat, sun) or a range of them (mon-fri); got '\(f[0])'")
                    }
                    guard let (start, end) = parseSpan(f[1]) else {
                        throw fail("a window HH:MM-HH:MM (00:00-23:59, the end also 24:00, not equal to the start); got '\(f[1])'")
                    }
                    windows.append(AccessWindow(days: days, start: start, end: end))
                }
                rules.schedules[name] = AccessSchedule(name: name, windows: windows)
                scheduleLines[name] = lineNumber
            case "holidays":
                guard args.count == 1, args[0].hasPrefix("/") else { throw fail("expected holidays /ABSOLUTE/PATH.ics") }
                guard holidaysLine == 0 else { throw fail("one holidays line (the first is line \(holidaysLine))") }
                rules.holidaysFile = String(args[0])
                holidaysLine = lineNumber
            case "allow":
                // `pin` last (interface.md 0.6): a grant by the line waits for the holder's PIN.
                let pin = args.count >= 3 && args.last == "pin"
                let rest = pin ? Array(args.dropLast()) : args
                guard (2...3).contains(rest.count), rest.count == 2 || rest[2] == "holidays" else {
                    throw fail("expected allow GROUP SCHEDULE [holidays] [pin]")
                }
                guard isName(rest[0]) else { throw fail("a GROUP of 1-64 letters, digits, '-', '_' or '.'") }
                guard isName(rest[1]) else { throw fail("a SCHEDULE name (always, or one a schedule line defines)") }
                rules.allows.append(AccessAllow(group: String(rest[0]), schedule: String(rest[1]), onHolidays: rest.count == 3,
                                                pin: pin, line: lineNumber))
            case "lockdown-allow":
                let pin = args.count >= 2 && args.last == "pin"
                let groups = pin ? Array(args.dropLast()) : args
                guard !groups.isEmpty else { throw fail("expected lockdown-allow GROUP [GROUP]... [pin]") }
                for g in groups {
                    guard isName(g) else { throw fail("a GROUP of 1-64 letters, digits, '-', '_' or '.'; got '\(g)'") }
                    rules.lockdownAllow.insert(String(g))
                    if pin { rules.lockdownPIN.insert(String(g)) }
                }
            case "unlock":
                let pin = args.count >= 2 && args.last == "pin"
                let rest = pin ? Array(args.dropLast()) : args
                guard (1...2).contains(rest.count), isName(rest[0]) else { throw fail("expected unlock SCHEDULE [first=GROUP] [pin]") }
                var first: String?
                if rest.count == 2 {
                    guard rest[1].hasPrefix("first="), isName(rest[1].dropFirst(6)) else {
                        throw fail("expected unlock SCHEDULE [first=GROUP] [pin]; got '\(rest[1])'")
                    }
                    first = String(rest[1].dropFirst(6))
                }
                guard !pin || first != nil else { throw fail("unlock SCHEDULE first=GROUP pin: only a first=GROUP window asks for a PIN") }
                rules.unlocks.append(AccessUnlock(schedule: String(rest[0]), firstGroup: first, pin: pin, line: lineNumber))
            case "pretix":
                let form = "expected pretix ITEM[/VARIATION] GROUP [subevent=ID] (ITEM, VARIATION, ID: pretix's numeric ids)"
                guard args.count == 2 || args.count == 3 else { throw fail(form) }
                let ids = args[0].split(separator: "/", omittingEmptySubsequences: false)
                guard (1...2).contains(ids.count), let item = number(ids[0]) else { throw fail(form) }
                var variation: UInt64?
                if ids.count == 2 {
                    guard let v = number(ids[1]) else { throw fail(form) }
                    variation = v
                }
                guard isName(args[1]) else { throw fail("a GROUP of 1-64 letters, digits, '-', '_' or '.'") }
                var subevent: UInt64?
                if args.count == 3 {
                    guard args[2].hasPrefix("subevent="), let id = number(args[2].dropFirst(9)), id > 0 else {
                        throw fail("\(form); got '\(args[2])'")
                    }
                    subevent = id
                }
                guard !rules.pretix.contains(where: { $0.item == item && $0.variation == variation && $0.subevent == subevent }) else {
                    throw fail("item \(args[0])" + (subevent.map { " of subevent \($0)" } ?? "") + " is given a group twice")
                }
                rules.pretix.append(AccessPretix(item: item, variation: variation, group: String(args[1]), subevent: subevent))
            default:
                throw fail("a line starts with \(lineKinds); got '\(keyword)'")
            }
        }
        // A name may be used before the line that defines it; every one must be defined.
        let known = { (s: String) in s == always || rules.schedules[s] != nil }
        for a in rules.allows where !known(a.schedule) {
            throw AccessRulesError(line: a.line, reason: "schedule \(a.schedule) is not defined (\(rules.scheduleNames))")
        }
        for u in rules.unlocks where !known(u.schedule) {
            throw AccessRulesError(line: u.line, reason: "schedule \(u.schedule) is not defined (\(rules.scheduleNames))")
        }
        return rules
    }

    /// What `schedule` names a file may use, for an error.
    var scheduleNames: String {
        (["always"] + schedules.keys.sorted()).joined(separator: ", ")
    }

    /// A group's name as a credential carries it (the CWT claim `groups`, `groups=` in the TOTP file).
    public static func isGroup<S: StringProtocol>(_ s: S) -> Bool { isName(s) }

    static func isName<S: StringProtocol>(_ s: S) -> Bool {
        (1...64).contains(s.utf8.count) && s.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f || $0 == 0x2e
        }
    }

    static func number(_ s: Substring) -> UInt64? {
        guard (1...18).contains(s.utf8.count), s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(s)
    }

    /// `mon`, or `mon-fri` (a range may wrap: `fri-mon` is Friday to Monday).
    static func parseDays(_ s: Substring) -> [Weekday]? {
        let ends = s.split(separator: "-", omittingEmptySubsequences: false)
        guard let a = Weekday(name: ends[0]) else { return nil }
        if ends.count == 1 { return [a] }
        guard ends.count == 2, let b = Weekday(name: ends[1]) else { return nil }
        let n = (b.rawValue - a.rawValue + 7) % 7
        return (0...n).map { Weekday(rawValue: (a.rawValue + $0) % 7)! }
    }

    /// `HH:MM-HH:MM` as minutes; the end may be 24:00; an end before the start crosses midnight.
    static func parseSpan(_ s: Substring) -> (Int, Int)? {
        let ends = s.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let a = parseTime(ends[0]), let b = parseTime(ends[1]), a < 1440, a != b else { return nil }
        return (a, b)
    }

    static func parseTime(_ s: Substring) -> Int? {
        let u = Array(s.utf8)
        guard u.count == 5, u[2] == 0x3a, [u[0], u[1], u[3], u[4]].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let h = Int(u[0] - 0x30) * 10 + Int(u[1] - 0x30), m = Int(u[3] - 0x30) * 10 + Int(u[4] - 0x30)
        guard m < 60, h < 24 || (h == 24 && m == 0) else { return nil }
        return h * 60 + m
    }

    // MARK: the decision

    /// An event ticket's groups: the group of the most specific `pretix` line that
    /// matches its product, variation and date (a line naming the date before one that does not,
    /// then one naming the variation before one that does not); none: the ticket has no group,
    /// and no `allow` line can open for it.
    public func groups(forTicket item: UInt64, variation: UInt64, subevent: UInt64) -> [String] {
        let best = pretix.filter { $0.matches(item: item, variation: variation, subevent: subevent) }.max { $0.specificity < $1.specificity }
        return best.map { [$0.group] } ?? []
    }

    /// Whether a credential with `groups` may enter at `clock`: granted when one of its groups has
    /// an `allow` line whose schedule is open now. A window is judged by the day it started on:
    /// a window that started on a closed day (`holidays`) opens only for `allow ... holidays`; a
    /// night window that started the evening before a closed day runs to its end. `always` is
    /// open on closed days too. While the clock is not synchronised only `always` opens (the
    /// wall clock cannot be trusted; `clockSynced` false). In a lockdown only `lockdown-allow`
    /// groups open, whatever the schedules.
    ///
    /// The reason when it is not granted: `lockdown`; `no access` when no group of the
    /// credential has an `allow` line; `holiday` when a schedule would be open but its day is
    /// closed; `clock not synchronized` when only a schedule could have opened; else
    /// `outside schedule`.
    public func decide(groups: [String], at clock: WallClock, holidays: Set<LocalDate>, clockSynced: Bool,
                       lockdown: Bool = false) -> AccessReason {
        decision(groups: groups, at: clock, holidays: holidays, clockSynced: clockSynced, lockdown: lockdown).reason
    }

    /// `decide`'s reason, and whether a grant waits for a PIN (interface.md 0.6): when every line
    /// that opens for the credential now says `pin` (a line without it is enough to open), in a
    /// lockdown when every `lockdown-allow` group of it says `pin`, and when an open `unlock
    /// ... first=GROUP pin` window names one of its groups (its grant would unlock the door).
    public func decision(groups: [String], at clock: WallClock, holidays: Set<LocalDate>, clockSynced: Bool,
                         lockdown: Bool = false) -> (reason: AccessReason, pin: Bool) {
        if lockdown {
            let admitted = groups.filter(lockdownAllow.contains)
            return admitted.isEmpty ? (.lockdown, false) : (.granted, admitted.allSatisfy(lockdownPIN.contains))
        }
        var allowed = false, closedDay = false
        var opening: [AccessAllow] = []
        for a in allows where groups.contains(a.group) {
            allowed = true
            if a.schedule == AccessRules.always { opening.append(a); continue }
            guard clockSynced, let schedule = schedules[a.schedule] else { continue }
            for w in schedule.windows {
                guard let day = w.openSince(clock) else { continue }
                if a.onHolidays || !holidays.contains(day) { opening.append(a); break }
                closedDay = true
            }
        }
        if !opening.isEmpty {
            let unlocking = unlocks.contains { u in
                u.pin && u.firstGroup.map(groups.contains) == true && isOpen(u.schedule, at: clock, holidays: holidays)
            }
            return (.granted, opening.allSatisfy(\.pin) || unlocking)
        }
        if !allowed { return (.noAccess, false) }
        if !clockSynced { return (.clockNotSynchronized, false) }
        return (closedDay ? .holiday : .outsideSchedule, false)
    }

    // MARK: what `kiosk check` shows

    /// Whether `schedule` is open at `clock` (a window started on a closed day does not count;
    /// `always` is always open); false for a name no line defines.
    public func isOpen(_ schedule: String, at clock: WallClock, holidays: Set<LocalDate>) -> Bool {
        if schedule == AccessRules.always { return true }
        return schedules[schedule]?.windows.contains { w in w.openSince(clock).map { !holidays.contains($0) } ?? false } ?? false
    }

    /// The first minute after `clock` at which `schedule` opens or closes, looked for over
    /// `days` days of wall clock (nil: none in that time, as for `always`).
    public func nextChange(_ schedule: String, after clock: WallClock, holidays: Set<LocalDate>, days: Int = 14) -> WallClock? {
        let open = isOpen(schedule, at: clock, holidays: holidays)
        var date = clock.date, minute = clock.minute
        for _ in 0..<(days * 1440) {
            minute += 1
            if minute == 1440 { minute = 0; date = date.adding(days: 1) }
            let c = WallClock(date: date, minute: minute)
            if isOpen(schedule, at: c, holidays: holidays) != open { return c }
        }
        return nil
    }

    /// The rules as understood, one line each: the schedules with their state at `clock` and
    /// their next change, then the other lines (for `kiosk check`).
    public func understood(at clock: WallClock, holidays: Set<LocalDate>) -> [String] {
        var lines: [String] = []
        for name in schedules.keys.sorted() {
            let open = isOpen(name, at: clock, holidays: holidays)
            let next = nextChange(name, after: clock, holidays: holidays)
            let windows = schedules[name]!.windows.map(\.description).joined(separator: ", ")
            lines.append("schedule \(name): \(windows); \(open ? "open" : "closed") now, "
                         + (next.map { "\(open ? "closes" : "opens") \($0.weekday.name) \($0)" } ?? "no change within 14 days"))
        }
        for a in allows {
            lines.append("allow \(a.group) \(a.schedule)" + (a.onHolidays ? " (also on closed days)" : "") + (a.pin ? " (with a PIN)" : ""))
        }
        if !lockdownAllow.isEmpty {
            lines.append("lockdown-allow " + lockdownAllow.sorted().map { lockdownPIN.contains($0) ? "\($0) (with a PIN)" : $0 }.joined(separator: " "))
        }
        // Each unlock window's state and next change (a first=GROUP window unlocks
        // only once a member of GROUP is granted in it).
        for u in unlocks {
            let open = isOpen(u.schedule, at: clock, holidays: holidays)
            let next = nextChange(u.schedule, after: clock, holidays: holidays)
            let first = u.firstGroup.map { " (from the first grant to \($0) in it)" } ?? ""
            lines.append("unlock \(u.schedule)" + (u.firstGroup.map { " first=\($0)" } ?? "") + (u.pin ? " pin" : "") + ": "
                         + (open ? "its window is open now\(first)" : "no window now") + ", "
                         + (next.map { "\(open ? "ends" : "next begins") \($0.weekday.name) \($0)" } ?? "no change within 14 days"))
        }
        for p in pretix { lines.append("pretix \(p.description)") }
        return lines
    }

    /// A summary for the log: `schedules=2 allow=3 holidays=/etc/kiosk/holidays.ics`.
    public var summary: String {
        "schedules=\(schedules.count) allow=\(allows.count) lockdown_allow=\(lockdownAllow.count) unlock=\(unlocks.count) pretix=\(pretix.count)"
    }
}
