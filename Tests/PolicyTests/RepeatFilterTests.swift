// SPDX-License-Identifier: Apache-2.0
@testable import Policy
import XCTest

final class RepeatFilterTests: XCTestCase {
    let a = DecodedSymbol(symbology: .qrcode, bytes: Array("A".utf8), text: nil, location: [], quality: 1)
    let b = DecodedSymbol(symbology: .qrcode, bytes: Array("B".utf8), text: nil, location: [], quality: 1)
    let aAsCode128 = DecodedSymbol(symbology: .code128, bytes: Array("A".utf8), text: nil, location: [], quality: 1)

    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func testHeldCodeIsReportedOnceAndAgainOnlyAfterBeingAwayForTheWindow() {
        var filter = RepeatFilter(windowMilliseconds: 3000)
        var reports: [Int] = []
        // Held for 5 s at 30 fps: one report however long it is held.
        for f in 0..<150 where !filter.admit([a], at: ms(f * 33)).isEmpty { reports.append(f * 33) }
        XCTAssertEqual(reports, [0])
        // Last seen at 4917 ms. Back at 7900 ms (2983 ms away): still within the window.
        XCTAssertEqual(filter.admit([a], at: ms(7900)), [])
        // Seen at 7900; away until 10900 exactly: the window has passed.
        XCTAssertEqual(filter.admit([], at: ms(10_899)).count, 0)
        XCTAssertEqual(filter.admit([a], at: ms(10_900)), [a])
    }

    func testAFrameWithoutTheCodeDoesNotResetTheWindow() {
        var filter = RepeatFilter(windowMilliseconds: 1000)
        XCTAssertEqual(filter.admit([a], at: ms(0)), [a])
        // zbar misses the code on a few frames while it is held: no second report.
        XCTAssertEqual(filter.admit([], at: ms(400)), [])
        XCTAssertEqual(filter.admit([a], at: ms(800)), [])
        XCTAssertEqual(filter.admit([a], at: ms(1700)), [])
        XCTAssertEqual(filter.admit([a], at: ms(2800)), [a])
    }

    func testDifferentCodesAndSymbologiesAreIndependent() {
        var filter = RepeatFilter(windowMilliseconds: 3000)
        XCTAssertEqual(filter.admit([a, b], at: 0), [a, b])
        XCTAssertEqual(filter.admit([a, aAsCode128], at: ms(10)), [aAsCode128])
        XCTAssertEqual(filter.admit([a, a], at: ms(5000)), [a], "away 4990 ms: reported again, once for the frame")
        XCTAssertEqual(filter.remembered, 1)
    }

    func testSameCodeTwiceInOneFrameIsOneReport() {
        var filter = RepeatFilter(windowMilliseconds: 3000)
        XCTAssertEqual(filter.admit([a, a], at: 0), [a])
    }

    func testZeroWindowReportsEveryFrame() {
        var filter = RepeatFilter(windowMilliseconds: 0)
        XCTAssertEqual(filter.admit([a], at: 0), [a])
        XCTAssertEqual(filter.admit([a], at: 1), [a])
    }

    func testTimestampsGoingBackwardsForgetRatherThanSuppressForever() {
        var filter = RepeatFilter(windowMilliseconds: 3000)
        XCTAssertEqual(filter.admit([a], at: ms(100_000)), [a])
        XCTAssertEqual(filter.admit([a], at: ms(5)), [a])
    }
}
