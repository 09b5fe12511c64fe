// SPDX-License-Identifier: Apache-2.0
/// The digits of an entered PIN: never shown (its description hides them), compared only by
/// the hash's check at the edge.
public struct PINDigits: Equatable, Sendable, CustomStringConvertible {
    public let digits: [UInt8]
    public init(_ digits: [UInt8]) { self.digits = digits }
    /// The ASCII bytes the hash is made of (`1234` as 0x31 0x32 0x33 0x34).
    public var ascii: [UInt8] { digits.map { 0x30 + $0 } }
    /// The same PIN with its last digit one less (9 for 0): the PIN whose `plus1` duress code this is.
    public var lastDigitLessOne: PINDigits {
        guard let last = digits.last else { return self }
        return PINDigits(digits.dropLast() + [(last + 9) % 10])
    }
    public var description: String { "(a PIN of \(digits.count) digits)" }
}

/// One PIN awaited after a credential (interface.md 0.6): the window `KIOSK_PIN_WINDOW_S` from the
/// ask, `#` ends it (after at least one digit), the eighth digit ends it, `*` clears what was
/// typed. Time is the caller's (the injected clock's nanoseconds).
public struct PINEntryPolicy: Equatable, Sendable {
    public static let maxDigits = 8
    public static let minDigits = 4
    public static let windowRange: ClosedRange<Int> = 3...60
    public static let defaultWindowS = 10

    public enum Step: Equatable, Sendable {
        /// A PIN to check.
        case entered(PINDigits)
        /// The window passed without one.
        case timedOut
    }

    public let deadlineNs: UInt64
    private var typed: [UInt8] = []
    public private(set) var isOver = false

    public init(askedNs: UInt64, windowS: Int) {
        deadlineNs = askedNs &+ UInt64(max(0, windowS)) * 1_000_000_000
    }

    /// How many digits are typed (for the tests; never logged).
    public var typedCount: Int { typed.count }

    /// A key at `t`: the PIN when it ends, the window's end when the key came too late, else nil.
    public mutating func key(_ k: KeypadKey, at t: UInt64) -> Step? {
        guard !isOver else { return nil }
        if let late = check(at: t) { return late }
        switch k {
        case .star:
            typed = []
        case .hash:
            guard !typed.isEmpty else { return nil }
            return end(.entered(PINDigits(typed)))
        case .digit(let d):
            typed.append(d)
            if typed.count == PINEntryPolicy.maxDigits { return end(.entered(PINDigits(typed))) }
        }
        return nil
    }

    /// The window's end, once `t` reaches the deadline with no PIN.
    public mutating func check(at t: UInt64) -> Step? {
        guard !isOver, t >= deadlineNs else { return nil }
        return end(.timedOut)
    }

    private mutating func end(_ step: Step) -> Step {
        isOver = true
        typed = []
        return step
    }
}

/// `KIOSK_DURESS_CODE`: which code opens under coercion and raises the alarm.
public enum DuressCode: String, Equatable, Sendable, CaseIterable {
    /// The PIN with its last digit plus one (9 gives 0).
    case plus1
    /// Only a subject's `duress=` hash.
    case listed
    /// None.
    case off = "0"
    public static let expected = "plus1, listed or 0"
}

/// What a PIN entered for a subject is (the `pin` event's `result` and the door's verdict).
public enum PINResult: String, Equatable, Sendable {
    case ok, duress, wrong
}

/// Judges an entered PIN against a subject's line: the PIN's hash, then the duress code's, both
/// always computed (`matches`: the scrypt at the edge), so that how long a check takes does not
/// say which matched or whether the subject has a duress hash.
public enum PINJudgement {
    public static func judge(_ pin: PINDigits, _ entry: PinsEntry, duress: DuressCode,
                             matches: (PINDigits, PINHash) -> Bool) -> PINResult {
        let right = matches(pin, entry.hash)
        var coerced = false
        switch duress {
        case .plus1: coerced = matches(pin.lastDigitLessOne, entry.hash)
        case .listed: coerced = matches(pin, entry.duress ?? entry.hash) && entry.duress != nil
        case .off: break
        }
        if right { return .ok }
        return coerced ? .duress : .wrong
    }
}
