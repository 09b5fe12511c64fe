// SPDX-License-Identifier: Apache-2.0
import Policy

/// Reads a logfmt line the way a log tool would: `key=value` pairs separated by spaces, values
/// either bare or double-quoted with backslash escapes. The tests use it to check that what the
/// kiosk writes parses back into exactly the fields it meant, whatever a payload held.
public enum Logfmt {
    public static func parse(_ line: String) -> [(key: String, value: String)] {
        var fields: [(String, String)] = []
        // Unicode scalars, as logfmt readers see a line: never grapheme clusters, which would let a
        // combining mark in a value swallow the quote beside it.
        var chars = Array(line.unicodeScalars)[...]
        if chars.first == "<", let close = chars.firstIndex(of: ">") { chars = chars[(close + 1)...] }
        while !chars.isEmpty {
            while chars.first == " " { chars.removeFirst() }
            guard let eq = chars.firstIndex(of: "=") else { break }
            let key = String(String.UnicodeScalarView(chars[chars.startIndex..<eq]))
            chars = chars[(eq + 1)...]
            var value = ""
            if chars.first == "\"" {
                chars.removeFirst()
                while let c = chars.first {
                    chars.removeFirst()
                    if c == "\"" { break }
                    if c == "\\", let e = chars.first {
                        chars.removeFirst()
                        value.unicodeScalars.append("\\")
                        value.unicodeScalars.append(e)
                    } else {
                        value.unicodeScalars.append(c)
                    }
                }
            } else {
                while let c = chars.first, c != " " { value.unicodeScalars.append(c); chars.removeFirst() }
            }
            fields.append((key, value))
        }
        return fields
    }

    /// The fields as a dictionary (last one wins), for lookups.
    public static func fields(_ line: String) -> [String: String] {
        Dictionary(parse(line).map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// The bytes a logfmt value stands for: undoes the kiosk's escapes (`\n`, `\r`, `\t`, `\"`,
    /// `\\`, `\xNN` for a raw byte, `\uNNNN` for a code point).
    public static func unescape(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(value.unicodeScalars)[...]
        while let c = chars.popFirst() {
            guard c == "\\", let e = chars.popFirst() else {
                out += Array(String(c).utf8)
                continue
            }
            switch e {
            case "n": out.append(0x0A)
            case "r": out.append(0x0D)
            case "t": out.append(0x09)
            case "x":
                let hex = String(String.UnicodeScalarView(chars.prefix(2)))
                chars = chars.dropFirst(2)
                out.append(Hex.value(hex).map { UInt8(truncatingIfNeeded: $0) } ?? 0x3F)
            case "u", "U":
                let digits = e == "u" ? 4 : 8
                let hex = String(String.UnicodeScalarView(chars.prefix(digits)))
                chars = chars.dropFirst(digits)
                out += Array(String(Unicode.Scalar(Hex.value(hex).flatMap { UInt32(exactly: $0) } ?? 0x3F) ?? "?").utf8)
            default: out += Array(String(e).utf8)
            }
        }
        return out
    }
}
