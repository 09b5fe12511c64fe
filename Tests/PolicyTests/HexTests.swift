// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The one hex parser: key files, a key's file name, machine-id, JSON's `\u`, the tests' vectors.
final class HexTests: XCTestCase {
    func testDigitsOfEitherCaseAndNothingElse() {
        XCTAssertEqual(Array("0123456789abcdefABCDEF".utf8).map { Hex.digit($0) },
                       [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15])
        for c in Array("gG/:@`+- x".utf8) + [0, 0x80, 0xFF] { XCTAssertNil(Hex.digit(c), "\(c)") }
    }

    func testBytesTwoDigitsEach() {
        XCTAssertEqual(Hex.bytes("00ff7F10"), [0x00, 0xFF, 0x7F, 0x10])
        XCTAssertEqual(Hex.bytes(""), [])
        XCTAssertEqual(Hex.bytes(Array("a5".utf8)[...]), [0xA5])
    }

    /// What `UInt8(_:radix:)` took and a strict parser must not: a sign, a lone digit, a space.
    func testBytesRefuseAnOddCountASignOrAnyOtherByte() {
        for bad in ["0", "abc", "+f", "-0", " a", "0x", "zz", "é0"] { XCTAssertNil(Hex.bytes(bad), bad) }
    }

    func testValueUpToSixteenDigits() {
        XCTAssertEqual(Hex.value("0"), 0)
        XCTAssertEqual(Hex.value("d83D"), 0xD83D)
        XCTAssertEqual(Hex.value("ffffffffffffffff"), UInt64.max)
        XCTAssertNil(Hex.value("1ffffffffffffffff"), "17 digits")
        XCTAssertNil(Hex.value(""))
        XCTAssertNil(Hex.value("+1"))
        XCTAssertEqual(Hex.value(Array("8a3f0c99".utf8).prefix(8)), 0x8A3F_0C99)
    }
}
