// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Credentials
import Policy

/// A holidays calendar (`holidays FILE.ics` in the door's rules), read by libical
/// through the kiosk's shim: any bytes are read or refused with a reason, never a crash; the closed
/// days found lie inside the range asked for; and the same bytes read twice give the same days.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let from = LocalDate(year: 2026, month: 1, day: 1)
    let days: Set<LocalDate>
    do {
        days = try HolidayCalendar.closedDays(text: bytes, from: from, days: 60)
    } catch {
        precondition(!"\(error)".isEmpty, "a refusal without a reason")
        return 0
    }
    let range = from.dayNumber..<(from.dayNumber + 60)
    precondition(days.allSatisfy { range.contains($0.dayNumber) }, "a closed day outside the range")
    precondition((try? HolidayCalendar.closedDays(text: bytes, from: from, days: 60)) == days, "read differently twice")
    return 0
}

@_cdecl("FuzzHolidays_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
