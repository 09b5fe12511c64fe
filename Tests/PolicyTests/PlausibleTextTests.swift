// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The judgement behind the payload's text: which character sets a payload's bytes are
/// plausible text in. `kiosk-dev charsets` measures the whole rule on generated texts.
final class PlausibleTextTests: XCTestCase {
    func testEachReadingIsJudgedOnItsOwn() {
        // C4 D6: 闹 (GB2312), ﾄﾖ (Shift_JIS), 陳 (EUC-JP); ÄÖ has no ASCII letter beside it.
        XCTAssertEqual(PlausibleText.legacy([0xC4, 0xD6]), [.shiftJIS, .gb2312, .eucJP])
        XCTAssertEqual(PlausibleText.legacy(Array("Caf".utf8) + [0xE9]), [.latin1])
        XCTAssertEqual(PlausibleText.legacy([0xC4] + Array("pfel".utf8)), [.latin1], "a kana alone in a Latin word is not Shift_JIS")
        XCTAssertEqual(PlausibleText.legacy([0x82, 0xA0, 0x82, 0xA2]), [.shiftJIS], "あい")
        XCTAssertEqual(PlausibleText.legacy([0xA4, 0xA2, 0xA4, 0xA4]), [.eucJP], "あい in EUC-JP: kana rows are not Chinese text")
        XCTAssertEqual(PlausibleText.legacy([0xD3, 0xAD, 0xC4, 0xE3]), [.gb2312], "迎你: D3 is beyond EUC-JP's level 1, E3 ends Shift_JIS mid-character")
        XCTAssertEqual(PlausibleText.legacy([0x98, 0x9F]), [], "a level-2 kanji of Shift_JIS is not common: none")
        XCTAssertEqual(PlausibleText.legacy([0xB2, 0xDE]), [.gb2312, .eucJP], "ｲﾞ: ｲ takes no voiced mark")
        XCTAssertEqual(PlausibleText.legacy([0xAC, 0xB1]), [], "ｬ first; AC is no common GB2312 or EUC-JP row")
        XCTAssertEqual(PlausibleText.legacy(Array("x".utf8) + [0xDF, 0xDF]), [.latin1], "xßß: ﾟ after x is not katakana")
        XCTAssertEqual(PlausibleText.legacy([0xC0, 0xC1, 0xC2] + Array("a".utf8)), [.shiftJIS], "ﾀﾁﾂa; not three Latin-1 letters in a row")
    }

    func testUTF8IsPlausibleInOneScriptBesideLatinAndStrongWhenLongOrInAWord() {
        XCTAssertTrue(PlausibleText.utf8(Array("Grüße, Москва".utf8)))
        XCTAssertTrue(PlausibleText.utf8(Array("東京 αβγ Ж".utf8)), "a three-byte character: any")
        XCTAssertFalse(PlausibleText.utf8([0xD9, 0xBE, 0xDE, 0xB7]), "ﾙｾﾞｷ as UTF-8: Arabic and Thaana")
        XCTAssertFalse(PlausibleText.utf8([0xC3, 0x28]), "not UTF-8")
        XCTAssertFalse(PlausibleText.strongUTF8([0xD1, 0xBE]), "Ѿ alone")
        XCTAssertTrue(PlausibleText.strongUTF8(Array("Café".utf8)), "an accent in a word")
        XCTAssertTrue(PlausibleText.strongUTF8(Array("Мирр".utf8)), "four letters")
        XCTAssertTrue(PlausibleText.strongUTF8(Array("日".utf8)))
        XCTAssertTrue(PlausibleText.markedKatakana([0xC3, 0xDE, 0xBB, 0xDE, 0xB2, 0xDD]), "ﾃﾞｻﾞｲﾝ")
        XCTAssertFalse(PlausibleText.markedKatakana([0xC3, 0xDE, 0xBB, 0xB2, 0xDD]), "one mark is not enough")
    }
}
