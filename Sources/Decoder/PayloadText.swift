// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// Turns a code's raw payload bytes into text, by the QR specification's rules, instead of
/// zbar's guessing (zbar is told `ZBAR_CFG_BINARY` for QR and hands over the bytes as encoded).
///
/// zbar 0.23.92 with `ZBAR_CFG_BINARY` copies byte- and Kanji-mode segments as they are and
/// drops ECI designators (it does not expose them at all), so the character set is inferred:
/// 1. valid UTF-8 (ASCII included) is UTF-8;
/// 2. else well-formed Shift-JIS (the QR Kanji mode's character set, and the JIS8 default of the
///    2000 edition) that has double-byte characters and a byte in 0x80-0x9F is Shift-JIS: those
///    bytes are C1 control codes in ISO-8859-1, which no Latin-1 text contains;
/// 3. else ISO-8859-1, the byte mode's default character set since ISO/IEC 18004:2005.
/// Valid UTF-8 is text as it is (Code 128 code set A encodes control characters on purpose; the
/// log escapes them). Bytes that are not UTF-8 and would, as Shift-JIS or ISO-8859-1, hold control
/// characters other than TAB, LF, CR and the separators of ISO/IEC 15434 (EOT, FS, GS, RS) are
/// binary: no text, see `DecodedSymbol.hex`.
///
/// ECI: where a QR code carries an ECI designator, zbar 0.23.92 converts that segment to UTF-8
/// itself even with `ZBAR_CFG_BINARY` (measured: ECI 3 + ISO-8859-1 bytes come back as UTF-8), and
/// does not expose the designator; rule 1 then applies.
public enum PayloadText {
    public enum Charset: String, Sendable { case utf8 = "UTF-8", shiftJIS = "Shift_JIS", latin1 = "ISO-8859-1" }

    /// The text and the character set it was read in, or nil when the payload is binary.
    public static func decode(_ bytes: [UInt8]) -> (text: String, charset: Charset)? {
        if let s = String(validating: bytes, as: UTF8.self) { return (s, .utf8) }
        let decoded: (String, Charset)
        if bytes.contains(where: { $0 >= 0x80 && $0 <= 0x9F }), isShiftJIS(bytes), let s = shiftJISToString(bytes) {
            decoded = (s, .shiftJIS)
        } else {
            var s = ""
            s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            decoded = (s, .latin1)
        }
        return isText(decoded.0) ? decoded : nil
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

    /// Well-formed Shift-JIS (JIS X 0208 lead and trail byte ranges, single-byte ASCII/JIS-Roman
    /// and half-width katakana) with at least one double-byte character.
    static func isShiftJIS(_ bytes: [UInt8]) -> Bool {
        var i = 0, doubles = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 || (b >= 0xA1 && b <= 0xDF) { i += 1; continue }
            guard (b >= 0x81 && b <= 0x9F) || (b >= 0xE0 && b <= 0xEF), i + 1 < bytes.count else { return false }
            let t = bytes[i + 1]
            guard (t >= 0x40 && t <= 0x7E) || (t >= 0x80 && t <= 0xFC) else { return false }
            doubles += 1
            i += 2
        }
        return doubles > 0
    }

    /// Shift-JIS to a String through glibc's iconv; nil when iconv refuses a character.
    static func shiftJISToString(_ bytes: [UInt8]) -> String? {
        let cd = iconv_open("UTF-8", "SHIFT_JIS")
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
