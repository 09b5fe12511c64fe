// SPDX-License-Identifier: Apache-2.0
import Credentials
import Kiosk
import Platform
import Policy

/// `kiosk doctor`'s lines on the clock.
extension ClockSetup {
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
