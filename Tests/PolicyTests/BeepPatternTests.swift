// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class BeepPatternTests: XCTestCase {
    func testTheDefaultsOfIssue16() {
        XCTAssertEqual(BeepPattern.granted.milliseconds, [400])
        XCTAssertEqual(BeepPattern.denied.milliseconds, [80, 80, 80, 80, 80])
        XCTAssertEqual(BeepPattern.error.milliseconds, [200, 200, 200])
        XCTAssertEqual(BeepPattern.denied.beeps, 3)
        XCTAssertEqual(BeepPattern.error.beeps, 2)
        XCTAssertTrue(BeepPattern.silent.isSilent)
        XCTAssertEqual(BeepPattern(parsing: "80,80,80,80,80"), .denied)
        XCTAssertEqual(BeepPattern(parsing: "400"), .granted)
    }

    func testTheReadBeepIsTodaysBeepUnlessTheVerdictSpeaks() {
        XCTAssertEqual(BeepPattern.readDefault(verdict: .none, beepMilliseconds: 120).milliseconds, [120])
        XCTAssertEqual(BeepPattern.readDefault(verdict: .hook, beepMilliseconds: 120), .silent)
    }

    func testEmptyOrBlankIsSilence() {
        XCTAssertEqual(BeepPattern(parsing: ""), .silent)
        XCTAssertEqual(BeepPattern(parsing: "  \t"), .silent)
        XCTAssertEqual(BeepPattern.silent.description, "")
        XCTAssertEqual(BeepPattern.silent.sounds.count, 0)
    }

    func testBlanksAroundNumbersAreAcceptedAndNormalisedAway() {
        let p = BeepPattern(parsing: " 100 ,50,\t100 ")
        XCTAssertEqual(p?.milliseconds, [100, 50, 100])
        XCTAssertEqual(p?.description, "100,50,100")
        XCTAssertEqual(BeepPattern(parsing: "007")?.milliseconds, [7], "leading zeros are still decimal")
    }

    func testTheLimits() {
        XCTAssertEqual(BeepPattern(parsing: "1")?.milliseconds, [1])
        XCTAssertEqual(BeepPattern(parsing: "10000")?.milliseconds, [10_000])
        XCTAssertNil(BeepPattern(parsing: "0"), "a 0 ms step")
        XCTAssertNil(BeepPattern(parsing: "10001"))
        XCTAssertNil(BeepPattern(parsing: "99999999999999999999999999"), "no overflow, just too long")
        let sixteen = Array(repeating: "10", count: 16).joined(separator: ",")
        XCTAssertEqual(BeepPattern(parsing: sixteen)?.milliseconds.count, 16)
        XCTAssertNil(BeepPattern(parsing: sixteen + ",10"), "17 steps")
        XCTAssertNil(BeepPattern(milliseconds: Array(repeating: 10, count: 17)))
        XCTAssertNil(BeepPattern(milliseconds: [100, 0]))
        XCTAssertEqual(BeepPattern(milliseconds: [100, 20])?.totalMs, 120, "a trailing pause is kept")
    }

    func testMalformedListsAreRefused() {
        for text in ["80,", ",80", "80,,80", "-80", "+80", "80.5", "80 80", "80;80", "eighty", "0x50", "８０", "80,80,"] {
            XCTAssertNil(BeepPattern(parsing: text), text)
        }
    }

    func testSoundsAreWhereThePatternSaysFromItsStart() {
        let p = BeepPattern(parsing: "80,40,120,200,10")!
        XCTAssertEqual(p.sounds.map { [$0.startMs, $0.endMs] }, [[0, 80], [120, 240], [440, 450]])
        XCTAssertEqual(p.totalMs, 450)
        XCTAssertEqual(p.beeps, 3)
    }

    func testTheExpectedTextStatesTheLimitsTheParserApplies() {
        XCTAssertEqual(BeepPattern.expected, "a comma list of on,off,... milliseconds, each 1-10000, at most 16; empty for silence")
        XCTAssertEqual(BeepPattern.stepRange, 1...10_000)
        XCTAssertEqual(BeepPattern.maximumSteps, 16)
    }
}
