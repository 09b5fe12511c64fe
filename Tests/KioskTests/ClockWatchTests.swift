// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

/// The running kiosk's clock watch on the manual clock, with the RTCs and the floor's
/// files in a temporary folder: the `clock` events at start and at each change, the kept floor
/// written at most once in 10 minutes (counted) and at stop.
final class ClockWatchTests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-clockwatch-\(UUID().uuidString.prefix(8))"
        for d in ["rtc/rtc0", "state"] { try FileManager.default.createDirectory(atPath: folder + "/" + d, withIntermediateDirectories: true) }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
    }

    final class Facts: @unchecked Sendable {
        var ntp = false
        var wall: Int64 = 1_800_000_000
        var issued: Int64?
    }

    func write(_ name: String, _ text: String) throws { try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }

    var paths: ClockPaths {
        ClockPaths(rtcFolder: folder + "/rtc", timesyncdClock: folder + "/timesync-clock", keptFloor: folder + "/state/" + ClockPaths.keptFileName)
    }

    func watch(_ facts: Facts, _ clock: ManualClock, _ log: Recorder, setting: ClockSetting = .ntpOrRTC) -> ClockWatch {
        ClockWatch(setting: setting, tolerance: 30, paths: paths, synchronized: { facts.ntp }, wallClock: { facts.wall }, clock: clock,
                   bundleIssued: { facts.issued }, logger: Logger(level: .debug) { log.add($0) })
    }

    func kept() -> String? { try? String(contentsOfFile: paths.keptFloor, encoding: .utf8) }

    func testTheFloorIsWrittenAtMostOnceInTenMinutesAndAtStop() throws {
        try write("rtc/rtc0/hctosys", "1\n")
        try write("rtc/rtc0/since_epoch", "1800000000\n")
        let facts = Facts(), clock = ManualClock(startNs: 0), log = Recorder()
        let w = watch(facts, clock, log)
        let states = Recorder()
        w.report { states.add($0.state) }
        w.start()
        XCTAssertEqual(w.judgement.source, .rtc)
        XCTAssertEqual(w.writes, 1, "the first trusted look")
        XCTAssertEqual(kept(), "1800000000\n")
        // 30 minutes of a running kiosk, the wall clock moving with the monotonic one.
        var writesSeen: [Int] = []
        for second in 1...1800 {
            facts.wall = 1_800_000_000 + Int64(second)
            if second % 60 == 0 { try write("rtc/rtc0/since_epoch", "\(facts.wall)\n") }
            clock.advance(to: UInt64(second) * 1_000_000_000)
            if second % 60 == 0 { writesSeen.append(w.writes) }
        }
        XCTAssertEqual(w.writes, 4, "at 0, 600, 1200 and 1800 s: \(writesSeen)")
        // Never two within 10 minutes: the count at each minute rises by one at most every 10.
        for (i, n) in writesSeen.enumerated() where i >= 10 { XCTAssertLessThanOrEqual(n - writesSeen[i - 10], 1) }
        XCTAssertEqual(kept(), "1800001800\n")
        XCTAssertEqual(states.all, ["rtc"], "one clock event: nothing changed")
        // NTP synchronises it: a change, said once.
        facts.ntp = true
        clock.advance(byNs: ClockWatch.lookNs)
        XCTAssertEqual(states.all, ["rtc", "ntp"])
        // At stop: written once more (the interval aside), then nothing.
        facts.wall += 10
        w.shutDown()
        XCTAssertEqual(w.writes, 5)
        XCTAssertEqual(kept(), "\(facts.wall)\n")
        w.shutDown()
        XCTAssertEqual(w.writes, 5)
        clock.advance(byNs: 3600 * 1_000_000_000)
        XCTAssertEqual(w.writes, 5, "no look after stop")
        let events = log.all.filter { $0.contains("event=clock ") }
        XCTAssertEqual(events.count, 2, "\(events)")
        XCTAssertTrue(events[0].contains("source=rtc") && events[0].contains("floor=none") && events[0].contains("rtc=rtc0"), events[0])
        XCTAssertTrue(events[1].contains("source=ntp"), events[1])
    }

    /// A restart with the RTC reset (a flat battery: 2001) and the floor kept by the earlier run:
    /// behind, by how much; nothing written; the bundle's issued time raises the floor.
    func testBehindTheKeptFloorAndTheBundlesIssuedTime() throws {
        try write("rtc/rtc0/hctosys", "1\n")
        try write("rtc/rtc0/since_epoch", "978307200\n")
        try write("state/" + ClockPaths.keptFileName, "1800000000\n")
        let facts = Facts(), clock = ManualClock(startNs: 0), log = Recorder()
        facts.wall = 978_307_205
        let w = watch(facts, clock, log)
        w.start()
        let j = w.judgement
        XCTAssertEqual(j.source, .none)
        XCTAssertEqual(j.behindSeconds, 1_800_000_000 - 978_307_205)
        XCTAssertEqual(j.denial, .clockBehind)
        XCTAssertFalse(w.judgesTime)
        let event = log.all.first { $0.contains("event=clock ") } ?? ""
        XCTAssertTrue(event.contains("behind_s=821692795") && event.contains("floor_from=kept") && event.contains("level=warning"), event)
        clock.advance(byNs: 1200 * 1_000_000_000)
        w.shutDown()
        XCTAssertEqual(w.writes, 0, "never written while behind")
        XCTAssertEqual(kept(), "1800000000\n")

        // A clock on time, then a bundle issued an hour ahead of it: behind (the tolerance is 30 s).
        let log2 = Recorder(), clock2 = ManualClock(startNs: 0)
        let facts2 = Facts()
        facts2.ntp = true
        facts2.wall = 1_800_000_100
        try write("rtc/rtc0/since_epoch", "1800000100\n")
        let w2 = watch(facts2, clock2, log2)
        w2.start()
        XCTAssertEqual(w2.judgement.source, .ntp)
        XCTAssertFalse(w2.judgement.isBehind)
        facts2.issued = 1_800_003_700
        clock2.advance(byNs: ClockWatch.lookNs)
        XCTAssertEqual(w2.judgement.behindSeconds, 3600)
        XCTAssertEqual(w2.judgement.floorSource, .bundle)
        XCTAssertEqual(log2.all.filter { $0.contains("event=clock ") }.count, 2)
        w2.shutDown()
    }

    func testADamagedKeptFloorIsSaidAndReplaced() throws {
        try write("state/" + ClockPaths.keptFileName, "not a time")
        let facts = Facts(), clock = ManualClock(startNs: 0), log = Recorder()
        facts.ntp = true
        let w = watch(facts, clock, log)
        XCTAssertTrue(log.all.contains { $0.contains("event=state_damaged") && $0.contains(ClockPaths.keptFileName) }, "\(log.all)")
        w.start()
        XCTAssertEqual(kept(), "1800000000\n")
        w.shutDown()
    }
}
