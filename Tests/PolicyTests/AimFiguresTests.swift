// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class AimFiguresTests: XCTestCase {
    /// A 200x200 picture: grey 180, with black/white stripes of `module` px in the middle 80x80.
    func picture(module: Int, blur: Bool = false) -> GrayImage {
        var image = GrayImage(width: 200, height: 200, fill: 180)
        for y in 60..<140 { for x in 60..<140 { image[x, y] = ((x - 60) / module + (y - 60) / module) % 2 == 0 ? 20 : 235 } }
        guard blur else { return image }
        // Two passes of a 5-tap box blur, across then down: each edge spread over about 8 pixels.
        for _ in 0..<2 {
            for horizontal in [true, false] {
                let source = image
                for y in 2..<198 { for x in 2..<198 {
                    var s = 0
                    for d in -2...2 { s += Int(horizontal ? source[x + d, y] : source[x, y + d]) }
                    image[x, y] = UInt8(s / 5)
                } }
            }
        }
        return image
    }

    func figures(_ image: GrayImage) -> AimFigures {
        image.withLumaPlane { AimFigures.measure($0, roi: PixelRect(x: 50, y: 50, width: 100, height: 100)) }
    }

    func testSharpnessIsTheSteepnessOfEdgesWhateverTheirBrightnessOrShare() {
        let sharp = figures(picture(module: 4))
        XCTAssertGreaterThan(sharp.sharpness, 90)
        XCTAssertTrue(sharp.somethingHeld)
        XCTAssertLessThan(figures(picture(module: 4, blur: true)).sharpness, 40)
        // Darker all over: the same figure.
        var dim = picture(module: 4)
        for i in dim.pixels.indices { dim.pixels[i] /= 2 }
        XCTAssertEqual(figures(dim).sharpness, sharp.sharpness, accuracy: 5)
        let empty = figures(GrayImage(width: 200, height: 200, fill: 180))
        XCTAssertFalse(empty.somethingHeld)
        XCTAssertEqual(empty.brightness, 180)
        XCTAssertEqual(empty.clipped, 0)
        XCTAssertEqual(figures(GrayImage(width: 200, height: 200, fill: 255)).clipped, 1)
    }

    func testModuleSizeFromTheRunsAcrossTheCode() {
        for module in [2, 3, 4, 6] {
            let image = picture(module: module)
            let outline = [PixelPoint(x: 60, y: 60), PixelPoint(x: 139, y: 60), PixelPoint(x: 139, y: 139), PixelPoint(x: 60, y: 139)]
            let m = image.withLumaPlane { AimFigures.modulePixels($0, outline: outline) }
            XCTAssertEqual(m, Double(module), "\(module)")
        }
        XCTAssertNil(GrayImage(width: 10, height: 10).withLumaPlane { AimFigures.modulePixels($0, outline: []) })
    }

    func testHintsMostPressingFirst() {
        let sharp = figures(picture(module: 4))
        XCTAssertTrue(AimFigures.hint(sharp, readNow: true, module: 4).hasPrefix("good"))
        XCTAssertTrue(AimFigures.hint(sharp, readNow: true, module: 1.5).hasPrefix("too far"))
        XCTAssertTrue(AimFigures.hint(sharp, readNow: true, module: 4, codeFits: false).hasPrefix("too close"))
        XCTAssertTrue(AimFigures.hint(figures(picture(module: 4, blur: true)), readNow: false, module: nil).hasPrefix("out of focus: set KIOSK_FOCUS"))
        XCTAssertTrue(AimFigures.hint(figures(picture(module: 4, blur: true)), readNow: false, module: nil, fixedFocus: true).contains("turn the lens"))
        XCTAssertTrue(AimFigures.hint(figures(GrayImage(width: 200, height: 200, fill: 10)), readNow: false, module: nil).hasPrefix("too dark"))
        XCTAssertTrue(AimFigures.hint(figures(GrayImage(width: 200, height: 200, fill: 255)), readNow: false, module: nil).hasPrefix("overexposed"))
        XCTAssertTrue(AimFigures.hint(figures(GrayImage(width: 200, height: 200, fill: 180)), readNow: false, module: nil).hasPrefix("hold a code"))
        var glare = picture(module: 4)
        for y in 80..<100 { for x in 60..<140 { glare[x, y] = 255 } }
        XCTAssertTrue(AimFigures.hint(figures(glare), readNow: false, module: nil).hasPrefix("glare"))
    }

    func testTheSweepCoversTheRangeOnItsStepAndPicksTheMiddleOfTheSharpest() {
        let c920 = V4L2ControlOffer(minimum: 0, maximum: 250, step: 5, defaultValue: 0)
        let values = FocusSweep.values(c920)
        XCTAssertEqual(values.first, 0)
        XCTAssertEqual(values.last, 250)
        XCTAssertTrue(values.allSatisfy { $0 % 5 == 0 })
        XCTAssertTrue((14...18).contains(values.count), "\(values)")
        XCTAssertEqual(FocusSweep.best([(0, 10), (20, 50), (40, 90), (60, 90.5), (80, 90), (100, 40)]), 60)
        XCTAssertEqual(FocusSweep.best([(0, 10), (20, 95), (40, 30)]), 20)
        XCTAssertNil(FocusSweep.best([]))
    }

    func testTheTerminalPictureHasTheWidthAskedAndTheROIInYellow() {
        let lines = AimTerminal.render(picture(module: 4), roi: PixelRect(x: 50, y: 50, width: 100, height: 100), columns: 40, rows: 20)
        XCTAssertEqual(lines.count, 20)
        XCTAssertTrue(lines.allSatisfy { $0.filter { $0 == "\u{2580}" }.count == 40 })
        XCTAssertTrue(lines[10].contains("38;5;226") || lines[10].contains(";48;5;226"))
        XCTAssertFalse(lines[1].contains("226"), "the ROI starts a quarter down")
    }
}
