// SPDX-License-Identifier: Apache-2.0

public enum LogLevel: Int, Comparable, CaseIterable, Sendable {
    case debug, info, warning, error

    public var name: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warning: return "warning"
        case .error: return "error"
        }
    }

    /// The sd-daemon priority that journald reads from a `<N>` line prefix.
    public var syslogPriority: Int {
        switch self {
        case .debug: return 7
        case .info: return 6
        case .warning: return 4
        case .error: return 3
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

public enum LogFormat: String, CaseIterable, Sendable {
    case logfmt, json
}

/// A field's value. Scanned payloads arrive as `.bytes`: they are escaped byte by byte, so that
/// invalid UTF-8 is shown, not replaced, and nothing a stranger printed can end a line or forge a field.
public enum LogValue: Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case text(String)
    case bytes([UInt8])
    case int(Int)
    /// A measurement, printed with `digits` decimals.
    case number(Double, digits: Int)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int) { self = .int(value) }

    public static func ms(_ value: Double) -> LogValue { .number(value, digits: 1) }
}

public typealias LogFields = KeyValuePairs<String, LogValue>

/// The escaping rules, kept apart so the tests can hit them directly.
public enum LogEscape {
    public static func logfmt(_ value: LogValue) -> String {
        switch value {
        case .text(let s): return logfmt(Array(s.utf8))
        case .bytes(let b): return logfmt(b)
        case .int(let i): return String(i)
        case .number(let d, let digits): return formatNumber(d, digits: digits)
        case .bool(let b): return b ? "true" : "false"
        }
    }

    public static func json(_ value: LogValue) -> String {
        switch value {
        case .text(let s): return jsonString(Array(s.utf8))
        case .bytes(let b): return jsonString(b)
        case .int(let i): return String(i)
        case .number(let d, let digits): return d.isFinite ? formatNumber(d, digits: digits) : "null"
        case .bool(let b): return b ? "true" : "false"
        }
    }

    static func formatNumber(_ d: Double, digits: Int) -> String {
        Format.fixed(d, digits)
    }

    /// A bare word when the value is plain printable ASCII without `"`, `=`, `\` or spaces;
    /// otherwise a double-quoted string with every risky byte escaped.
    public static func logfmt(_ bytes: [UInt8]) -> String {
        let plain = !bytes.isEmpty && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "\\") }
        if plain { return String(decoding: bytes, as: UTF8.self) }
        return "\"" + escaped(bytes, invalidByte: { "\\x" + Format.hex($0, width: 2) }) + "\""
    }

    /// A JSON string. JSON cannot hold raw bytes, so a byte that is not part of valid UTF-8 is
    /// written as the four characters `\xNN` (its backslash escaped for JSON).
    public static func jsonString(_ bytes: [UInt8]) -> String {
        "\"" + escaped(bytes, invalidByte: { "\\\\x" + Format.hex($0, width: 2) }, json: true) + "\""
    }

    /// Valid UTF-8 printable text passes; quotes and backslashes are escaped; control characters
    /// (C0, DEL, C1), the Unicode line and paragraph separators and format characters (bidi
    /// overrides that could reorder a line on screen, zero-width joiners) become `\uNNNN`;
    /// unassigned and private code points too; a scalar that would join the kiosk's own
    /// punctuation into one grapheme is escaped, so that no viewer can draw it on a quote: one
    /// that extends the grapheme before it (combining marks, spacing marks such as Thai U+0E33,
    /// half-width voiced sound marks, emoji modifiers) where it is first in the value or follows
    /// an escape, and one that joins the grapheme after it (the Prepend class, such as Malayalam
    /// U+0D4E) wherever it is, since a quote or an escape's backslash may come next. Swift's own
    /// grapheme breaking decides (`joinsPunctuation`). Bytes that are not valid UTF-8 go through
    /// `invalidByte`.
    public static func escaped(_ bytes: [UInt8], invalidByte: (UInt8) -> String, json: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(bytes.count + 8)
        var i = 0
        var afterPunctuation = true  // the opening quote
        while i < bytes.count {
            let (scalar, length) = decodeScalar(bytes, at: i)
            guard let scalar else {
                out += invalidByte(bytes[i])
                afterPunctuation = true
                i += 1
                continue
            }
            i += length
            var escapedHere = true
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x00..<0x20, 0x7F:
                out += json ? "\\u" + Format.hex(scalar.value, width: 4) : "\\x" + Format.hex(scalar.value, width: 2)
            case 0x20..<0x7F:
                out.unicodeScalars.append(scalar)
                escapedHere = false
            default:
                if mustEscape(scalar, afterPunctuation: afterPunctuation) {
                    out += unicodeEscape(scalar, json: json)
                } else {
                    out.unicodeScalars.append(scalar)
                    escapedHere = false
                }
            }
            afterPunctuation = escapedHere
        }
        return out
    }

    /// `\uNNNN`; above the BMP, JSON's surrogate pair or logfmt's `\UNNNNNNNN`.
    static func unicodeEscape(_ scalar: Unicode.Scalar, json: Bool) -> String {
        let v = scalar.value
        guard v > 0xFFFF else { return "\\u" + Format.hex(v, width: 4) }
        guard json else { return "\\U" + Format.hex(v, width: 8) }
        let u = v - 0x10000
        return "\\u" + Format.hex(0xD800 + (u >> 10), width: 4) + "\\u" + Format.hex(0xDC00 + (u & 0x3FF), width: 4)
    }

    static func mustEscape(_ scalar: Unicode.Scalar, afterPunctuation: Bool) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate:
            return true
        default:
            return joinsPunctuation(scalar, after: afterPunctuation)
        }
    }

    /// Whether `scalar` would make one grapheme with a quote or a backslash: after it (it extends
    /// what comes before: checked only where punctuation is before it), or before it (Prepend).
    /// The general category is not enough: U+0E33 is a letter (Lo) that is a spacing mark to
    /// grapheme breaking, and a Character-wise `line.first == "\""` fails on `"\u{0E33}...`.
    static func joinsPunctuation(_ scalar: Unicode.Scalar, after punctuation: Bool) -> Bool {
        var before = "\""
        before.unicodeScalars.append(scalar)
        if punctuation && before.count == 1 { return true }
        var after = ""
        after.unicodeScalars.append(scalar)
        after += "\""
        return after.count == 1
    }

    /// Decodes one UTF-8 scalar strictly (no overlongs, no surrogates, nothing above U+10FFFF).
    static func decodeScalar(_ b: [UInt8], at i: Int) -> (Unicode.Scalar?, Int) {
        let b0 = b[i]
        if b0 < 0x80 { return (Unicode.Scalar(b0), 1) }
        let length: Int
        var value: UInt32
        switch b0 {
        case 0xC2...0xDF: length = 2; value = UInt32(b0 & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(b0 & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(b0 & 0x07)
        default: return (nil, 1)
        }
        guard i + length <= b.count else { return (nil, 1) }
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return (nil, 1) }
            value = value << 6 | UInt32(c & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return (nil, 1) }
        return (scalar, length)
    }
}

/// An event as one line of text (logfmt or JSON), and as journal fields.
public enum LogLine {
    /// The journal entry of an event: MESSAGE (the log line), PRIORITY, SYSLOG_IDENTIFIER,
    /// KIOSK_EVENT and each field as KIOSK_<NAME>, its value escaped exactly as in the line
    /// (a payload is data everywhere, also in a journal field).
    public static func journalFields(_ level: LogLevel, _ event: String, _ fields: [(String, LogValue)], message: String)
        -> [(name: String, value: [UInt8])] {
        var out: [(name: String, value: [UInt8])] = [
            ("MESSAGE", Array(message.utf8)), ("PRIORITY", Array(String(level.syslogPriority).utf8)),
            ("SYSLOG_IDENTIFIER", Array("kiosk".utf8)), ("KIOSK_EVENT", Array(event.utf8)),
        ]
        for (key, value) in fields {
            let name = "KIOSK_" + String(key.uppercased().unicodeScalars.map { ("A"..."Z").contains($0) || ("0"..."9").contains($0) ? Character($0) : "_" })
            let text: String
            switch value {
            case .text(let s): text = LogEscape.escaped(Array(s.utf8), invalidByte: { "\\x" + Format.hex($0, width: 2) })
            case .bytes(let b): text = LogEscape.escaped(b, invalidByte: { "\\x" + Format.hex($0, width: 2) })
            default: text = LogEscape.logfmt(value)
            }
            out.append((name, Array(text.utf8)))
        }
        return out
    }

    public static func render(_ level: LogLevel, _ event: String, _ fields: [(String, LogValue)],
                              format: LogFormat, priorityPrefix: Bool) -> String {
        var line = priorityPrefix ? "<\(level.syslogPriority)>" : ""
        switch format {
        case .logfmt:
            line += "level=\(level.name) event=\(LogEscape.logfmt(Array(event.utf8)))"
            for (key, value) in fields {
                line += " \(key)=\(LogEscape.logfmt(value))"
            }
        case .json:
            line += "{\"level\":\"\(level.name)\",\"event\":\(LogEscape.jsonString(Array(event.utf8)))"
            for (key, value) in fields {
                line += ",\(LogEscape.jsonString(Array(key.utf8))):\(LogEscape.json(value))"
            }
            line += "}"
        }
        return line
    }
}
