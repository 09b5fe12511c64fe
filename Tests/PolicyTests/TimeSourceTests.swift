// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// Which source the clock is trusted from, the floor, `clock behind`, and when the kept
/// floor is written (pure: the facts and the times are given).
final class TimeSourceTests: XCTestCase {
    let now: Int64 = 1_800_000_000
    func rtc(_ set: Bool, _ time: Int64?, _ name: String = "rtc0") -> RTCReading { RTCReading(name: name, setSystemClock: set, time: time) }
    func judge(ntp: Bool = false, rtcs: [RTCReading] = [], floor: ClockFloor = ClockFloor(), _ setting: ClockSetting = .ntpOrRTC,
               tolerance: Int64 = 30, at t: Int64? = nil) -> ClockJudgement {
        TimeSource.judge(ClockFacts(now: t ?? now, ntpSynchronized: ntp, rtcs: rtcs), floor: floor, setting: setting, tolerance: tolerance)
    }

    func testEachSourceUnderEachSetting() {
        // NTP: trusted under every setting.
        for s in ClockSetting.allCases {
            let j = judge(ntp: true, rtcs: [rtc(true, now)], s)
            XCTAssertEqual(j.source, .ntp, "\(s)")
            XCTAssertTrue(j.judgesTime)
            XCTAssertNil(j.denial)
            XCTAssertTrue(j.trusted)
        }
        // A battery-backed RTC that set the clock at boot: trusted by 1, not by ntp; 0 judges anyway.
        let byRTC = judge(rtcs: [rtc(false, now, "rtc1"), rtc(true, now - 2)], floor: ClockFloor(kept: now - 600))
        XCTAssertEqual(byRTC.source, .rtc)
        XCTAssertEqual(byRTC.rtc, "rtc0")
        XCTAssertTrue(byRTC.judgesTime)
        XCTAssertTrue(byRTC.trusted)
        let ntpOnly = judge(rtcs: [rtc(true, now)], .ntpOnly)
        XCTAssertEqual(ntpOnly.source, .none)
        XCTAssertEqual(ntpOnly.denial, .clockNotSynchronized)
        XCTAssertFalse(ntpOnly.trusted)
        XCTAssertTrue(ntpOnly.untrustedBecause?.contains("KIOSK_REQUIRE_SYNCED_CLOCK=ntp") == true)
        let always = judge(rtcs: [], .always)
        XCTAssertEqual(always.source, .none)
        XCTAssertTrue(always.judgesTime, "0: the clock as it is")
        XCTAssertNil(always.denial)
        XCTAssertFalse(always.trusted, "but it never raises the kept floor")
        // No source: an RTC that did not set the clock (hctosys 0), none at all, one that does not read.
        let hctosys0 = judge(rtcs: [rtc(false, now)])
        XCTAssertEqual(hctosys0.source, .none)
        XCTAssertEqual(hctosys0.denial, .clockNotSynchronized)
        XCTAssertEqual(hctosys0.untrustedBecause, "the kernel says NTP has not synchronized the clock, and no RTC set it at boot (rtc0: hctosys 0)")
        XCTAssertEqual(judge().untrustedBecause, "the kernel says NTP has not synchronized the clock, and there is no RTC")
        XCTAssertEqual(judge(rtcs: [rtc(true, nil)]).source, .none)
    }

    /// A flat battery resets the RTC to its epoch: it reads a time before the floor, and is not trusted.
    func testAnRTCBeforeTheFloorIsNotTrusted() {
        let floor = ClockFloor(kept: now)
        let flat = judge(rtcs: [rtc(true, 978_307_200)], floor: floor, at: 978_307_205)
        XCTAssertEqual(flat.source, .none)
        XCTAssertTrue(flat.untrustedBecause!.contains("before the floor"))
        XCTAssertEqual(flat.behindSeconds, now - 978_307_205)
        XCTAssertEqual(flat.denial, .clockBehind, "behind wins over not synchronized")
        // Within the tolerance the RTC is trusted and the clock not behind.
        let close = judge(rtcs: [rtc(true, now - 20)], floor: floor, at: now - 20)
        XCTAssertEqual(close.source, .rtc)
        XCTAssertFalse(close.isBehind)
        // An RTC a minute before the floor (it drifted from the system clock that wrote it) is not
        // reset: still the source, but the clock it set is behind until it passes the floor.
        let drifted = judge(rtcs: [rtc(true, now - 60)], floor: floor, at: now - 60)
        XCTAssertEqual(drifted.source, .rtc)
        XCTAssertEqual(drifted.behindSeconds, 60)
        XCTAssertEqual(drifted.denial, .clockBehind)
        XCTAssertEqual(judge(rtcs: [rtc(true, now - 86_400)], floor: floor, at: now).source, .rtc)
        XCTAssertEqual(judge(rtcs: [rtc(true, now - 86_401)], floor: floor, at: now).source, .none, "more than a day: reset")
    }

    func testTheFloorIsTheNewestOfItsSources() {
        XCTAssertNil(ClockFloor().newest)
        XCTAssertEqual(ClockFloor(kept: 10).newest?.source, .kept)
        XCTAssertEqual(ClockFloor(kept: 10, timesyncd: 20).newest?.source, .timesyncd)
        XCTAssertEqual(ClockFloor(kept: 10, timesyncd: 20, bundle: 30).newest?.time, 30)
        XCTAssertEqual(ClockFloor(kept: 40, timesyncd: 20, bundle: 30).newest?.source, .kept)
        XCTAssertEqual(ClockFloor(kept: 20, timesyncd: 20).newest?.source, .kept, "a tie: the first")
        for (floor, source) in [(ClockFloor(kept: now + 100), ClockFloor.Source.kept), (ClockFloor(timesyncd: now + 100), .timesyncd),
                                (ClockFloor(kept: now - 5, bundle: now + 100), .bundle)] {
            // Behind, whatever the setting and the source: even NTP (a clock that ran ahead once wrote the floor).
            for s in ClockSetting.allCases {
                let j = judge(ntp: true, floor: floor, s)
                XCTAssertEqual(j.behindSeconds, 100, "\(source) \(s)")
                XCTAssertEqual(j.floorSource, source)
                XCTAssertEqual(j.floor, now + 100)
                XCTAssertFalse(j.judgesTime)
                XCTAssertFalse(j.trusted)
                XCTAssertEqual(j.denial, .clockBehind)
                XCTAssertEqual(j.state, "ntp,behind")
            }
        }
        // The tolerance (KIOSK_CLOCK_SKEW_S): a bundle signed by a site PC a little ahead.
        XCTAssertFalse(judge(ntp: true, floor: ClockFloor(bundle: now + 30)).isBehind)
        XCTAssertEqual(judge(ntp: true, floor: ClockFloor(bundle: now + 31)).behindSeconds, 31)
        XCTAssertEqual(judge(ntp: true, floor: ClockFloor(bundle: now + 1), tolerance: 0).behindSeconds, 1)
        // The kept file's text.
        XCTAssertEqual(ClockFloor.keptText(now), "1800000000\n")
        XCTAssertEqual(ClockFloor.parseKept("1800000000\n"), now)
        XCTAssertEqual(ClockFloor.parseKept("1800000000"), now)
        for bad in ["", "\n", "-1\n", "18e8\n", "1800000000\n\n", " 1800000000", "99999999999999999999"] {
            XCTAssertNil(ClockFloor.parseKept(bad), bad)
        }
    }

    /// The checks' inputs under a judgement: behind, even `0` does not judge; `0` otherwise does.
    func testTheChecksTakeTheClocksState() {
        let rules0 = CredentialRules(requireSyncedClock: false), rules1 = CredentialRules(requireSyncedClock: true)
        let behind = judge(ntp: true, floor: ClockFloor(kept: now + 3600), .always)
        XCTAssertFalse(TimeSource.judges(rules0, behind))
        XCTAssertTrue(TimeSource.rules(rules0, behind).requireSyncedClock)
        let claims = CWTClaims(exp: now + 60)
        let r = CredentialCheck.claims(claims, rules: TimeSource.rules(rules0, behind), now: now, clockSynced: TimeSource.judges(rules0, behind),
                                       isRevoked: { _ in false })
        XCTAssertEqual(TimeSource.reason(r, behind), .clockBehind)
        XCTAssertEqual(TimeSource.reason(.expired, behind), .expired, "only the clock's reason is renamed")
        // Not behind: 0 judges by the clock, 1 only with a source.
        let none = judge(.always)
        XCTAssertTrue(TimeSource.judges(rules0, none))
        XCTAssertFalse(TimeSource.rules(rules0, none).requireSyncedClock)
        let unsynced = judge()
        XCTAssertFalse(TimeSource.judges(rules1, unsynced))
        XCTAssertEqual(TimeSource.reason(CredentialCheck.claims(claims, rules: rules1, now: now, clockSynced: false, isRevoked: { _ in false }), unsynced),
                       .clockNotSynchronized)
        XCTAssertEqual(CredentialCheck.claims(CWTClaims(), rules: TimeSource.rules(rules1, behind), now: now, clockSynced: false,
                                              isRevoked: { _ in false }), .valid, "a credential without exp or nbf still opens")
    }

    /// The kept floor: the first time the clock is trusted, then at most once in 10 minutes on the
    /// monotonic clock (a step of the wall clock changes nothing), and at stop; never untrusted.
    func testTheFloorIsWrittenAtMostOnceInTenMinutes() {
        var k = FloorKeeping(kept: now - 86_400)
        let trusted = judge(ntp: true), untrusted = judge(), always = judge(.always)
        var writes: [(mono: UInt64, time: Int64)] = []
        let second: UInt64 = 1_000_000_000
        // Two hours, looked at every 5 s; untrusted for a quarter of an hour in the middle.
        for step in 0...(7200 / 5) {
            let mono = UInt64(step) * 5 * second, t = now + Int64(step) * 5
            let j = (3000...3900).contains(step * 5) ? untrusted : trusted
            if let w = k.due(j, now: t, monotonicNs: mono) { writes.append((mono, w)) }
            XCTAssertNil(k.due(always, now: t, monotonicNs: mono), "0's clock as it is never raises the floor")
        }
        XCTAssertEqual(writes.first?.mono, 0, "the first trusted look")
        for (a, b) in zip(writes, writes.dropFirst()) { XCTAssertGreaterThanOrEqual(b.mono - a.mono, 600 * second) }
        XCTAssertEqual(writes.map { $0.mono / second }, [0, 600, 1200, 1800, 2400, 3905, 4505, 5105, 5705, 6305, 6905])
        XCTAssertEqual(writes.map(\.time), writes.map { now + Int64($0.mono / second) })
        XCTAssertFalse(writes.contains { (3000...3900).contains(Int($0.mono / second)) })
        XCTAssertEqual(k.kept, now + 6905)
        // At stop: at once, the interval aside; but never a time not above the one kept.
        XCTAssertEqual(k.due(trusted, now: now + 7201, monotonicNs: 7201 * second, stopping: true), now + 7201)
        XCTAssertNil(k.due(trusted, now: now + 7201, monotonicNs: 7202 * second, stopping: true))
        XCTAssertNil(k.due(untrusted, now: now + 7300, monotonicNs: 7300 * second, stopping: true))
        // A kept floor in the future (a clock that once ran ahead): nothing is written below it.
        var ahead = FloorKeeping(kept: now + 3600)
        XCTAssertNil(ahead.due(trusted, now: now, monotonicNs: 0))
        XCTAssertNil(ahead.lastWriteNs)
    }

    func testTheSettingReadsAndAWrongValueIsRefused() {
        func read(_ v: String?) -> ConfigurationReading {
            var env = ["KIOSK_VERDICT": "credentials"]
            env["KIOSK_REQUIRE_SYNCED_CLOCK"] = v
            return Configuration.read(environment: env, isExecutableFile: { _ in true })
        }
        XCTAssertEqual(read(nil).configuration.clockSetting, .ntpOrRTC)
        XCTAssertEqual(read("1").configuration.clockSetting, .ntpOrRTC)
        XCTAssertEqual(read("ntp").configuration.clockSetting, .ntpOnly)
        XCTAssertTrue(read("ntp").configuration.requireSyncedClock)
        XCTAssertEqual(read("0").configuration.clockSetting, .always)
        XCTAssertFalse(read("0").configuration.requireSyncedClock)
        for bad in ["yes", "NTP", "rtc", "2", "true"] {
            let r = read(bad)
            XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_REQUIRE_SYNCED_CLOCK"], bad)
            XCTAssertEqual(r.errors.first?.value, bad)
            XCTAssertEqual(r.errors.first?.expected, ClockSetting.expected)
        }
        XCTAssertTrue(ClockSetting.expected.hasPrefix("1 ("))
        let shown = read("ntp").settings.first { $0.variable == "KIOSK_REQUIRE_SYNCED_CLOCK" }
        XCTAssertEqual(shown?.value, "ntp")
        XCTAssertEqual(read(nil).settings.first { $0.variable == "KIOSK_REQUIRE_SYNCED_CLOCK" }?.value, "1")
    }

    func testStateAndDiscoveryCarryTheClock() {
        var s = KioskState(torchOn: nil)
        XCTAssertFalse(s.json.contains("clock"))
        s.clock = "rtc"
        XCTAssertTrue(s.json.hasSuffix(",\"clock\":\"rtc\"}"), s.json)
        let topics = FleetTopics(prefix: "kiosk/door-1")
        let plain = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: topics, version: "0.5")
        XCTAssertFalse(plain.messages.contains { $0.topic.contains("/clock/") })
        let withClock = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: topics, version: "0.5", clock: true)
        let m = withClock.messages.first { $0.topic == "homeassistant/sensor/door-1/clock/config" }
        XCTAssertNotNil(m)
        XCTAssertTrue(m?.payload.contains("\"options\":[\"ntp\",\"rtc\",\"none\",\"behind\"]") == true, m?.payload ?? "")
        XCTAssertTrue(m?.payload.contains("\"value_template\":\"{{ value_json.clock }}\"") == true)
    }
}
