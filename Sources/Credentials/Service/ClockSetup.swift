// SPDX-License-Identifier: Apache-2.0
import Credentials
import Platform
import Policy

/// What `run`, `check` and `doctor` make of the clock: the source trusted now
/// (`ntp`, `rtc`, `none`), the floor and where it comes from, and what would fix a clock that no
/// source vouches for.
public enum ClockSetup {
    /// The running kiosk's watch (credentials mode): the floor's bundle source is the site bundle
    /// in force (its `issued`). Its looks read RTCs and write the kept floor: a lane of the clock.
    static func watch(_ a: Assembly, bundles: SiteBundles?) -> ClockWatch {
        ClockWatch(setting: a.config.clockSetting, tolerance: Int64(a.config.clockSkewS), paths: ClockPaths(environment: a.environment),
                   clock: a.clock.lane("kiosk.clock-watch"), bundleIssued: { bundles?.sources.bundleIssued }, logger: a.logger)
    }

    /// `<topic>/state`'s `clock`: the source, or `behind` when the clock is before the floor.
    public static func stateText(_ j: ClockJudgement) -> String { j.isBehind ? "behind" : j.source.rawValue }

    /// The clock now, as a running kiosk would judge it (read only: nothing is written).
    public static func judgeNow(_ c: Configuration, _ environment: [String: String], bundleIssued: Int64?)
        -> (judgement: ClockJudgement, floor: ClockFloor, keptProblem: String?, paths: ClockPaths) {
        let paths = ClockPaths(environment: environment)
        var floor = ClockFloor(timesyncd: ClockFiles.modificationTime(paths.timesyncdClock), bundle: bundleIssued)
        var problem: String?
        switch ClockFiles.readKept(paths.keptFloor) {
        case .success(let t): floor.kept = t
        case .failure(let e): problem = e.description
        }
        let facts = ClockFacts(now: unixSeconds(), ntpSynchronized: KernelClockSynchronization().isSynchronized,
                               rtcs: ClockFiles.rtcs(in: paths.rtcFolder))
        return (TimeSource.judge(facts, floor: floor, setting: c.clockSetting, tolerance: Int64(c.clockSkewS)), floor, problem, paths)
    }

    public static func time(_ t: Int64) -> String {
        let text = RFC3339.utc(millisecondsSinceEpoch: t &* 1000)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }

    /// `2026-12-04T16:00:00Z (kept)`, or `none`.
    public static func floorText(_ j: ClockJudgement) -> String {
        guard let f = j.floor else { return "none" }
        return "\(time(f)) (\(j.floorSource?.rawValue ?? "?"))"
    }

    /// What fixes a clock no source vouches for.
    public static let remedy = "an RTC (a Pi 5's battery; a DS3231 module on a Pi 4 with dtoverlay=i2c-rtc,ds3231), "
        + "or an NTP server on the site's network (e.g. chrony on the site PC) that systemd-timesyncd reaches (NTP= in /etc/systemd/timesyncd.conf; timedatectl timesync-status)"

    /// `kiosk check`'s line.
    public static func checkLine(_ c: Configuration, _ environment: [String: String], bundleIssued: Int64?) -> String {
        let (j, _, problem, _) = judgeNow(c, environment, bundleIssued: bundleIssued)
        var line = "source \(j.source.rawValue)" + (j.source == .rtc ? " (\(j.rtc ?? "rtc"))" : "") + ", floor \(floorText(j))"
        if let b = j.behindSeconds { line += ", the clock is \(b) s behind it" }
        line += ", KIOSK_REQUIRE_SYNCED_CLOCK=\(j.setting.rawValue): time-bound credentials "
        line += j.isBehind ? "denied (clock behind)" : j.judgesTime ? "judged by the clock" : "denied (clock not synchronized)"
        if let problem { line += "; the kept floor does not read: \(problem)" }
        return line
    }
}
