// SPDX-License-Identifier: Apache-2.0
/// The few pieces of JSON the MQTT messages need, without Foundation: a string's exact text (a
/// consumer must read back the very characters a code held, so nothing is replaced or dropped),
/// base64 for bytes that are not text, and RFC 3339 times.
public enum JSONText {
    /// `text` as a JSON string literal (RFC 8259 section 7) that reads back as exactly `text`:
    /// the log's JSON escaper (`LogEscape.jsonString`). A Swift string is valid UTF-8, so no byte
    /// is replaced; quotes, backslashes, controls (NUL included) and the characters the log also
    /// escapes (line separators, bidi and format characters) are written as escapes.
    public static func quoted(_ text: String) -> String {
        LogEscape.jsonString(Array(text.utf8))
    }

    /// `bytes` as text when they are valid UTF-8 (strictly: no overlongs, no surrogates), else nil.
    public static func utf8Text(_ bytes: [UInt8]) -> String? {
        var i = 0
        while i < bytes.count {
            let (scalar, length) = LogEscape.decodeScalar(bytes, at: i)
            guard scalar != nil else { return nil }
            i += length
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// RFC 4648 base64, with padding, no line breaks.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of padded base64 text, nil when it is not exactly that (wrong length, a
    /// character outside the alphabet, padding anywhere but the end).
    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

    public static func decode(_ chars: [UInt8]) -> [UInt8]? {
        guard chars.count % 4 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): return 62
            case UInt8(ascii: "/"): return 63
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            let pad = last ? (chars[i + 3] == UInt8(ascii: "=") ? (chars[i + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var n: UInt32 = 0
            for k in 0..<(4 - pad) {
                guard let v = value(chars[i + k]) else { return nil }
                n = n << 6 | v
            }
            n <<= UInt32(6 * pad)
            out.append(UInt8(n >> 16))
            if pad < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}

/// A wall-clock instant as RFC 3339 in UTC with milliseconds ("2026-12-01T09:45:00.123Z"), from
/// milliseconds since the Unix epoch (the caller reads the clock; the core never does).
public enum RFC3339 {
    public static func utc(millisecondsSinceEpoch ms: Int64) -> String {
        let days = floorDiv(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        let (y, m, d) = civil(fromDays: days)
        let seconds = msOfDay / 1000
        return "\(Format.padded(y, width: 4))-\(Format.padded(m, width: 2))-\(Format.padded(d, width: 2))T"
            + "\(Format.padded(seconds / 3600, width: 2)):\(Format.padded(seconds / 60 % 60, width: 2)):"
            + "\(Format.padded(seconds % 60, width: 2)).\(Format.padded(msOfDay % 1000, width: 3))Z"
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// The proleptic Gregorian date of a day count from 1970-01-01 (`LocalDate`'s civil_from_days).
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let date = LocalDate(dayNumber: Int(z0))
        return (Int64(date.year), Int64(date.month), Int64(date.day))
    }
}
