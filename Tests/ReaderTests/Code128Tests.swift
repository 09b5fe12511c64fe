// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Reader
import Policy
import TestSupport
import XCTest

final class Code128Tests: XCTestCase {
    func scan(_ text: String, moduleWidth: Int = 2, spread: Int = 0) throws -> [String?] {
        var label = try Barcode1D.render(symbology: .code128, data: text, moduleWidth: moduleWidth, height: 60)
        if spread > 0 { label = inkSpread(label, by: spread) }
        var scene = GrayImage(width: max(640, label.width + 40), height: 120, fill: 235)
        scene.paste(label, x: 20, y: 30)
        return BarcodeScanner(symbologies: [.code128]).scan(scene).map(\.text)
    }

    /// Each bar grows by `by` pixels to the right, as ink does on cheap paper.
    func inkSpread(_ image: GrayImage, by: Int) -> GrayImage {
        var out = image
        for y in 0..<image.height {
            for x in 0..<image.width where image[x, y] < 128 {
                for d in 1...by where x + d < image.width { out[x + d, y] = 0 }
            }
        }
        return out
    }

    func testEveryPrintableCharacterAndDigitPairRoundTrips() throws {
        // Printable ASCII in set B, in chunks, covers values 0-95; digit runs go through set C.
        let printable = (32..<127).map { Character(Unicode.Scalar($0)!) }
        for chunk in stride(from: 0, to: printable.count, by: 16) {
            let text = String(printable[chunk..<min(chunk + 16, printable.count)])
            XCTAssertEqual(try scan(text), [text], text)
        }
        for start in stride(from: 0, to: 100, by: 25) {
            let digits = (start..<(start + 25)).map { String(format: "%02d", $0) }.joined()
            XCTAssertEqual(try scan(digits), [digits], digits)
        }
    }

    func testExtendedCharactersThatZbarGetsWrong() throws {
        // zbar alone reads these as "ssss1234..." and "Gr..e": FNC4 dropped.
        XCTAssertEqual(try scan("óóóó1234óóabózz"), ["óóóó1234óóabózz"])
        XCTAssertEqual(try scan("Grüße"), ["Grüße"])
        XCTAssertEqual(try scan("ÀÉÎõü"), ["ÀÉÎõü"])
    }

    func testControlCharactersThroughCodeSetA() throws {
        XCTAssertEqual(try scan("AB\tCD\u{1}"), ["AB\tCD\u{1}"])
    }

    func testInkSpreadStillReads() throws {
        XCTAssertEqual(try scan("DOOR-42", moduleWidth: 3, spread: 1), ["DOOR-42"])
    }

    func testInterpretation() {
        // Start B, "A", FNC4, "s" -> "Aó"... values: A=33, FNC4 in B=100, s=83.
        XCTAssertEqual(Code128.interpret([104, 33, 100, 83, 0]), [0x41, 0xF3])
        // Two FNC4 latch extended mode until two more.
        XCTAssertEqual(Code128.interpret([104, 100, 100, 33, 34, 100, 100, 35, 0]), [0xC1, 0xC2, 0x43])
        // Start C, 12, 34, CODE B, "x"; FNC1 first is a GS1 marker, later a group separator.
        XCTAssertEqual(Code128.interpret([105, 102, 12, 34, 102, 100, 88, 0]), Array("1234".utf8) + [0x1D, 0x78])
        // SHIFT in set A reads one character from set B.
        XCTAssertEqual(Code128.interpret([103, 33, 98, 65, 65, 0]), [0x41, 0x61, 0x01])
    }

    func testWrongCheckCharacterIsRejected() {
        // Widths of Start B, "A" (33), check (104 + 33) % 103 = 34, stop - then the same with a bad check.
        func widths(_ values: [Int]) -> [Int] { [10] + values.flatMap { Code128.patterns[$0] } + Code128.stop + [10] }
        XCTAssertEqual(Code128.readSymbol(widths([104, 33, 34]), from: 7, start: 104), [104, 33, 34])
        XCTAssertNil(Code128.readSymbol(widths([104, 33, 35]), from: 7, start: 104))
    }
}
