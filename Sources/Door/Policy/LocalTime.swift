// SPDX-License-Identifier: Apache-2.0
/// A day of the kiosk's local calendar (proleptic Gregorian, as the C library and iCalendar count).
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, a real day; nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0 >= "0" && $0 <= "9" } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), (1...LocalDate.daysIn(month: m, year: y)).contains(d) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public static func < (a: LocalDate, b: LocalDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    public static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The inverse of `dayNumber` (civil_from_days).
    public init(dayNumber z0: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d)
    }

    public func adding(days: Int) -> LocalDate { LocalDate(dayNumber: dayNumber + days) }

    /// 1970-01-01 was a Thursday.
    public var weekday: Weekday { Weekday(rawValue: ((dayNumber % 7) + 7 + 3) % 7)! }
}

/// Monday first, as ISO 8601 and the rules file write a week.
public enum Weekday: Int, CaseIterable, Sendable {
    case mon = 0, tue, wed, thu, fri, sat, sun

    public var name: String { ["mon", "tue", "wed", "thu", "fri", "sat", "sun"][rawValue] }

    public init?(name: Substring) {
        guard let i = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].firstIndex(of: name.lowercased()) else { return nil }
        self.init(rawValue: i)
    }
}

/// What the wall clock shows where the door is: the local date and the minute of that day
/// (0-1439). The edge reads it once per decision from the system's zone (localtime_r); the rules
/// never see an instant, a zone or an offset.
///
/// Daylight saving time follows from that: the rules read the clock as it shows. On the spring
/// Sunday the skipped hour is never shown, so a boundary inside it takes effect at the first
/// minute after the gap (a window 02:00-02:30 does not open that day; one from 02:30 opens at
/// 03:00). On the autumn Sunday the repeated hour is shown twice, so a boundary inside it is met
/// twice (a window ending at 02:30 closes at the first 02:30, opens again at the second 02:00 and
/// closes at the second 02:30). A boundary outside those hours is met once, at its local time: a
/// night window 22:00-06:00 ends at 06:00 local time on both Sundays.
public struct WallClock: Equatable, Sendable, CustomStringConvertible {
    public var date: LocalDate
    public var minute: Int

    public init(date: LocalDate, minute: Int) {
        precondition((0..<1440).contains(minute))
        self.date = date
        self.minute = minute
    }

    public init(date: LocalDate, hour: Int, minute: Int) { self.init(date: date, minute: hour * 60 + minute) }

    public var weekday: Weekday { date.weekday }

    public var description: String {
        let h = minute / 60, m = minute % 60
        return "\(date) \(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m)"
    }
}
