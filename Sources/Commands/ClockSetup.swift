// SPDX-License-Identifier: Apache-2.0
import Credentials
import Kiosk
import Platform
import Policy

/// issue 44: what `run`, `check` and `doctor` make of the clock: the source trusted now
/// (`ntp`, `rtc`, `none`), the floor and where it comes from, and what would fix a clock that no
/// source vouches for.
enum ClockSetup {
    /// The running kiosk's watch (credentials mode): the floor's bundle source is the site bundle
    /// in force (its `issued`).
    static func watch(_ c: Configuration, _ environment: [String: String], bundles: SiteBundles?, logger: Logger) -> ClockWatch {
        ClockWatch(setting: c.clockSetting, tolerance: Int64(c.clockSkewS), paths: ClockPaths(environment: environment),
                   clock: MonotonicClock(label: "kiosk.clock-watch"), bundleIssued: { bundles?.sources.bundleIssued }, logger: logger)
    }

    /// `<topic>/state`'s `clock`: the source, or `behind` when the clock is before the floor.
    static func stateText(_ j: ClockJudgement) -> String { j.isBehind ? "behind" : j.source.rawValue }

    /// The clock now, as a running kiosk would judge it (read only: nothing is written).
    static func judgeNow(_ c: Configuration, _ environment: [String: String], bundleIssued: Int64?)
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

    static func time(_ t: Int64) -> String {
        let text = RFC3339.utc(millisecondsSinceEpoch: t &* 1000)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }

    /// `2026-12-04T16:00:00Z (kept)`, or `none`.
    static func floorText(_ j: ClockJudgement) -> String {
        guard let f = j.floor else { return "none" }
        return "\(time(f)) (\(j.floorSource?.rawValue ?? "?"))"
    }

    /// What fixes a clock no source vouches for.
    static let remedy = "an RTC (a Pi 5's battery; a DS3231 module on a Pi 4 with dtoverlay=i2c-rtc,ds3231), "
        + "or an NTP server on the site's network (e.g. chrony on the site PC) that systemd-timesyncd reaches (NTP= in /etc/systemd/timesyncd.conf; timedatectl timesync-status)"

    /// `kiosk check`'s line.
    static func checkLine(_ c: Configuration, _ environment: [String: String], bundleIssued: Int64?) -> String {
        let (j, _, problem, _) = judgeNow(c, environment, bundleIssued: bundleIssued)
        var line = "source \(j.source.rawValue)" + (j.source == .rtc ? " (\(j.rtc ?? "rtc"))" : "") + ", floor \(floorText(j))"
        if let b = j.behindSeconds { line += ", the clock is \(b) s behind it" }
        line += ", KIOSK_REQUIRE_SYNCED_CLOCK=\(j.setting.rawValue): time-bound credentials "
        line += j.isBehind ? "denied (clock behind)" : j.judgesTime ? "judged by the clock" : "denied (clock not synchronized)"
        if let problem { line += "; the kept floor does not read: \(problem)" }
        return line
    }

    /// `kiosk doctor`'s lines for the clock.
    static func doctor(_ c: Configuration, _ environment: [String: String], bundleIssued: Int64?) -> (checks: [Doctor.Check], judgement: ClockJudgement) {
        let (j, floor, problem, paths) = judgeNow(c, environment, bundleIssued: bundleIssued)
        var checks: [Doctor.Check] = []
        func add(_ v: Doctor.Verdict, _ detail: String) { checks.append(Doctor.Check(verdict: v, subject: "clock", detail: detail)) }
        if let b = j.behindSeconds {
            add(.fail, "the clock (\(time(unixSeconds()))) is \(b) s before the floor \(floorText(j)), a time that has certainly passed: "
                + "time-bound credentials, rotating codes and schedules other than always are denied (clock behind), whatever KIOSK_REQUIRE_SYNCED_CLOCK says; "
                + "set the clock right (\(remedy)); if the floor itself is wrong (a clock that once ran ahead), remove \(paths.keptFloor)")
        } else {
            switch j.source {
            case .ntp:
                add(.pass, "source ntp: the kernel says NTP synchronized the clock")
            case .rtc:
                add(.pass, "source rtc: \(j.rtc ?? "the RTC") (battery-backed) set the clock at boot and reads a time not before the floor"
                    + (j.setting == .ntpOrRTC ? "" : " (KIOSK_REQUIRE_SYNCED_CLOCK=0)"))
            case .none:
                let why = j.untrustedBecause ?? "no source vouches for the clock"
                if j.setting == .always {
                    add(.warn, "source none: \(why); KIOSK_REQUIRE_SYNCED_CLOCK=0: time-bound credentials are judged by this clock anyway "
                        + "(never before the floor). A source: \(remedy)")
                } else {
                    add(.fail, "source none: \(why): time-bound credentials, rotating codes and schedules other than always are denied "
                        + "(clock not synchronized) until a source vouches for the clock: \(remedy)")
                }
            }
        }
        let parts = [("kept", floor.kept), ("timesyncd", floor.timesyncd), ("bundle", floor.bundle)]
            .map { "\($0.0) \($0.1.map(time) ?? "none")" }.joined(separator: ", ")
        add(problem == nil ? .pass : .warn, "floor \(floorText(j)): the newest of \(parts)"
            + (problem.map { "; \(paths.keptFloor) does not read (\($0)): left out until the kiosk writes it again" } ?? ""))
        return (checks, j)
    }
}
