// SPDX-License-Identifier: Apache-2.0
import CPlatform
import Glibc
import Policy

/// Whether the system clock is synchronised: a Pi has no battery clock, so until NTP (or
/// systemd-timesyncd) has set it the time may be 1970 or last boot's.
public protocol ClockSynchronization: Sendable {
    var isSynchronized: Bool { get }
    /// The source trusted now and the floor (`ClockWatch`); by default the kernel's flag.
    var judgement: ClockJudgement { get }
}

extension ClockSynchronization {
    public var judgement: ClockJudgement { ClockJudgement(setting: .ntpOrRTC, source: isSynchronized ? .ntp : .none) }
}

/// The kernel's answer: adjtimex(2) without changing anything (modes 0); `STA_UNSYNC` set is
/// what timedatectl shows as "System clock synchronized: no".
public struct KernelClockSynchronization: ClockSynchronization {
    public init() {}
    public var isSynchronized: Bool {
        // A call that fails (-1) counts as unsynchronised: the clock is not known good.
        kiosk_clock_unsynchronized() == 0
    }
}

/// Unix time in whole seconds (the wall clock credentials are judged by).
public func unixSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}
