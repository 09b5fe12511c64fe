// SPDX-License-Identifier: Apache-2.0
import CICal
import Platform
import Policy

/// The closed days of an iCalendar file (RFC 5545; `holidays` in the door's rules): every day an
/// all-day event covers (DTSTART a DATE; DTEND exclusive, else DURATION, else one day), with its
/// recurrences (RRULE, RDATE) less its exceptions (EXDATE), as libical expands them. Events with a
/// time of day are not closed days and are left out. The expansion is bounded: from the day
/// before the file is read for `horizonDays`; the rules are read again on SIGHUP and `reload`
/// (a kiosk that runs longer than that without one sees no more closed days: reload it yearly,
/// as a published calendar is updated).
public enum HolidayCalendar {
    public static let horizonDays = 2 * 366
    /// Larger files are refused (a country's holidays for decades are some hundred kilobytes).
    public static let maxBytes = 4 << 20
    /// The longest closure that began before the range and is still seen in it.
    public static let lookBehindDays = 366

    public static func closedDays(_ path: String, from: LocalDate, days: Int = horizonDays) throws -> Set<LocalDate> {
        guard let bytes = try SmallFile.read(path, limit: maxBytes) else { throw SmallFile.Failure(description: "holidays \(path): no such file") }
        do {
            return try closedDays(text: bytes, from: from, days: days)
        } catch let e as SmallFile.Failure {
            throw SmallFile.Failure(description: "holidays \(path): \(e.description)")
        }
    }

    public static func closedDays(text: [UInt8], from: LocalDate, days: Int = horizonDays) throws -> Set<LocalDate> {
        guard !text.contains(0), String(validating: text, as: UTF8.self) != nil else { throw SmallFile.Failure(description: "not UTF-8 text") }
        final class Found {
            var days: Set<LocalDate> = []
            var from = 0, to = 0
        }
        let found = Found()
        found.from = from.dayNumber
        found.to = found.from + days
        var why = [CChar](repeating: 0, count: 256)
        // libical gives the occurrences that start in the range: a closure that began up to
        // `lookBehindDays` earlier and is still on is asked for too, then cut to the range.
        let events = withExtendedLifetime(found) {
            kiosk_ical_occurrences(text.map { CChar(bitPattern: $0) } + [0], found.from - lookBehindDays, found.to, { start, end, allDay, _, context in
                guard allDay != 0, let context else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                // A calendar may say an event lasts for ever: only the horizon is kept.
                var d = max(start, found.from)
                while d < min(end, found.to) {
                    found.days.insert(LocalDate(dayNumber: d))
                    d += 1
                }
            }, Unmanaged.passUnretained(found).toOpaque(), &why, why.count)
        }
        guard events >= 0 else { throw SmallFile.Failure(description: String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        return found.days
    }
}
