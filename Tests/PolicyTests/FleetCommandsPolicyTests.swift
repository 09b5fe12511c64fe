// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The building's commands: what is carried out, once, and what is refused, and why.
final class FleetCommandsPolicyTests: XCTestCase {
    let now: Int64 = 1_780_000_000_000  // ms since the epoch

    func desk() -> FleetCommandsPolicy { FleetCommandsPolicy(maxAgeSeconds: 30, defaultOpenMilliseconds: 3000, remembered: 3) }
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func testOpenAndReloadAreCarriedOut() {
        var d = desk()
        XCTAssertEqual(d.receive(bytes(#"{"id":"a1","command":"open","ms":5000,"time":1780000000}"#), nowMs: now),
                       .carryOut(id: "a1", command: .open(milliseconds: 5000)))
        XCTAssertEqual(d.receive(bytes(#" { "id" : "a2" , "command" : "open" , "time" : 1779999999.5 } "#), nowMs: now),
                       .carryOut(id: "a2", command: .open(milliseconds: 3000)), "ms defaults to KIOSK_DOOR_MS")
        XCTAssertEqual(d.receive(bytes(#"{"id":"a3","command":"reload","time":1780000000}"#), nowMs: now),
                       .carryOut(id: "a3", command: .reload))
    }

    func testEachIDIsCarriedOutOnceAndTheMemoryIsBounded() {
        var d = desk()
        let open = #"{"id":"x","command":"open","time":1780000000}"#
        XCTAssertEqual(d.receive(bytes(open), nowMs: now), .carryOut(id: "x", command: .open(milliseconds: 3000)))
        XCTAssertEqual(d.receive(bytes(open), nowMs: now + 1000), .refused(id: "x", command: "open", reason: "repeated id: already carried out"))
        for id in ["y", "z", "w"] {
            _ = d.receive(bytes(#"{"id":"\#(id)","command":"reload","time":1780000000}"#), nowMs: now)
        }
        XCTAssertEqual(d.recentIDs, ["y", "z", "w"], "the oldest ids are forgotten first")
    }

    func testAStaleCommandIsRefusedAndSoIsOneFromTheFuture() {
        var d = desk()
        XCTAssertEqual(d.receive(bytes(#"{"id":"s","command":"open","time":1779999969}"#), nowMs: now),
                       .refused(id: "s", command: "open", reason: "stale: 31 s old, more than 30 s"))
        XCTAssertEqual(d.receive(bytes(#"{"id":"s2","command":"open","time":1779999970}"#), nowMs: now),
                       .carryOut(id: "s2", command: .open(milliseconds: 3000)), "exactly the limit is still fresh")
        XCTAssertEqual(d.receive(bytes(#"{"id":"f","command":"open","time":1780000031}"#), nowMs: now),
                       .refused(id: "f", command: "open", reason: "time in the future: 31 s ahead of the kiosk's clock"))
        XCTAssertFalse(d.recentIDs.contains("s"), "a refused id is not remembered: it may come again, fresh")
    }

    func testMalformedCommandsAreRefusedWithAReason() {
        var d = desk()
        let cases: [(String, String?, String?, String)] = [
            ("not json", nil, nil, "malformed: expected '{' at byte 0"),
            (#"{"id":"m","command":"open","time":1780000000"#, nil, nil, "malformed: unterminated object at byte 44"),
            (#"{"command":"open","time":1780000000}"#, nil, nil, "malformed: no \"id\" text"),
            (#"{"id":7,"command":"open","time":1780000000}"#, nil, nil, "malformed: no \"id\" text"),
            (#"{"id":"m","time":1780000000}"#, "m", nil, "malformed: no \"command\" text"),
            (#"{"id":"m","command":"open"}"#, "m", "open", "malformed: no \"time\" (Unix seconds)"),
            (#"{"id":"m","command":"open","time":"now"}"#, "m", "open", "malformed: no \"time\" (Unix seconds)"),
            // A number too large for the age's arithmetic (it trapped before make fuzz's FuzzCommand).
            (#"{"id":"m","command":"open","time":1e300}"#, "m", "open", "malformed: no \"time\" (Unix seconds)"),
            (#"{"id":"m","command":"open","time":-9.3e18}"#, "m", "open", "malformed: no \"time\" (Unix seconds)"),
            (#"{"id":"m","command":"open","ms":99,"time":1780000000}"#, "m", "open", "malformed: \"ms\" must be a whole number from 100 to 60000"),
            (#"{"id":"m","command":"open","ms":1500.5,"time":1780000000}"#, "m", "open", "malformed: \"ms\" must be a whole number from 100 to 60000"),
            (#"{"id":"m","command":"reload","ms":100,"time":1780000000}"#, "m", "reload", "malformed: \"ms\" is for open"),
            (#"{"id":"m","command":"unlock-all","time":1780000000}"#, "m", "unlock-all", "unknown command (open, reload or mode)"),
            (#"{"id":"m","command":"open","time":1780000000,"door":2}"#, "m", "open", "malformed: unknown member \"door\""),
            (#"{"id":"m","command":"open","time":1780000000,"id":"n"}"#, nil, nil, "malformed: duplicate member \"id\" at byte 49"),
            (#"{"id":"m","command":{"open":1},"time":1780000000}"#, nil, nil, "malformed: nested value (only text, numbers, true, false, null) at byte 20"),
            (#"{"id":"m","command":"open","time":1780000000} x"#, nil, nil, "malformed: text after the object at byte 46"),
            (#"{"id":"","command":"open","time":1780000000}"#, nil, nil, "malformed: \"id\" must be 1 to 128 bytes"),
            ("{\"id\":\"\u{1}\",\"command\":\"open\",\"time\":1780000000}", nil, nil, "malformed: a control character in a string at byte 8"),
        ]
        for (payload, id, command, reason) in cases {
            XCTAssertEqual(d.receive(bytes(payload), nowMs: now), .refused(id: id, command: command, reason: reason), payload)
        }
        XCTAssertEqual(d.receive([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], nowMs: now),
                       .refused(id: nil, command: nil, reason: "malformed: a string that is not UTF-8 at byte 4"))
        XCTAssertEqual(d.receive(Array(repeating: 0x20, count: 1025), nowMs: now),
                       .refused(id: nil, command: nil, reason: "malformed: longer than 1024 bytes"))
        XCTAssertEqual(d.recentIDs, [])
    }

    func testEscapesInTheIDAreRead() {
        var d = desk()
        XCTAssertEqual(d.receive(bytes(#"{"id":"a\"b\u00e9\ud83d\ude00","command":"reload","time":1780000000}"#), nowMs: now),
                       .carryOut(id: "a\"bé😀", command: .reload))
    }

    func testTheAnswer() {
        XCTAssertEqual(FleetCommandsPolicy.resultJSON(id: "a\"1", ok: true, reason: nil), #"{"id":"a\"1","result":"ok","reason":null}"#)
        XCTAssertEqual(FleetCommandsPolicy.resultJSON(id: nil, ok: false, reason: "malformed: not JSON"),
                       #"{"id":null,"result":"refused","reason":"malformed: not JSON"}"#)
    }
}
