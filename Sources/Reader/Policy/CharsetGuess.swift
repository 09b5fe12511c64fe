// SPDX-License-Identifier: Apache-2.0

/// The character sets a payload without an ECI designator is read in.
public enum PayloadCharset: String, Sendable {
    case utf8 = "UTF-8"
    case shiftJIS = "Shift_JIS"
    case latin1 = "ISO-8859-1"
    /// Not among zxing's guesses: taken where zxing's guess cannot be the text (`CharsetGuess.eucShape`).
    case eucJP = "EUC-JP"
    case gb2312 = "GB2312"
}

/// Which character set a payload's bytes are most likely in, when the symbol does not say (no ECI):
/// zxing's `guessEncoding` (ZXing's StringUtils, as zxing-cpp 1.4 and 2.x keep it), written here
/// so that zbar's bytes are read by the same rule as zxing's. It counts what each candidate would
/// make of the bytes:
/// - UTF-8: the byte sequences a UTF-8 encoder makes; with at least one multi-byte character and
///   nothing against it, the payload is UTF-8;
/// - Shift-JIS: lead and trail bytes of double-byte characters, and half-width katakana
///   (0xA1-0xDF); a run of 3 or more double-byte characters or 3 or more katakana, and nothing
///   against it, is Shift-JIS;
/// - ISO-8859-1: no byte in 0x80-0x9F (C1 controls); when both it and Shift-JIS are possible,
///   Shift-JIS wins if the text holds exactly two katakana, next to each other, or if at least a
///   tenth of its bytes are Latin-1 symbols rather than letters (0xA0-0xBF, x and ÷);
/// - otherwise the first still possible of ISO-8859-1, Shift-JIS, UTF-8; none: binary (nil).
///
/// One difference from zxing: a UTF-8 continuation byte must be 10xxxxxx (zxing looks at the top
/// bit only, and would call bytes UTF-8 that no UTF-8 decoder accepts).
///
/// Pure: no library, no allocation beyond the counters.
public enum CharsetGuess {
    public static func guess(_ bytes: [UInt8]) -> PayloadCharset? {
        var e = Evidence()
        e.count(bytes)
        if e.canBeUTF8 && (e.utf8BOM || e.utf8MultiByteChars > 0) { return .utf8 }
        if e.canBeShiftJIS && (e.sjisMaxKatakanaRun >= 3 || e.sjisMaxDoubleByteRun >= 3) { return .shiftJIS }
        if e.canBeLatin1 && e.canBeShiftJIS {
            return (e.sjisMaxKatakanaRun == 2 && e.sjisKatakanaChars == 2) || e.latin1HighOther * 10 >= bytes.count
                ? .shiftJIS : .latin1
        }
        if e.canBeLatin1 { return .latin1 }
        if e.canBeShiftJIS { return .shiftJIS }
        if e.canBeUTF8 { return .utf8 }
        return nil
    }

    /// The shape of EUC-JP and GB2312 text, which zxing does not guess: it reads such
    /// bytes as ISO-8859-1 ("ÆüËÜ¸ì" for 日本語) or as half-width katakana. Every byte above 0x7F is
    /// one of a pair of bytes 0xA1-0xFE, and there are at least two pairs; `kana`: a pair in rows
    /// 0xA4-0xA5 (hiragana, katakana), which Japanese text nearly always has and Chinese does not.
    /// nil when the bytes are not of that shape.
    public static func eucShape(_ bytes: [UInt8]) -> (pairs: Int, kana: Bool)? {
        var pairs = 0, kana = false, i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            guard b >= 0xA1, b <= 0xFE, i + 1 < bytes.count, bytes[i + 1] >= 0xA1, bytes[i + 1] <= 0xFE else { return nil }
            pairs += 1
            if b == 0xA4 || b == 0xA5 { kana = true }
            i += 2
        }
        return pairs >= 2 ? (pairs, kana) : nil
    }

    /// Whether the bytes can be ISO-8859-1 text at all (no C1 control byte).
    public static func canBeLatin1(_ bytes: [UInt8]) -> Bool {
        !bytes.contains { $0 >= 0x80 && $0 <= 0x9F }
    }

    /// What the bytes say for and against each candidate, counted in one pass as zxing does.
    struct Evidence {
        var canBeUTF8 = true, canBeShiftJIS = true, canBeLatin1 = true
        var utf8BOM = false
        var utf8BytesLeft = 0, utf8MultiByteChars = 0
        var sjisBytesLeft = 0, sjisKatakanaChars = 0
        var sjisKatakanaRun = 0, sjisDoubleByteRun = 0
        var sjisMaxKatakanaRun = 0, sjisMaxDoubleByteRun = 0
        var latin1HighOther = 0

        mutating func count(_ bytes: [UInt8]) {
            utf8BOM = bytes.count > 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
            for b in bytes {
                if !(canBeUTF8 || canBeShiftJIS || canBeLatin1) { break }
                let v = Int(b)
                if canBeUTF8 {
                    if utf8BytesLeft > 0 {
                        // A continuation byte is 10xxxxxx. (zxing checks only its top bit, and so
                        // calls "ﾄﾖ", C4 D6, UTF-8; here it is what UTF-8 says it is.)
                        if v & 0xC0 != 0x80 { canBeUTF8 = false } else { utf8BytesLeft -= 1 }
                    } else if v & 0x80 != 0 {
                        if v & 0x40 == 0 {
                            canBeUTF8 = false
                        } else if v & 0x20 == 0 {
                            utf8BytesLeft += 1; utf8MultiByteChars += 1
                        } else if v & 0x10 == 0 {
                            utf8BytesLeft += 2; utf8MultiByteChars += 1
                        } else if v & 0x08 == 0 {
                            utf8BytesLeft += 3; utf8MultiByteChars += 1
                        } else {
                            canBeUTF8 = false
                        }
                    }
                }
                if canBeLatin1 {
                    if v > 0x7F && v < 0xA0 {
                        canBeLatin1 = false
                    } else if v > 0x9F && (v < 0xC0 || v == 0xD7 || v == 0xF7) {
                        latin1HighOther += 1
                    }
                }
                if canBeShiftJIS {
                    if sjisBytesLeft > 0 {
                        if v < 0x40 || v == 0x7F || v > 0xFC { canBeShiftJIS = false } else { sjisBytesLeft -= 1 }
                    } else if v == 0x80 || v == 0xA0 || v > 0xEF {
                        canBeShiftJIS = false
                    } else if v > 0xA0 && v < 0xE0 {
                        sjisKatakanaChars += 1
                        sjisDoubleByteRun = 0
                        sjisKatakanaRun += 1
                        sjisMaxKatakanaRun = max(sjisMaxKatakanaRun, sjisKatakanaRun)
                    } else if v > 0x7F {
                        sjisBytesLeft += 1
                        sjisKatakanaRun = 0
                        sjisDoubleByteRun += 1
                        sjisMaxDoubleByteRun = max(sjisMaxDoubleByteRun, sjisDoubleByteRun)
                    } else {
                        sjisKatakanaRun = 0
                        sjisDoubleByteRun = 0
                    }
                }
            }
            if utf8BytesLeft > 0 { canBeUTF8 = false }
            if sjisBytesLeft > 0 { canBeShiftJIS = false }
        }
    }
}

/// Which character sets a payload's bytes are plausible text in: the rule that reads a
/// payload without an ECI only where the reading is safe. Short payloads in the legacy character
/// sets are ambiguous: a GB2312 character's two bytes are two half-width katakana to Shift_JIS,
/// a kanji to EUC-JP and two accented letters to ISO-8859-1 (`C4 D6`: 闹, ﾄﾖ, 陳, ÄÖ). Each
/// reading is judged on its own:
/// - **UTF-8**: valid, and its non-ASCII characters are Latin and at most one other script of
///   the two-byte range (Greek, Cyrillic, Hebrew, Arabic, ...), or it has a character of three or
///   four bytes (CJK, emoji). Half-width katakana pairs often make valid UTF-8, of two scripts
///   at once (`ﾙｾﾞｷ` is "پ޷", Arabic and Thaana): that is not text. A plausible UTF-8 reading
///   is taken before the legacy ones when it is strong (`strongUTF8`), or when no legacy one is
///   plausible.
/// - **Shift_JIS**: its double-byte characters are JIS X 0208's common ones (symbols, full-width
///   letters and digits, hiragana, katakana, level-1 kanji), and its half-width katakana are
///   well formed (a voiced mark ﾞ only after a kana that takes one, ﾟ only after ﾊ-ﾎ; small
///   ｬｭｮ only after the i row, the other small kana and the long mark ｰ only after a kana; ｦ
///   and ﾝ not first; ｡､･ only after a kana; no kana alone inside a Latin word).
/// - **GB2312**: every pair is a level-1 hanzi or of the punctuation and full-width rows (not the
///   kana rows, which Chinese text does not use).
/// - **EUC-JP**: every pair is of JIS X 0208's punctuation, full-width letters and digits,
///   hiragana, katakana or level-1 kanji. Kanji alone (a name) is then GB2312 text too, byte for
///   byte, four characters in five: such a payload is ambiguous, and stays bytes.
/// - **ISO-8859-1**: no C1 control byte, every byte above 0x7F a letter or one of the usual
///   signs (© ® ° ² ³ µ · « » ¿ ¡ § £ º ª and the no-break space), no three of them in a row,
///   and an ASCII letter beside one of them (a word with an accent, not a run of symbols).
///
/// Pure: byte ranges only; the conversion itself is iconv's (`PayloadText`).
public enum PlausibleText {
    /// The legacy character sets (not UTF-8) the bytes are plausible text in, in the order
    /// Shift_JIS, GB2312, EUC-JP, ISO-8859-1.
    public static func legacy(_ bytes: [UInt8]) -> [PayloadCharset] {
        var out: [PayloadCharset] = []
        if shiftJIS(bytes) { out.append(.shiftJIS) }
        if gb2312(bytes) { out.append(.gb2312) }
        if eucJP(bytes) { out.append(.eucJP) }
        if latin1(bytes) { out.append(.latin1) }
        return out
    }

    /// A UTF-8 reading that no legacy reading of the same bytes can stand beside: a character of
    /// three or four bytes, four characters of two bytes or more, or one beside an ASCII letter
    /// (a word with an accent). Up to three characters of two bytes alone (`D1 BE`: Ѿ, or
    /// GB2312's 丫, or Shift_JIS's ﾑｾ; three GB2312 hanzi can be "«˪ʯ") are not. (Real text of
    /// a two-byte script rarely stands beside a legacy reading at all: Cyrillic's р-я and А-П
    /// have bytes 0x80-0x9F, which none of the legacy readings takes as plausible.)
    public static func strongUTF8(_ bytes: [UInt8]) -> Bool {
        guard let s = String(validating: bytes, as: UTF8.self) else { return false }
        let scalars = Array(s.unicodeScalars)
        var twoByte = 0
        func isLetter(_ u: Unicode.Scalar) -> Bool { (u.value >= 0x41 && u.value <= 0x5A) || (u.value >= 0x61 && u.value <= 0x7A) }
        for (i, u) in scalars.enumerated() where u.value >= 0x80 {
            if u.value >= 0x800 { return true }
            twoByte += 1
            if (i > 0 && isLetter(scalars[i - 1])) || (i + 1 < scalars.count && isLetter(scalars[i + 1])) { return true }
        }
        return twoByte >= 4
    }

    /// Valid UTF-8 of one script beside Latin, or with a character of three or four bytes.
    public static func utf8(_ bytes: [UInt8]) -> Bool {
        guard let s = String(validating: bytes, as: UTF8.self) else { return false }
        var seen: Int?
        for u in s.unicodeScalars where u.value >= 0x80 {
            if u.value >= 0x800 { return true }
            guard let script = twoByteScript(u.value) else { continue }
            if let seen, seen != script { return false }
            seen = script
        }
        return true
    }

    /// The script of a character of the two-byte range (U+0080-07FF) other than Latin-1's and
    /// Latin Extended-A's letters and signs and the combining marks (nil for those): Latin
    /// Extended-B with IPA and the spacing modifiers (Romanian's ș and ț are there, beside Latin
    /// letters; GB2312's bytes often land there beside a Cyrillic letter), Greek, Cyrillic,
    /// Armenian, Hebrew, Arabic, Syriac, Thaana, NKo, numbered by their first code point.
    static func twoByteScript(_ v: UInt32) -> Int? {
        switch v {
        case 0x0180...0x02FF: return 0x180
        case 0x0370...0x03FF: return 0x370
        case 0x0400...0x052F: return 0x400
        case 0x0530...0x058F: return 0x530
        case 0x0590...0x05FF: return 0x590
        case 0x0600...0x06FF, 0x0750...0x077F: return 0x600
        case 0x0700...0x074F: return 0x700
        case 0x0780...0x07BF: return 0x780
        case 0x07C0...0x07FF: return 0x7C0
        default: return nil
        }
    }

    /// Half-width katakana with its marks, the tie-break of several plausible readings: at least
    /// three kana and a voiced or semi-voiced mark (ﾃﾞｻﾞｲﾝ), and no other byte above 0x7F. A
    /// GB2312 or EUC-JP text is that one character in about a hundred (a pair's second byte is
    /// 0xDE or 0xDF one time in 47, after a lead a mark may follow about one time in two).
    public static func markedKatakana(_ bytes: [UInt8]) -> Bool {
        var kana = 0, marks = 0
        for b in bytes where b >= 0x80 {
            guard (0xA1...0xDF).contains(b) else { return false }
            if b == 0xDE || b == 0xDF { marks += 1 } else { kana += 1 }
        }
        return kana >= 3 && marks >= 2 && shiftJIS(bytes)
    }

    static func shiftJIS(_ bytes: [UInt8]) -> Bool {
        var i = 0, previous: UInt8 = 0, any = false
        func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 { previous = b; i += 1; continue }
            any = true
            if b >= 0xA1 && b <= 0xDF {
                // Half-width katakana: ﾞ (DE) after ｳ, ｶ-ﾄ, ﾊ-ﾎ; ﾟ (DF) after ﾊ-ﾎ.
                if b == 0xDE && !(previous == 0xB3 || (0xB6...0xC4).contains(previous) || (0xCA...0xCE).contains(previous)) { return false }
                if b == 0xDF && !(0xCA...0xCE).contains(previous) { return false }
                // Small kana and the long mark follow a kana: ｬｭｮ one of the i row (ｷｼﾁﾆﾋﾐﾘ, voiced
                // or not), ｧｨｩｪｫ and ｯ and ｰ any full-size one; ｦ and ﾝ are never first.
                let afterKana = (0xA6...0xDD).contains(previous) && !(0xA7...0xB0).contains(previous)
                    || previous == 0xDE || previous == 0xDF
                var before = previous
                if (previous == 0xDE || previous == 0xDF) && i >= 2 { before = bytes[i - 2] }
                if (0xAC...0xAE).contains(b) && ![0xB7, 0xBC, 0xC1, 0xC6, 0xCB, 0xD0, 0xD8].contains(before) { return false }
                if ((0xA7...0xAB).contains(b) || b == 0xAF || b == 0xB0) && !afterKana { return false }
                if (b == 0xA6 || b == 0xDD) && !((0xA6...0xDF).contains(previous)) { return false }
                // The half-width full stop, comma and middle dot (｡､･) close or join words: never
                // first, never after another sign (EUC-JP's kana all begin with A4 or A5: ､ and ･).
                if [0xA1, 0xA4, 0xA5].contains(b) && (i == 0 || (0xA1...0xA5).contains(previous) || previous < 0x80) { return false }
                // One kana alone inside a Latin word ("Äpfel" is not "ﾄpfel").
                let alone = !(i > 0 && (0xA1...0xDF).contains(bytes[i - 1])) && !(i + 1 < bytes.count && (0xA1...0xDF).contains(bytes[i + 1]))
                if alone && ((i > 0 && isLetter(bytes[i - 1])) || (i + 1 < bytes.count && isLetter(bytes[i + 1]))) { return false }
                previous = b
                i += 1
                continue
            }
            guard (0x81...0x9F).contains(b) || (0xE0...0xEF).contains(b), i + 1 < bytes.count else { return false }
            let code = UInt16(b) << 8 | UInt16(bytes[i + 1])
            let common = (0x8140...0x81AC).contains(code) || (0x824F...0x8258).contains(code) || (0x8260...0x8279).contains(code)
                || (0x8281...0x829A).contains(code) || (0x829F...0x82F1).contains(code) || ((0x8340...0x8396).contains(code) && code != 0x837F)
                || (0x889F...0x9872).contains(code)
            guard common, bytes[i + 1] != 0x7F else { return false }
            previous = 0
            i += 2
        }
        return any
    }

    /// The pairs of an EUC-shaped text (GB2312, EUC-JP): each byte above 0x7F with the next, both
    /// 0xA1-0xFE; nil when the bytes are not so.
    static func eucPairs(_ bytes: [UInt8]) -> [UInt16]? {
        var pairs: [UInt16] = [], i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            guard b >= 0xA1, b <= 0xFE, i + 1 < bytes.count, bytes[i + 1] >= 0xA1, bytes[i + 1] <= 0xFE else { return nil }
            pairs.append(UInt16(b) << 8 | UInt16(bytes[i + 1]))
            i += 2
        }
        return pairs.isEmpty ? nil : pairs
    }

    static func gb2312(_ bytes: [UInt8]) -> Bool {
        guard let pairs = eucPairs(bytes) else { return false }
        return pairs.allSatisfy { p in
            (0xA1A1...0xA1FE).contains(p) || (0xA3A1...0xA3FE).contains(p) || ((0xB0A1...0xD7F9).contains(p) && p & 0xFF >= 0xA1)
        }
    }

    static func eucJP(_ bytes: [UInt8]) -> Bool {
        guard let pairs = eucPairs(bytes) else { return false }
        let common = pairs.allSatisfy { p in
            (0xA1A1...0xA1FE).contains(p) || (0xA3B0...0xA3FA).contains(p) || (0xA4A1...0xA4F3).contains(p)
                || (0xA5A1...0xA5F6).contains(p) || ((0xB0A1...0xCFD3).contains(p) && p & 0xFF >= 0xA1)
        }
        return common
    }

    static let latin1Signs: Set<UInt8> = [0xA0, 0xA1, 0xA3, 0xA7, 0xA9, 0xAA, 0xAB, 0xAE, 0xB0, 0xB2, 0xB3, 0xB5, 0xB7, 0xBA, 0xBB, 0xBF]

    static func latin1(_ bytes: [UInt8]) -> Bool {
        var run = 0, any = false, besideLetter = false
        func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        for (i, b) in bytes.enumerated() {
            guard b >= 0x80 else { run = 0; continue }
            guard (b >= 0xC0 && b != 0xD7 && b != 0xF7) || latin1Signs.contains(b) else { return false }
            any = true
            run += 1
            if run >= 3 { return false }
            if (i > 0 && isLetter(bytes[i - 1])) || (i + 1 < bytes.count && isLetter(bytes[i + 1])) { besideLetter = true }
        }
        return any && besideLetter
    }
}
