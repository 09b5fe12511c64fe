// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

/// The building's commands carried out: `reload` through the one list SIGHUP uses,
/// `open` refused without a strike, each answered once and logged.
final class FleetCommandsTests: XCTestCase {
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
    }
    struct Failed: Error, CustomStringConvertible { var description: String { "trust/a.pem: not a PEM key" } }

    func testReloadRunsWhatIsRegisteredAndSaysWhatFailed() {
        let log = Recorder(), answers = Recorder(), calls = Recorder()
        let logger = Logger(level: .debug) { log.add($0) }
        let reloadables = Reloadables()
        let commands = FleetCommands(maxAgeSeconds: 30, defaultOpenMilliseconds: 3000, door: nil, watch: nil, reloadables: reloadables,
                                        logger: logger, wallClockMs: { 1_780_000_000_000 }) { answers.add($0) }
        func send(_ id: String, _ command: String, retained: Bool = false) {
            commands.received(Array(#"{"id":"\#(id)","command":"\#(command)","time":1780000000}"#.utf8), retained: retained)
        }
        send("r1", "reload")
        reloadables.add("credentials") { calls.add("credentials"); return "keys=2" }
        send("r2", "reload")
        reloadables.add("allowlist") { calls.add("allowlist"); throw Failed() }
        send("r3", "reload")
        send("o1", "open")
        send("o2", "open", retained: true)
        XCTAssertEqual(calls.all, ["credentials", "credentials", "allowlist"], "each registered list once a reload, in order")
        XCTAssertEqual(answers.all, [
            #"{"id":"r1","result":"ok","reason":"nothing to reload"}"#,
            #"{"id":"r2","result":"ok","reason":null}"#,
            #"{"id":"r3","result":"refused","reason":"allowlist: trust/a.pem: not a PEM key"}"#,
            #"{"id":"o1","result":"refused","reason":"no strike: KIOSK_DOOR_LINE is unset"}"#,
            #"{"id":null,"result":"refused","reason":"retained: a command must not be published with the retain flag"}"#,
        ])
        let events = log.all.map(Logfmt.fields)
        XCTAssertEqual(events.filter { $0["event"] == "command" }.map { "\($0["id"]!) \($0["result"]!)" },
                       ["r1 ok", "r2 ok", "r3 refused", "o1 refused", " refused"])
        XCTAssertEqual(events.filter { $0["event"] == "reloaded" }.map { "\($0["what"]!) \($0["via"]!) \($0["holds"]!)" },
                       ["credentials command keys=2", "credentials command keys=2"])
        XCTAssertEqual(events.filter { $0["event"] == "reload_failed" }.map { $0["what"]! }, ["allowlist"])
    }
}
