// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// The clock with no network, on the built `kiosk` binary: the clock's source and floor. The kernel's flag is
/// injected as in `testAnUnsynchronisedClockDeniesTimeBoundCredentials` (adjtimex through
/// LD_PRELOAD: never synchronised), the RTC is a folder laid out as /sys/class/rtc
/// (`TEST_KIOSK_RTC_DIR`), the floor is the kept file in `$STATE_DIRECTORY`.
extension CredentialEndToEndTests {
    func unsynchronisedLibrary() throws -> String {
        let source = folder + "/unsync.c", library = folder + "/unsync.so"
        try """
        #include <sys/timex.h>
        int adjtimex(struct timex *t) { t->status = STA_UNSYNC; t->maxerror = 16000000; return TIME_ERROR; }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        cc.arguments = ["-shared", "-fPIC", "-o", library, source]
        let run = try Child.run(cc)
        XCTAssertEqual(run.status, 0, run.errors)
        return library
    }

    func testTheClocksSourceAndFloorDecideTimeBoundCredentials() throws {
        let library = try unsynchronisedLibrary()
        let rtc = folder + "/rtc/rtc0"
        try FileManager.default.createDirectory(atPath: rtc, withIntermediateDirectories: true)
        try "1\n".write(toFile: rtc + "/hctosys", atomically: true, encoding: .utf8)
        try "\(now)\n".write(toFile: rtc + "/since_epoch", atomically: true, encoding: .utf8)
        let kept = state + "/clock-floor"
        let timed = try mint()
        var env = baseEnv(["LD_PRELOAD": library, "KIOSK_REQUIRE_SYNCED_CLOCK": "1", "TEST_KIOSK_RTC_DIR": folder + "/rtc",
                           "TEST_KIOSK_TIMESYNC_CLOCK": folder + "/no-timesyncd", "KIOSK_CAMERA": "replay:" + (try replay([timed]))])
        // A battery-backed RTC set the clock at boot: judged, source=rtc; the floor kept at stop.
        let started = now
        let r = try run(env: env)
        XCTAssertEqual(r.reasons, ["valid"], r.stderr)
        let event = r.stderr.split(separator: "\n").first { $0.contains("event=clock ") }.map(String.init) ?? ""
        XCTAssertTrue(event.contains("source=rtc") && event.contains("rtc=rtc0") && event.contains("setting=1"), r.stderr)
        let floor = Int64((try String(contentsOfFile: kept, encoding: .utf8)).dropLast()) ?? 0
        XCTAssertGreaterThanOrEqual(floor, Int64(started))
        XCTAssertLessThanOrEqual(floor, Int64(now))
        let check = try run(["check"], env: env)
        XCTAssertTrue(check.stdout.contains("# clock: source rtc (rtc0), floor "), check.stdout)
        XCTAssertTrue(check.stdout.contains("(kept), KIOSK_REQUIRE_SYNCED_CLOCK=1: time-bound credentials judged by the clock"), check.stdout)
        XCTAssertTrue(check.stdout.contains("KIOSK_REQUIRE_SYNCED_CLOCK=1 "), check.stdout)
        let doctor = try run(["doctor"], env: env)
        XCTAssertTrue(doctor.stdout.contains("PASS clock: source rtc: rtc0 (battery-backed) set the clock at boot"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PASS clock: floor "), doctor.stdout)

        // KIOSK_REQUIRE_SYNCED_CLOCK=ntp: the RTC is not enough.
        env["KIOSK_REQUIRE_SYNCED_CLOCK"] = "ntp"
        env["KIOSK_CAMERA"] = "replay:" + (try replay([timed], name: "ntp"))
        XCTAssertEqual(try run(env: env).reasons, ["clock not synchronized"])
        let ntpDoctor = try run(["doctor"], env: env).stdout
        XCTAssertTrue(ntpDoctor.contains("FAIL clock: source none: the kernel says NTP has not synchronized the clock, and KIOSK_REQUIRE_SYNCED_CLOCK=ntp trusts nothing else"),
                      ntpDoctor)
        XCTAssertTrue(ntpDoctor.contains("an NTP server on the site's network"), ntpDoctor)

        // A floor two hours ahead (an earlier boot's): behind, whatever the setting, and by how much.
        for setting in ["1", "0"] {
            let ahead = now + 7200
            try "\(ahead)\n".write(toFile: kept, atomically: true, encoding: .utf8)
            env["KIOSK_REQUIRE_SYNCED_CLOCK"] = setting
            env["KIOSK_CAMERA"] = "replay:" + (try replay([timed], name: "behind-" + setting))
            let b = try run(env: env)
            XCTAssertEqual(b.reasons, ["clock behind"], b.stderr)
            let e = b.stderr.split(separator: "\n").first { $0.contains("event=clock ") }.map(String.init) ?? ""
            let behind = e.split(separator: " ").first { $0.hasPrefix("behind_s=") }.flatMap { Int($0.dropFirst(9)) } ?? -1
            XCTAssertTrue((7190...7200).contains(behind), e)
            XCTAssertTrue(e.contains("floor=\(ahead)") && e.contains("floor_from=kept") && e.hasPrefix("level=warning"), e)
            XCTAssertEqual(try String(contentsOfFile: kept, encoding: .utf8), "\(ahead)\n", "nothing written while behind")
            let d = try run(["doctor"], env: env).stdout
            XCTAssertTrue(d.contains("FAIL clock: the clock (") && d.contains("s before the floor") && d.contains("remove \(kept)"), d)
        }
        try FileManager.default.removeItem(atPath: kept)

        // No RTC that set the clock (hctosys 0): source=none, denied.
        try "0\n".write(toFile: rtc + "/hctosys", atomically: true, encoding: .utf8)
        env["KIOSK_REQUIRE_SYNCED_CLOCK"] = "1"
        env["KIOSK_CAMERA"] = "replay:" + (try replay([timed], name: "none"))
        let n = try run(env: env)
        XCTAssertEqual(n.reasons, ["clock not synchronized"])
        XCTAssertTrue(n.stderr.contains("event=clock source=none floor=none setting=1"), n.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: kept), "no source: no floor kept")

        // A wrong value: refused at start, named with its value and what is accepted.
        env["KIOSK_REQUIRE_SYNCED_CLOCK"] = "rtc"
        let wrong = try run(env: env)
        XCTAssertEqual(wrong.status, 78)
        XCTAssertTrue(wrong.stderr.contains("var=KIOSK_REQUIRE_SYNCED_CLOCK value=rtc expected=\"1 ("), wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("ntp (only when NTP synchronised it) or 0"), wrong.stderr)
    }
}
