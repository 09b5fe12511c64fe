// SPDX-License-Identifier: Apache-2.0
@testable import DevTools
import XCTest

/// The measurement's bookkeeping, not its figures (speed is measured in kiosk-dev, never in a
/// timed test): every bit of the frame is found, each pulse paired with its end.
final class WiegandJitterTests: XCTestCase {
    func testAFrameIsMeasuredBitByBit() throws {
        let f = try XCTUnwrap(WiegandJitter.measure(pulseUs: 20, intervalUs: 200, bits: 40))
        XCTAssertEqual(f.pulse.count, 40)
        XCTAssertEqual(f.interval.count, 39)
        XCTAssertEqual(f.late.count, 40)
        XCTAssertTrue(f.pulse.allSatisfy { $0 >= 0 }, "a pulse is never shorter than asked: \(f.pulse)")
        XCTAssertTrue(f.late.allSatisfy { $0 >= 0 }, "a bit never starts before its deadline: \(f.late)")
        let text = WiegandJitter.line("pulse width - 20 us", [1.5, -0.5, 3])
        XCTAssertEqual(text, "pulse width - 20 us: median |dev| 1.5 us, p99 3.0 us, max 3.0 us (from -0.5 to 3.0)")
    }

    func testArgumentsAreChecked() {
        XCTAssertEqual(WiegandJitter.main(["--pulse-us", "50"]), 64, "a pulse without its interval")
        XCTAssertEqual(WiegandJitter.main(["--pulse-us", "50", "--interval-us", "40"]), 64, "an interval shorter than the pulse")
        XCTAssertEqual(WiegandJitter.main(["--bits", "5"]), 64)
    }
}
