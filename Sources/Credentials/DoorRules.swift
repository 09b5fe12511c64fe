// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// The door's rules in force (`KIOSK_ACCESS_FILE`): the parsed file and the closed days
/// its `holidays` line names, read together, swapped whole (a bad file changes nothing).
public struct DoorRules: Equatable, Sendable {
    public var path: String
    public var rules: AccessRules
    public var holidays: Set<LocalDate>

    public init(path: String, rules: AccessRules, holidays: Set<LocalDate> = []) {
        self.path = path
        self.rules = rules
        self.holidays = holidays
    }

    /// Reads the rules file and what it names (the closed days expanded from the day before
    /// `now`'s local date); the error says the line and what it may be. `holidaysFile`: the
    /// calendar a site bundle carries, read in place of the one a `holidays` line names.
    public static func load(_ path: String, now: Int64 = unixSeconds(), holidaysFile: String? = nil) throws -> DoorRules {
        guard let bytes = try SmallFile.read(path, limit: AccessRules.maxBytes) else { throw SmallFile.Failure(description: "\(path): no such file") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw SmallFile.Failure(description: "\(path): not UTF-8 text") }
        let rules: AccessRules
        do throws(AccessRulesError) {
            rules = try AccessRules.parse(text)
        } catch {
            throw SmallFile.Failure(description: error.description)
        }
        var holidays: Set<LocalDate> = []
        if let file = rules.holidaysFile.map({ holidaysFile ?? $0 }) {
            holidays = try HolidayCalendar.closedDays(file, from: LocalTime.wallClock(now).date.adding(days: -1))
        }
        return DoorRules(path: path, rules: rules, holidays: holidays)
    }

    /// The decision for a credential with `groups` at Unix time `now`: the wall clock read once
    /// (`LocalTime`), then the pure rules.
    public func decide(groups: [String], now: Int64, clockSynced: Bool, lockdown: Bool = false) -> AccessReason {
        rules.decide(groups: groups, at: LocalTime.wallClock(now), holidays: holidays, clockSynced: clockSynced, lockdown: lockdown)
    }

    /// `decide`'s reason and whether the grant waits for a PIN (`AccessRules.decision`).
    public func decision(groups: [String], now: Int64, clockSynced: Bool, lockdown: Bool = false) -> (reason: AccessReason, pin: Bool) {
        rules.decision(groups: groups, at: LocalTime.wallClock(now), holidays: holidays, clockSynced: clockSynced, lockdown: lockdown)
    }

    /// For the log: `schedules=2 allow=3 ... holidays=12`.
    public var summary: String { rules.summary + " holidays=\(holidays.count)" }
}

/// The kiosk's local time: the system's zone (`TZ`, else /etc/localtime, which `timedatectl
/// set-timezone` sets) through the C library's tz database, read once per decision. The rules
/// see only the wall clock it shows (`WallClock`: how summer time reads there is said on it).
/// glibc reads the zone once, at the first conversion: a zone changed while the kiosk runs is
/// seen after a restart.
public enum LocalTime {
    public static func wallClock(_ unixSeconds: Int64) -> WallClock {
        var t = time_t(unixSeconds)
        var tm = Glibc.tm()
        guard localtime_r(&t, &tm) != nil else {
            // Out of the C library's range: read as UTC's calendar (never a crash on a clock gone wild).
            let days = Int(unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400)
            let minute = Int((unixSeconds - Int64(days) * 86_400) / 60)
            return WallClock(date: LocalDate(dayNumber: days), minute: minute)
        }
        // A leap second (tm_sec 60) stays in its minute; tm_hour and tm_min are 0-23 and 0-59.
        return WallClock(date: LocalDate(year: Int(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday)),
                         minute: Int(tm.tm_hour) * 60 + Int(tm.tm_min))
    }
}
