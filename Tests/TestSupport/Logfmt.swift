/// Reads a logfmt line the way a log tool would: `key=value` pairs separated by spaces, values
/// either bare or double-quoted with backslash escapes. The tests use it to check that what the
/// kiosk writes parses back into exactly the fields it meant, whatever a payload held.
public enum Logfmt {
    public static func parse(_ line: String) -> [(key: String, value: String)] {
        var fields: [(String, String)] = []
        var chars = Array(line)[...]
        if chars.first == "<", let close = chars.firstIndex(of: ">") { chars = chars[(close + 1)...] }
        while !chars.isEmpty {
            while chars.first == " " { chars.removeFirst() }
            guard let eq = chars.firstIndex(of: "=") else { break }
            let key = String(chars[chars.startIndex..<eq])
            chars = chars[(eq + 1)...]
            var value = ""
            if chars.first == "\"" {
                chars.removeFirst()
                while let c = chars.first {
                    chars.removeFirst()
                    if c == "\"" { break }
                    if c == "\\", let e = chars.first {
                        chars.removeFirst()
                        value.append("\\")
                        value.append(e)
                    } else {
                        value.append(c)
                    }
                }
            } else {
                while let c = chars.first, c != " " { value.append(c); chars.removeFirst() }
            }
            fields.append((key, value))
        }
        return fields
    }

    /// The fields as a dictionary (last one wins), for lookups.
    public static func fields(_ line: String) -> [String: String] {
        Dictionary(parse(line).map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }
}
