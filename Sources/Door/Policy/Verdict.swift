// SPDX-License-Identifier: Apache-2.0
/// Who decides whether a code opens the door (`KIOSK_VERDICT`).
public enum VerdictMode: String, CaseIterable, Sendable {
    /// Every reported code beeps the same, as before verdicts had patterns.
    case none
    /// The `KIOSK_ON_SCAN` program's exit status decides.
    case hook
    /// The built-in verifier of signed and rotating credentials decides; a code that
    /// is not a credential goes to the `KIOSK_ON_SCAN` program under hook rules, if one is set.
    case credentials

    /// What the `config_error` event says `KIOSK_VERDICT` accepts.
    public static let expected = "none, hook or credentials"
    /// `KIOSK_VERDICT_MS`: the longest wait for the program's answer.
    public static let defaultMilliseconds = 2000
    public static let millisecondsRange: ClosedRange<Int> = 100...60_000
    public static let millisecondsExpected = "a whole number of milliseconds from 100 to 60000"
}

/// How the verdict program ended, as `waitpid` tells it (or did not, in time).
public enum ProgramEnd: Equatable, Sendable {
    case exited(status: Int)
    case signalled(signal: Int)
    /// Could not be started at all (`posix_spawn` failed): the message says why.
    case notStarted(String)

    /// Reads a `waitpid` status word (Linux's layout, as glibc's WIFEXITED/WEXITSTATUS/WTERMSIG
    /// read it); nil for a stopped or continued child, which has not ended.
    public init?(waitStatus status: Int32) {
        let low = Int(status & 0x7f)
        if low == 0 {
            self = .exited(status: Int((status >> 8) & 0xff))
        } else if low != 0x7f && (status & 0xffff) != 0xffff {
            self = .signalled(signal: low)
        } else {
            return nil
        }
    }
}

/// The answer for one code: granted, denied or error, with why, and how long it took.
public struct Verdict: Equatable, Sendable {
    public enum Result: String, CaseIterable, Sendable {
        case granted, denied, error
    }

    public var result: Result
    /// For the log: "exit status 0", "exit status 7", "killed by signal 9 (SIGKILL)", "no answer
    /// within 2000 ms", "not started: ...".
    public var reason: String
    /// From the code's report to the verdict (the `verdict` event's `ms`).
    public var elapsedNs: UInt64
    /// In credentials mode, the verified credential's subject (`sub`, or a rotating
    /// code's holder): what an access controller is told instead of the token (OSDP's card read).
    public var subject: String?
    /// In credentials mode, the verifier's outcome this verdict was given from (nil for a
    /// program's verdict, a deadline's, a busy verifier's): what the features that hear the
    /// verdict may say of the credential, never its token.
    public var credential: CredentialOutcome?
    /// Granted by a duress code (interface.md 0.6): the door acts exactly as on the PIN; only the
    /// features that raise the alarm (the broker, the scan program) look at it.
    public var duress = false

    public init(result: Result, reason: String, elapsedNs: UInt64, subject: String? = nil) {
        self.result = result
        self.reason = reason
        self.elapsedNs = elapsedNs
        self.subject = subject
    }

    /// The verifier's verdict: granted when the credential is valid, else denied with its reason.
    public init(_ outcome: CredentialOutcome) {
        self.init(result: outcome.granted ? .granted : .denied, reason: outcome.reason.rawValue, elapsedNs: 0, subject: outcome.sub)
        credential = outcome
    }

    /// Exit 0 grants, exit 1 denies; any other status, a signal or a failure to start is an
    /// error, which the door treats as a refusal (it stays shut) but the person hears apart.
    public init(programEnd end: ProgramEnd, elapsedNs: UInt64) {
        switch end {
        case .exited(0): self.init(result: .granted, reason: "exit status 0", elapsedNs: elapsedNs)
        case .exited(1): self.init(result: .denied, reason: "exit status 1", elapsedNs: elapsedNs)
        case .exited(let s): self.init(result: .error, reason: "exit status \(s)", elapsedNs: elapsedNs)
        case .signalled(let s): self.init(result: .error, reason: "killed by signal \(Verdict.signalName(s))", elapsedNs: elapsedNs)
        case .notStarted(let why): self.init(result: .error, reason: "not started: \(why)", elapsedNs: elapsedNs)
        }
    }

    public var ms: Double { Double(elapsedNs) / 1e6 }

    /// "9 (SIGKILL)": Linux's numbers (the same on amd64 and arm64) for the usual ones.
    static func signalName(_ s: Int) -> String {
        let names = [1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
                     8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
                     14: "SIGALRM", 15: "SIGTERM"]
        return names[s].map { "\(s) (\($0))" } ?? String(s)
    }
}

/// One code waiting for its verdict: whichever comes first, the program's end or the deadline,
/// decides, once. The program may still be running when the deadline passes (it is ended by the
/// scan program's own timeout); its late answer is then ignored.
///
/// The wait counts from the code's report (`reportedNs`), not from the program's start: the person
/// at the door waits from the beep, and a code queued behind a slow one has its own deadline.
public struct VerdictWaitPolicy: Equatable, Sendable {
    public let reportedNs: UInt64
    public private(set) var limitNs: UInt64
    public private(set) var verdict: Verdict?

    public init(reportedNs: UInt64, limitMs: Int) {
        self.reportedNs = reportedNs
        limitNs = UInt64(max(0, limitMs)) * 1_000_000
    }

    /// The judge needs longer (the holder is asked for a PIN): the deadline moves to `ms` after
    /// the report, never earlier than it was.
    public mutating func extend(toMs ms: Int) {
        limitNs = max(limitNs, UInt64(max(0, ms)) * 1_000_000)
    }

    /// When the wait ends without an answer.
    public var deadlineNs: UInt64 { reportedNs + limitNs }
    public var isDecided: Bool { verdict != nil }

    /// The program ended at `t`: the verdict, or nil when one was already given. An answer that
    /// comes at or after the deadline is an error even if the deadline's check has not run yet
    /// (the same instant `check` calls the wait over).
    public mutating func programEnded(_ end: ProgramEnd, at t: UInt64) -> Verdict? {
        guard verdict == nil else { return nil }
        let elapsed = t >= reportedNs ? t - reportedNs : 0
        let v = elapsed >= limitNs ? timedOut(elapsedNs: elapsed) : Verdict(programEnd: end, elapsedNs: elapsed)
        verdict = v
        return v
    }

    /// A verdict given directly (the credential verifier's), at `t`: nil when one was
    /// already given. One that comes at or after the deadline is the deadline's error instead.
    public mutating func given(_ v: Verdict, at t: UInt64) -> Verdict? {
        guard verdict == nil else { return nil }
        let elapsed = t >= reportedNs ? t - reportedNs : 0
        var given = v
        given.elapsedNs = elapsed
        let decided = elapsed >= limitNs ? timedOut(elapsedNs: elapsed) : given
        verdict = decided
        return decided
    }

    /// The deadline's check: an error verdict when it has passed with no answer, else nil.
    public mutating func check(at t: UInt64) -> Verdict? {
        guard verdict == nil, t >= deadlineNs else { return nil }
        let v = timedOut(elapsedNs: t - reportedNs)
        verdict = v
        return v
    }

    private func timedOut(elapsedNs: UInt64) -> Verdict {
        Verdict(result: .error, reason: "no answer within \(limitNs / 1_000_000) ms", elapsedNs: elapsedNs)
    }
}
