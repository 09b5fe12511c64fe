// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Fleet
import Platform
import Policy
import TestSupport
import XCTest

/// What a link said, in order (its events arrive on the MQTT thread).
final class EventLog: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var events: [BrokerEvent] = []
    func add(_ e: BrokerEvent) { lock.withLock { events.append(e) } }
    var all: [BrokerEvent] { lock.withLock { events } }
    var text: String { all.map { "\($0)" }.joined(separator: "\n") }

    func waitFor(seconds: Double = 15, _ condition: ([BrokerEvent]) -> Bool) -> Bool {
        eventually("the link's events", within: seconds) { condition(all) }
    }

    var connectedCount: Int { all.filter { if case .connected = $0 { return true } else { return false } }.count }
    var disconnectReasons: [String] { all.compactMap { if case .disconnected(let r, _) = $0 { return r } else { return nil } } }
}

final class BrokerLinkTests: XCTestCase {
    private var folders: [String] = []
    /// A test's broker comes back within a second.
    static let backoffCapNs: UInt64 = 500_000_000

    override func setUpWithError() throws {
        XCTAssertTrue(MosquittoBroker.isInstalled, "these tests need Debian's mosquitto and mosquitto-clients (make deps)")
        try XCTSkipUnless(MosquittoBroker.isInstalled)
    }

    override func tearDown() {
        for f in folders { try? FileManager.default.removeItem(atPath: f) }
    }

    private func spoolFolder() -> String {
        let f = NSTemporaryDirectory() + "kiosk-link-" + UUID().uuidString
        folders.append(f)
        return f
    }

    private func makeLink(_ broker: MosquittoBroker, topic: String, spoolIn folder: String? = nil, tls: Bool = false,
                          host: String = "127.0.0.1", user: String? = nil, password: BrokerPassword? = nil,
                          discovery: String? = nil, clock: Clock = MonotonicClock(), events: EventLog) throws -> BrokerLink {
        var settings = BrokerSettings(address: BrokerAddress(host: host, port: tls ? broker.tlsPort! : broker.port, tls: tls),
                                      topics: FleetTopics(prefix: topic), clientID: FleetTopics.defaultClientID(prefix: topic),
                                      user: user, password: password, caFile: tls ? broker.caFile : nil,
                                      discoveryPrefix: discovery, version: "0.1.0-test")
        settings.backoffCapNs = BrokerLinkTests.backoffCapNs
        let link = BrokerLink(settings: settings, spool: try Spool(directory: folder ?? spoolFolder(), capacity: 1000), clock: clock) { events.add($0) }
        link.start()
        return link
    }

    private func scans(_ messages: [MosquittoSubscriber.Message], topic: String) throws -> [[String: Any]] {
        try messages.filter { $0.topic == topic }.map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any], "not JSON: \($0.text)")
        }
    }

    /// The payload's bytes as a scan message carries them: `data` (text) or `data_base64`.
    private func bytes(of scan: [String: Any]) -> [UInt8]? {
        if let text = scan["data"] as? String { return Array(text.utf8) }
        return (scan["data_base64"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init)
    }

    private func waitForCounters(_ link: BrokerLink, seconds: Double = 15, _ condition: (BrokerCounters) -> Bool) -> BrokerCounters {
        eventuallyValue("the link's counters", within: seconds, { link.counters }, until: condition)
    }

    /// On a manual clock the link's only scheduled work is the wake-up for its next attempt: moves
    /// the clock to it once it is pending (never while an attempt is under way, whose CONNACK
    /// timeout would be run down), and says whether there was one. For `eventually`'s loops.
    private func advanceToTheRetry(_ clock: ManualClock) -> Bool {
        guard clock.pendingCount > 0 else { return false }
        clock.advance(byNs: BrokerLinkTests.backoffCapNs)
        return true
    }

    // MARK: -

    func testScansArriveOnceEachInOrderWithTheirFieldsAndHostilePayloadsExactly() throws {
        let broker = try MosquittoBroker()
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-1/#")
        let events = EventLog()
        let link = try makeLink(broker, topic: "kiosk/door-1", events: events)
        var random = SystemRandomNumberGenerator()
        let hostile: [[UInt8]] = [
            Array("quote \" and backslash \\ and {\"json\":1}".utf8),
            Array("two\nlines\r\nand a tab\t".utf8),
            Array("nul\u{0}inside".utf8),
            [0xFF, 0xFE, 0x00, 0x22, 0x5C, 0x0A, 0xC3],  // not UTF-8
            Array("line separator \u{2028} paragraph \u{2029} emoji 😀 é".utf8),
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) },  // 4 kB of bytes
            Array(String(repeating: "ü\"\\\n", count: 800).utf8),  // 4 kB of text that needs escaping
        ]
        let plain = (1...23).map { Array("ticket-\($0)".utf8) }
        let sent = hostile + plain
        var ids: [String] = []
        for (i, payload) in sent.enumerated() {
            ids.append(link.publishScan(symbology: i % 2 == 0 ? "QR-Code" : "CODE-128", bytes: payload, frame: 100 + i, latencyMs: 12.25))
        }
        let messages = sub.waitFor { (try? self.scans($0, topic: "kiosk/door-1/scan").count) ?? 0 >= sent.count }
        let received = try scans(messages, topic: "kiosk/door-1/scan")
        XCTAssertEqual(received.count, sent.count, "each scan once")
        XCTAssertEqual(received.compactMap { $0["id"] as? String }, ids, "in order")
        XCTAssertEqual(Set(ids).count, ids.count)
        for (i, scan) in received.enumerated() where i < sent.count {
            XCTAssertEqual(bytes(of: scan), sent[i], "payload \(i)")
            let isText = String(validating: sent[i], as: UTF8.self) != nil
            XCTAssertEqual(scan["data"] != nil, isText, "payload \(i): data for text, data_base64 for bytes")
            XCTAssertEqual(scan["data_base64"] != nil, !isText)
            XCTAssertEqual(scan["symbology"] as? String, i % 2 == 0 ? "QR-Code" : "CODE-128")
            XCTAssertEqual(scan["frame"] as? Int, 100 + i)
            XCTAssertEqual(scan["latency_ms"] as? Double, 12.2)
            let time = try XCTUnwrap(scan["time"] as? String)
            let parsed = try XCTUnwrap(ISO8601DateFormatter.withMilliseconds.date(from: time), time)
            XCTAssertLessThan(abs(parsed.timeIntervalSinceNow), 300)
        }
        XCTAssertTrue(messages.filter { $0.topic != "kiosk/door-1/scan" }.allSatisfy { !$0.topic.hasSuffix("/scan") })
        XCTAssertFalse(messages.contains { $0.topic == "kiosk/door-1/scan" && $0.retained }, "scans are not retained")
        let c = waitForCounters(link) { $0.acknowledged == sent.count }
        XCTAssertEqual(c.published, sent.count)
        XCTAssertEqual(c.acknowledged, sent.count)
        XCTAssertEqual(c.queued, 0)
        XCTAssertEqual(c.dropped, 0)
        XCTAssertEqual(link.spool.count, 0, "trimmed as the broker acknowledged")

        // Status: online, retained (a later subscriber is told).
        let late = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-1/status")
        XCTAssertTrue(late.waitFor { $0.contains { $0.retained && $0.text == "online" } }.contains { $0.retained && $0.text == "online" })

        // State: retained, published when it changes only.
        link.publishState(KioskState(torchOn: false, cameraOK: true))
        link.publishState(KioskState(torchOn: false, cameraOK: true))
        link.publishState(KioskState(torchOn: true, cameraOK: false, lastScanMs: 0))
        let states = sub.waitFor { $0.filter { $0.topic == "kiosk/door-1/state" }.count >= 1 && $0.last?.text.contains("\"lost\"") == true }
            .filter { $0.topic == "kiosk/door-1/state" }
        XCTAssertEqual(states.last?.text, KioskState(torchOn: true, cameraOK: false, lastScanMs: 0).json)
        XCTAssertLessThanOrEqual(states.count, 2, "the same state twice is published once")
        link.publishStats(StatsMessage.json([("frames", .int(1800)), ("fps", .number(30, digits: 1))]))
        XCTAssertEqual(sub.waitFor { $0.contains { $0.topic == "kiosk/door-1/stats" } }.first { $0.topic == "kiosk/door-1/stats" }?.text,
                       "{\"frames\":1800,\"fps\":30.0}")
        let stateLater = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-1/state")
        XCTAssertEqual(stateLater.waitFor { !$0.isEmpty }.first.map { [$0.retained ? "retained" : "live", $0.text] },
                       ["retained", KioskState(torchOn: true, cameraOK: false, lastScanMs: 0).json])

        // A clean stop: offline, retained.
        XCTAssertTrue(link.stop())
        XCTAssertTrue(sub.waitFor { $0.last { $0.topic == "kiosk/door-1/status" }?.text == "offline" }
            .last { $0.topic == "kiosk/door-1/status" }?.text == "offline")
        XCTAssertEqual(events.connectedCount, 1, events.text)
        XCTAssertEqual(events.disconnectReasons, [], events.text)
    }

    /// Each door state is published once, in order, however quickly they come while the link is
    /// sending (a send that fell between the state and its message published the state twice).
    func testEveryDoorStateOnceInOrderWhileTheLinkSends() throws {
        let broker = try MosquittoBroker()
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-9/door")
        let events = EventLog()
        let link = try makeLink(broker, topic: "kiosk/door-9", events: events)
        XCTAssertTrue(events.waitFor { _ in link.counters.connected }, events.text)
        let states = (0..<400).map { ["open", "closed", "held", "forced"][$0 % 4] }
        for (i, state) in states.enumerated() {
            link.publishDoor(state)
            if i % 8 == 0 { usleep(200) }  // let the MQTT thread send in between, as a door's changes do
        }
        // Nothing more after the last: a last state, sent after them on the same topic and the same
        // connection (QoS 1, in order), arrives after anything they could have caused.
        link.publishDoor("end-of-test")
        let all = sub.waitFor(seconds: 30) { $0.last?.text == "end-of-test" }
        XCTAssertEqual(all.last?.text, "end-of-test", "the last state arrived")
        let got = all.map(\.text).dropLast().map { $0 }
        let firstDifference = zip(got, states).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, states.count)
        XCTAssertEqual(got.count, states.count, "messages on kiosk/door-9/door; the first out of order at \(firstDifference): \(got.dropFirst(max(0, firstDifference - 2)).prefix(5))")
        XCTAssertTrue(got == states, "each state once, in order")
        link.stop()
    }

    func testEveryScanMadeWhileTheBrokerIsAwayArrivesAfterwards() throws {
        let broker = try MosquittoBroker()
        // A persistent session: the broker keeps what it is sent for this consumer while it is away too.
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-2/scan", persistentID: "consumer-door-2")
        let events = EventLog()
        let clock = ManualClock()
        let link = try makeLink(broker, topic: "kiosk/door-2", clock: clock, events: events)
        var ids: [String] = []
        for i in 1...5 { ids.append(link.publishScan(symbology: "QR-Code", bytes: Array("before-\(i)".utf8), frame: i, latencyMs: 1)) }
        XCTAssertEqual(waitForCounters(link) { $0.acknowledged == 5 }.acknowledged, 5)

        broker.stop()
        XCTAssertTrue(events.waitFor { !$0.isEmpty && $0.contains { if case .disconnected = $0 { return true } else { return false } } }, events.text)
        XCTAssertFalse(link.counters.connected)
        let whileAway = 40
        for i in 1...whileAway { ids.append(link.publishScan(symbology: "QR-Code", bytes: Array("away-\(i)".utf8), frame: 5 + i, latencyMs: 1)) }
        let queued = waitForCounters(link) { $0.queued == whileAway && link.spool.count == whileAway }
        XCTAssertEqual(queued.queued, whileAway, "queued while the broker is away")
        XCTAssertEqual(queued.acknowledged, 5)

        let restarted = Date()
        try broker.start()
        // The back-off on the link's clock: moved to each retry until one connects.
        XCTAssertEventually("connected again", { _ = self.advanceToTheRetry(clock); return link.counters.connected }, events.text)
        let messages = sub.waitFor(seconds: 30) { Set(((try? self.scans($0, topic: "kiosk/door-2/scan")) ?? []).compactMap { $0["id"] as? String }).count == ids.count }
        let delivered = Date().timeIntervalSince(restarted)
        let received = try scans(messages, topic: "kiosk/door-2/scan").compactMap { $0["id"] as? String }
        var firstSeen: [String] = []
        for id in received where !firstSeen.contains(id) { firstSeen.append(id) }
        XCTAssertEqual(firstSeen, ids, "every scan, in order")
        let c = waitForCounters(link) { $0.acknowledged >= ids.count }
        XCTAssertEqual(c.queued, 0)
        XCTAssertEqual(c.dropped, 0)
        XCTAssertEqual(events.connectedCount, 2, events.text)
        print("mqtt_outage_figures made_while_away=\(whileAway) delivered_after=\(Set(received).count - 5) duplicates=\(received.count - Set(received).count) seconds_to_deliver_after_restart=\(String(format: "%.2f", delivered))")
        link.stop()
    }

    func testTheSpoolSurvivesSIGKILLWhileTheBrokerIsDown() throws {
        let broker = try MosquittoBroker()
        broker.stop()
        let folder = spoolFolder()
        let child = try LinkChild(port: broker.port, topic: "kiosk/door-3", spool: folder, scans: 6)
        XCTAssertTrue(child.waitForLine { $0 == "spooled 6" }, child.output)
        child.kill()
        XCTAssertTrue(child.output.contains("event disconnected"), child.output)

        try broker.start()
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-3/scan")
        let events = EventLog()
        let link = try makeLink(broker, topic: "kiosk/door-3", spoolIn: folder, events: events)
        XCTAssertEqual(link.spool.count, 6, "read back from the file")
        let messages = sub.waitFor { (try? self.scans($0, topic: "kiosk/door-3/scan").count) ?? 0 >= 6 }
        XCTAssertEqual(try scans(messages, topic: "kiosk/door-3/scan").compactMap(bytes).map { String(decoding: $0, as: UTF8.self) },
                       (1...6).map { "child-\($0)" })
        XCTAssertEqual(waitForCounters(link) { $0.queued == 0 }.queued, 0)
        link.stop()
    }

    func testTheLastWillSaysOfflineWhenTheKioskIsKilledAndOnlineComesBack() throws {
        let broker = try MosquittoBroker()
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-4/status")
        let folder = spoolFolder()
        let first = try LinkChild(port: broker.port, topic: "kiosk/door-4", spool: folder, scans: 0)
        XCTAssertTrue(first.waitForLine { $0.hasPrefix("event connected") }, first.output)
        XCTAssertEqual(sub.waitFor { $0.map(\.text) == ["online"] }.map(\.text), ["online"])
        first.kill()  // no DISCONNECT: the broker publishes the will
        XCTAssertEqual(sub.waitFor { $0.map(\.text) == ["online", "offline"] }.map(\.text), ["online", "offline"])
        let second = try LinkChild(port: broker.port, topic: "kiosk/door-4", spool: folder, scans: 0)
        XCTAssertTrue(second.waitForLine { $0.hasPrefix("event connected") }, second.output)
        XCTAssertEqual(sub.waitFor { $0.map(\.text) == ["online", "offline", "online"] }.map(\.text), ["online", "offline", "online"])
        XCTAssertTrue(second.terminate(), second.output)  // SIGTERM: a clean stop
        XCTAssertTrue(second.output.contains("stopped"), second.output)
        XCTAssertEqual(sub.waitFor { $0.count >= 4 }.map(\.text), ["online", "offline", "online", "offline"])
    }

    func testTLSWithTheTestsCAAndALoginFromAPasswordFile() throws {
        let password = "s3cret-\(UUID().uuidString.prefix(8))"
        let broker = try MosquittoBroker(tls: true, users: [("door-5", password), ("consumer", "consumer-pw")])
        let file = broker.folder + "/door-5.password"
        try (password + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let sub = try MosquittoSubscriber(broker: broker, topic: "kiosk/door-5/#", user: ("consumer", "consumer-pw"))
        let events = EventLog()
        let settingsPassword = try BrokerPassword.read(file: file)
        XCTAssertEqual("\(settingsPassword)", "(hidden)")
        let link = try makeLink(broker, topic: "kiosk/door-5", tls: true, user: "door-5", password: settingsPassword, events: events)
        XCTAssertTrue(events.waitFor { $0.contains(.connected(broker: "mqtts://127.0.0.1:\(broker.tlsPort!)")) }, events.text)
        for i in 1...3 { link.publishScan(symbology: "QR-Code", bytes: Array("tls-\(i)".utf8), frame: i, latencyMs: 2) }
        let messages = sub.waitFor { (try? self.scans($0, topic: "kiosk/door-5/scan").count) ?? 0 >= 3 }
        XCTAssertEqual(try scans(messages, topic: "kiosk/door-5/scan").compactMap { $0["data"] as? String }, ["tls-1", "tls-2", "tls-3"])
        XCTAssertTrue(link.stop())
        let said = events.text + "\(link.settings)" + "\(link.counters)"
        XCTAssertFalse(said.contains(password), "the password never appears")
        // The broker saw a TLS connection from the kiosk's client id.
        let log = try String(contentsOfFile: broker.logFile, encoding: .utf8)
        XCTAssertTrue(log.contains("as door-5"), log)
    }

    func testAWrongPasswordIsSaidClearlyAndNothingIsLost() throws {
        let broker = try MosquittoBroker(tls: true, users: [("door-6", "the-right-one")])
        let wrong = "not-the-password-\(UUID().uuidString.prefix(6))"
        let events = EventLog()
        let folder = spoolFolder()
        let clock = ManualClock()
        let link = try makeLink(broker, topic: "kiosk/door-6", spoolIn: folder, tls: true, user: "door-6", password: BrokerPassword(wrong),
                                clock: clock, events: events)
        link.publishScan(symbology: "QR-Code", bytes: Array("kept".utf8), frame: 1, latencyMs: 1)
        XCTAssertTrue(events.waitFor { !$0.isEmpty }, events.text)
        XCTAssertEqual(events.disconnectReasons.first, "refused: not authorised", events.text)
        XCTAssertEqual(events.connectedCount, 0)
        XCTAssertEqual(waitForCounters(link) { $0.queued == 1 }.queued, 1, "the scan waits in the spool")
        // Retried with the back-off and said once, not at each attempt: three more attempts, each
        // refused by the broker and its outcome told (the next retry is pending only after it).
        for attempt in 2...4 {
            XCTAssertEventually("retry \(attempt) pending on the clock") { clock.pendingCount > 0 }
            XCTAssertTrue(advanceToTheRetry(clock))
            XCTAssertEventually("the broker refused attempt \(attempt)", {
                (try? String(contentsOfFile: broker.logFile, encoding: .utf8))?.components(separatedBy: "not authorised").count ?? 0 > attempt
            }, (try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? "")
        }
        XCTAssertEventually("the fourth attempt's outcome told (its retry pending)") { clock.pendingCount > 0 }
        XCTAssertEqual(events.disconnectReasons, ["refused: not authorised"], events.text)
        XCTAssertTrue(link.stop())
        XCTAssertFalse(events.text.contains(wrong))
        XCTAssertEqual(try Spool(directory: folder, capacity: 10).count, 1)
    }

    func testTheBrokersNameIsChecked() throws {
        // The certificate names localhost only: 127.0.0.1 is refused, localhost accepted.
        let broker = try MosquittoBroker(tls: true, certificateNamesIP: false)
        let refused = EventLog()
        let byAddress = try makeLink(broker, topic: "kiosk/door-7", tls: true, events: refused)
        XCTAssertTrue(refused.waitFor { !$0.isEmpty }, refused.text)
        XCTAssertEqual(refused.connectedCount, 0, refused.text)
        XCTAssertTrue(refused.disconnectReasons.first?.contains("TLS failed") == true, refused.text)
        byAddress.stop()
        let accepted = EventLog()
        let byName = try makeLink(broker, topic: "kiosk/door-7", tls: true, host: "localhost", events: accepted)
        XCTAssertTrue(accepted.waitFor { $0.contains(.connected(broker: "mqtts://localhost:\(broker.tlsPort!)")) }, accepted.text)
        byName.stop()
        // A CA that did not sign the broker's certificate.
        let other = try MosquittoBroker(tls: true)
        var settings = BrokerSettings(address: BrokerAddress(host: "127.0.0.1", port: broker.tlsPort!, tls: true), topics: FleetTopics(prefix: "kiosk/door-7"),
                                      clientID: "door-7", caFile: other.caFile, discoveryPrefix: nil, version: "test")
        settings.backoffCapNs = 500_000_000
        let wrongCA = EventLog()
        let link = BrokerLink(settings: settings, spool: try Spool(directory: spoolFolder(), capacity: 10), clock: MonotonicClock()) { wrongCA.add($0) }
        link.start()
        XCTAssertTrue(wrongCA.waitFor { !$0.isEmpty }, wrongCA.text)
        XCTAssertTrue(wrongCA.disconnectReasons.first?.contains("certificate verify failed") == true, wrongCA.text)
        link.stop()
    }

    /// A broker that takes the connection and never answers: the link gives up after
    /// `connectTimeoutNs` on its clock, not before (the manual clock has not moved), says why,
    /// and tries again after the back-off.
    func testNoCONNACKWithinTheTimeoutOnTheLinksClockThenARetry() throws {
        let silent = try SilentListener()
        var settings = BrokerSettings(address: BrokerAddress(host: "127.0.0.1", port: silent.port, tls: false),
                                      topics: FleetTopics(prefix: "kiosk/door-10"), clientID: "door-10", discoveryPrefix: nil, version: "test")
        settings.backoffCapNs = BrokerLinkTests.backoffCapNs
        let events = EventLog(), clock = ManualClock()
        let link = BrokerLink(settings: settings, spool: try Spool(directory: spoolFolder(), capacity: 10), clock: clock) { events.add($0) }
        link.start()
        defer { link.stop(graceNs: 0) }
        let first = try XCTUnwrap(silent.acceptConnect(), "the link's CONNECT")
        XCTAssertEqual(first.first, 0x10, "an MQTT CONNECT")
        XCTAssertEqual(events.all, [], "no time has passed on the link's clock")
        clock.advance(byNs: settings.connectTimeoutNs - 1_000_000)
        clock.advance(byNs: 2_000_000)
        XCTAssertTrue(events.waitFor { !$0.isEmpty }, events.text)
        XCTAssertEqual(events.disconnectReasons, ["no CONNACK from the broker within 10 s"], events.text)
        XCTAssertEventually("the retry pending on the clock") { clock.pendingCount > 0 }
        XCTAssertTrue(advanceToTheRetry(clock))
        XCTAssertNotNil(silent.acceptConnect(), "a second CONNECT after the back-off")
    }

    func testHomeAssistantDiscoveryIsRetainedParsesAndIsAnnouncedAgain() throws {
        let broker = try MosquittoBroker()
        let events = EventLog()
        let link = try makeLink(broker, topic: "kiosk/door-8", discovery: "homeassistant", events: events)
        XCTAssertTrue(events.waitFor { $0.contains { if case .connected = $0 { return true } else { return false } } }, events.text)
        // Published (a first subscriber sees all five) before the one that must get them retained.
        let live = try MosquittoSubscriber(broker: broker, topic: "homeassistant/+/door-8/+/config")
        XCTAssertEqual(live.waitFor { $0.count >= 5 }.count, 5, "discovery published")
        let sub = try MosquittoSubscriber(broker: broker, topic: "homeassistant/+/door-8/+/config")
        let configs = sub.waitFor { $0.count >= 5 }
        XCTAssertEqual(configs.count, 5)
        XCTAssertTrue(configs.allSatisfy(\.retained), "config topics are retained")
        XCTAssertEqual(Set(configs.map(\.topic)), ["homeassistant/tag/door-8/scan/config", "homeassistant/event/door-8/scan/config",
                                                   "homeassistant/sensor/door-8/torch/config", "homeassistant/sensor/door-8/camera/config",
                                                   "homeassistant/sensor/door-8/fps/config"])
        var uniqueIDs: Set<String> = []
        for m in configs {
            let o = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any], m.text)
            let device = try XCTUnwrap(o["device"] as? [String: Any])
            XCTAssertEqual(device["identifiers"] as? [String], ["kiosk_door-8"])
            if m.topic.contains("/tag/") { XCTAssertEqual(o["topic"] as? String, "kiosk/door-8/scan"); continue }
            XCTAssertTrue(uniqueIDs.insert(try XCTUnwrap(o["unique_id"] as? String)).inserted)
            XCTAssertEqual(o["availability_topic"] as? String, "kiosk/door-8/status")
        }
        XCTAssertEqual(uniqueIDs.count, 4)
        // Home Assistant restarted: announced again.
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "homeassistant/status", "-m", "online"])
        XCTAssertEqual(sub.waitFor { $0.count >= 10 }.count, 10)
        link.stop()
    }
}

/// Issue 23: libmosquitto (and the libssl it pulls in) is loaded on first use, in a process of
/// its own so that nothing else in the test bundle has loaded it before.
final class LibmosquittoOnFirstUseTests: XCTestCase {
    func testLibmosquittoIsNotMappedUntilUsed() throws {
        let tests = URL(fileURLWithPath: Files.executablePath() ?? CommandLine.arguments[0])
        let child = Process()
        child.executableURL = tests.deletingLastPathComponent().appendingPathComponent("FleetTestChild")
        child.environment = ["MQTT_CHILD_MAPS": "1"]
        let run = try Child.run(child)
        let line = run.output
        XCTAssertEqual(run.status, 0, line + run.errors)
        XCTAssertTrue(line.hasPrefix("maps before=no loaded=no after=yes version=2."), line)
    }
}

/// A TCP listener on 127.0.0.1 that accepts and reads, and never answers: a broker that hangs.
final class SilentListener {
    let port: Int
    private let fd: Int32
    private var accepted: [Int32] = []

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &size) == 0 }
        }
        guard fd >= 0, bound else {
            let why = Errno.current.message
            if fd >= 0 { close(fd) }
            throw BrokerTestError("a listening socket: \(why)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        for c in accepted { close(c) }
        close(fd)
    }

    /// The next connection's first bytes (within `seconds`); nil when none came.
    func acceptConnect(seconds: Int32 = 15) -> [UInt8]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, seconds * 1000) == 1 else { return nil }
        let c = accept(fd, nil, nil)
        guard c >= 0 else { return nil }
        accepted.append(c)
        var q = pollfd(fd: c, events: Int16(POLLIN), revents: 0)
        guard poll(&q, 1, seconds * 1000) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = read(c, &buffer, buffer.count)
        return n > 0 ? Array(buffer[0..<n]) : nil
    }
}

/// `FleetTestChild`: the link in a process of its own, to be killed.
final class LinkChild {
    private let process = Process()
    private let outputFile: String

    init(port: Int, topic: String, spool: String, scans: Int) throws {
        outputFile = NSTemporaryDirectory() + "kiosk-child-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: outputFile, contents: nil)
        // Built beside the test bundle (the test target depends on it).
        let tests = URL(fileURLWithPath: Files.executablePath() ?? CommandLine.arguments[0])
        process.executableURL = tests.deletingLastPathComponent().appendingPathComponent("FleetTestChild")
        process.environment = ["MQTT_CHILD_PORT": String(port), "MQTT_CHILD_TOPIC": topic, "MQTT_CHILD_SPOOL": spool,
                               "MQTT_CHILD_SCANS": String(scans)]
        process.standardOutput = FileHandle(forWritingAtPath: outputFile)
        process.standardError = FileHandle(forWritingAtPath: outputFile)
        try process.run()
    }

    deinit {
        if process.isRunning { kill() }
        try? FileManager.default.removeItem(atPath: outputFile)
    }

    var output: String { (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "" }

    func waitForLine(seconds: Double = 15, _ condition: (String) -> Bool) -> Bool {
        eventually("a line of the child's", within: seconds) { output.split(separator: "\n").contains { condition(String($0)) } }
    }

    func kill() {
        Child.end(process, signal: SIGKILL)
    }

    /// SIGTERM, and true when it then exited 0 within 5 s.
    func terminate() -> Bool {
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(); return false }
        return process.terminationStatus == 0
    }
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withMilliseconds: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()
}
