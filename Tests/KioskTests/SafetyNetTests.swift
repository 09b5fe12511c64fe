// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
@testable import Kiosk
import Platform
import Policy
import Scene
import TestSupport
import ZintDrawing
import XCTest

/// What the safety net still catches now that it glances: codes the gate judges flat,
/// because their contrast (25 levels) is below its edge threshold (36), held still in front of
/// the camera. Every 30th frame at a flat window is a glance (the ROI at half size, zbar alone);
/// a glance that reads a QR code reports it, one that sees a code it cannot confirm or read (a 1D
/// code's blended rows, modules too small at half size, an Aztec code) asks for the next frame
/// whole. So each is reported within 31 frames of being held up (about a second at 30 fps).
final class SafetyNetTests: XCTestCase {
    struct Outcome {
        var reportedAt: Int?
        var stats: DecodePipeline.Stats
    }

    let shownAt = 5

    /// `picture` (black on white) drawn with ink at `ink` and paper at `paper`, held still in the
    /// middle of the window from frame `shownAt` for 70 frames; the frame it is reported at,
    /// counted from `shownAt`.
    func hold(_ picture: GrayImage, ink: UInt8 = 160, paper: UInt8 = 185, symbologies: [Symbology] = Configuration().symbologies,
              text: String) throws -> Outcome {
        let faint = GrayImage(width: picture.width, height: picture.height, pixels: picture.pixels.map { $0 < 128 ? ink : paper })
        let fps = 30.0
        let steps: [ScriptedScene.Step] = [
            .init(start: 0, narration: "empty"),
            .init(start: Double(shownAt) / fps, narration: "held", codes: [.init(picture: faint, centre: NormalizedPoint(x: 0.5, y: 0.5))]),
        ]
        var lighting = Lighting { _ in 1.0 }
        lighting.noise = 2
        let scene = ScriptedScene(steps: steps, duration: Double(shownAt + 70) / fps, fps: fps, uprightWidth: 640, uprightHeight: 480,
                                  mount: Mount(), realTime: false, lighting: lighting)
        var config = Configuration()
        config.fps = fps
        config.symbologies = symbologies
        let svc = ScanService(configuration: config, source: scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: ManualClock())
        var first: Int?
        let shownAt = self.shownAt
        svc.observe().onReport = { symbol, frame in
            if first == nil, symbol.text == text { first = Int(frame.sequence) - shownAt }
        }
        _ = try svc.run()
        return Outcome(reportedAt: first, stats: svc.decoding.stats)
    }

    func assertCaught(_ o: Outcome, within frames: Int = 31, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotNil(o.reportedAt, "never reported: \(o.stats)", file: file, line: line)
        XCTAssertLessThanOrEqual(o.reportedAt ?? .max, frames, "\(o.stats)", file: file, line: line)
        XCTAssertGreaterThanOrEqual(o.stats.reasons[.flat] ?? 0, 20, "the gate judged it flat: \(o.stats)", file: file, line: line)
    }

    func testAFaintQRCodeIsReadByTheGlanceItself() throws {
        let o = try hold(try QRCodeImage.render("FAINT-QR-4PX", moduleSize: 4), text: "FAINT-QR-4PX")
        assertCaught(o, within: 30)
        XCTAssertEqual(o.stats.reasons[.lookAgain] ?? 0, 0, "read at half size: no second look")
    }

    func testAFaintQRCodeOfSmallModulesIsReadOnTheLookAfterTheGlance() throws {
        let o = try hold(try QRCodeImage.render("FAINT-QR-2PX", moduleSize: 2), text: "FAINT-QR-2PX")
        assertCaught(o)
        XCTAssertGreaterThanOrEqual(o.stats.reasons[.lookAgain] ?? 0, 1, "\(o.stats)")
    }

    func testAFaintEAN13IsConfirmedOnTheLookAfterTheGlance() throws {
        let o = try hold(try Barcode1DImage.ean13("400638133393", moduleWidth: 2, height: 60), text: "4006381333931")
        assertCaught(o)
        XCTAssertGreaterThanOrEqual(o.stats.reasons[.lookAgain] ?? 0, 1, "\(o.stats)")
    }

    func testAFaintAztecCodeIsReadOnTheLookAfterTheGlance() throws {
        let o = try hold(try ZintImage.render(.aztec, text: "FAINT AZTEC TICKET 0042", moduleSize: 3), text: "FAINT AZTEC TICKET 0042")
        assertCaught(o)
    }

    func testAnEmptyWindowIsOnlyGlancedAt() throws {
        let o = try hold(GrayImage(width: 8, height: 8, fill: 255), text: "none")
        XCTAssertNil(o.reportedAt)
        XCTAssertEqual(o.stats.reasons[.safetyNet] ?? 0, 0, "\(o.stats)")
        XCTAssertEqual(o.stats.reasons[.lookAgain] ?? 0, 0, "\(o.stats)")
        XCTAssertEqual(o.stats.reasons[.glance], 2, "\(o.stats)")
    }
}
