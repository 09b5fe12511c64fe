// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// The door on the release binary: the door's inputs on the simulated chip (driven through the
/// kiosk's standard input), its events on the log and on a real Mosquitto, and the building's
/// commands.
final class DoorEndToEndTests: XCTestCase {
    var folder: URL!
    var id = ""
    typealias Kiosk = FleetEndToEndTests.LiveKiosk

    override func setUpWithError() throws {
        try XCTSkipUnless(MosquittoBroker.isInstalled, "mosquitto and mosquitto-clients (the Makefile's PACKAGES) are needed")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        id = String(UUID().uuidString.prefix(8)).lowercased()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-door-\(id)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    func env(_ broker: MosquittoBroker, topic: String, _ more: [String: String]) throws -> [String: String] {
        let state = folder.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        return ["KIOSK_MQTT_URL": "mqtt://127.0.0.1:\(broker.port)", "KIOSK_MQTT_TOPIC": topic, "KIOSK_MQTT_DISCOVERY": "ha-\(id)",
                "STATE_DIRECTORY": state, "KIOSK_ROI": "0,0,1,1", "KIOSK_REPEAT_MS": "0", "KIOSK_GPIO_CHIP": "sim",
                "KIOSK_STATS_S": "0"].merging(more) { _, b in b }
    }

    static let doorEvents: Set<String> = ["door_contact", "rex", "door_forced", "door_held", "door_alarm_end", "tamper"]

    /// The door's events in the log, in order, each as `event` or `event:state`.
    func doorLog(_ kiosk: Kiosk) -> [String] {
        kiosk.lines.filter { Self.doorEvents.contains($0["event"] ?? "") }.map { line in
            let e = line["event"]!
            if let s = line["state"] { return "\(e):\(s)" }
            if let a = line["alarm"] { return "\(e):\(a)" }
            return e
        }
    }

    func json(_ m: MosquittoSubscriber.Message) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(m.payload))) as? [String: Any] ?? [:]
    }

    /// A grant then the door opened and closed; the door opened with no grant (forced); the exit
    /// button then the door held past the limit; tamper: each event once, in order, on the log
    /// and on Mosquitto (`<topic>/door` retained, `<topic>/alarm`, the tamper in `<topic>/state`,
    /// discovery for the door and tamper sensors), the strike open on the grant and the button.
    func testGrantForcedRexHeldAndTamperOnceInOrderOnTheLogAndTheBroker() throws {
        let broker = try MosquittoBroker()
        let topic = "kt-\(id)/door-3"
        let sub = try MosquittoSubscriber(broker: broker, topic: "#")
        let replay = try FleetEndToEndTests.FifoReplay(folder.path + "/replay", count: 2)
        let kiosk = try Kiosk(env: env(broker, topic: topic, [
            "KIOSK_CAMERA": "replay:\(replay.path)", "KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": "/bin/true",
            "KIOSK_DOOR_LINE": "22", "KIOSK_DOOR_MS": "1000", "KIOSK_DOOR_CONTACT_LINE": "5", "KIOSK_REX_LINE": "6",
            "KIOSK_REX_ACTIVE_LOW": "1", "KIOSK_TAMPER_LINE": "7", "KIOSK_DOOR_HELD_S": "1", "KIOSK_BUZZER_LINE": "18",
            "KIOSK_METRICS_FILE": folder.path + "/kiosk.prom",
        ]), stdin: true)
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("door_inputs"), kiosk.text)
        XCTAssertEqual(kiosk.of("door_inputs").first?["debounce"], "kiosk", "the simulated chip does not debounce: the kiosk does")

        // A grant, then the door opened and shut within the strike's second.
        replay.feed(try FleetEndToEndTests.frame(Array("LET-ME-IN".utf8)))
        XCTAssertTrue(kiosk.waitFor("verdict"), kiosk.text)
        XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
        kiosk.say("contact 1")
        XCTAssertTrue(kiosk.waitFor("door_contact", count: 1), kiosk.text)
        kiosk.say("contact 0")
        XCTAssertTrue(kiosk.waitFor("door_contact", count: 2), kiosk.text)
        // The strike shuts by time; then the door opened without a grant: forced, and shut.
        XCTAssertTrue(kiosk.waitFor("door", count: 2), kiosk.text)
        kiosk.say("contact 1")
        XCTAssertTrue(kiosk.waitFor("door_forced"), kiosk.text)
        kiosk.say("contact 0")
        XCTAssertTrue(kiosk.waitFor("door_alarm_end"), kiosk.text)
        // The exit button (active-low: 0 is pressed): the strike opens, the door opens without an
        // alarm, and stays open past KIOSK_DOOR_HELD_S.
        kiosk.say("rex 0")
        XCTAssertTrue(kiosk.waitFor("rex"), kiosk.text)
        kiosk.say("rex 1")
        kiosk.say("contact 1")
        XCTAssertTrue(kiosk.waitFor("door_held", seconds: 10), kiosk.text)
        kiosk.say("contact 0")
        XCTAssertTrue(kiosk.waitFor("door_alarm_end", count: 2), kiosk.text)
        // Tamper, and its end.
        kiosk.say("tamper 1")
        XCTAssertTrue(kiosk.waitFor("tamper"), kiosk.text)
        kiosk.say("tamper 0")
        XCTAssertTrue(kiosk.waitFor("tamper", count: 2), kiosk.text)
        // What the broker saw, before the kiosk goes (its last will and offline come after).
        let want = ["closed", "open", "closed", "forced", "closed", "open", "held", "closed"]
        // The state that says tamper ok again is published after the alarm's end: wait for it too.
        let seen = sub.waitFor { m in
            m.filter { $0.topic == topic + "/door" }.count >= want.count && m.filter { $0.topic == topic + "/alarm" }.count >= 6
                && (m.last { $0.topic == topic + "/state" }.map { json($0)["tamper"] as? String == "ok" } ?? false)
                && m.contains { $0.topic == topic + "/state" && json($0)["tamper"] as? String == "alarm" }
        }
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)

        XCTAssertEqual(doorLog(kiosk), ["door_contact:open", "door_contact:closed",
                                        "door_contact:open", "door_forced", "door_contact:closed", "door_alarm_end:forced",
                                        "rex", "door_contact:open", "door_held", "door_contact:closed", "door_alarm_end:held",
                                        "tamper:alarm", "tamper:ok"], kiosk.text)
        // The strike: opened by the grant and by the button, each time shut by time.
        XCTAssertEqual(kiosk.of("door").map { $0["state"]! + ($0["reason"].map { "/" + $0 } ?? "") },
                       ["open", "closed/time", "open", "closed/time"], kiosk.text)
        XCTAssertEqual(kiosk.of("rex").first?["opens"], "true")
        XCTAssertEqual(kiosk.of("door_held").first?["open_s"].flatMap(Double.init).map { $0 >= 1.0 }, true)
        // The alarm pattern sounded on the buzzer for each alarm.
        // (The granted pattern is one beep; each alarm's starts with a second on, cut when the door
        // shuts, and the tamper's plays out: at least 1 + 1 + 1 + 3.)
        XCTAssertGreaterThanOrEqual(kiosk.lines.filter { $0["event"] == "gpio" && $0["line"] == "18" && $0["value"] == "1" }.count, 6, kiosk.text)

        let doors = seen.filter { $0.topic == topic + "/door" }
        XCTAssertEqual(doors.map(\.text), want, "each door state once, in order")
        XCTAssertEqual(doors.map(\.retained), Array(repeating: false, count: want.count), "live deliveries (the broker keeps the last)")
        let alarms = seen.filter { $0.topic == topic + "/alarm" }.map(json)
        XCTAssertEqual(alarms.map { "\($0["event"]!):\(($0["state"] as? String) ?? "-")" },
                       ["door_forced:-", "door_alarm_end:forced", "door_held:-", "door_alarm_end:held", "tamper:alarm", "tamper:ok"])
        XCTAssertTrue(alarms.allSatisfy { ($0["time"] as? String)?.hasSuffix("Z") == true })
        let tamperStates = seen.filter { $0.topic == topic + "/state" }.compactMap { json($0)["tamper"] as? String }
        XCTAssertEqual(tamperStates.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }, ["ok", "alarm", "ok"])
        // Discovery: a door binary sensor on <topic>/door and a tamper sensor on the state.
        let configs = Dictionary(seen.filter { $0.topic.hasPrefix("ha-\(id)/") }.map { ($0.topic, json($0)) }) { a, _ in a }
        let door = configs["ha-\(id)/binary_sensor/door-3/door/config"]
        XCTAssertEqual(door?["state_topic"] as? String, topic + "/door")
        XCTAssertEqual(door?["device_class"] as? String, "door")
        let tamper = configs["ha-\(id)/binary_sensor/door-3/tamper/config"]
        XCTAssertEqual(tamper?["state_topic"] as? String, topic + "/state")
        XCTAssertEqual(tamper?["device_class"] as? String, "tamper")
        // Counted in the metrics file.
        let metrics = (try? String(contentsOfFile: folder.path + "/kiosk.prom", encoding: .utf8)) ?? ""
        for line in ["kiosk_door_opened_total 3", "kiosk_door_forced_total 1", "kiosk_door_held_total 1", "kiosk_rex_total 1",
                     "kiosk_tamper_total 1", "kiosk_door_open 0", "kiosk_tamper 0"] {
            XCTAssertTrue(metrics.contains(line + "\n"), "\(line) in\n\(metrics)")
        }
    }

    /// A publisher of the building's commands (mosquitto_pub).
    func publish(_ broker: MosquittoBroker, _ topic: String, _ payload: String, retain: Bool = false) throws {
        try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-q", "1", "-m", payload]
                                + (retain ? ["-r"] : []))
    }

    /// Whether the broker's log shows a subscription by `client` to `topic`.
    func subscribed(_ broker: MosquittoBroker, _ topic: String) -> Bool {
        let log = (try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? ""
        return log.contains("\t\(topic) (QoS")
    }

    func now() -> Int { Int(Date().timeIntervalSince1970) }

    /// Commands on a real Mosquitto: open (the strike opens for its `ms`, the door opens without
    /// an alarm), reload, a repeated id, a stale command, one from the future, a malformed one, a
    /// retained one: each answered once on `<topic>/command/result` and logged as `command`.
    func testCommandsOpenReloadRepeatedStaleMalformedAnsweredAndLogged() throws {
        let broker = try MosquittoBroker()
        let topic = "kt-\(id)/door-7"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/command/result")
        let command = topic + "/command"
        // A command the broker keeps (retained) comes at the kiosk's subscription: refused, it
        // would open the door at every connection.
        try publish(broker, command, #"{"id":"ret-1","command":"open","time":\#(now())}"#, retain: true)
        let replay = try FleetEndToEndTests.FifoReplay(folder.path + "/replay", count: 1)
        let kiosk = try Kiosk(env: env(broker, topic: topic, [
            "KIOSK_CAMERA": "replay:\(replay.path)", "KIOSK_MQTT_COMMANDS": "1", "KIOSK_DOOR_LINE": "22",
            "KIOSK_DOOR_CONTACT_LINE": "5", "KIOSK_INPUT_DEBOUNCE_MS": "0",
        ]), stdin: true)
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        XCTAssertEventually("the kiosk subscribes to \(command)") { self.subscribed(broker, command) }

        let t = now()
        try publish(broker, command, #"{"id":"open-1","command":"open","ms":700,"time":\#(t)}"#)
        XCTAssertTrue(kiosk.waitFor("door"), kiosk.text)
        kiosk.say("contact 1")
        XCTAssertTrue(kiosk.waitFor("door_contact"), kiosk.text)
        kiosk.say("contact 0")
        XCTAssertTrue(kiosk.waitFor("door_contact", count: 2), kiosk.text)
        try publish(broker, command, #"{"id":"open-1","command":"open","ms":700,"time":\#(t)}"#)
        try publish(broker, command, #"{"id":"reload-1","command":"reload","time":\#(now())}"#)
        try publish(broker, command, #"{"id":"old-1","command":"open","time":\#(now() - 120)}"#)
        try publish(broker, command, #"{"id":"future-1","command":"open","time":\#(now() + 120)}"#)
        try publish(broker, command, #"{"id":"bad-1","command":"open","time":"#)
        let results = sub.waitFor { $0.count >= 7 }
        XCTAssertTrue(kiosk.waitFor("command", count: 7), kiosk.text)
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)

        // (How old or how far ahead, to the second, depends on when the kiosk read it: the kind is checked.)
        let answers = results.map(json).map { m -> String in
            let reason = m["reason"] as? String ?? "-"
            let kind = reason.hasPrefix("stale") || reason.hasPrefix("time in the future") ? String(reason.prefix { $0 != ":" }) : reason
            return "\(m["id"] as? String ?? "null") \(m["result"]!) \(kind)"
        }
        XCTAssertEqual(answers, [
            "null refused retained: a command must not be published with the retain flag",
            "open-1 ok -",
            "open-1 refused repeated id: already carried out",
            "reload-1 ok nothing to reload",
            "old-1 refused stale",
            "future-1 refused time in the future",
            "null refused malformed: missing value at byte 38",
        ], results.map(\.text).joined(separator: "\n"))
        XCTAssertEqual(kiosk.of("command").map { "\($0["id"] ?? "") \($0["command"] ?? "") \($0["result"] ?? "")" },
                       ["  refused", "open-1 open ok", "open-1 open refused", "reload-1 reload ok", "old-1 open refused",
                        "future-1 open refused", "  refused"], kiosk.text)
        // The strike opened once, for the command's 700 ms; the door's opening was no alarm.
        XCTAssertEqual(kiosk.of("door").map { $0["state"]! }, ["open", "closed"], kiosk.text)
        XCTAssertEqual(kiosk.of("door").first?["ms"], "700")
        XCTAssertEqual(kiosk.of("door_forced").count, 0, kiosk.text)
    }

    /// With KIOSK_MQTT_COMMANDS unset a command does nothing: no subscription (the broker's log),
    /// no answer, no `command` event, the strike shut.
    func testCommandsOffMeansNoSubscriptionAndNothingDone() throws {
        let broker = try MosquittoBroker()
        let topic = "kt-\(id)/door-8"
        let sub = try MosquittoSubscriber(broker: broker, topic: topic + "/command/result")
        let replay = try FleetEndToEndTests.FifoReplay(folder.path + "/replay", count: 1)
        let kiosk = try Kiosk(env: env(broker, topic: topic, [
            "KIOSK_CAMERA": "replay:\(replay.path)", "KIOSK_DOOR_LINE": "22", "KIOSK_REX_LINE": "6",
        ]))
        defer { if kiosk.process.isRunning { kiosk.kill9() } }
        XCTAssertTrue(kiosk.waitFor("mqtt_connected"), kiosk.text)
        // Its one subscription, to Home Assistant's status, is made: commands would have come with it.
        XCTAssertEventually("the discovery subscription") { self.subscribed(broker, "ha-\(self.id)/status") }
        let announced = try MosquittoSubscriber(broker: broker, topic: "ha-\(id)/tag/+/scan/config")
        XCTAssertEqual(announced.waitFor { $0.count >= 1 }.count, 1, "the first announcement")
        try publish(broker, topic + "/command", #"{"id":"open-1","command":"open","time":\#(now())}"#)
        // Then Home Assistant's `online`, which the kiosk does hear: its answer (discovery announced
        // again) proves the kiosk has read what the broker had for it before, the command included
        // had it been subscribed.
        try publish(broker, "ha-\(id)/status", "online")
        XCTAssertEqual(announced.waitFor { $0.count >= 2 }.count, 2, "announced again on Home Assistant's online")
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
        XCTAssertFalse(subscribed(broker, topic + "/command"), (try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? "")
        XCTAssertEqual(kiosk.of("command").count, 0, kiosk.text)
        XCTAssertEqual(kiosk.of("door").count, 0, kiosk.text)
        XCTAssertEqual(sub.messages.count, 0)
    }
}
