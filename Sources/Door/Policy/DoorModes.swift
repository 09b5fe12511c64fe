// SPDX-License-Identifier: Apache-2.0
/// The door's mode (interface.md 0.4, "Modes"): `normal`; `unlock`, the strike held released;
/// `lockdown`, only `lockdown-allow` groups open; `emergency`, from the fire panel's input, above
/// every other.
public enum DoorMode: String, CaseIterable, Sendable {
    case normal, unlock, lockdown, emergency
}

/// Why the mode changed (the `mode` event's `reason`).
public enum DoorModeReason: String, Sendable {
    case command, schedule, first, input, until, restart
}

/// The building's or the installer's order (`mode` command, `kiosk mode`).
public enum DoorModeCommand: Equatable, Sendable {
    case normal
    case lockdown
    /// Until a Unix time, at most `DoorModes.maxUnlockSeconds` ahead.
    case unlock(until: Int64)
}

/// The door's modes as a value (pure, the clock given): what was commanded
/// (kept across restarts: `persisted`), the `unlock` lines' windows and their `first=GROUP`
/// condition, the emergency input. `evaluate` says the mode now and, when it changed, why.
///
/// Precedence: the emergency input; a commanded lockdown; a commanded unlock until its time;
/// an `unlock` line's window (with `first=GROUP`: only once a member of GROUP was granted in
/// that window's occurrence); else normal. While the clock is not synchronised no unlock window
/// starts (one already running runs to its end). A commanded `normal` ends a commanded lockdown
/// or unlock, not a scheduled window.
public struct DoorModes: Equatable, Sendable {
    public static let maxUnlockSeconds: Int64 = 24 * 3600

    public private(set) var lockdown = false
    public private(set) var unlockUntil: Int64?
    public private(set) var mode: DoorMode = .normal
    /// For each `unlock` line (by index), the day its window started on when a member of its
    /// `first` group was granted in it.
    private var firstGranted: [Int: LocalDate] = [:]
    /// The `unlock` lines whose window was unlocking at the last evaluation, by the day it began.
    private var running: [Int: LocalDate] = [:]
    /// A command was taken since the last evaluation; the state was read back at a restart.
    private var commanded = false
    private var restored = false

    public init() {}

    /// A command from the building or `kiosk mode`: nil when taken, else why it was refused.
    public mutating func command(_ c: DoorModeCommand, now: Int64) -> String? {
        defer { commanded = true }
        switch c {
        case .normal:
            lockdown = false
            unlockUntil = nil
        case .lockdown:
            lockdown = true
        case .unlock(let until):
            guard until > now else { return "until is not in the future" }
            guard until - now <= DoorModes.maxUnlockSeconds else { return "until is more than 24 h ahead" }
            unlockUntil = until
        }
        return nil
    }

    /// A grant the rules gave (`groups` of the credential) at `clock`: the `first=GROUP` windows
    /// open now begin to unlock.
    public mutating func granted(groups: [String], at clock: WallClock, rules: AccessRules, holidays: Set<LocalDate>) {
        for (i, u) in rules.unlocks.enumerated() {
            guard let first = u.firstGroup, groups.contains(first), let day = rules.openSince(u.schedule, at: clock, holidays: holidays) else { continue }
            firstGranted[i] = day
        }
    }

    /// The mode at `now` (Unix seconds; `clock` the wall clock then), and the reason when it
    /// changed since the last evaluation (nil: unchanged).
    public mutating func evaluate(now: Int64, clock: WallClock, rules: AccessRules, holidays: Set<LocalDate>, clockSynced: Bool,
                                  emergency: Bool) -> DoorModeReason? {
        var expired = false
        if let until = unlockUntil, now >= until {
            unlockUntil = nil
            expired = true
        }
        var scheduled: DoorModeReason?
        var nowRunning: [Int: LocalDate] = [:]
        for (i, u) in rules.unlocks.enumerated() {
            guard let day = rules.openSince(u.schedule, at: clock, holidays: holidays) else { continue }
            // While the clock is not synchronised, only a window already running goes on.
            guard clockSynced || running[i] == day else { continue }
            if u.firstGroup != nil && firstGranted[i] != day { continue }
            nowRunning[i] = day
            scheduled = scheduled ?? (u.firstGroup != nil ? .first : .schedule)
        }
        running = nowRunning
        firstGranted = firstGranted.filter { rules.openSince(rules.unlocks[$0.key].schedule, at: clock, holidays: holidays) == $0.value }
        let byCommand: DoorModeReason = restored ? .restart : .command
        let (next, why): (DoorMode, DoorModeReason) =
            emergency ? (.emergency, .input)
            : lockdown ? (.lockdown, byCommand)
            : unlockUntil != nil ? (.unlock, byCommand)
            : scheduled.map { (.unlock, $0) }
            ?? (.normal, expired ? .until : mode == .emergency ? .input : commanded ? .command : .schedule)
        commanded = false
        restored = false
        guard next != mode else { return nil }
        // The fire panel's input ended: that is why, whatever mode follows.
        let reason = mode == .emergency ? .input : why
        mode = next
        return reason
    }

    /// What must survive a restart: a lockdown until ended, an unlock until its time.
    public var persisted: String {
        "kiosk-mode 1\n" + (lockdown ? "lockdown\n" : "") + (unlockUntil.map { "unlock \($0)\n" } ?? "")
    }

    /// Reads `persisted` back; nil for anything else (the caller keeps the door in lockdown
    /// rather than guess: a torn file must not open it).
    public static func restore(_ text: String) -> DoorModes? {
        guard text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == "kiosk-mode 1" else { return nil }
        var m = DoorModes()
        m.restored = true
        for line in lines.dropFirst() {
            if line == "lockdown", !m.lockdown {
                m.lockdown = true
            } else if line.hasPrefix("unlock "), m.unlockUntil == nil, let t = Int64(line.dropFirst(7)), line.dropFirst(7).allSatisfy(\.isNumber) {
                m.unlockUntil = t
            } else {
                return nil
            }
        }
        return m
    }
}

extension AccessRules {
    /// The day the window of `schedule` that is open at `clock` started on (not a closed day),
    /// or nil when none is open; `always` started on `clock`'s day.
    public func openSince(_ schedule: String, at clock: WallClock, holidays: Set<LocalDate>) -> LocalDate? {
        if schedule == AccessRules.always { return clock.date }
        for w in schedules[schedule]?.windows ?? [] {
            if let day = w.openSince(clock), !holidays.contains(day) { return day }
        }
        return nil
    }
}

/// `kiosk mode`'s request on the kiosk's local socket, one line: `normal`, `lockdown`
/// or `unlock UNTIL` (Unix seconds), at most `maxBytes`; and its answer, `ok MODE` or
/// `refused REASON`. Anything else is refused with what is accepted.
public enum ModeRequest {
    public static let maxBytes = 128
    public static let expected = "normal, lockdown or unlock UNIX_SECONDS"

    public static func parse(_ bytes: [UInt8]) -> Result<DoorModeCommand, ModeRequestError> {
        guard bytes.count <= maxBytes else { return .failure(ModeRequestError(text: "longer than \(maxBytes) bytes")) }
        var line = bytes
        if line.last == 0x0A { line.removeLast() }
        guard !line.contains(0x0A), let text = String(validating: line, as: UTF8.self) else {
            return .failure(ModeRequestError(text: "not one line of text (expected \(expected))"))
        }
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        switch (words.first, words.count) {
        case ("normal", 1): return .success(.normal)
        case ("lockdown", 1): return .success(.lockdown)
        case ("unlock", 2):
            let t = words[1]
            guard !t.isEmpty, t.count <= 12, t.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let until = Int64(t) else {
                return .failure(ModeRequestError(text: "unlock needs UNIX_SECONDS, a whole number"))
            }
            return .success(.unlock(until: until))
        default:
            return .failure(ModeRequestError(text: "expected \(expected)"))
        }
    }

    /// The request's line for a command.
    public static func line(_ c: DoorModeCommand) -> String {
        switch c {
        case .normal: return "normal\n"
        case .lockdown: return "lockdown\n"
        case .unlock(let until): return "unlock \(until)\n"
        }
    }
}

public struct ModeRequestError: Error, Equatable, Sendable {
    public var text: String
    public init(text: String) { self.text = text }
}
