// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The rule that trades no misread for a read (ReadingAgreement), and zxing's character-set guess
/// (CharsetGuess).
final class ReadingAgreementTests: XCTestCase {
    func symbol(_ s: Symbology, _ text: String, x: Int = 100, y: Int = 100, w: Int = 100, h: Int = 40) -> DecodedSymbol {
        DecodedSymbol(symbology: s, bytes: Array(text.utf8), text: text,
                      location: [PixelPoint(x: x, y: y), PixelPoint(x: x + w, y: y), PixelPoint(x: x + w, y: y + h), PixelPoint(x: x, y: y + h)],
                      quality: 4)
    }

    func testTwoDisagreeingReadingsOfOnePlaceReportNothing() {
        // zbar's second EAN-13 over the right one: same place, both with valid check digits.
        var a = ReadingAgreement()
        let right = symbol(.ean13, "4006381333931"), wrong = symbol(.ean13, "4006381333948", x: 110)
        XCTAssertEqual(a.admit([Reading(right, reader: .zbar, confirmed: true), Reading(wrong, reader: .zbar, confirmed: true)]), [])
        XCTAssertEqual(a.contested.count, 2)
        // A later pass that reads the right one there is not believed either: the place is contested.
        XCTAssertEqual(a.admit([Reading(right, reader: .zxing, confirmed: true)]), [])
        // Elsewhere, readings stand.
        let other = symbol(.qrcode, "ELSEWHERE", x: 400)
        XCTAssertEqual(a.admit([Reading(other, reader: .zxing, confirmed: true)]), [other])
    }

    /// Issue 23: zbar's splice of two codes' halves (same last 6 digits, other first 7, or the
    /// other way round) stands only when the other reader reads the same 13 digits.
    func testSplicedEAN13sStandOnlyWhenTheOtherReaderReadsThem() {
        var a = ReadingAgreement()
        let product = symbol(.ean13, "4006381333931", x: 210, w: 0, h: 60)
        let splice = symbol(.ean13, "5901234333931", x: 112, w: 0, h: 60)
        XCTAssertTrue(ReadingAgreement.sharesOneHalf(product, splice))
        XCTAssertEqual(a.admit([Reading(splice, reader: .zbar, confirmed: true), Reading(product, reader: .zbar, confirmed: true)]), [],
                       "two readings that share a half: neither stands on zbar's word")
        XCTAssertEqual(a.spliced.count, 2)
        XCTAssertEqual(a.unconfirmed, [], "not carried to the next frame")
        XCTAssertEqual(a.contested, [], "the place is not contested")
        // zxing reads the product (its outline across the bars, not touching zbar's end point).
        let zxing = symbol(.ean13, "4006381333931", x: 20, w: 189, h: 60)
        XCTAssertEqual(a.admit([Reading(zxing, reader: .zxing, confirmed: true)]), [zxing])
        XCTAssertEqual(a.admit([Reading(splice, reader: .zbar, confirmed: true)]), [], "the splice never stands")
        // Halves shared the other way (same first 7 digits), and a UPC-A as its EAN-13.
        XCTAssertTrue(ReadingAgreement.sharesOneHalf(symbol(.ean13, "4006381333931"), symbol(.ean13, "4006381123457")))
        XCTAssertTrue(ReadingAgreement.sharesOneHalf(symbol(.upca, "036000291452"), symbol(.ean13, "0036000123457")))
        XCTAssertFalse(ReadingAgreement.sharesOneHalf(symbol(.ean13, "4006381333931"), symbol(.ean13, "4006381333931")))
        XCTAssertFalse(ReadingAgreement.sharesOneHalf(symbol(.ean13, "4006381333931"), symbol(.ean13, "5901234123457")))
        // One EAN-13 alone is as before: it stands on zbar's word.
        var b = ReadingAgreement()
        XCTAssertEqual(b.admit([Reading(product, reader: .zbar, confirmed: true)]), [product])
    }

    func testTwoReadersDisagreeingReportNothing() {
        var a = ReadingAgreement()
        let zbar = symbol(.code128, "DOOR-42"), zxing = symbol(.code128, "DOOR-47", y: 110)
        XCTAssertEqual(a.admit([Reading(zbar, reader: .zbar, confirmed: false)]), [], "held: one line")
        XCTAssertEqual(a.admit([Reading(zxing, reader: .zxing, confirmed: true)]), [], "disagrees with the held reading")
        XCTAssertEqual(a.unconfirmed, [], "the held reading is gone too")
    }

    func testOneLineReadingsStandOnlyWhenTheOtherReaderAgrees() {
        var a = ReadingAgreement()
        let once = symbol(.ean13, "4006381333931", h: 0)
        XCTAssertEqual(a.admit([Reading(once, reader: .zbar, confirmed: false)]), [])
        XCTAssertEqual(a.unconfirmed.map(\.symbol), [once])
        // The same reader again (another pass over the same pixels) confirms nothing.
        XCTAssertEqual(a.admit([Reading(once, reader: .zbar, confirmed: false)]), [])
        // A reading of an enlarged picture does not confirm the other reader's either.
        XCTAssertEqual(a.admit([Reading(once, reader: .zxing, confirmed: false, confirmsOthers: false)]), [])
        // The other reader, on the region's own pixels: confirmed, reported once.
        XCTAssertEqual(a.admit([Reading(once, reader: .zxing, confirmed: false)]), [once])
    }

    func testAgreeingReadingsOfOnePlaceAreReportedOnce() {
        var a = ReadingAgreement()
        let qr = symbol(.qrcode, "SAME")
        XCTAssertEqual(a.admit([Reading(qr, reader: .zbar, confirmed: true), Reading(qr, reader: .zbar, confirmed: true)]), [qr])
        // UPC-A and the EAN-13 it is agree.
        var b = ReadingAgreement()
        let upc = symbol(.upca, "036000291452"), ean = symbol(.ean13, "0036000291452")
        XCTAssertEqual(b.admit([Reading(upc, reader: .zbar, confirmed: false), Reading(ean, reader: .zxing, confirmed: false)]), [upc])
        XCTAssertEqual(b.contested, [])
    }

    func testPayloadsAreComparedAsTextWhenBothHaveOne() {
        // zbar gives an ECI segment as UTF-8, zxing the bytes as encoded: one text, "Naïve".
        let fromZbar = DecodedSymbol(symbology: .qrcode, bytes: Array("Naïve".utf8), text: "Naïve", location: [PixelPoint(x: 0, y: 0)], quality: 1)
        let fromZxing = DecodedSymbol(symbology: .qrcode, bytes: [0x4E, 0x61, 0xEF, 0x76, 0x65], text: "Naïve", location: [PixelPoint(x: 0, y: 0)], quality: 1)
        XCTAssertTrue(ReadingAgreement.samePayload(fromZbar, fromZxing))
        XCTAssertFalse(ReadingAgreement.samePayload(fromZbar, symbol(.aztec, "Naïve")), "another symbology")
    }

    func testAReadingWithoutOutlineNeverStands() {
        var a = ReadingAgreement()
        let nowhere = DecodedSymbol(symbology: .qrcode, bytes: [0x41], text: "A", location: [], quality: 1)
        XCTAssertEqual(a.admit([Reading(nowhere, reader: .zbar, confirmed: true)]), [])
    }

    func testTheOutlineMustLieInTheRegion() {
        let roi = PixelRect(x: 160, y: 120, width: 320, height: 240)
        XCTAssertTrue(roi.encloses([PixelPoint(x: 160, y: 120), PixelPoint(x: 480, y: 360)]), "edges included")
        XCTAssertFalse(roi.encloses([PixelPoint(x: 200, y: 200), PixelPoint(x: 481, y: 200)]))
        XCTAssertFalse(roi.encloses([]))
    }

    // MARK: - the character set

    func testCharsetGuessIsZxings() {
        // ﾃﾞｻﾞｲﾝ in Shift-JIS half-width katakana: no C1 byte, yet Shift-JIS (a run of 6 katakana).
        XCTAssertEqual(CharsetGuess.guess([0xC3, 0xDE, 0xBB, 0xDE, 0xB2, 0xDD]), .shiftJIS)
        // ASCII, then three double-byte characters (日本語).
        XCTAssertEqual(CharsetGuess.guess(Array("Order 12: ".utf8) + [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]), .shiftJIS)
        // Three double-byte characters whose bytes are all above 0x9F (no C1 byte): Shift-JIS.
        XCTAssertEqual(CharsetGuess.guess([0xE0, 0xA0, 0xE3, 0xA1, 0xE4, 0xB1]), .shiftJIS)
        XCTAssertEqual(CharsetGuess.guess(Array("Café Grüße".unicodeScalars.map { UInt8($0.value) })), .latin1)
        XCTAssertEqual(CharsetGuess.guess(Array("Grüße, 東京".utf8)), .utf8)
        XCTAssertEqual(CharsetGuess.guess(Array("plain".utf8)), .latin1, "ASCII: any, zxing says ISO-8859-1")
        // Exactly two katakana next to each other: Shift-JIS (zxing's crude heuristic).
        XCTAssertEqual(CharsetGuess.guess([0xC4, 0xD6]), .shiftJIS)
        // A tenth of the bytes Latin-1 symbols (0xA0-0xBF): Shift-JIS, as zxing decides it.
        XCTAssertEqual(CharsetGuess.guess(Array("price ".utf8) + [0xA3, 0x35]), .shiftJIS)
        XCTAssertEqual(CharsetGuess.guess([0x00, 0xFF, 0x80, 0xFE]), nil, "none of the three: binary")
        XCTAssertFalse(CharsetGuess.canBeLatin1([0x41, 0x85]))
    }
}
