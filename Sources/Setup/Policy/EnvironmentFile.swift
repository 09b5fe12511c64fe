// SPDX-License-Identifier: Apache-2.0
/// `/etc/default/kiosk` as systemd's `EnvironmentFile=` reads it: `NAME=value` lines, `#` and
/// `;` comments, values bare, in single quotes (literal) or double quotes (`\"`, `\\`, `\$`,
/// `` \` `` escaped). A setup code rewrites it whole: each variable's line replaced (a later
/// line of the same name, which would win, dropped) or added at the end; every other line
/// (comments, the commented defaults, other variables) kept as it was.
public enum EnvironmentFile {
    public struct Assignment: Equatable, Sendable {
        public let name: String
        public let value: String
    }

    /// The assignments in order (a name given twice: the later wins, as systemd reads it).
    public static func assignments(_ text: String) -> [Assignment] {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { assignment(String($0)) }
    }

    public static func values(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for a in assignments(text) { out[a.name] = a.value }
        return out
    }

    /// Whether the file sets any `KIOSK_` variable (a line not commented out): a door whose file
    /// sets none is new.
    public static func setsKioskVariable(_ text: String) -> Bool {
        assignments(text).contains { $0.name.hasPrefix("KIOSK_") }
    }

    /// The file with `setting` in it and the names in `removing` gone.
    public static func rewrite(_ text: String, setting: [(name: String, value: String)], removing: Set<String> = []) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let wanted = Dictionary(setting.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        var written: Set<String> = []
        var out: [String] = []
        for line in lines {
            guard let a = assignment(line) else { out.append(line); continue }
            if removing.contains(a.name) { continue }
            guard let value = wanted[a.name] else { out.append(line); continue }
            if written.insert(a.name).inserted { out.append(EnvironmentFile.line(a.name, value)) }
        }
        let added = setting.filter { !written.contains($0.name) && !removing.contains($0.name) }
        var seen: Set<String> = []
        if !added.isEmpty {
            if let last = out.last, !last.isEmpty { out.append("") }
            out.append("# Set by a setup code (kiosk setup --apply)")
            for (name, value) in added where seen.insert(name).inserted { out.append(EnvironmentFile.line(name, wanted[name] ?? value)) }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `NAME=value`, quoted so that systemd reads back exactly `value` (which has no line break).
    public static func line(_ name: String, _ value: String) -> String {
        let bare = !value.isEmpty && value.utf8.allSatisfy { c in
            SetupText.isAlnum(c) || "_./:,@%+=-".utf8.contains(c)
        }
        if bare { return "\(name)=\(value)" }
        if !value.contains("'") && !value.contains("\\") { return "\(name)='\(value)'" }
        var escaped = ""
        for ch in value {
            if ch == "\\" || ch == "\"" || ch == "$" || ch == "`" { escaped.append("\\") }
            escaped.append(ch)
        }
        return "\(name)=\"\(escaped)\""
    }

    /// One line's assignment, or nil (blank, a comment, not `NAME=`).
    static func assignment(_ raw: String) -> Assignment? {
        var s = Substring(raw)
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        guard let first = s.first, first != "#", first != ";" else { return nil }
        if s.hasPrefix("export ") { s = s.dropFirst(7) }
        guard let eq = s.firstIndex(of: "=") else { return nil }
        let name = String(s[..<eq]).trimmedOfBlanks
        guard let n = name.utf8.first, !(n >= UInt8(ascii: "0") && n <= UInt8(ascii: "9")),
              name.utf8.allSatisfy({ SetupText.isAlnum($0) || $0 == UInt8(ascii: "_") }) else { return nil }
        return Assignment(name: name, value: value(Substring(String(s[s.index(after: eq)...]).trimmedOfBlanks)))
    }

    private static func value(_ s: Substring) -> String {
        var out = ""
        var quote: Character?
        var escape = false
        for ch in s {
            if escape {
                if quote == "\"" && !"\"\\$`".contains(ch) { out.append("\\") }
                out.append(ch)
                escape = false
                continue
            }
            switch (quote, ch) {
            case (nil, "'"), (nil, "\""): quote = ch
            case ("'", "'"), ("\"", "\""): quote = nil
            case ("'", _): out.append(ch)
            case (_, "\\"): escape = true
            default: out.append(ch)
            }
        }
        return out
    }
}
