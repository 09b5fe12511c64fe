// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The room's brightness from a frame: a few samples a block, the middle half of the blocks.
final class BrightnessEstimatorTests: XCTestCase {
    private func estimate(_ image: GrayImage, _ estimator: BrightnessEstimator = BrightnessEstimator()) -> Double {
        image.withLumaPlane { estimator.meanLuma($0) }
    }

    /// About 5 x 5 samples a block whatever the size: the cost does not grow with the frame.
    func testTheSamplesStayAboutTwelveHundredAtEverySize() {
        let estimator = BrightnessEstimator()
        XCTAssertEqual(estimator.step(width: 640, height: 480), 16)
        XCTAssertEqual(estimator.step(width: 1280, height: 720), 24)
        XCTAssertEqual(estimator.step(width: 1920, height: 1080), 36)
        XCTAssertEqual(estimator.step(width: 16, height: 12), 1)
        for (w, h) in [(640, 480), (1280, 720), (1920, 1080), (320, 240)] {
            let step = estimator.step(width: w, height: h)
            let samples = ((w + step - 1) / step) * ((h + step - 1) / step)
            XCTAssertLessThan(samples, 1_700, "\(w)x\(h): \(samples) samples")
            XCTAssertGreaterThan(samples, 1_000, "\(w)x\(h): \(samples) samples")
        }
        XCTAssertEqual(BrightnessEstimator(sampleStep: 8).step(width: 640, height: 480), 8)
    }

    func testAnEvenRoomIsItsLuma() {
        for (w, h) in [(640, 480), (1280, 720), (64, 48)] {
            XCTAssertEqual(estimate(GrayImage(width: w, height: h, fill: 137)), 137, accuracy: 1e-9)
        }
    }

    /// A coat filling a quarter of the picture is dropped with the darkest blocks; a gradient's
    /// middle half is its middle.
    func testACoatOverAQuarterOfThePictureBarelyMovesIt() {
        var room = GrayImage(width: 640, height: 480, fill: 150)
        room.paste(GrayImage(width: 160, height: 480, fill: 10), x: 0, y: 0)
        XCTAssertEqual(estimate(room), 150, accuracy: 1e-9)
        var ramp = GrayImage(width: 640, height: 480)
        for y in 0..<480 { for x in 0..<640 { ramp[x, y] = UInt8(x * 200 / 640) } }
        XCTAssertEqual(estimate(ramp), 100, accuracy: 3)
        XCTAssertEqual(estimate(ramp, BrightnessEstimator(sampleStep: 8)), estimate(ramp), accuracy: 1)
    }
}
