// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Reader
@testable import DevTools
@testable import Kiosk
@testable import Systemd
import XCTest

/// The bench's workloads, run for what they decide (never for how long they take).
final class BenchTests: XCTestCase {
    func testTheGateNeverSuppressesACodeTheBaselineReadsOnThePresentations() throws {
        let workload = try BenchWorkload(.presentations, width: 640, height: 480)
        let result = Bench.run(workload)
        XCTAssertEqual(result.codes.count, 8)
        for code in result.codes where code.symbology == "aztec" || code.symbology == "pdf417" {
            // zbar (the baseline) reads neither; the kiosk reads both while they are held.
            XCTAssertNil(code.baselineFrame, code.payload)
            let kiosk = try XCTUnwrap(code.kioskFrame, "the kiosk reports \(code.payload)")
            XCTAssertLessThanOrEqual(kiosk, code.shownFrame + 2, code.payload)
        }
        for code in result.codes where code.symbology != "aztec" && code.symbology != "pdf417" {
            let baseline = try XCTUnwrap(code.baselineFrame, "the baseline reads \(code.payload)")
            let kiosk = try XCTUnwrap(code.kioskFrame, "the kiosk reports \(code.payload)")
            XCTAssertLessThanOrEqual(kiosk, baseline + 1, code.payload)
        }
        // The gate did skip: most frames are not decoded.
        XCTAssertLessThan(result.decodes, result.frames / 2)
        XCTAssertGreaterThan(result.gate["flat", default: 0] + result.gate["unchanged", default: 0], result.frames / 2)
    }

    func testAHeldCodeIsReportedOnceWhileTheGateSkipsItsFrames() throws {
        // Held 30 frames, repeat window 3 s: one report each, although most held frames are skipped.
        let workload = try BenchWorkload(.lowLight, width: 640, height: 480)
        let result = Bench.run(workload)
        for code in result.codes {
            XCTAssertNotNil(code.kioskFrame, code.payload)
            if let k = code.kioskFrame, let b = code.baselineFrame { XCTAssertLessThanOrEqual(k, b + 1, code.payload) }
        }
    }
}
