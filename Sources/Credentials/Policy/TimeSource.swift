// SPDX-License-Identifier: Apache-2.0
/// Where the time comes from, and a time that has certainly passed (interface.md 0.5,
/// "The clock"). Pure: the shell gathers the facts (the kernel's synchronised flag, the RTCs under
/// /sys/class/rtc, the floor's sources) and the times; this decides which source is trusted now,
/// whether the clock is behind the floor, and when the kept floor is written.

/// The source the kiosk trusts the clock from now.
public enum ClockSource: String, CaseIterable, Sendable {
    /// The kernel says NTP synchronised it (adjtimex; what timedatectl shows).
    case ntp
    /// A battery-backed RTC set the system clock at this boot (`hctosys` 1) and reads a time not
    /// before the floor (a flat battery resets it to its epoch: then it is not trusted).
    case rtc
    case none
}

/// `KIOSK_REQUIRE_SYNCED_CLOCK`: when time-bound credentials are judged by the clock.
public enum ClockSetting: String, CaseIterable, Sendable {
    /// NTP or a battery-backed RTC (the default).
    case ntpOrRTC = "1"
    /// NTP only.
    case ntpOnly = "ntp"
    /// Always (0.3's `0`), but never before the floor.
    case always = "0"

    public static let expected = "1 (judge time-bound credentials when NTP or a battery-backed RTC set the clock), "
        + "ntp (only when NTP synchronised it) or 0 (always, by the clock as it is; never before the floor)"
}

/// One RTC as the shell read it (`/sys/class/rtc/rtcN`).
public struct RTCReading: Equatable, Sendable {
    /// `rtc0`.
    public var name: String
    /// `hctosys` reads 1: this RTC set the system clock at this boot.
    public var setSystemClock: Bool
    /// Its time (`since_epoch`); nil when it did not read (a DS3231 whose oscillator stopped
    /// answers EINVAL).
    public var time: Int64?

    public init(name: String, setSystemClock: Bool, time: Int64?) {
        self.name = name
        self.setSystemClock = setSystemClock
        self.time = time
    }
}

/// What the shell saw, at one moment.
public struct ClockFacts: Equatable, Sendable {
    /// The system's wall clock, Unix seconds.
    public var now: Int64
    /// The kernel's synchronised flag (`kiosk_clock_unsynchronized() == 0`).
    public var ntpSynchronized: Bool
    /// Every RTC found (none on a Pi 4 without a module).
    public var rtcs: [RTCReading]

    public init(now: Int64, ntpSynchronized: Bool, rtcs: [RTCReading] = []) {
        self.now = now
        self.ntpSynchronized = ntpSynchronized
        self.rtcs = rtcs
    }
}

/// A time that has certainly passed: the newest of its sources (Unix seconds; nil: that source
/// has nothing). A credential's own `iat` is never one: one issuer with a wrong clock must not
/// shut every door.
public struct ClockFloor: Equatable, Sendable {
    public enum Source: String, CaseIterable, Sendable {
        /// The last time this kiosk saw a trusted clock (`$STATE_DIRECTORY/clock-floor`).
        case kept
        /// systemd-timesyncd's clock file's modification time (it touches it at each sync).
        case timesyncd
        /// The `issued` time of the site bundle in force (signed by the site's key).
        case bundle
    }

    public var kept: Int64?
    public var timesyncd: Int64?
    public var bundle: Int64?

    public init(kept: Int64? = nil, timesyncd: Int64? = nil, bundle: Int64? = nil) {
        self.kept = kept
        self.timesyncd = timesyncd
        self.bundle = bundle
    }

    /// The newest, and which source gave it (the first in `kept, timesyncd, bundle` on a tie).
    public var newest: (time: Int64, source: Source)? {
        var best: (time: Int64, source: Source)?
        for (t, s) in [(kept, Source.kept), (timesyncd, .timesyncd), (bundle, .bundle)] {
            if let t, t > (best?.time ?? Int64.min) { best = (t, s) }
        }
        return best
    }

    public var time: Int64? { newest?.time }

    /// The kept file's text: the Unix time and a line feed.
    public static func keptText(_ time: Int64) -> String { "\(time)\n" }

    /// The kept file read back: one non-negative decimal Unix time, an optional line feed; nil: not that.
    public static func parseKept(_ text: String) -> Int64? {
        let body = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !body.isEmpty, body.utf8.count <= 19, body.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(body)
    }
}

/// The clock as the kiosk judges it now.
public struct ClockJudgement: Equatable, Sendable {
    public var setting: ClockSetting
    public var source: ClockSource
    /// The RTC that vouches for the clock (`source == .rtc`), or that set it and is not trusted.
    public var rtc: String?
    public var floor: Int64?
    public var floorSource: ClockFloor.Source?
    /// The floor minus the clock, when the clock is before the floor (beyond the tolerance): the
    /// clock is wrong for sure.
    public var behindSeconds: Int64?
    /// Why no source is trusted (for `doctor`); nil when one is.
    public var untrustedBecause: String?

    public init(setting: ClockSetting, source: ClockSource, rtc: String? = nil, floor: Int64? = nil, floorSource: ClockFloor.Source? = nil,
                behindSeconds: Int64? = nil, untrustedBecause: String? = nil) {
        self.setting = setting
        self.source = source
        self.rtc = rtc
        self.floor = floor
        self.floorSource = floorSource
        self.behindSeconds = behindSeconds
        self.untrustedBecause = untrustedBecause
    }

    /// Behind the floor: time-bound credentials are denied `clock behind`, whatever the setting.
    public var isBehind: Bool { behindSeconds != nil }

    /// Whether time-bound credentials, rotating codes and schedules are judged by the clock now.
    public var judgesTime: Bool { !isBehind && (setting == .always || source != .none) }

    /// Whether the clock is trusted enough to raise the kept floor: a source vouches for it (never
    /// `0`'s clock as it is) and it is not behind.
    public var trusted: Bool { !isBehind && source != .none }

    /// The reason a time-bound credential is denied now; nil when the clock judges.
    public var denial: CredentialReason? {
        if isBehind { return .clockBehind }
        return judgesTime ? nil : .clockNotSynchronized
    }

    /// What the `clock` event says changed: the source and whether the clock is behind.
    public var state: String { isBehind ? "\(source.rawValue),behind" : source.rawValue }
}

public enum TimeSource {
    /// How far before the floor an RTC may read and still be trusted. A reset RTC (a flat battery)
    /// reads its epoch, years before; an RTC within a day is not reset but may have drifted from the
    /// system clock that wrote the kept floor (neither is disciplined without NTP). Whether the
    /// clock it set is behind the floor is judged apart, with the tolerance.
    public static let rtcSlackSeconds: Int64 = 86_400

    /// Which source is trusted now, and whether the clock is before the floor. `tolerance`
    /// (`KIOSK_CLOCK_SKEW_S`): a clock this little before the floor is not behind (the site PC
    /// that signed a bundle a second ago may run a little ahead).
    public static func judge(_ facts: ClockFacts, floor: ClockFloor, setting: ClockSetting, tolerance: Int64 = 0) -> ClockJudgement {
        let newest = floor.newest
        var j = ClockJudgement(setting: setting, source: .none, floor: newest?.time, floorSource: newest?.source)
        if let f = newest?.time, facts.now < f &- max(0, tolerance) { j.behindSeconds = f &- facts.now }
        let setter = facts.rtcs.first { $0.setSystemClock }
        if facts.ntpSynchronized {
            j.source = .ntp
        } else if setting == .ntpOnly {
            j.untrustedBecause = "the kernel says NTP has not synchronized the clock, and KIOSK_REQUIRE_SYNCED_CLOCK=ntp trusts nothing else"
                + (setter.map { " (\($0.name) set it at boot)" } ?? "")
        } else if let rtc = setter {
            j.rtc = rtc.name
            if let t = rtc.time, let f = newest?.time, t < f &- max(tolerance, rtcSlackSeconds) {
                j.untrustedBecause = "\(rtc.name) set the clock at boot but reads \(t), before the floor \(f) (\(newest!.source.rawValue)): "
                    + "its battery is likely flat"
            } else if rtc.time == nil {
                j.untrustedBecause = "\(rtc.name) set the clock at boot but does not read now"
            } else {
                j.source = .rtc
            }
        } else if facts.rtcs.isEmpty {
            j.untrustedBecause = "the kernel says NTP has not synchronized the clock, and there is no RTC"
        } else {
            j.untrustedBecause = "the kernel says NTP has not synchronized the clock, and no RTC set it at boot ("
                + facts.rtcs.map { "\($0.name): hctosys 0" }.joined(separator: ", ") + ")"
        }
        return j
    }

    /// A credential's reason with the clock's: the checks deny `clock not synchronized` where the
    /// clock may not judge; behind the floor that is `clock behind`.
    public static func reason(_ r: CredentialReason, _ j: ClockJudgement) -> CredentialReason {
        r == .clockNotSynchronized && j.isBehind ? .clockBehind : r
    }

    /// The rules a credential is checked by under `j`: behind the floor time-bound credentials
    /// are never judged, whatever `KIOSK_REQUIRE_SYNCED_CLOCK` says.
    public static func rules(_ rules: CredentialRules, _ j: ClockJudgement) -> CredentialRules {
        var r = rules
        if j.isBehind { r.requireSyncedClock = true }
        return r
    }

    /// The `clockSynced` the checks take under `j` and `rules`: the clock judges time-bound
    /// credentials (a source vouches, or `0`), and never behind the floor.
    public static func judges(_ rules: CredentialRules, _ j: ClockJudgement) -> Bool {
        j.judgesTime || (!rules.requireSyncedClock && !j.isBehind)
    }
}

/// When the kept floor is written: at most once in `interval` (10 minutes on the monotonic clock,
/// so that the card is not written each second and a clock step changes nothing), the first time
/// the clock is trusted, and at stop. Never while no source vouches for the clock, nor a time not
/// above the one kept.
public struct FloorKeeping: Equatable, Sendable {
    public static let intervalNs: UInt64 = 600_000_000_000

    public let intervalNs: UInt64
    /// The monotonic time of the last write (or attempt); nil: none yet.
    public private(set) var lastWriteNs: UInt64?
    /// The time kept on disk (read at start, then each write).
    public private(set) var kept: Int64?

    public init(kept: Int64?, intervalNs: UInt64 = FloorKeeping.intervalNs) {
        self.kept = kept
        self.intervalNs = intervalNs
    }

    /// The time to write now, if any (`stopping`: the last chance; the interval does not apply).
    /// Counted as written: a write that fails is tried again only after the interval.
    public mutating func due(_ j: ClockJudgement, now: Int64, monotonicNs: UInt64, stopping: Bool = false) -> Int64? {
        guard j.trusted, now > (kept ?? Int64.min) else { return nil }
        if !stopping, let last = lastWriteNs, monotonicNs &- last < intervalNs { return nil }
        lastWriteNs = monotonicNs
        kept = now
        return now
    }
}

extension Configuration {
    /// `KIOSK_REQUIRE_SYNCED_CLOCK`: kept as 0.3's flag (`requireSyncedClock`) and
    /// whether only NTP counts (`clockNTPOnly`), so that what set the flag alone still holds.
    public var clockSetting: ClockSetting {
        get { requireSyncedClock ? (clockNTPOnly ? .ntpOnly : .ntpOrRTC) : .always }
        set {
            requireSyncedClock = newValue != .always
            clockNTPOnly = newValue == .ntpOnly
        }
    }
}
