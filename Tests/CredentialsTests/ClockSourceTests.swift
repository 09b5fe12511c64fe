// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Platform
import Policy
import TestSupport
import XCTest

/// The clock's facts read from a folder laid out as /sys/class/rtc, systemd-timesyncd's
/// clock file and the kept floor; the verifier's reasons under a judgement (`clock behind`,
/// `clock not synchronized`) on credentials from the independent peer.
final class ClockSourceTests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-clock-\(UUID().uuidString.prefix(8))"
        for d in ["rtc/rtc0", "rtc/rtc1", "trust", "state"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + d, withIntermediateDirectories: true)
        }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func write(_ name: String, _ text: String) throws { try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }

    func testTheRTCsTheTimesyncdFileAndTheKeptFloorAreRead() throws {
        try write("rtc/rtc0/hctosys", "1\n")
        try write("rtc/rtc0/since_epoch", "1800000123\n")
        try write("rtc/rtc1/hctosys", "0\n")  // rtc1's time does not read (a DS3231 whose oscillator stopped)
        try write("rtc/not-an-rtc", "")
        XCTAssertEqual(ClockFiles.rtcs(in: folder + "/rtc"), [RTCReading(name: "rtc0", setSystemClock: true, time: 1_800_000_123),
                                                             RTCReading(name: "rtc1", setSystemClock: false, time: nil)])
        XCTAssertEqual(ClockFiles.rtcs(in: folder + "/nothing"), [])
        // timesyncd's clock file: its modification time.
        try write("timesync-clock", "")
        var times = [timespec(tv_sec: 1_790_000_000, tv_nsec: 0), timespec(tv_sec: 1_790_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, folder + "/timesync-clock", &times, 0), 0)
        XCTAssertEqual(ClockFiles.modificationTime(folder + "/timesync-clock"), 1_790_000_000)
        XCTAssertNil(ClockFiles.modificationTime(folder + "/none"))
        // The kept floor: none, written whole, read back; a damaged one is a failure, not a floor.
        let kept = folder + "/state/" + ClockPaths.keptFileName
        XCTAssertEqual(try ClockFiles.readKept(kept).get(), nil)
        try ClockFiles.writeKept(kept, 1_800_000_000)
        XCTAssertEqual(try String(contentsOfFile: kept, encoding: .utf8), "1800000000\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: kept + ".new"))
        XCTAssertEqual(try ClockFiles.readKept(kept).get(), 1_800_000_000)
        try write("state/" + ClockPaths.keptFileName, "garbage")
        guard case .failure(let e) = ClockFiles.readKept(kept) else { return XCTFail("a damaged floor read") }
        XCTAssertTrue(e.description.contains("not a Unix time"), e.description)
        // The paths from the environment (tests point them at a folder).
        let p = ClockPaths(environment: ["STATE_DIRECTORY": folder + "/state", "TEST_KIOSK_RTC_DIR": folder + "/rtc",
                                         "TEST_KIOSK_TIMESYNC_CLOCK": folder + "/timesync-clock"])
        XCTAssertEqual(p, ClockPaths(rtcFolder: folder + "/rtc", timesyncdClock: folder + "/timesync-clock", keptFloor: kept))
        XCTAssertEqual(ClockPaths(environment: [:]).rtcFolder, "/sys/class/rtc")
        XCTAssertEqual(ClockPaths(environment: [:]).timesyncdClock, "/var/lib/systemd/timesync/clock")
    }

    final class Judged: ClockSynchronization, @unchecked Sendable {
        var value: ClockJudgement
        init(_ j: ClockJudgement) { value = j }
        var isSynchronized: Bool { value.judgesTime }
        var judgement: ClockJudgement { value }
    }

    final class Wall: @unchecked Sendable { var now: Int64 = 1_800_000_000 }

    func testTheVerifierDeniesClockBehindWhateverTheSetting() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: folder + "/trust/issuer-1.pem")
        let wall = Wall()
        let now = wall.now
        func judged(_ ntp: Bool, _ floor: ClockFloor, _ s: ClockSetting) -> ClockJudgement {
            TimeSource.judge(ClockFacts(now: now, ntpSynchronized: ntp, rtcs: []), floor: floor, setting: s, tolerance: 30)
        }
        let behind = judged(true, ClockFloor(kept: now + 7200), .always)
        XCTAssertEqual(behind.behindSeconds, 7200)
        let clock = Judged(behind)
        for requireSynced in [true, false] {
            var c = Configuration()
            c.trustDir = folder + "/trust"
            c.revokedFile = folder + "/revoked"
            c.requireSyncedClock = requireSynced
            c.accessFile = folder + "/access"
            try write("access", "schedule office mon-sun 00:00-23:59\nallow staff always\nallow visitor office\n")
            let (trust, problems) = CredentialFiles.load(c, [:])
            XCTAssertTrue(problems.isEmpty, "\(problems)")
            let v = CredentialVerifier(prefix: "KC1:", rules: c.credentialRules, antipassbackSeconds: 0, trust: trust,
                                       store: UsedTokenStore(directory: folder + "/state"), clock: ManualClock(), wallClock: { wall.now },
                                       synchronization: clock)
            func mint(_ claims: [String: Any], lib: String = "cwt") throws -> [UInt8] {
                Array(try peer.sign(lib: lib, privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: claims).utf8)
            }
            let timed = try mint(["1": "acme", "2": "t", "4": Int(now) + 3600, "5": Int(now) - 60, "groups": ["staff"]])
            let untimedStaff = try mint(["1": "acme", "2": "u", "groups": ["staff"]], lib: "pycose")
            let untimedVisitor = try mint(["1": "acme", "2": "w", "groups": ["visitor"]], lib: "pycose")
            clock.value = behind
            XCTAssertEqual(v.verify(timed).reason, .clockBehind, "require=\(requireSynced)")
            XCTAssertEqual(v.verify(untimedStaff).reason, .valid, "no exp or nbf, an always rule: still opens")
            XCTAssertEqual(v.verify(untimedVisitor).reason, .clockBehind, "a schedule is not judged behind the floor")
            // No source: 1 denies `clock not synchronized`, 0 judges by the clock.
            clock.value = judged(false, ClockFloor(kept: now - 60), requireSynced ? .ntpOrRTC : .always)
            XCTAssertEqual(v.verify(timed).reason, requireSynced ? .clockNotSynchronized : .valid)
            XCTAssertEqual(v.verify(untimedVisitor).reason, requireSynced ? .clockNotSynchronized : .valid)
            XCTAssertEqual(v.verify(untimedStaff).reason, .valid)
            // An RTC that set the clock at boot: judged.
            clock.value = TimeSource.judge(ClockFacts(now: now, ntpSynchronized: false,
                                                      rtcs: [RTCReading(name: "rtc0", setSystemClock: true, time: now)]),
                                           floor: ClockFloor(kept: now - 60), setting: .ntpOrRTC, tolerance: 30)
            XCTAssertEqual(clock.value.source, .rtc)
            XCTAssertEqual(v.verify(timed).reason, .valid)
        }
    }
}
