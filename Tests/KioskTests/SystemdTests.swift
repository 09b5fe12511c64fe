// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Foundation
@testable import Kiosk
@testable import Systemd
import TestSupport
import XCTest

final class SystemdTests: XCTestCase {
    /// sd_notify as systemd receives it: a datagram socket at NOTIFY_SOCKET, read while the
    /// built kiosk runs its demo (the camera is unplugged for a moment at 11.5 s).
    func testReadyAfterTheFirstFrameWatchdogOnlyWhileFramesFlowStoppingOnSIGTERM() throws {
        try XCTSkipIf(EndToEndTests.underSanitizer, "real-time demo under a sanitizer")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-notify-\(getpid())-\(UUID().uuidString.prefix(8))").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let (p, _, err) = try KioskProcess.start(["demo"], env: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"], stdout: false)

        var messages: [(t: Double, text: String)] = []
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var sent = false
        while p.isRunning || messages.last.map({ !$0.text.contains("STOPPING=1") }) ?? true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { messages.append((Date().timeIntervalSince(start), String(decoding: buffer[0..<n], as: UTF8.self))) }
            // Well after the camera came back (at about 13 s), stop it.
            if !sent, Date().timeIntervalSince(start) > 14.5 {
                kill(p.processIdentifier, SIGTERM)
                sent = true
            }
            if Date().timeIntervalSince(start) > 40 { break }
        }
        if !Child.awaitExit(p, within: 10) {
            Child.end(p)
            XCTFail("the demo did not end within 10 s of the 40 s")
        }
        _ = Child.read(err, within: 10) { _ in false }  // to its end (the kiosk has ended)

        XCTAssertTrue(messages.first?.text.contains("READY=1") ?? false, "\(messages.prefix(3))")
        XCTAssertEqual(messages.filter { $0.text.contains("READY=1") }.count, 1)
        XCTAssertTrue(messages.first?.text.contains("STATUS=scanning scene") ?? false)
        let pings = messages.filter { $0.text.contains("WATCHDOG=1") }.map(\.t)
        XCTAssertGreaterThan(pings.count, 30, "about 5 a second while frames flow")
        let gaps = zip(pings, pings.dropFirst()).map { $1 - $0 }
        // One long silence: the camera unplugged; nowhere else does the watchdog starve.
        XCTAssertEqual(gaps.filter { $0 > 1.0 }.count, 1, "\(gaps.map { String(format: "%.2f", $0) })")
        XCTAssertTrue(messages.contains { $0.text.contains("STATUS=camera lost") })
        XCTAssertTrue(messages.last?.text.contains("STOPPING=1") ?? false, "\(messages.suffix(2))")
        XCTAssertEqual(p.terminationStatus, 0)
    }

    func testJournalEntriesCarryTheirFieldsEscaped() {
        let fields = Logger.journalFields(.info, "scan", [("symbology", .text("QR-Code")), ("data", .bytes([0x41, 0x0A, 0xFF])),
                                                          ("latency_ms", .ms(3.25))], message: "level=info event=scan")
        let byName = Dictionary(fields.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byName["KIOSK_EVENT"], "scan")
        XCTAssertEqual(byName["KIOSK_SYMBOLOGY"], "QR-Code")
        XCTAssertEqual(byName["KIOSK_DATA"], #"A\n\xff"#)
        XCTAssertEqual(byName["KIOSK_LATENCY_MS"], "3.2")
        XCTAssertEqual(byName["PRIORITY"], "6")
        XCTAssertEqual(byName["SYSLOG_IDENTIFIER"], "kiosk")
        XCTAssertEqual(byName["MESSAGE"], "level=info event=scan")
    }

    final class FakeJournal: JournalSink {
        var works = true
        var entries: [[(name: String, value: [UInt8])]] = []
        func send(_ fields: [(name: String, value: [UInt8])]) -> Bool {
            guard works else { return false }
            entries.append(fields)
            return true
        }
    }

    func testUnderJournaldLinesGoThereAndFallBackToStderr() {
        let journal = FakeJournal()
        var stderrLines: [String] = []
        let logger = Logger(priorityPrefix: true, journal: journal) { stderrLines.append($0) }
        logger.warning("camera_lost", ["error": "gone"])
        XCTAssertEqual(stderrLines, [])
        XCTAssertEqual(journal.entries.count, 1)
        XCTAssertEqual(journal.entries[0].first { $0.name == "MESSAGE" }.map { String(decoding: $0.value, as: UTF8.self) },
                       "level=warning event=camera_lost error=gone")
        XCTAssertEqual(journal.entries[0].first { $0.name == "PRIORITY" }.map { String(decoding: $0.value, as: UTF8.self) }, "4")
        journal.works = false
        logger.info("ready", ["ms": 5])
        XCTAssertEqual(stderrLines, ["<6>level=info event=ready ms=5"])
    }

    func testJournalStreamMustBeOurStderr() {
        XCTAssertFalse(SystemdJournal.stderrIsJournal([:]))
        XCTAssertFalse(SystemdJournal.stderrIsJournal(["JOURNAL_STREAM": "8:12345"]))
        var st = stat()
        fstat(2, &st)
        XCTAssertTrue(SystemdJournal.stderrIsJournal(["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"]))
    }
}
