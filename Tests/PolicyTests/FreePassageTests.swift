// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The strike held released (`unlock`, `emergency`), the door's watcher in free
/// passage, the fire panel's input, the building's `mode` command and `kiosk mode`'s line.
final class FreePassageTests: XCTestCase {
    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    // MARK: the strike

    func testAHeldStrikeStaysOpenThroughGrantsAndALostCameraAndShutsWhenTheHoldEnds() {
        var s = StrikePolicy(openMilliseconds: 3000)
        XCTAssertEqual(s.hold(at: ms(100)), [.opened(at: ms(100), untilNs: .max)])
        XCTAssertTrue(s.isHeld)
        XCTAssertEqual(s.hold(at: ms(200)), [], "held twice: no second event")
        XCTAssertEqual(s.grant(at: ms(300)), [.extended(at: ms(300), untilNs: .max)], "a grant does not shorten a hold")
        XCTAssertEqual(s.tick(at: ms(10_000_000)), [], "no time runs out")
        XCTAssertEqual(s.forceClose(at: ms(400), reason: "camera_lost"), [], "free passage needs nobody to watch")
        XCTAssertTrue(s.isOpen)
        XCTAssertEqual(s.endHold(at: ms(500), reason: "mode_normal"), [.closed(at: ms(500), reason: .forced("mode_normal"))])
        XCTAssertFalse(s.isOpen)
        XCTAssertEqual(s.endHold(at: ms(600), reason: "mode_normal"), [], "nothing to end")
        XCTAssertEqual(s.grant(at: ms(700)), [.opened(at: ms(700), untilNs: ms(3700))], "grants work as before after it")
    }

    func testAHoldOverAGrantsOpeningAndAStopShutsEvenAHeldStrike() {
        var s = StrikePolicy(openMilliseconds: 3000)
        _ = s.grant(at: 0)
        XCTAssertEqual(s.hold(at: ms(1000)), [.extended(at: ms(1000), untilNs: .max)])
        XCTAssertEqual(s.forceClose(at: ms(2000), reason: "stop", evenHeld: true), [.closed(at: ms(2000), reason: .forced("stop"))])
        XCTAssertFalse(s.isHeld)
    }

    // MARK: the door's watcher

    func monitor(_ inputs: [DoorWatchPolicy.Input: Bool] = [.contact: false, .rex: false, .emergency: false]) -> DoorWatchPolicy {
        var m = DoorWatchPolicy(settings: .init(heldNs: 30_000_000_000, debounceNs: 0, releaseMilliseconds: 3000))
        _ = m.start(levels: inputs, at: 0)
        return m
    }

    func testInFreePassageAnOpenDoorIsNeitherForcedNorHeldAndItsHeldLimitCountsFromTheEnd() {
        var m = monitor()
        XCTAssertEqual(m.setFreePassage(true, at: ms(1000)), [])
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(2000)), [.contact(open: true, edgeNs: ms(2000)), .doorState(.open)],
                       "not forced")
        XCTAssertNil(m.nextDeadlineNs, "no held limit while free passage lasts")
        XCTAssertEqual(m.tick(at: ms(120_000)), [], "open two minutes: not held")
        XCTAssertEqual(m.strikeClosed(at: ms(121_000)), [], "a strike event does not end free passage")
        XCTAssertTrue(m.isReleased)
        XCTAssertEqual(m.setFreePassage(false, at: ms(200_000)), [])
        XCTAssertEqual(m.nextDeadlineNs, ms(230_000), "the held limit from the end of free passage")
        XCTAssertEqual(m.tick(at: ms(230_000)), [.held(at: ms(230_000), openNs: ms(30_000)), .doorState(.held), .soundAlarm])
    }

    func testAfterFreePassageADoorOpenedIsForcedAgain() {
        var m = monitor()
        _ = m.setFreePassage(true, at: ms(1000))
        _ = m.setFreePassage(false, at: ms(2000))
        XCTAssertEqual(m.edge(.contact, active: true, at: ms(3000)),
                       [.contact(open: true, edgeNs: ms(3000)), .forced(edgeNs: ms(3000)), .doorState(.forced), .soundAlarm])
    }

    func testTheEmergencyInputIsReportedAtStartAndOnEachChangeAndTheExitButtonStillOpens() {
        var m = DoorWatchPolicy(settings: .init(heldNs: 30_000_000_000, debounceNs: ms(20), releaseMilliseconds: 3000))
        XCTAssertEqual(m.start(levels: [.emergency: true, .rex: false], at: 0), [.emergency(active: true, edgeNs: 0)])
        XCTAssertEqual(m.edge(.emergency, active: false, at: ms(100)), [])
        XCTAssertEqual(m.edge(.emergency, active: true, at: ms(110)), [], "a bounce shorter than the debounce")
        XCTAssertEqual(m.tick(at: ms(200)), [], "settled back where it was: no change")
        XCTAssertEqual(m.edge(.emergency, active: false, at: ms(300)), [])
        XCTAssertEqual(m.tick(at: ms(320)), [.emergency(active: false, edgeNs: ms(300))])
        XCTAssertEqual(m.edge(.rex, active: true, at: ms(400)), [])
        XCTAssertEqual(m.tick(at: ms(420)), [.rex(edgeNs: ms(400), opensStrike: true), .openStrike(milliseconds: 3000)])
    }

    // MARK: the building's command and kiosk mode's line

    func testTheModeCommandIsReadStrictly() {
        var d = FleetCommandsPolicy(maxAgeSeconds: 30, defaultOpenMilliseconds: 3000)
        let now: Int64 = 1_780_000_000_000
        func r(_ s: String) -> FleetCommandsPolicy.Decision { d.receive(Array(s.utf8), nowMs: now) }
        XCTAssertEqual(r(#"{"id":"m1","command":"mode","mode":"lockdown","time":1780000000}"#), .carryOut(id: "m1", command: .mode(.lockdown)))
        XCTAssertEqual(r(#"{"id":"m2","command":"mode","mode":"normal","time":1780000000}"#), .carryOut(id: "m2", command: .mode(.normal)))
        XCTAssertEqual(r(#"{"id":"m3","command":"mode","mode":"unlock","until":1780003600,"time":1780000000}"#),
                       .carryOut(id: "m3", command: .mode(.unlock(until: 1_780_003_600))))
        XCTAssertEqual(r(#"{"id":"m4","command":"mode","mode":"unlock","time":1780000000}"#),
                       .refused(id: "m4", command: "mode", reason: "malformed: unlock needs \"until\" (Unix seconds, at most 24 h ahead)"))
        XCTAssertEqual(r(#"{"id":"m5","command":"mode","mode":"unlock","until":1780003600.5,"time":1780000000}"#),
                       .refused(id: "m5", command: "mode", reason: "malformed: unlock needs \"until\" (Unix seconds, at most 24 h ahead)"))
        XCTAssertEqual(r(#"{"id":"m6","command":"mode","mode":"lockdown","until":1780003600,"time":1780000000}"#),
                       .refused(id: "m6", command: "mode", reason: "malformed: \"until\" is for unlock"))
        XCTAssertEqual(r(#"{"id":"m7","command":"mode","mode":"emergency","time":1780000000}"#),
                       .refused(id: "m7", command: "mode", reason: "unknown mode \"emergency\" (normal, unlock or lockdown; emergency comes from the fire panel's input only)"))
        XCTAssertEqual(r(#"{"id":"m8","command":"mode","time":1780000000}"#),
                       .refused(id: "m8", command: "mode", reason: "malformed: no \"mode\" text (normal, unlock or lockdown)"))
        XCTAssertEqual(r(#"{"id":"m9","command":"open","mode":"unlock","time":1780000000}"#),
                       .refused(id: "m9", command: "open", reason: "malformed: \"mode\" and \"until\" are for mode"))
        XCTAssertEqual(r(#"{"id":"m10","command":"mode","mode":"lockdown","ms":100,"time":1780000000}"#),
                       .refused(id: "m10", command: "mode", reason: "malformed: \"ms\" is for open"))
        XCTAssertEqual(r(#"{"id":"m1","command":"mode","mode":"lockdown","time":1780000000}"#),
                       .refused(id: "m1", command: "mode", reason: "repeated id: already carried out"))
    }

    func testKioskModesLineReadsBackAndAnythingElseIsRefusedWithWhatIsAccepted() {
        for c: DoorModeCommand in [.normal, .lockdown, .unlock(until: 1_780_003_600)] {
            XCTAssertEqual(ModeRequest.parse(Array(ModeRequest.line(c).utf8)), .success(c))
        }
        XCTAssertEqual(ModeRequest.parse(Array("lockdown".utf8)), .success(.lockdown), "the newline is optional")
        for bad in ["", "\n", "Lockdown\n", "lockdown now\n", "unlock\n", "unlock -5\n", "unlock 12a\n", "unlock 1780003600 x\n",
                    "normal\nlockdown\n", "unlock 9999999999999\n", String(repeating: "x", count: 200)] {
            guard case .failure(let e) = ModeRequest.parse(Array(bad.utf8)) else { return XCTFail("took \(bad.debugDescription)") }
            XCTAssertFalse(e.text.isEmpty)
        }
        XCTAssertEqual(ModeRequest.parse([0x6C, 0xFF, 0x0A]), .failure(ModeRequestError(text: "not one line of text (expected normal, lockdown or unlock UNIX_SECONDS)")))
    }

    // MARK: the mode on the broker and in Home Assistant

    func testTheModeMessageAndHomeAssistantsSelectAndButtonWithCommandsOnly() throws {
        XCTAssertEqual(ModeMessage.json(mode: .unlock, reason: .command, until: 1_780_003_600, timeMs: 1_780_000_000_000),
                       #"{"mode":"unlock","reason":"command","until":1780003600,"time":"2026-05-28T20:26:40.000Z"}"#)
        let topics = FleetTopics(prefix: "kiosk/door-3")
        XCTAssertEqual(topics.mode, "kiosk/door-3/mode")
        let without = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-3", topics: topics, version: "0.1.0")
        XCTAssertFalse(without.messages.contains { $0.topic.hasPrefix("homeassistant/select/") || $0.topic.hasPrefix("homeassistant/button/") })
        let with = HomeAssistantDiscovery(prefix: "homeassistant", clientID: "door-3", topics: topics, version: "0.1.0", commands: true)
        let select = try XCTUnwrap(with.messages.first { $0.topic == "homeassistant/select/door-3/mode/config" })
        let button = try XCTUnwrap(with.messages.first { $0.topic == "homeassistant/button/door-3/open/config" })
        for m in [select, button] {
            let o = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(m.payload.utf8)) as? [String: Any])
            XCTAssertEqual(o["command_topic"] as? String, "kiosk/door-3/command")
            XCTAssertNotNil(o["command_template"] as? String)
            XCTAssertEqual(o["availability_topic"] as? String, "kiosk/door-3/status")
        }
        let s = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(select.payload.utf8)) as? [String: Any])
        XCTAssertEqual(s["state_topic"] as? String, "kiosk/door-3/mode")
        XCTAssertEqual(s["options"] as? [String], ["normal", "unlock", "lockdown", "emergency"])
    }
}
