// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// Turns a code's raw payload bytes into text, instead of zbar's guessing (zbar is told
/// `ZBAR_CFG_BINARY` for QR and hands over the bytes as encoded), for zbar's bytes and zxing's
/// alike. The rule (a reading only where it is safe, the bytes escaped where not):
/// 1. plausible UTF-8 (ASCII included; `PlausibleText.utf8`) is UTF-8, unless it is one or two
///    two-byte characters alone that a legacy character set reads as plausibly
///    (`PlausibleText.strongUTF8`): then the bytes stay bytes;
/// 2. else the legacy character sets the bytes are plausible text in (`PlausibleText.legacy`:
///    Shift_JIS, GB2312, EUC-JP, ISO-8859-1, each judged by the characters it would make): when
///    exactly one is, the text in it (converted by glibc's iconv);
/// 3. when several are, none: the payload stays bytes (`DecodedSymbol.hex`, `data_hex` in the
///    log). Short payloads are where this happens: one or two characters of GB2312 are as
///    plausible in Shift_JIS's half-width katakana, EUC-JP's kanji or ISO-8859-1's letters; and
///    kanji alone are GB2312 or EUC-JP alike. One tie-break: half-width katakana of three kana
///    or more with a voiced mark (`PlausibleText.markedKatakana`: ﾃﾞｻﾞｲﾝ) are Shift_JIS;
/// 4. when none is: valid UTF-8 (of mixed scripts) is UTF-8, as before; else the one character
///    set that takes the bytes at all (Shift_JIS with a level-2 kanji: its lead bytes are C1
///    controls to ISO-8859-1 and outside GB2312 and EUC-JP), or none.
/// `kiosk-dev charsets` measures the rule on short texts of each character set (docs/measurements/accuracy.md,
/// "The text rule on short texts"). Shift-JIS is read as zxing-cpp (libzueci's ASCII straight through) and
/// the phones' CP932 read it: single bytes 0x5C and 0x7E are `\` and `~`, not JIS X 0201's `¥`
/// and `‾`; the double-byte characters keep JIS X 0208's mapping.
/// Valid UTF-8 is text as it is (Code 128 code set A encodes control characters on purpose; the
/// log escapes them). Bytes that are not UTF-8 and would hold control characters other than TAB,
/// LF, CR and the separators of ISO/IEC 15434 (EOT, FS, GS, RS) are binary: no text, see
/// `DecodedSymbol.hex`.
///
/// ECI: where a QR code carries an ECI designator, zbar 0.23.92 converts that segment to UTF-8
/// itself even with `ZBAR_CFG_BINARY` (measured: ECI 3 + ISO-8859-1 bytes come back as UTF-8), and
/// does not expose the designator; rule 1 then applies. zxing exposes it: a zxing reading with an
/// ECI takes zxing's text (`ZXingReader`) and keeps the bytes as encoded.
public enum PayloadText {
    public typealias Charset = PayloadCharset

    /// The text and the character set it was read in, or nil when the payload is binary or its
    /// reading is not safe (see the type's rule).
    public static func decode(_ bytes: [UInt8]) -> (text: String, charset: Charset)? {
        let utf8 = String(validating: bytes, as: UTF8.self)
        let plausible = PlausibleText.legacy(bytes)
        if let s = utf8, PlausibleText.utf8(bytes) {
            // UTF-8 before the legacy readings, unless a short one stands beside one of them.
            guard PlausibleText.strongUTF8(bytes) || plausible.isEmpty else { return nil }
            return (s, .utf8)
        }
        if plausible.count == 1 {
            guard let s = read(bytes, in: plausible[0]), isText(s) else { return nil }
            return (s, plausible[0])
        }
        if plausible.count > 1 {
            // The one tie-break the figures allow: well-marked half-width katakana.
            guard !plausible.contains(.latin1), PlausibleText.markedKatakana(bytes), let s = shiftJISToString(bytes), isText(s) else { return nil }
            return (s, .shiftJIS)
        }
        if let s = utf8 { return (s, .utf8) }
        let readable = [Charset.shiftJIS, .gb2312, .eucJP, .latin1].compactMap { c in read(bytes, in: c).map { (c, $0) } }
        guard readable.count == 1, isText(readable[0].1) else { return nil }
        return (readable[0].1, readable[0].0)
    }

    /// The bytes read in `charset`, nil when they are not valid in it.
    static func read(_ bytes: [UInt8], in charset: Charset) -> String? {
        switch charset {
        case .utf8: return String(validating: bytes, as: UTF8.self)
        case .shiftJIS: return shiftJISToString(bytes)
        case .gb2312: return convert(bytes, from: "GB2312")
        case .eucJP: return convert(bytes, from: "EUC-JP")
        case .latin1:
            guard CharsetGuess.canBeLatin1(bytes) else { return nil }
            var s = ""
            s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return s
        }
    }

    public static func text(_ bytes: [UInt8]) -> String? { decode(bytes)?.text }

    static func isText(_ s: String) -> Bool {
        for u in s.unicodeScalars {
            switch u.value {
            case 0x09, 0x0A, 0x0D, 0x04, 0x1C, 0x1D, 0x1E: continue
            case 0x00...0x1F, 0x7F, 0x80...0x9F: return false
            default: continue
            }
        }
        return true
    }

    /// Shift-JIS to a String through glibc's iconv, with 0x5C and 0x7E as ASCII (CP932, zxing):
    /// glibc's SHIFT_JIS gives U+00A5 and U+203E for them and for nothing else (JIS X 0208's
    /// yen and overline are the full-width U+FFE5 and U+FFE3), so those two are put back.
    /// nil when iconv refuses a character.
    static func shiftJISToString(_ bytes: [UInt8]) -> String? {
        guard let s = convert(bytes, from: "SHIFT_JIS") else { return nil }
        var out = ""
        out.unicodeScalars.append(contentsOf: s.unicodeScalars.map { $0 == "\u{A5}" ? "\\" : $0 == "\u{203E}" ? "~" : $0 })
        return out
    }

    /// Bytes in `charset` to a String through glibc's iconv; nil when iconv refuses a character.
    static func convert(_ bytes: [UInt8], from charset: String) -> String? {
        let cd = iconv_open("UTF-8", charset)
        guard let cd, cd != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(cd) }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: bytes.count * 3 + 4)
        let ok: Bool = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                var inPtr: UnsafeMutablePointer<CChar>? = inBuf.baseAddress
                var inLeft = inBuf.count
                var outPtr: UnsafeMutablePointer<CChar>? = outBuf.baseAddress
                var outLeft = outBuf.count - 1
                let r = iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft)
                outPtr?.pointee = 0
                return r != -1 && inLeft == 0
            }
        }
        guard ok else { return nil }
        return output.withUnsafeBufferPointer { String(validatingCString: $0.baseAddress!) }
    }
}
