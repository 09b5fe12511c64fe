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

    /// The shape of EUC-JP and GB2312 text (issue 23), which zxing does not guess: it reads such
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
