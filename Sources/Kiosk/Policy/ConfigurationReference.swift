// SPDX-License-Identifier: Apache-2.0

/// What the manual says of each variable, read off the one table the kiosk parses with
/// (`Configuration.table`): its name, its default as `kiosk check` shows it, and what it accepts
/// (the `config_error` text). `kiosk-dev variables` prints it; `make docs` makes docs/reference.md's
/// table and kiosk.conf(5) from it, so neither can drift from the code.
public struct ConfigurationReference: Equatable, Sendable {
    public let name: String
    /// The default as text; a default made from the machine's name has `<hostname>` in its place.
    public let defaultText: String
    public let accepted: String

    /// Every variable, in the table's order.
    public static var rows: [ConfigurationReference] {
        // Two machines of different names tell which defaults come from the name.
        var one = Configuration(), two = Configuration()
        one.hostname = "hostnameone"
        two.hostname = "hostnametwo"
        return Configuration.table.map { v in
            let a = v.shown(one), b = v.shown(two)
            let text = a == b ? a : a.replacingOccurrences(of: "hostnameone", with: "<hostname>")
            return ConfigurationReference(name: v.name, defaultText: text, accepted: v.expected)
        }
    }
}

private extension String {
    /// A byte-wise search and replace: the core links no Foundation, and String's regex-backed
    /// algorithms would link the regex engine (docs/design/memory.md).
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        let bytes = Array(utf8), t = Array(target.utf8)
        var out: [UInt8] = [], i = 0
        while i < bytes.count {
            if !t.isEmpty, i + t.count <= bytes.count, bytes[i..<(i + t.count)].elementsEqual(t) {
                out += replacement.utf8
                i += t.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
