// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class FormatTests: XCTestCase {
    func testFixedRoundsAsPrintfDoes() {
        XCTAssertEqual(Format.fixed(2.25, 1), "2.2", "half to even on an exact binary value")
        XCTAssertEqual(Format.fixed(2.35, 1), "2.4")
        XCTAssertEqual(Format.fixed(0.04, 1), "0.0")
        XCTAssertEqual(Format.fixed(-0.04, 1), "-0.0")
        XCTAssertEqual(Format.fixed(29.97, 2), "29.97")
        XCTAssertEqual(Format.fixed(1234.5, 0), "1234")
        XCTAssertEqual(Format.fixed(0.0015, 3), "0.002")
        XCTAssertEqual(Format.fixed(7, 3), "7.000")
        XCTAssertEqual(Format.fixed(.nan, 1), "nan")
        XCTAssertEqual(Format.fixed(-.infinity, 1), "-inf")
    }

    func testHexAndPadding() {
        XCTAssertEqual(Format.hex(0x1b as UInt8, width: 2), "1b")
        XCTAssertEqual(Format.hex(0x2028 as UInt32, width: 4), "2028")
        XCTAssertEqual(Format.hex(0x1F600 as UInt32, width: 8), "0001f600")
        XCTAssertEqual(Format.padded(7, width: 4), "0007")
        XCTAssertEqual(Format.padded(12345, width: 4), "12345")
    }

    func testPayloadHex() {
        XCTAssertEqual(PayloadBytes.hex([0x00, 0xff, 0x10]), "00ff10")
    }
}
