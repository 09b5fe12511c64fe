// SPDX-License-Identifier: Apache-2.0
import Kiosk
import Platform
import Policy
import XCTest

/// What the link was handed, in order.
final class RecordingFleetLink: FleetLink, @unchecked Sendable {  // guarded by `lock`
    struct Scan: Equatable { var data: String; var verdict: String?; var timeMs: Int64 }
    private let lock = Lock()
    private var scanList: [Scan] = []
    private var stateList: [KioskState] = []
    private var statsList: [String] = []
    func publishScan(symbology: String, bytes: [UInt8], frame: Int, latencyMs: Double, verdict: String?, timeMs: Int64, credential: ScanCredential?) {
        lock.withLock { scanList.append(Scan(data: String(decoding: bytes, as: UTF8.self), verdict: verdict, timeMs: timeMs)) }
    }
    func publishState(_ state: KioskState) { lock.withLock { stateList.append(state) } }
    func publishStats(_ json: String) { lock.withLock { statsList.append(json) } }
    private var doorList: [String] = []
    private var alarmList: [String] = []
    private var resultList: [String] = []
    func publishDoor(_ state: String) { lock.withLock { doorList.append(state) } }
    func publishAlarm(_ json: String) { lock.withLock { alarmList.append(json) } }
    private var spooledAlarmList: [String] = []
    func publishSpooledAlarm(_ json: String) { lock.withLock { spooledAlarmList.append(json) } }
    var spooledAlarms: [String] { lock.withLock { spooledAlarmList } }
    func publishCommandResult(_ json: String) { lock.withLock { resultList.append(json) } }
    private var modeList: [String] = []
    func publishMode(_ json: String) { lock.withLock { modeList.append(json) } }
    var modes: [String] { lock.withLock { modeList } }
    var doors: [String] { lock.withLock { doorList } }
    var alarms: [String] { lock.withLock { alarmList } }
    var results: [String] { lock.withLock { resultList } }
    var counters: BrokerCounters { BrokerCounters(published: 3, acknowledged: 2, queued: 1, dropped: 0, connected: true) }
    var scans: [Scan] { lock.withLock { scanList } }
    var states: [KioskState] { lock.withLock { stateList } }
    var stats: [String] { lock.withLock { statsList } }
}

final class FleetReporterTests: XCTestCase {
    final class WallClock: @unchecked Sendable { var ms: Int64 = 1_700_000_000_000 }

    /// A duress code's alarm goes through the spool (kept on disk while the broker is away); the
    /// door's alarms through the link's outbox.
    func testTheDuressAlarmIsSpooledAndTheDoorsAlarmsAreNot() {
        let link = RecordingFleetLink(), wall = WallClock()
        let fleet = FleetReporter(link: link, torchOn: nil) { wall.ms }
        fleet.duress(subject: "alice")
        fleet.alarm("door_forced", state: nil)
        XCTAssertEqual(link.spooledAlarms, [AlarmMessage.duress(subject: "alice", timeMs: wall.ms)])
        XCTAssertEqual(link.alarms, [AlarmMessage.json(event: "door_forced", state: nil, timeMs: wall.ms)])
    }

    func testWithoutVerdictsEachCodeGoesAtOnceWithItsReportTime() {
        let link = RecordingFleetLink(), wall = WallClock()
        let fleet = FleetReporter(link: link, torchOn: nil) { wall.ms }
        XCTAssertNil(fleet.reported(symbology: "QR-Code", bytes: Array("A".utf8), frame: 1, latencyMs: 2, awaitsVerdict: false))
        wall.ms += 1000
        _ = fleet.reported(symbology: "QR-Code", bytes: Array("B".utf8), frame: 2, latencyMs: 2, awaitsVerdict: false)
        XCTAssertEqual(link.scans, [.init(data: "A", verdict: nil, timeMs: 1_700_000_000_000), .init(data: "B", verdict: nil, timeMs: 1_700_000_001_000)])
        XCTAssertEqual(link.states.last?.lastScanMs, 1_700_000_001_000)
    }

    func testWithVerdictsACodeWaitsForItsVerdictAndTheOrderIsKept() {
        let link = RecordingFleetLink(), wall = WallClock()
        let fleet = FleetReporter(link: link, torchOn: false) { wall.ms }
        let first = fleet.reported(symbology: "QR-Code", bytes: Array("A".utf8), frame: 1, latencyMs: 2, awaitsVerdict: true)!
        wall.ms += 500
        let second = fleet.reported(symbology: "QR-Code", bytes: Array("B".utf8), frame: 9, latencyMs: 2, awaitsVerdict: true)!
        XCTAssertEqual(link.scans, [], "nothing before the verdicts")
        // The second code's verdict first (a dropped code's error comes at once): it waits for the first's.
        fleet.decided(second, verdict: "error")
        XCTAssertEqual(link.scans, [])
        XCTAssertEqual(fleet.waitingCount, 2)
        wall.ms += 2000
        fleet.decided(first, verdict: "granted")
        XCTAssertEqual(link.scans, [.init(data: "A", verdict: "granted", timeMs: 1_700_000_000_000),
                                    .init(data: "B", verdict: "error", timeMs: 1_700_000_000_500)],
                       "in report order, each with its verdict and its report's time")
        fleet.decided(first, verdict: "denied")  // a second answer does nothing
        XCTAssertEqual(link.scans.count, 2)
    }

    func testOnTheWayOutTheWaitingCodesGoWithoutAVerdict() {
        let link = RecordingFleetLink(), wall = WallClock()
        let fleet = FleetReporter(link: link, torchOn: nil) { wall.ms }
        let first = fleet.reported(symbology: "QR-Code", bytes: Array("A".utf8), frame: 1, latencyMs: 2, awaitsVerdict: true)!
        let second = fleet.reported(symbology: "QR-Code", bytes: Array("B".utf8), frame: 2, latencyMs: 2, awaitsVerdict: true)!
        fleet.decided(second, verdict: "granted")
        fleet.flush()
        XCTAssertEqual(link.scans.map(\.data), ["A", "B"])
        XCTAssertEqual(link.scans.map(\.verdict), [nil, "granted"])
        fleet.decided(first, verdict: "granted")  // after the flush: nothing more
        XCTAssertEqual(link.scans.count, 2)
        XCTAssertEqual(fleet.waitingCount, 0)
    }

    func testStateGoesOnlyWhenItChanges() {
        let link = RecordingFleetLink(), wall = WallClock()
        let fleet = FleetReporter(link: link, torchOn: false) { wall.ms }
        fleet.torch(on: false)
        fleet.camera(ok: true)
        XCTAssertEqual(link.states, [KioskState(torchOn: false, cameraOK: true, lastScanMs: nil)])
        fleet.torch(on: true)
        fleet.camera(ok: false)
        fleet.camera(ok: false)
        XCTAssertEqual(link.states.map(\.json), [
            #"{"torch":"off","camera":"ok","last_scan":null}"#, #"{"torch":"on","camera":"ok","last_scan":null}"#,
            #"{"torch":"on","camera":"lost","last_scan":null}"#,
        ])
    }

    func testStatsLineAndMetricsCarryTheLinkCounters() {
        var s = StatsSnapshot()
        s.fleet = BrokerCounters(published: 7, acknowledged: 6, queued: 1, dropped: 2, connected: true)
        let text = StatsReporter.prometheusText(s, fps: 0, cpuMsPerFrame: 0)
        for line in ["kiosk_mqtt_published_total 7", "kiosk_mqtt_acknowledged_total 6", "kiosk_mqtt_queued 1",
                     "kiosk_mqtt_dropped_total 2", "kiosk_mqtt_connected 1"] {
            XCTAssertTrue(text.contains("\n" + line + "\n"), line)
        }
        XCTAssertFalse(StatsReporter.prometheusText(StatsSnapshot(), fps: 0, cpuMsPerFrame: 0).contains("mqtt"), "no broker: no MQTT metrics")
    }
}
