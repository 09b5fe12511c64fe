// SPDX-License-Identifier: Apache-2.0
/// What the buzzer says: on, off, on, ... in milliseconds, always starting with a sound
/// (`KIOSK_BEEP_READ`, `KIOSK_BEEP_GRANTED`, `KIOSK_BEEP_DENIED`, `KIOSK_BEEP_ERROR`).
///
/// `400` is one long beep; `80,80,80,80,80` three short ones with two gaps; an empty list says
/// nothing. Each step is 1-10000 ms: a 0 step would be a click no one hears, and a buzzer held for
/// more than ten seconds is a fault, not feedback. At most 16 steps (eight beeps): a pattern
/// longer than that is not told apart by ear, and a new verdict would cut it anyway. A list that
/// ends with an off step is accepted; the pause only makes the pattern longer (what `totalMs`
/// says), it sounds the same.
public struct BeepPattern: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The steps in milliseconds: even indices sound, odd ones are silent.
    public let milliseconds: [Int]

    public static let stepRange: ClosedRange<Int> = 1...10_000
    public static let maximumSteps = 16
    /// What the `config_error` event says a pattern variable accepts.
    public static let expected = "a comma list of on,off,... milliseconds, each 1-10000, at most 16; empty for silence"

    public static let silent = BeepPattern(checked: [])
    /// The defaults: one long beep for a grant, three short for a refusal, three
    /// medium for an error (the program failed or did not answer).
    public static let granted = BeepPattern(checked: [400])
    public static let denied = BeepPattern(checked: [80, 80, 80, 80, 80])
    public static let error = BeepPattern(checked: [200, 200, 200])
    /// `KIOSK_BEEP_ALARM`: a door forced or held open, the tamper loop opened.
    public static let alarm = BeepPattern(checked: [1000, 500, 1000, 500, 1000])
    /// A PIN is asked for (interface.md 0.6): two short beeps, unlike a verdict's.
    public static let pinPrompt = BeepPattern(checked: [60, 60, 60])

    private init(checked steps: [Int]) { milliseconds = steps }

    /// `KIOSK_BEEP_READ` when it is not given: today's beep (`KIOSK_BEEP_MS`, 1-5000) when every
    /// code beeps, silence in hook mode, where the verdict's pattern is the feedback.
    public static func readDefault(verdict: VerdictMode, beepMilliseconds: Int) -> BeepPattern {
        verdict != .none ? .silent : BeepPattern(checked: [min(max(beepMilliseconds, stepRange.lowerBound), stepRange.upperBound)])
    }

    /// The steps when they are within the limits above, else nil.
    public init?(milliseconds steps: [Int]) {
        guard steps.count <= BeepPattern.maximumSteps, steps.allSatisfy(BeepPattern.stepRange.contains) else { return nil }
        milliseconds = steps
    }

    /// Reads `on,off,on,...`: decimal digits only (no sign, no decimal point), blanks allowed
    /// around each number, no empty entry ("80,,80", a trailing comma). An empty or blank text is
    /// silence.
    public init?(parsing text: String) {
        func trimmed(_ entry: Substring) -> Substring {
            var s = entry
            while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
            while let c = s.last, c == " " || c == "\t" { s.removeLast() }
            return s
        }
        guard !trimmed(Substring(text)).isEmpty else {
            self.init(checked: [])
            return
        }
        var steps: [Int] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = trimmed(entry)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  steps.count < BeepPattern.maximumSteps else { return nil }
            // Capped so that a long run of digits cannot overflow; the range check refuses it.
            steps.append(digits.reduce(0) { min($0 * 10 + Int($1.asciiValue! - 48), 1_000_000) })
        }
        self.init(milliseconds: steps)
    }

    public var isSilent: Bool { milliseconds.isEmpty }
    /// From the first sound to the end of the last step.
    public var totalMs: Int { milliseconds.reduce(0, +) }
    /// How many times it sounds.
    public var beeps: Int { (milliseconds.count + 1) / 2 }

    /// When each sound starts and ends, in milliseconds from the pattern's start.
    public var sounds: [(startMs: Int, endMs: Int)] {
        var t = 0
        var result: [(startMs: Int, endMs: Int)] = []
        for (i, step) in milliseconds.enumerated() {
            if i % 2 == 0 { result.append((t, t + step)) }
            t += step
        }
        return result
    }

    /// The text it was read from, normalised: `80,80,80`; empty for silence.
    public var description: String { milliseconds.map(String.init).joined(separator: ",") }
}
