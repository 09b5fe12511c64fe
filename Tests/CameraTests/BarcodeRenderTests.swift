// SPDX-License-Identifier: Apache-2.0
import Camera
import Policy
import TestSupport
import XCTest

final class BarcodeRenderTests: XCTestCase {
    private func assertBlackAndWhite(_ image: GrayImage, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Set(image.pixels), [0, 255], file: file, line: line)
    }

    /// The bars of row `y`, one character a module ("1" black, "0" white), read at module centres.
    private func modules(_ image: GrayImage, moduleWidth: Int, y: Int) -> String {
        stride(from: moduleWidth / 2, to: image.width, by: moduleWidth)
            .map { image[$0, y] == 0 ? "1" : "0" }.joined()
    }

    func testEAN13HasNinetyFiveModulesPlusQuietZones() throws {
        for moduleWidth in [1, 2, 3] {
            let image = try Barcode1D.render(symbology: .ean13, data: "400638133393", moduleWidth: moduleWidth,
                                             height: 60, quietZone: 10)
            XCTAssertEqual(image.width, (95 + 2 * 10) * moduleWidth, "module width \(moduleWidth)")
            XCTAssertEqual(image.height, 60, "module width \(moduleWidth)")
            assertBlackAndWhite(image)

            // Every row is the same; quiet zone, start guard 101, ..., centre guard 01010, ..., end guard 101.
            let row = modules(image, moduleWidth: moduleWidth, y: image.height / 2)
            XCTAssertEqual(row.count, 115)
            XCTAssertEqual(String(row.prefix(13)), "0000000000101")
            XCTAssertEqual(String(row.suffix(13)), "1010000000000")
            let centre = row.index(row.startIndex, offsetBy: 10 + 45)
            XCTAssertEqual(String(row[centre..<row.index(centre, offsetBy: 5)]), "01010")
            XCTAssertEqual(modules(image, moduleWidth: moduleWidth, y: 0), row)
            XCTAssertEqual(modules(image, moduleWidth: moduleWidth, y: image.height - 1), row)
        }
    }

    func testEAN13WithItsCheckDigitDrawsTheSameAsWithout() throws {
        let without = try Barcode1D.render(symbology: .ean13, data: "400638133393")
        let with = try Barcode1D.render(symbology: .ean13, data: "4006381333931")
        XCTAssertEqual(with, without)
    }

    func testOtherSymbologiesHaveTheirModuleCounts() throws {
        let ean8 = try Barcode1D.render(symbology: .ean8, data: "9638507", moduleWidth: 2, quietZone: 7)
        XCTAssertEqual(ean8.width, (67 + 14) * 2)
        assertBlackAndWhite(ean8)

        let upcA = try Barcode1D.render(symbology: .upcA, data: "03600029145", moduleWidth: 2, quietZone: 9)
        XCTAssertEqual(upcA.width, (95 + 18) * 2)
        assertBlackAndWhite(upcA)

        // Code 128 set B: start 11 + 3 characters of 11 + check 11 + stop 13 = 68 modules.
        let code128 = try Barcode1D.render(symbology: .code128, data: "Kio", moduleWidth: 3, height: 40, quietZone: 10)
        XCTAssertEqual(code128.width, (68 + 20) * 3)
        XCTAssertEqual(code128.height, 40)
        assertBlackAndWhite(code128)
        // Start B is 11010010000.
        XCTAssertEqual(String(modules(code128, moduleWidth: 3, y: 20).dropFirst(10).prefix(11)), "11010010000")
    }

    func testInvalidDataIsAnError() {
        XCTAssertThrowsError(try Barcode1D.render(symbology: .ean13, data: "40063813339X"))
        XCTAssertThrowsError(try Barcode1D.render(symbology: .ean13, data: "4006381333932"))  // wrong check digit
        XCTAssertThrowsError(try Barcode1D.render(symbology: .upcA, data: "123"  + String(repeating: "4", count: 20)))
    }

    // MARK: Image helpers

    /// 3 wide, 2 high:
    ///   1 2 3
    ///   4 5 6
    private let small = GrayImage(width: 3, height: 2, pixels: [1, 2, 3, 4, 5, 6])

    func testRotatedClockwise() {
        // Clockwise a quarter turn:
        //   4 1
        //   5 2
        //   6 3
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: 1), GrayImage(width: 2, height: 3, pixels: [4, 1, 5, 2, 6, 3]))
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: 2), GrayImage(width: 3, height: 2, pixels: [6, 5, 4, 3, 2, 1]))
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: 3), GrayImage(width: 2, height: 3, pixels: [3, 6, 2, 5, 1, 4]))
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: -1), rotatedClockwise(small, quarterTurns: 3))
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: 0), small)
        XCTAssertEqual(rotatedClockwise(small, quarterTurns: 4), small)
    }

    func testMirroredLeftRight() {
        XCTAssertEqual(mirroredLeftRight(small), GrayImage(width: 3, height: 2, pixels: [3, 2, 1, 6, 5, 4]))
    }

    func testPasteClipsAtTheEdges() {
        var big = GrayImage(width: 4, height: 3, fill: 0)
        big.paste(small, x: 1, y: 1)
        XCTAssertEqual(big.pixels, [0, 0, 0, 0,
                                    0, 1, 2, 3,
                                    0, 4, 5, 6])
        var clipped = GrayImage(width: 4, height: 3, fill: 0)
        clipped.paste(small, x: -1, y: 2)
        XCTAssertEqual(clipped.pixels, [0, 0, 0, 0,
                                        0, 0, 0, 0,
                                        2, 3, 0, 0])
    }
}
