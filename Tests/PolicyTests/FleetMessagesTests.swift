// SPDX-License-Identifier: Apache-2.0
import Foundation  // JSONSerialization: an independent reader of what the kiosk writes
import Policy
import XCTest

final class FleetMessagesTests: XCTestCase {
    private func object(_ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        return try XCTUnwrap(value as? [String: Any], "not an object: \(json)", file: file, line: line)
    }

    func testAQuotedStringReadsBackAsTheSameText() throws {
        let hostile = "a\"b\\c\nd\r\t\u{0}\u{1}\u{1F}\u{7F}\u{2028}\u{2029}é😀</script>"
        let json = JSONText.quoted(hostile)
        XCTAssertFalse(json.contains("\n"))
        XCTAssertTrue(json.contains("\\u0000"))
        XCTAssertTrue(json.contains("\\u001f"))
        let back = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) as? String
        XCTAssertEqual(back, hostile)
    }

    func testBase64MatchesRFC4648sVectorsAndRoundTrips() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8))
        }
        let all = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 3) }
        XCTAssertEqual(Base64.encode(all), Data(all).base64EncodedString())
        XCTAssertEqual(Base64.decode(Base64.encode(all)), all)
        XCTAssertNil(Base64.decode("Zm9"))
        XCTAssertNil(Base64.decode("Zm=v"))
        XCTAssertNil(Base64.decode("Zm9v\n"))
    }

    func testRFC3339TimesAgreeWithTheCalendar() {
        XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: 0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: 951_782_400_123), "2000-02-29T00:00:00.123Z")
        XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: 1_798_761_599_999), "2026-12-31T23:59:59.999Z")
        XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: 4_107_542_400_000), "2100-03-01T00:00:00.000Z")
        XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: -1), "1969-12-31T23:59:59.999Z")
        // Every day for 40 years against Foundation's calendar.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var ms: Int64 = 946_684_800_000 + 45_296_789
        for _ in 0..<(40 * 366) {
            XCTAssertEqual(RFC3339.utc(millisecondsSinceEpoch: ms), formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)))
            ms += 86_400_000
        }
    }

    func testAScanOfTextCarriesItExactly() throws {
        let text = "WIFI:S:\"door\";P:a\\b\n\u{0}end é"
        let message = ScanMessage(id: "00ff-1", symbology: "QR-Code", bytes: Array(text.utf8), timeMs: 1_798_761_599_999,
                                  frame: 42, latencyMs: 12.345)
        let json = message.json
        let o = try object(json)
        XCTAssertEqual(o["id"] as? String, "00ff-1")
        XCTAssertEqual(o["symbology"] as? String, "QR-Code")
        XCTAssertEqual(o["data"] as? String, text)
        XCTAssertNil(o["data_base64"])
        XCTAssertEqual(o["time"] as? String, "2026-12-31T23:59:59.999Z")
        XCTAssertEqual(o["frame"] as? Int, 42)
        XCTAssertEqual(o["latency_ms"] as? Double, 12.3)
        XCTAssertNil(o["verdict"])
        XCTAssertEqual(Array(o.keys).sorted(), ["data", "frame", "id", "latency_ms", "symbology", "time"])
    }

    func testAScanOfBytesThatAreNotUTF8GoesAsBase64() throws {
        let bytes: [UInt8] = [0xFF, 0x00, 0xC3, 0x28, 0x22, 0x5C, 0x0A, 0xED, 0xA0, 0x80] + Array(repeating: 0x41, count: 4096)
        let o = try object(ScanMessage(id: "x-2", symbology: "CODE-128", bytes: bytes, timeMs: 0, frame: 1, latencyMs: 0,
                                       verdict: "granted").json)
        XCTAssertNil(o["data"])
        XCTAssertEqual((o["data_base64"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init), bytes)
        XCTAssertEqual(o["verdict"] as? String, "granted")
    }

    func testOverlongAndSurrogateUTF8IsNotText() {
        XCTAssertNil(JSONText.utf8Text([0xC0, 0xAF]))
        XCTAssertNil(JSONText.utf8Text([0xED, 0xA0, 0x80]))
        XCTAssertNil(JSONText.utf8Text([0xE2, 0x82]))
        XCTAssertEqual(JSONText.utf8Text([0xE2, 0x82, 0xAC, 0x00]), "€\u{0}")
        XCTAssertEqual(JSONText.utf8Text([]), "")
    }

    func testScanIDsAreUniqueWithinARunAndBetweenRuns() {
        var a = ScanID(random: [1, 2, 3, 4, 5, 6, 7, 8])
        var b = ScanID(random: [8, 7, 6, 5, 4, 3, 2, 1])
        let ids = (0..<500).map { _ in a.next() } + (0..<500).map { _ in b.next() }
        XCTAssertEqual(Set(ids).count, 1000)
        XCTAssertEqual(ids.first, "0102030405060708-1")
    }

    func testStateAndStatsAreJSON() throws {
        let s = try object(KioskState(torchOn: true, cameraOK: false, lastScanMs: 0).json)
        XCTAssertEqual(s["torch"] as? String, "on")
        XCTAssertEqual(s["camera"] as? String, "lost")
        XCTAssertEqual(s["last_scan"] as? String, "1970-01-01T00:00:00.000Z")
        let none = try object(KioskState().json)
        XCTAssertEqual(none["torch"] as? String, "none")
        XCTAssertTrue(none["last_scan"] is NSNull)
        let stats = try object(StatsMessage.json([("frames", .int(900)), ("fps", .number(29.97, digits: 1)), ("torch", .text("off"))]))
        XCTAssertEqual(stats["frames"] as? Int, 900)
        XCTAssertEqual(stats["fps"] as? Double, 30.0)
        XCTAssertEqual(stats["torch"] as? String, "off")
    }

    func testBrokerURLs() {
        XCTAssertEqual(BrokerAddress.parse("mqtt://broker"), BrokerAddress(host: "broker", port: 1883, tls: false))
        XCTAssertEqual(BrokerAddress.parse("mqtts://broker.example.org"), BrokerAddress(host: "broker.example.org", port: 8883, tls: true))
        XCTAssertEqual(BrokerAddress.parse("mqtt://10.0.0.5:1884/"), BrokerAddress(host: "10.0.0.5", port: 1884, tls: false))
        XCTAssertEqual(BrokerAddress.parse("mqtt://[::1]:1883"), BrokerAddress(host: "::1", port: 1883, tls: false))
        XCTAssertEqual(BrokerAddress.parse("mqtts://[fe80::1]"), BrokerAddress(host: "fe80::1", port: 8883, tls: true))
        XCTAssertEqual(BrokerAddress.parse("mqtts://[::1]:8884")?.description, "mqtts://[::1]:8884")
        for bad in ["", "broker", "tcp://broker", "http://broker", "mqtt://", "mqtt://:1883", "mqtt://broker:0", "mqtt://broker:65536",
                    "mqtt://broker:", "mqtt://broker:18a3", "mqtt://user:pw@broker", "mqtt://broker/topic", "mqtt://[::1",
                    "mqtt://[::1]x", "mqtt://[]:1883", "mqtt://::1:1883", "mqtt://bro ker", "MQTT://broker", "mqtt://broker:+1883",
                    "mqtt://[zz::1]"] {
            XCTAssertNil(BrokerAddress.parse(bad), bad)
        }
        XCTAssertTrue(BrokerAddress.expected.contains("mqtts://"))
    }

    func testTopicDefaults() {
        XCTAssertEqual(FleetTopics.defaultPrefix(hostname: "Door-3.example.org"), "kiosk/door-3")
        XCTAssertEqual(FleetTopics.defaultPrefix(hostname: "a b+c#"), "kiosk/a_b_c_")
        XCTAssertEqual(FleetTopics.defaultPrefix(hostname: ""), "kiosk/kiosk")
        XCTAssertEqual(FleetTopics.defaultClientID(prefix: "kiosk/door-3"), "door-3")
        XCTAssertEqual(FleetTopics.defaultClientID(prefix: "site/b2/entrance"), "entrance")
        let t = FleetTopics(prefix: "kiosk/door-3")
        XCTAssertEqual([t.status, t.scan, t.state, t.stats], ["kiosk/door-3/status", "kiosk/door-3/scan", "kiosk/door-3/state", "kiosk/door-3/stats"])
        XCTAssertNil(FleetTopics.problem(with: "kiosk/door-3"))
        for bad in ["", "/kiosk", "kiosk/", "kiosk//x", "kiosk/+", "kiosk/#", "$SYS/x", "a\u{0}b"] {
            XCTAssertNotNil(FleetTopics.problem(with: bad), bad)
        }
    }

    func testConnackReasonsSayWhatWentWrong() {
        XCTAssertEqual(ConnackReason.text(5), "refused: not authorised")
        XCTAssertEqual(ConnackReason.text(4), "refused: bad user name or password")
        XCTAssertEqual(ConnackReason.text(0x87), "refused: not authorised")
        XCTAssertEqual(ConnackReason.text(77), "refused: reason 77")
    }

    func testBackOffForTheBrokerDoublesFromHalfASecondToThirtySeconds() {
        var b = Backoff()
        b.capNs = 30_000_000_000
        XCTAssertEqual((1...9).map { b.delay(attempt: $0) / 1_000_000 }, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
    }

    func testHomeAssistantDiscoveryIsWhatHomeAssistantReads() throws {
        let d = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "Door-3", topics: FleetTopics(prefix: "kiosk/door-3"), version: "0.1.0")
        XCTAssertEqual(d.statusTopic, "homeassistant/status")
        let messages = d.messages
        XCTAssertEqual(messages.map(\.topic), [
            "homeassistant/tag/door-3/scan/config", "homeassistant/event/door-3/scan/config",
            "homeassistant/sensor/door-3/torch/config", "homeassistant/sensor/door-3/camera/config",
            "homeassistant/sensor/door-3/fps/config",
        ])
        var uniqueIDs = Set<String>()
        for m in messages {
            let parts = m.topic.split(separator: "/")
            XCTAssertEqual(parts.count, 5)
            XCTAssertEqual(parts.last, "config")
            let o = try object(m.payload)
            let device = try XCTUnwrap(o["device"] as? [String: Any])
            XCTAssertEqual(device["identifiers"] as? [String], ["kiosk_door-3"])
            if parts[1] == "tag" {
                XCTAssertEqual(o["topic"] as? String, "kiosk/door-3/scan")
                XCTAssertNotNil(o["value_template"] as? String)
                continue
            }
            let id = try XCTUnwrap(o["unique_id"] as? String)
            XCTAssertTrue(uniqueIDs.insert(id).inserted, "unique_id \(id) twice")
            XCTAssertEqual(o["availability_topic"] as? String, "kiosk/door-3/status")
            XCTAssertEqual(o["payload_available"] as? String, "online")
            XCTAssertEqual(o["payload_not_available"] as? String, "offline")
            XCTAssertNotNil(o["state_topic"] as? String)
            if parts[1] == "event" { XCTAssertEqual(o["event_types"] as? [String], ["scan"]) }
        }
        XCTAssertEqual(uniqueIDs.count, 4)
    }

    // The door's sensors, the tamper in the state, the alarms.
    func testTheDoorAndTamperSensorsComeWithTheirInputs() throws {
        let topics = FleetTopics(prefix: "kiosk/door-3")
        XCTAssertEqual([topics.door, topics.alarm, topics.command, topics.commandResult],
                       ["kiosk/door-3/door", "kiosk/door-3/alarm", "kiosk/door-3/command", "kiosk/door-3/command/result"])
        let plain = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-3", topics: topics, version: "0.1.0")
        XCTAssertEqual(plain.messages.count, 5, "no door input: no door entities")
        let d = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-3", topics: topics, version: "0.1.0", door: true, tamper: true)
        let extra = Array(d.messages.dropFirst(5))
        XCTAssertEqual(extra.map(\.topic), ["homeassistant/binary_sensor/door-3/door/config", "homeassistant/binary_sensor/door-3/tamper/config"])
        let door = try object(extra[0].payload), tamper = try object(extra[1].payload)
        XCTAssertEqual(door["state_topic"] as? String, "kiosk/door-3/door")
        XCTAssertEqual(door["device_class"] as? String, "door")
        XCTAssertEqual([door["payload_on"] as? String, door["payload_off"] as? String], ["open", "closed"])
        XCTAssertEqual(door["value_template"] as? String, "{{ 'closed' if value == 'closed' else 'open' }}")
        XCTAssertEqual(tamper["state_topic"] as? String, "kiosk/door-3/state")
        XCTAssertEqual(tamper["device_class"] as? String, "tamper")
        XCTAssertEqual([tamper["payload_on"] as? String, tamper["payload_off"] as? String], ["alarm", "ok"])
        XCTAssertEqual(tamper["unique_id"] as? String, "kiosk_door-3_tamper")
        XCTAssertEqual(tamper["availability_topic"] as? String, "kiosk/door-3/status")
    }

    func testTheTamperInTheStateAndTheAlarms() throws {
        XCTAssertNil(try object(KioskState().json)["tamper"], "no tamper line: no member")
        XCTAssertEqual(try object(KioskState(tamper: true).json)["tamper"] as? String, "alarm")
        XCTAssertEqual(try object(KioskState(tamper: false).json)["tamper"] as? String, "ok")
        let a = try object(AlarmMessage.json(event: "door_alarm_end", state: "forced", timeMs: 0))
        XCTAssertEqual(a["event"] as? String, "door_alarm_end")
        XCTAssertEqual(a["state"] as? String, "forced")
        XCTAssertEqual(a["time"] as? String, "1970-01-01T00:00:00.000Z")
        XCTAssertTrue(try object(AlarmMessage.json(event: "door_forced", state: nil, timeMs: 0))["state"] is NSNull)
    }
}
