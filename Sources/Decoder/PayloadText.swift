// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// Turns a code's raw payload bytes into text, instead of zbar's guessing (zbar is told
/// `ZBAR_CFG_BINARY` for QR and hands over the bytes as encoded), for zbar's bytes and zxing's alike:
/// 1. valid UTF-8 (ASCII included) is UTF-8;
/// 2. else the character set `CharsetGuess` (zxing's `guessEncoding`, in Policy) names: Shift-JIS
///    (converted by glibc's iconv) or ISO-8859-1, the byte mode's default since ISO/IEC 18004:2005;
///    when Shift-JIS was guessed but iconv refuses a character, ISO-8859-1 if the bytes can be it.
///    Shift-JIS is read as zxing-cpp (libzueci's ASCII straight through) and the phones' CP932 read
///    it: single bytes 0x5C and 0x7E are `\` and `~`, not JIS X 0201's `¥` and `‾`; the double-byte
///    characters keep JIS X 0208's mapping.
/// 3. EUC-JP and GB2312 (issue 23), which zxing does not guess: bytes of their shape
///    (`CharsetGuess.eucShape`: high bytes in pairs 0xA1-0xFE, two pairs at least) that zxing would
///    call ISO-8859-1 (or Shift-JIS that iconv refuses) are EUC-JP when they hold kana or GB2312
///    refuses them, else GB2312, as long as iconv takes them whole. Bytes that are all half-width
///    katakana to Shift-JIS stay zxing's katakana (`ﾃﾞｻﾞｲﾝ`): GB2312 text whose bytes are all
///    below 0xE0 is not told from them.
/// Valid UTF-8 is text as it is (Code 128 code set A encodes control characters on purpose; the
/// log escapes them). Bytes that are not UTF-8 and would, as Shift-JIS or ISO-8859-1, hold control
/// characters other than TAB, LF, CR and the separators of ISO/IEC 15434 (EOT, FS, GS, RS) are
/// binary: no text, see `DecodedSymbol.hex`.
///
/// ECI: where a QR code carries an ECI designator, zbar 0.23.92 converts that segment to UTF-8
/// itself even with `ZBAR_CFG_BINARY` (measured: ECI 3 + ISO-8859-1 bytes come back as UTF-8), and
/// does not expose the designator; rule 1 then applies. zxing exposes it: a zxing reading with an
/// ECI takes zxing's text (`ZXingReader`) and keeps the bytes as encoded.
public enum PayloadText {
    public typealias Charset = PayloadCharset

    /// The text and the character set it was read in, or nil when the payload is binary.
    public static func decode(_ bytes: [UInt8]) -> (text: String, charset: Charset)? {
        if let s = String(validating: bytes, as: UTF8.self) { return (s, .utf8) }
        let latin1 = CharsetGuess.canBeLatin1(bytes)
        let guess = CharsetGuess.guess(bytes)
        let sjis = guess == .shiftJIS ? shiftJISToString(bytes) : nil
        if let s = sjis { return isText(s) ? (s, .shiftJIS) : nil }
        if let euc = CharsetGuess.eucShape(bytes) {
            let gb = euc.kana ? nil : convert(bytes, from: "GB2312")
            if let s = gb ?? convert(bytes, from: "EUC-JP"), isText(s) { return (s, gb == nil ? .eucJP : .gb2312) }
        }
        guard latin1 else { return nil }
        var s = ""
        s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return isText(s) ? (s, .latin1) : nil
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
