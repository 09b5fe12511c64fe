// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class WiegandTests: XCTestCase {
    func bits(_ text: String) -> [Bool] { text.filter { $0 != " " }.map { $0 == "1" } }
    func frame(_ payload: String, facility: Int = 0, _ format: WiegandFormat) -> Result<WiegandFrame, WiegandSkip> {
        Wiegand.frame(payload: Array(payload.utf8), defaultFacility: facility, format: format)
    }

    /// H10301, facility 18, card 36963, worked by hand:
    ///   facility 18    = 0001 0010
    ///   card 36963     = 0x9063 = 1001 0000 0110 0011
    ///   bits 2-13      = 0001 0010 1001  -> four ones, even already: bit 1 = 0
    ///   bits 14-25     = 0000 0110 0011  -> four ones, made odd:     bit 26 = 1
    func testH10301Facility18Card36963() throws {
        let f = try frame("18:36963", .h10301).get()
        XCTAssertEqual(f.bits, bits("0 00010010 1001000001100011 1"))
        XCTAssertEqual(f.bits.count, 26)
        XCTAssertEqual(f.grouped, "0 00010010 1001000001100011 1")
        XCTAssertEqual(f.credential, WiegandCredential(facility: 18, card: 36963))
        XCTAssertEqual(try frame("36963", facility: 18, .h10301).get(), f, "the default facility for a bare card number")
    }

    /// Both parity bits the other way: facility 1, card 1.
    ///   bits 2-13  = 0000 0001 0000 -> one one: bit 1 = 1 (even with it)
    ///   bits 14-25 = 0000 0000 0001 -> one one, odd already: bit 26 = 0
    func testH10301ParitiesSetTheOtherWay() throws {
        XCTAssertEqual(try frame("1:1", .h10301).get().bits, bits("1 00000001 0000000000000001 0"))
        XCTAssertEqual(try frame("0:0", .h10301).get().bits, bits("0 00000000 0000000000000000 1"), "no ones: odd parity is 1")
        XCTAssertEqual(try frame("255:65535", .h10301).get().bits, bits("0 11111111 1111111111111111 1"), "12 ones each half")
    }

    /// 34 bits: parity over 16 + 16.
    ///   facility 18 = 0000 0000 0001 0010 -> two ones: bit 1 = 0;  card 0x9063 -> six ones: bit 34 = 1
    ///   facility 1234 = 0x04D2 = 0000 0100 1101 0010 -> five ones: bit 1 = 1
    ///   card 5678 = 0x162E = 0001 0110 0010 1110 -> seven ones, odd already: bit 34 = 0
    func testThirtyFourBitFrames() throws {
        let f = try frame("18:36963", .bits34).get()
        XCTAssertEqual(f.bits, bits("0 0000000000010010 1001000001100011 1"))
        XCTAssertEqual(f.bits.count, 34)
        XCTAssertEqual(f.grouped, "0 0000000000010010 1001000001100011 1")
        XCTAssertEqual(try frame("1234:5678", .bits34).get().bits, bits("1 0000010011010010 0001011000101110 0"))
        XCTAssertEqual(try frame("65535:65535", .bits34).get().bits, bits("0 1111111111111111 1111111111111111 1"))
    }

    func testLeadingZerosAreDecimal() throws {
        XCTAssertEqual(try frame("018:0036963", .h10301).get().credential, WiegandCredential(facility: 18, card: 36963))
    }

    func testMalformedPayloadsAreNotANumber() {
        for payload in ["", ":", "12:", ":12", "1:2:3", "-5", "+5", " 5", "5 ", "5\n", "0x10", "12a", "1.5", "1e3",
                        "１２", "18;36963", "18 :36963", "https://example.org/36963"] {
            XCTAssertEqual(frame(payload, .h10301), .failure(.notANumber), payload.debugDescription)
        }
        XCTAssertEqual(Wiegand.frame(payload: [0x31, 0x00, 0x32], defaultFacility: 0, format: .h10301), .failure(.notANumber), "a NUL byte")
    }

    func testWhatDoesNotFitIsSkippedWithTheFieldNamed() {
        XCTAssertEqual(frame("256:1", .h10301), .failure(.facilityTooBig(facility: "256", format: .h10301)))
        XCTAssertEqual(frame("255:65536", .h10301), .failure(.cardTooBig(card: "65536", format: .h10301)))
        XCTAssertEqual(frame("65536:1", .bits34), .failure(.facilityTooBig(facility: "65536", format: .bits34)))
        XCTAssertEqual(frame("256:1", .bits34).map(\.credential), .success(WiegandCredential(facility: 256, card: 1)), "16 bits of facility in 34")
        XCTAssertEqual(frame("36963", facility: 300, .h10301), .failure(.facilityTooBig(facility: "300", format: .h10301)), "the default facility too")
        let huge = String(repeating: "9", count: 40)
        XCTAssertEqual(frame(huge, .h10301), .failure(.cardTooBig(card: String(repeating: "9", count: 24) + "...", format: .h10301)),
                       "a long run of digits is too big, not an overflow, and is shortened in the log")
    }

    func testSkipReasonsSayWhy() {
        XCTAssertEqual(WiegandSkip.notANumber.reason, "the payload is not a decimal card number (CARD or FACILITY:CARD, digits only)")
        XCTAssertEqual(WiegandSkip.facilityTooBig(facility: "300", format: .h10301).reason,
                       "facility 300 does not fit the 26-bit format (8 bits: 0-255)")
        XCTAssertEqual(WiegandSkip.cardTooBig(card: "70000", format: .bits34).reason,
                       "card 70000 does not fit the 34-bit format (16 bits: 0-65535)")
    }

    func testFormatsAndTimingLimits() {
        XCTAssertEqual(WiegandFormat(rawValue: 26), .h10301)
        XCTAssertEqual(WiegandFormat(rawValue: 34), .bits34)
        XCTAssertNil(WiegandFormat(rawValue: 37))
        XCTAssertEqual(WiegandFormat.h10301.facilityRange, 0...255)
        XCTAssertEqual(WiegandFormat.bits34.facilityRange, 0...65535)
        XCTAssertNil(WiegandFrame(WiegandCredential(facility: 256, card: 0), format: .h10301))
        XCTAssertEqual(WiegandTiming.pulseRange, 20...100)
        XCTAssertEqual(WiegandTiming.intervalRange, 200...20_000)
        XCTAssertEqual(WiegandTiming.defaultPulseMicroseconds, 50)
        XCTAssertEqual(WiegandTiming.defaultIntervalMicroseconds, 2000)
    }
}
