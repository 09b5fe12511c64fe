// SPDX-License-Identifier: Apache-2.0
/// What the speaker (`Speaker`, module Speech) does, decided on an injected time: which phrase
/// plays (the newest: a verdict cuts the phrase of the one before, so that its own beeps are
/// heard and then its own words), whether a phrase is said at all (`KIOSK_SPEAK`, the quiet
/// window), when a speaker that failed is tried again (backing off, so that a pulled USB speaker
/// costs a try every minute at most, not one a verdict), and which of its changes are said in the
/// log (once a change of state, never once a phrase).
public struct SpeakerPolicy {
    /// A phrase asked for: its key (or nil for a controller's text), the time of its verdict
    /// and when it may start (after the verdict's beeps).
    public struct Phrase: Equatable, Sendable {
        public var key: String?
        public var verdictAtNs: UInt64
        public var startAtNs: UInt64
        public var sequence: Int
    }

    public enum Health: Equatable, Sendable {
        /// Not opened yet.
        case unknown
        case ready
        case failed(String)
    }

    /// A change the log says.
    public enum Report: Equatable, Sendable {
        /// `speaker_error` (warning): the speaker could not be opened or was lost; `retryMs`: the
        /// next try, at the earliest.
        case failed(reason: String, retryMs: Int)
        /// `speaker_ready`: it plays again after a failure.
        case back
    }

    public let speak: SpeakSetting
    public let quiet: QuietWindow?
    /// 1 s, doubling to 60 s.
    public let backoff: Backoff

    public private(set) var health: Health = .unknown
    public private(set) var newest: Phrase?
    private var sequence = 0
    private var failures = 0
    private var retryAtNs: UInt64 = 0

    public init(speak: SpeakSetting, quiet: QuietWindow?) {
        self.speak = speak
        self.quiet = quiet
        var b = Backoff()
        b.initialNs = 1_000_000_000
        b.capNs = 60_000_000_000
        backoff = b
    }

    /// Whether a verdict's phrase is said at `minute` of the local day.
    public func says(key: String, minute: Int) -> Bool {
        speak.speaks(key) && !(quiet?.contains(minute: minute) ?? false)
    }

    /// Whether a controller's text is said (osdp_TEXT: the controller chose to say it, so
    /// `KIOSK_SPEAK` does not filter it; the quiet window does, and `0` silences it too).
    public func saysText(minute: Int) -> Bool {
        speak != .off && !(quiet?.contains(minute: minute) ?? false)
    }

    /// A phrase asked for: it is now the newest, and any older one (waiting or playing) is cut.
    public mutating func asked(key: String?, verdictAtNs: UInt64, startAtNs: UInt64) -> Phrase {
        sequence += 1
        let p = Phrase(key: key, verdictAtNs: verdictAtNs, startAtNs: startAtNs, sequence: sequence)
        newest = p
        return p
    }

    /// A verdict with nothing to say (or before its own phrase): whatever waits or plays is cut.
    public mutating func cut() {
        sequence += 1
        newest = nil
    }

    /// Whether `p` is still to be said (or to go on playing): no phrase was asked for since.
    public func isCurrent(_ p: Phrase) -> Bool { newest?.sequence == p.sequence }

    /// `p` was played out (or given up): nothing is waiting.
    public mutating func done(_ p: Phrase) {
        if isCurrent(p) { newest = nil }
    }

    /// Whether the speaker may be opened at `now`: at once unless it failed, then after the back-off.
    public func mayOpen(now: UInt64) -> Bool {
        if case .failed = health { return now >= retryAtNs }
        return true
    }

    /// The next try after a failure (nil: none failed).
    public var nextTryNs: UInt64? {
        if case .failed = health { return retryAtNs }
        return nil
    }

    /// The speaker opened (or wrote again): `back` when it had failed.
    public mutating func opened() -> Report? {
        let wasFailed = nextTryNs != nil
        health = .ready
        failures = 0
        return wasFailed ? .back : nil
    }

    /// The speaker could not be opened, or was lost while playing (a USB speaker pulled): tried
    /// again after the back-off. Said once a change: a speaker that fails again the same way is
    /// not said again until it has worked in between, or fails in another way.
    public mutating func failed(_ reason: String, now: UInt64) -> Report? {
        failures += 1
        let delay = backoff.delay(attempt: failures)
        retryAtNs = now &+ delay
        let report: Report? = health == .failed(reason) ? nil : .failed(reason: reason, retryMs: Int(delay / 1_000_000))
        health = .failed(reason)
        return report
    }

    /// `spoke`'s `ms`: from the verdict to the first sample written to the speaker.
    public static func spokeMs(_ p: Phrase, firstSampleAtNs: UInt64) -> Double {
        firstSampleAtNs > p.verdictAtNs ? Double(firstSampleAtNs - p.verdictAtNs) / 1_000_000 : 0
    }
}
