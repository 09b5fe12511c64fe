// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// Generated hard cases for the decode strategy, and the payload's text.
final class AccuracyTests: XCTestCase {
    /// `code` pasted in the middle of a `width` x `height` scene of `background` grey.
    func scene(_ code: GrayImage, width: Int = 320, height: Int = 240, background: UInt8 = 200) -> GrayImage {
        var s = GrayImage(width: width, height: height, fill: background)
        s.paste(code, x: (width - code.width) / 2, y: (height - code.height) / 2)
        return s
    }

    func mapped(_ image: GrayImage, _ f: (UInt8) -> UInt8) -> GrayImage {
        GrayImage(width: image.width, height: image.height, pixels: image.pixels.map(f))
    }

    // MARK: - the passes

    func testLightOnDarkQRIsReadByTheInvertAttemptOnly() throws {
        let dark = mapped(scene(try QRCodeImage.render("DARK-MODE-42", moduleSize: 3), background: 255)) { 255 - $0 }
        XCTAssertEqual(BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 10_000).scan(dark, attempts: []).count, 0,
                       "neither plain zbar nor the extra passes read light on dark")
        let scanner = BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 10_000)
        XCTAssertEqual(scanner.scan(dark).map(\.text), ["DARK-MODE-42"], "a still gets every attempt")
        XCTAssertEqual(scanner.counters.attemptWins[.invert], 1)
    }

    func testLowContrastQRStillReads() throws {
        // Ink at 110, paper at 140: 30 levels of contrast.
        let low = mapped(scene(try QRCodeImage.render("LOW-CONTRAST", moduleSize: 3), background: 255)) { $0 < 128 ? 110 : 140 }
        XCTAssertEqual(BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 10_000).scan(low).map(\.text), ["LOW-CONTRAST"])
    }

    func testSmallModulesQRReads() throws {
        // One pixel a module. (Plain zbar reads this clean rendering too; the upscaling pass's
        // wins are on photographed small codes: qrcode-5 in CorpusTests.)
        let tiny = scene(try QRCodeImage.render("https://example.com/k/0123456789", moduleSize: 1), width: 160, height: 160)
        XCTAssertEqual(BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 10_000).scan(tiny).map(\.text),
                       ["https://example.com/k/0123456789"])
    }

    func testSoftEAN13IsReadBySharpeningAndConfirmed() throws {
        let ean = blurred(scene(try Barcode1D.render(symbology: .ean13, data: "4006381333931", moduleWidth: 2, height: 40),
                                width: 260, height: 100))
        XCTAssertEqual(BarcodeScanner(symbologies: [.ean13], extraPasses: []).scan(ean).count, 0, "plain zbar misses it")
        let scanner = BarcodeScanner(symbologies: [.ean13], extraBudgetMs: 10_000)
        let found = scanner.scan(ean)
        XCTAssertEqual(found.map(\.text), ["4006381333931"])
        XCTAssertGreaterThanOrEqual(found.first?.quality ?? 0, 2, "a 1D code is confirmed on two scan lines")
        XCTAssertEqual(scanner.counters.wins.values.reduce(0, +), 1)
    }

    func testAnEmptySceneSpendsNoExtraBudget() {
        let scanner = BarcodeScanner(symbologies: [.qrcode, .ean13])
        XCTAssertEqual(scanner.scan(GrayImage(width: 320, height: 240, fill: 180)).count, 0)
        XCTAssertEqual(scanner.counters.skippedByStructureTest, 1)
        XCTAssertEqual(scanner.counters.extraRegions, 0)
    }

    func testZeroBudgetRunsNoExtraPass() throws {
        let dark = mapped(scene(try QRCodeImage.render("DARK", moduleSize: 3), background: 255)) { 255 - $0 }
        let scanner = BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 0)
        XCTAssertEqual(scanner.scan(dark).count, 0)
        XCTAssertEqual(scanner.counters.runs.values.reduce(0, +), 0)
        XCTAssertEqual(scanner.counters.budgetExhausted, 1)
    }

    /// A clock on which every reading is 20 ms after the last: each zbar pass "takes" 20 ms.
    final class TickingClock: Clock, @unchecked Sendable {
        var t: UInt64 = 0
        func now() -> UInt64 { t += 20_000_000; return t }
        func sleep(ns: UInt64, unless stop: StopSignal) -> Bool { t += ns; return stop.requested == nil }
        func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) {}
    }

    /// The budget is measured on the injected clock: with every pass taking 20 ms, a 60 ms budget
    /// allows the first pass (20 ms spent + 20 ms estimated) and not the 2x upscale (4 x 20 ms).
    func testTheBudgetIsMeasuredOnTheInjectedClock() throws {
        let dark = mapped(scene(try QRCodeImage.render("DARK", moduleSize: 3), background: 255)) { 255 - $0 }
        let tight = BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 60, clock: TickingClock())
        XCTAssertEqual(tight.scan(dark).count, 0)
        XCTAssertEqual(tight.counters.runs.values.reduce(0, +), 1, "\(tight.counters.runs)")
        XCTAssertEqual(tight.counters.budgetExhausted, 1)
        let ample = BarcodeScanner(symbologies: [.qrcode], extraBudgetMs: 10_000, clock: TickingClock())
        XCTAssertEqual(ample.scan(dark).map(\.text), ["DARK"], "the invert attempt reads a light-on-dark code")
        XCTAssertEqual(ample.counters.budgetExhausted, 0)
    }

    func blurred(_ image: GrayImage, times: Int = 1) -> GrayImage {
        guard times > 1 else { return blurredOnce(image) }
        return blurred(blurredOnce(image), times: times - 1)
    }

    func blurredOnce(_ image: GrayImage) -> GrayImage {
        var out = image
        for y in 1..<(image.height - 1) {
            for x in 1..<(image.width - 1) {
                var s = 0
                for dy in -1...1 { for dx in -1...1 { s += Int(image[x + dx, y + dy]) } }
                out[x, y] = UInt8(s / 9)
            }
        }
        return out
    }

    // MARK: - text

    func qrBytes(_ bytes: [UInt8], eci: UInt32? = nil) throws -> DecodedSymbol? {
        let picture = scene(try QRCodeImage.render(bytes: bytes, eci: eci, moduleSize: 3), background: 255)
        return BarcodeScanner(symbologies: [.qrcode]).scan(picture).first
    }

    func testUTF8Payload() throws {
        let s = try XCTUnwrap(try qrBytes(Array("Grüße, 東京 ✓".utf8)))
        XCTAssertEqual(s.text, "Grüße, 東京 ✓")
        XCTAssertNil(s.hex)
    }

    func testShiftJISPayload() throws {
        // "東京駅" in Shift-JIS.
        let sjis: [UInt8] = [0x93, 0x8C, 0x8B, 0x9E, 0x89, 0x77]
        let s = try XCTUnwrap(try qrBytes(sjis))
        XCTAssertEqual(s.bytes, sjis, "the raw bytes are kept")
        XCTAssertEqual(s.text, "東京駅")
    }

    func testISO88591Payload() throws {
        let latin1: [UInt8] = Array("Caf".utf8) + [0xE9, 0x20, 0x47, 0x72, 0xFC, 0xDF, 0x65]  // "Café Grüße"
        let s = try XCTUnwrap(try qrBytes(latin1))
        XCTAssertEqual(s.bytes, latin1)
        XCTAssertEqual(s.text, "Café Grüße")
    }

    func testBinaryPayloadHasNoTextButHex() throws {
        let binary: [UInt8] = [0x00, 0x01, 0xFF, 0x10, 0x80]
        let s = try XCTUnwrap(try qrBytes(binary))
        XCTAssertNil(s.text)
        XCTAssertEqual(s.hex, "0001ff1080")
    }

    /// zbar 0.23.92 honours an ECI designator itself, even with ZBAR_CFG_BINARY: the segment
    /// comes back converted to UTF-8 (the designator itself is not exposed).
    func testECISegmentIsConvertedByZbar() throws {
        let latin1: [UInt8] = [0x4E, 0x61, 0xEF, 0x76, 0x65]  // "Naïve" in ISO-8859-1, ECI 3
        let s = try XCTUnwrap(try qrBytes(latin1, eci: 3))
        XCTAssertEqual(s.bytes, Array("Naïve".utf8))
        XCTAssertEqual(s.text, "Naïve")
        // Shift-JIS under ECI 20.
        let sjis = try XCTUnwrap(try qrBytes([0x93, 0x8C, 0x8B, 0x9E], eci: 20))
        XCTAssertEqual(sjis.text, "東京")
    }

    /// Issue 23: a Shift-JIS backslash (0x5C) is "\\" as zxing and CP932 phones show it, not "¥";
    /// the tilde (0x7E) is "~"; the scan program gets the bytes as encoded. zbar on pixels.
    func testShiftJISBackslashIsABackslash() throws {
        let sjis: [UInt8] = [0x89, 0xBF, 0x8A, 0x69, 0x5C, 0x31, 0x30, 0x30, 0x7E]  // "価格\100~"
        let s = try XCTUnwrap(try qrBytes(sjis))
        XCTAssertEqual(s.bytes, sjis, "the raw bytes are kept")
        XCTAssertEqual(s.text, "価格\\100~")
        XCTAssertEqual(PayloadText.decode(sjis)?.charset, .shiftJIS)
        // A 0x5C trail byte stays inside its character: 0x835C is "ソ".
        XCTAssertEqual(PayloadText.text([0x83, 0x5C, 0x83, 0x74, 0x83, 0x67, 0x5C]), "ソフト\\")
    }

    /// Issue 23: EUC-JP without an ECI, which zxing would show as "ÆüËÜ¸ì¥Æ¥­¥¹¥È" (ISO-8859-1).
    func testEUCJPPayload() throws {
        let euc: [UInt8] = [0xC6, 0xFC, 0xCB, 0xDC, 0xB8, 0xEC, 0xA5, 0xC6, 0xA5, 0xAD, 0xA5, 0xB9, 0xA5, 0xC8]  // "日本語テキスト"
        let s = try XCTUnwrap(try qrBytes(euc))
        XCTAssertEqual(s.bytes, euc, "the raw bytes are kept")
        XCTAssertEqual(s.text, "日本語テキスト")
        XCTAssertEqual(PayloadText.decode(euc)?.charset, .eucJP)
    }

    /// Issue 23: GB2312 without an ECI, which zxing would show as ISO-8859-1 ("±±¾©»¶Ó­Äã").
    func testGB2312Payload() throws {
        let gb: [UInt8] = [0xB1, 0xB1, 0xBE, 0xA9, 0xBB, 0xB6, 0xD3, 0xAD, 0xC4, 0xE3]  // "北京欢迎你"
        let s = try XCTUnwrap(try qrBytes(gb))
        XCTAssertEqual(s.bytes, gb, "the raw bytes are kept")
        XCTAssertEqual(s.text, "北京欢迎你")
        XCTAssertEqual(PayloadText.decode(gb)?.charset, .gb2312)
        // Half-width katakana with two voiced marks is Shift-JIS, though it has the shape.
        XCTAssertEqual(PayloadText.text([0xC3, 0xDE, 0xBB, 0xDE, 0xB2, 0xDD]), "ﾃﾞｻﾞｲﾝ")
        XCTAssertEqual(PayloadText.text(Array("No ".utf8) + [0xB1, 0xB1, 0xBE, 0xA9, 0xBB, 0xB6, 0xD3, 0xAD]), "No 北京欢迎", "ASCII around it")
        // Latin-1 stays Latin-1.
        XCTAssertEqual(PayloadText.text(Array("Caf".utf8) + [0xE9, 0x20, 0x47, 0x72, 0xFC, 0xDF, 0x65]), "Café Grüße")
    }

    /// Issue 37: short texts whose bytes are plausible in two character sets stay bytes (the scan
    /// event's data_hex), rather than a guess that may be wrong.
    func testAmbiguousShortTextsStayBytes() throws {
        // C4 D6: GB2312's 闹, Shift-JIS's ﾄﾖ, EUC-JP's 陳 (zxing and the kiosk before read ﾄﾖ).
        XCTAssertNil(PayloadText.decode([0xC4, 0xD6]))
        let s = try XCTUnwrap(try qrBytes([0xC4, 0xD6]))
        XCTAssertEqual(s.bytes, [0xC4, 0xD6])
        XCTAssertNil(s.text)
        XCTAssertEqual(s.hex, "c4d6")
        // 你好 (C4E3 BAC3) was read as Shift-JIS "ﾄ羃ﾃ" before: GB2312 and EUC-JP kanji alike now.
        XCTAssertNil(PayloadText.decode([0xC4, 0xE3, 0xBA, 0xC3]))
        // Kanji alone, GB2312 and EUC-JP byte for byte: 北京你 is EUC-JP's 乖袈陳 too.
        XCTAssertNil(PayloadText.decode(Array("No ".utf8) + [0xB1, 0xB1, 0xBE, 0xA9, 0xC4, 0xE3]))
        // One of them out of the other's common characters decides it: 欢迎 are beyond EUC-JP's level 1.
        XCTAssertEqual(PayloadText.decode([0xBB, 0xB6, 0xD3, 0xAD])?.text, "欢迎")
        // Kana decide for Japanese: ひらがな in EUC-JP (GB2312 has kana rows, Chinese text does not use them).
        XCTAssertEqual(PayloadText.decode([0xA4, 0xD2, 0xA4, 0xE9, 0xA4, 0xAC, 0xA4, 0xCA])?.text, "ひらがな")
        // Two Cyrillic letters of UTF-8 (D1 BE = Ѿ) are GB2312's 丫 too: bytes; a word of them is UTF-8.
        XCTAssertNil(PayloadText.decode([0xD1, 0xBE]))
        XCTAssertEqual(PayloadText.decode(Array("Москва".utf8))?.text, "Москва")
        // Half-width katakana pairs that make UTF-8 of two scripts are not UTF-8: ﾙｾﾞｷ with ASCII.
        XCTAssertEqual(PayloadText.decode(Array("No ".utf8) + [0xD9, 0xBE, 0xDE, 0xB7, 0xB1, 0xB2])?.text, "No ﾙｾﾞｷｱｲ")
    }

    func testPayloadTextRules() {
        XCTAssertEqual(PayloadText.decode(Array("plain".utf8))?.charset, .utf8)
        XCTAssertEqual(PayloadText.decode([0x82, 0xA0])?.charset, .shiftJIS)  // "あ"
        // One Latin-1 letter among ASCII stays Latin-1 (a half-width kana alone inside a Latin word
        // is not Shift-JIS).
        XCTAssertEqual(PayloadText.decode([0xC4, 0x70, 0x66, 0x65, 0x6C])?.text, "Äpfel")
        XCTAssertEqual(PayloadText.text(Array("a\tb\r\nc\u{1D}d".utf8)), "a\tb\r\nc\u{1D}d", "TAB, CR, LF, GS are text")
        XCTAssertEqual(PayloadText.text([0x41, 0x07]), "A\u{07}", "valid UTF-8 stays text")
        XCTAssertNil(PayloadText.text([0x41, 0x07, 0xFF]), "not UTF-8, and a control character as Latin-1: binary")
    }
}
