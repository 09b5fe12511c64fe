// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
#if canImport(XCTest)  // TestSupport is also built by `swift build` without the tests, where XCTest is not
import XCTest
#endif

/// The one wait of the tests: polls `condition` until it holds or `seconds` have passed on the
/// monotonic clock (a wall clock set back by NTP must not stretch a wait). True when it held; a
/// last look is taken at the deadline, so a condition that came true meanwhile is not missed.
/// `what` says what is awaited, for the failure message of `XCTAssertEventually` and for the
/// callers that build their own.
///
/// A wait proves a presence. An absence ("nothing more came") is proven by a positive later event
/// (a later message, a later log line) or by a manual clock driven past the point, never by a
/// wait that runs out.
@discardableResult
public func eventually(_ what: String, within seconds: Double = 15, every pollSeconds: Double = 0.01,
                       _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = monotonicNanoseconds() + UInt64(max(0, seconds) * 1e9)
    while monotonicNanoseconds() < deadline {
        if try condition() { return true }
        usleep(UInt32(max(0.001, pollSeconds) * 1e6))
    }
    return try condition()
}

#if canImport(XCTest)
/// `eventually`, failing the test when the time runs out: "never within 15 s: <what>".
public func XCTAssertEventually(_ what: String, within seconds: Double = 15, _ condition: () throws -> Bool,
                                _ detail: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line) rethrows {
    if try eventually(what, within: seconds, condition) { return }
    let more = detail()
    XCTFail("never within \(seconds) s: \(what)" + (more.isEmpty ? "" : "\n" + more), file: file, line: line)
}
#endif

/// Waits (at most `seconds`) for a value that `probe` gives when it is ready; the last value looked
/// at otherwise. For the waits that hand back what they saw (a subscriber's messages, counters).
public func eventuallyValue<T>(_ what: String, within seconds: Double = 15, every pollSeconds: Double = 0.01,
                               _ probe: () throws -> T, until ready: (T) -> Bool) rethrows -> T {
    var last = try probe()
    _ = try eventually(what, within: seconds, every: pollSeconds) {
        last = try probe()
        return ready(last)
    }
    return last
}
