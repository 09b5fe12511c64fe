// SPDX-License-Identifier: Apache-2.0
import Foundation
import Kiosk
import Policy
import TestSupport
import XCTest

/// The duress alarm's Home Assistant event entity (issue 54): made when a keypad and a duress code
/// are configured in credentials mode, and read as Home Assistant's MQTT integration reads it
/// (Tests/Peers/ha_templates.py: the keys event.py's schema requires, the value_template rendered
/// by Jinja2 for the messages the kiosk sends on `<topic>/alarm`, the rendering taken as
/// `_event_received` takes it): a duress alarm fires `duress` with its subject and time, the door's
/// other alarms on the same topic fire nothing (and log nothing: an empty rendering).
final class DuressDiscoveryTests: XCTestCase {
    /// Whether the broker's settings ask for the duress entity.
    func duress(_ more: [String: String]) throws -> Bool {
        let env = ["KIOSK_VERDICT": "credentials", "KIOSK_TRUST_DIR": "/nonexistent", "KIOSK_MQTT_URL": "mqtt://127.0.0.1:1883",
                   "KIOSK_MQTT_TOPIC": "kiosk/door-1", "KIOSK_GPIO_CHIP": "sim", "KIOSK_KEYPAD": "wiegand:12,13"].merging(more) { _, b in b }
        let reading = Configuration.read(environment: env.filter { !$0.value.isEmpty }, isExecutableFile: { _ in true })
        guard case .success(let s) = FleetSetup.settings(reading.configuration, [:]) else { XCTFail("the broker settings did not read"); return false }
        return s.duress
    }

    func testTheDuressEntityComesWithAKeypadAndADuressCode() throws {
        XCTAssertTrue(try duress([:]))
        XCTAssertFalse(try duress(["KIOSK_DURESS_CODE": "0"]), "no duress code: no entity")
        XCTAssertFalse(try duress(["KIOSK_KEYPAD": ""]), "no keypad: no duress")
        XCTAssertTrue(try duress(["KIOSK_DURESS_CODE": "listed"]))
        let topics = FleetTopics(prefix: "kiosk/door-1")
        let without = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: topics, version: "0.1.0")
        XCTAssertFalse(without.messages.contains { $0.topic.contains("/duress/") })
    }

    /// Tests/Peers/ha_templates.py on the config messages and, for each topic, the payloads sent on it.
    func render(_ python: String, _ messages: [HomeAssistantDiscovery.Message], samples: [String: [String]],
                dump: String) throws -> [[String: Any]] {
        let file = NSTemporaryDirectory() + "ha-samples-\(UUID().uuidString.prefix(8)).json"
        try JSONSerialization.data(withJSONObject: samples).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [Checkout.root.appendingPathComponent("Tests/Peers/ha_templates.py").path, file]
        let input = try JSONSerialization.data(withJSONObject: messages.map { ["topic": $0.topic, "payload": $0.payload] })
        // KIOSK_HA_DUMP=DIR: the same messages and payloads for Home Assistant's own code
        // (Tests/Peers/ha_core_event.py; make test-ha runs Home Assistant itself: docs/building.md).
        if let dir = ProcessInfo.processInfo.environment["KIOSK_HA_DUMP"] {
            try input.write(to: URL(fileURLWithPath: dir + "/discovery.json"))
            try FileManager.default.copyItem(atPath: file, toPath: dir + "/" + dump)
        }
        let run = try Child.run(p, input: input)
        XCTAssertEqual(run.status, 0, run.errors)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: run.stdout) as? [[String: Any]])
    }

    /// The tag scanner's id for the three kinds of scan message: a text's is the text, bytes' their
    /// base64, a credential's (its token never published) empty, so Home Assistant fires nothing; and
    /// no attribute the message lacks is read (StrictUndefined): Home Assistant logged a warning for
    /// each credential scan, found by make test-ha.
    func testTheTagIsTheTextOrTheBytesAndNothingForACredential() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let topics = FleetTopics(prefix: "kiosk/door-1")
        let d = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: topics, version: "0.1.0")
        let t: Int64 = 1_780_000_000_000
        let scans = [ScanMessage(id: "r-1", symbology: "QR-Code", bytes: Array("HA-TAG-1".utf8), timeMs: t, frame: 1, latencyMs: 1),
                     ScanMessage(id: "r-2", symbology: "QR-Code", bytes: [0xFF, 0x00, 0x41], timeMs: t, frame: 2, latencyMs: 1),
                     ScanMessage(id: "r-3", symbology: "QR-Code", bytes: Array("KC1:TOKEN".utf8), timeMs: t, frame: 3, latencyMs: 1,
                                 verdict: "granted", credential: ScanCredential(subject: "alice", hash: "0011223344556677", reason: "valid"))]
        let rendered = try render(python, d.messages, samples: [topics.scan: scans.map(\.json)], dump: "scans.json")
        XCTAssertEqual(rendered.filter { $0["entity"] as? String == "tag" }.map { $0["tag_id"] as? String }, ["HA-TAG-1", "/wBB", ""])
    }

    func testHomeAssistantFiresDuressForTheDuressAlarmAndNothingForTheOthers() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let topics = FleetTopics(prefix: "kiosk/door-1")
        let d = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-1", topics: topics, version: "0.1.0",
                                       door: true, tamper: true, duress: true)
        let entity = try XCTUnwrap(d.messages.first { $0.topic == "homeassistant/event/door-1/duress/config" })
        let config = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(entity.payload.utf8)) as? [String: Any])
        XCTAssertEqual(config["state_topic"] as? String, "kiosk/door-1/alarm")
        XCTAssertEqual(config["event_types"] as? [String], ["duress"])
        XCTAssertNil(config["retain"], "an event entity's config is retained; the alarm itself is not")

        let t: Int64 = 1_780_000_000_000
        let alarms = [AlarmMessage.duress(subject: "alice", timeMs: t), AlarmMessage.json(event: "door_forced", state: nil, timeMs: t),
                      AlarmMessage.json(event: "tamper", state: "alarm", timeMs: t), AlarmMessage.duress(subject: "pretix:fest:\"3\"", timeMs: t + 1000),
                      AlarmMessage.json(event: "emergency", state: "active", timeMs: t)]
        let rendered = try render(python, d.messages, samples: [topics.alarm: alarms], dump: "alarms.json")
        let fired = rendered.filter { $0["object"] as? String == "duress" }
        XCTAssertEqual(fired.count, alarms.count, "each alarm seen by the entity")
        XCTAssertEqual(fired.map { $0["event_type"] as? String }, ["duress", nil, nil, "duress", nil])
        let first = try XCTUnwrap(fired[0]["attributes"] as? [String: String])
        XCTAssertEqual(first, ["subject": "alice", "time": "2026-05-28T20:26:40.000Z"])
        XCTAssertEqual((fired[3]["attributes"] as? [String: String])?["subject"], "pretix:fest:\"3\"", "a subject with a quote stays one value")
    }
}
