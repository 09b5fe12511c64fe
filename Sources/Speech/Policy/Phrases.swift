// SPDX-License-Identifier: Apache-2.0
/// What the door says (interface.md 0.6, "Speech at the door"): a phrase for each verdict's
/// reason and each request, keyed by the reason with `-` for spaces. No phrase names a person:
/// a name said aloud at a door tells a stranger who is inside, and a screenshot's victim would
/// hear their own name from someone else's phone.
public enum SpeechPhrases {
    /// The default English phrases (`KIOSK_VOICE=en`), in interface.md's order; every key a
    /// phrases file may name.
    public static let defaults: [(key: String, text: String)] = [
        ("granted", "Welcome."),
        ("expired", outOfDate), ("not-yet-valid", outOfDate),
        ("stale", "This code is old. Please show the live pass."),
        ("used", alreadyUsed), ("antipassback", alreadyUsed),
        ("outside-schedule", notNow), ("holiday", notNow),
        ("no-access", notThisDoor), ("wrong-door", notThisDoor),
        ("lockdown", "The building is locked down."),
        ("revoked", "This pass has been withdrawn."),
        ("signature", notValid), ("unknown-key", notValid), ("wrong-issuer", notValid), ("holder-signature", notValid),
        ("no-proof", notValid), ("malformed", notValid), ("not-a-credential", notValid),
        ("clock-not-synchronized", cannotCheck), ("clock-behind", cannotCheck), ("state-damaged", cannotCheck),
        ("state-volatile", cannotCheck), ("store-full", cannotCheck),
        ("pin", "Please enter your pin."),
        ("wrong-pin", "Wrong pin."),
        ("pin-required", "No pin was entered."),
        ("pin-locked", "Too many wrong pins. Please call for help."),
        ("setup-applied", "Setup done."),
        ("setup-refused", "Setup code refused."),
    ]
    private static let outOfDate = "This pass is out of date."
    private static let alreadyUsed = "This pass was already used."
    private static let notNow = "Not at this time."
    private static let notThisDoor = "This pass does not open this door."
    private static let notValid = "This code is not valid here."
    private static let cannotCheck = "The door cannot check passes now. Please call for help."

    /// Every key, in the table's order.
    public static let keys: [String] = defaults.map(\.key)

    /// The requests: what the door asks for rather than decides (spoken with `KIOSK_SPEAK=denied`).
    public static let requests: Set<String> = ["pin", "setup-applied", "setup-refused"]

    /// The phrase key of a verdict: `granted` for any grant (a credential's reason is then
    /// `valid`, a scan program's `exit status 0`), else the reason with `-` for spaces when a
    /// phrase has that key; nil for a reason no phrase explains (a scan program's exit status, a
    /// timeout): the beeps say it, and nothing is said rather than something wrong.
    public static func key(reason: String, granted: Bool) -> String? {
        if granted { return "granted" }
        let key = String(reason.map { $0 == " " ? "-" : $0 })
        return keySet.contains(key) ? key : nil
    }

    static let keySet = Set(keys)

    /// The defaults with a phrases file's lines put in their place.
    public static func merged(_ replacements: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for (key, text) in defaults { out[key] = replacements[key] ?? text }
        return out
    }
}

/// `KIOSK_SPEAK`: which verdicts are spoken.
public enum SpeakSetting: String, CaseIterable, Sendable {
    /// Denials, door errors and requests (`pin`, `setup-*`): what a person at the door must act on.
    case denied
    /// Those and `granted` too.
    case all
    /// Nothing.
    case off = "0"

    public static let expected = "denied (denials and requests), all (also granted) or 0 (none)"

    /// Whether a phrase with this key is said.
    public func speaks(_ key: String) -> Bool {
        switch self {
        case .off: return false
        case .all: return true
        case .denied: return key != "granted"
        }
    }
}

/// `KIOSK_SPEAK_QUIET`: a local-time window of beeps only, `HH:MM-HH:MM`; an end at or before
/// the start crosses midnight (`22:00-07:00`).
public struct QuietWindow: Equatable, Sendable, CustomStringConvertible {
    /// Minutes of the day: `start` 0-1439, `end` 0-1440 (00:00 and 24:00 both mean midnight), not equal.
    public var start: Int
    public var end: Int

    public static let expected = "a local-time window HH:MM-HH:MM (00:00-23:59, the end also 24:00, not equal to the start; 22:00-07:00 crosses midnight)"

    public init?(parsing text: String) {
        guard let (a, b) = AccessRules.parseSpan(Substring(text)) else { return nil }
        start = a
        end = b
    }

    /// Whether `minute` (of the local day, 0-1439) is inside the window.
    public func contains(minute m: Int) -> Bool {
        end > start ? (m >= start && m < end) : (m >= start || m < end)
    }

    public var description: String {
        func hm(_ x: Int) -> String { let h = x / 60, m = x % 60; return "\(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m)" }
        return "\(hm(start))-\(hm(end))"
    }
}

/// A bad line of the phrases file: its number, the key it names (when it names one) and why.
public struct PhrasesFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var key: String?
    public var reason: String
    public var description: String { "line \(line)" + (key.map { " (\($0))" } ?? "") + ": \(reason)" }
}

/// `KIOSK_PHRASES_FILE`: `KEY TEXT` lines replacing default phrases (another language, the
/// site's words). A line whose first non-blank character is `#` is a comment, as are blank lines;
/// a `#` inside a phrase is part of it ("Room #3"). Parsed whole or not at all: a file with an
/// unknown key is refused, naming the line and the key, so that a typo never silences a phrase.
public enum PhrasesFile {
    /// A phrase is a sentence or two, said in a few seconds.
    public static let maxTextBytes = 300
    /// A file of every key at its longest, and comments.
    public static let maxBytes = 64 << 10

    public static func parse(_ text: String) throws(PhrasesFileError) -> [String: String] {
        guard text.utf8.count <= maxBytes else { throw PhrasesFileError(line: 0, key: nil, reason: "a file of at most \(maxBytes) bytes") }
        var phrases: [String: String] = [:]
        var firstLine: [String: Int] = [:]
        var number = 0
        // "\r\n" is one Character in Swift: a file written on Windows splits as well.
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let line = raw.trimmedOfBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            let keyEnd = line.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? line.endIndex
            let key = String(line[..<keyEnd])
            guard SpeechPhrases.keySet.contains(key) else {
                throw PhrasesFileError(line: number, key: key, reason: "no phrase has this key (keys: \(SpeechPhrases.keys.joined(separator: ", ")))")
            }
            if let first = firstLine[key] {
                throw PhrasesFileError(line: number, key: key, reason: "the key is already given on line \(first)")
            }
            let phrase = line[keyEnd...].trimmedOfBlanks
            guard !phrase.isEmpty else { throw PhrasesFileError(line: number, key: key, reason: "expected KEY TEXT: the phrase is missing") }
            guard phrase.utf8.count <= maxTextBytes else {
                throw PhrasesFileError(line: number, key: key, reason: "a phrase of at most \(maxTextBytes) bytes")
            }
            guard !phrase.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw PhrasesFileError(line: number, key: key, reason: "a phrase without control characters")
            }
            phrases[key] = phrase
            firstLine[key] = number
        }
        return phrases
    }
}
