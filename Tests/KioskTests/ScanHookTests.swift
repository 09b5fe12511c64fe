// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Foundation
@testable import Kiosk
import Platform
@testable import Systemd
import TestSupport
import XCTest

final class ScanHookTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        let lock = NSLock()
        var all: [String] = []
        func add(_ l: String) { lock.lock(); all.append(l); lock.unlock() }
        func of(_ event: String) -> [[String: String]] {
            lock.lock(); defer { lock.unlock() }
            return all.map(Logfmt.fields).filter { $0["event"] == event }
        }
    }

    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-hook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A hook that saves its stdin, its KIOSK_CODE and KIOSK_SYMBOLOGY into numbered files.
    func recordingHook() throws -> String {
        let path = folder.appendingPathComponent("hook.sh").path
        let script = """
        #!/bin/sh
        n=$(ls "\(folder.path)" | grep -c '^stdin')
        cat > "\(folder.path)/stdin.$n"
        printf '%s' "${KIOSK_CODE-<unset>}" > "\(folder.path)/code.$n"
        printf '%s' "$KIOSK_SYMBOLOGY" > "\(folder.path)/symbology.$n"
        echo "got it"
        """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    func waitIdle(_ hook: ScanHook, seconds: Double = 20, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEventually("the scan program idle", within: seconds, { hook.isIdle }, file: file, line: line)
    }

    func testHostilePayloadsArriveExactlyAndNothingElseRuns() throws {
        let lines = Lines()
        let hook = ScanHook(program: try recordingHook(), environment: ["PATH": "/usr/bin:/bin"],
                            logger: Logger(level: .debug) { lines.add($0) }, queueLimit: 16, clock: MonotonicClock())
        let canary = folder.appendingPathComponent("canary").path
        let payloads: [[UInt8]] = [
            Array("; rm -rf / ; touch \(canary)".utf8),
            Array("$(touch \(canary))".utf8),
            Array("`touch \(canary)`".utf8),
            Array("line1\nline2\r\n' \" \\ %s %n".utf8),
            [0x41, 0x00, 0x42, 0xFF, 0xFE, 0x0A],
            [UInt8]((0..<4096).map { UInt8(32 + $0 % 90) }),
        ]
        for p in payloads {
            hook.submit(symbology: "QR-Code", payload: p)
            waitIdle(hook)  // one at a time, so the files are numbered in order
        }
        hook.shutDown()
        for (i, p) in payloads.enumerated() {
            let got = try Data(contentsOf: folder.appendingPathComponent("stdin.\(i)"))
            XCTAssertEqual(Array(got), p, "payload \(i) on stdin")
            let code = try Data(contentsOf: folder.appendingPathComponent("code.\(i)"))
            XCTAssertEqual(Array(code), p.contains(0) ? Array("<unset>".utf8) : p, "payload \(i) in KIOSK_CODE")
            XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("symbology.\(i)"), encoding: .utf8), "QR-Code")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: canary), "a payload was interpreted")
        let runs = lines.of("hook")
        XCTAssertEqual(runs.count, payloads.count)
        XCTAssertTrue(runs.allSatisfy { $0["status"] == "0" && $0["output"] == #"got it\n"# }, "\(runs)")
    }

    func testAHangingHookIsTerminatedThenKilled() throws {
        let path = folder.appendingPathComponent("hang.sh").path
        // Ignores SIGTERM, so only SIGKILL ends it; its child sleeps too and must go with it.
        try "#!/bin/sh\ntrap '' TERM\nsleep 30 &\nwhile true; do sleep 1; done\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        let lines = Lines()
        let hook = ScanHook(program: path, environment: [:], logger: Logger { lines.add($0) },
                            timeoutNs: 300_000_000, killGraceNs: 200_000_000, clock: MonotonicClock())
        let started = Date()
        hook.submit(symbology: "QR-Code", payload: Array("x".utf8))
        waitIdle(hook)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        let run = try XCTUnwrap(lines.of("hook").first)
        XCTAssertEqual(run["signal"], "9")
        XCTAssertEqual(run["timeout"], "true")
        hook.shutDown()
    }

    func testAFloodNeverBlocksTheCallerAndDropsTheOldest() throws {
        let path = folder.appendingPathComponent("slow.sh").path
        try "#!/bin/sh\ncat > /dev/null\nsleep 0.3\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        let lines = Lines()
        let hook = ScanHook(program: path, environment: [:], logger: Logger { lines.add($0) }, queueLimit: 4, clock: MonotonicClock())
        let started = Date()
        for i in 0..<200 { hook.submit(symbology: "QR-Code", payload: Array("code \(i)".utf8)) }
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5, "submitting must not wait for the program")
        XCTAssertGreaterThanOrEqual(hook.dropped, 195)
        XCTAssertGreaterThan(lines.of("hook_dropped").count, 0)
        hook.shutDown()
        XCTAssertTrue(hook.isIdle)
    }

    func testSettleLetsTheQueuedProgramsRunAndAStopEndsIt() throws {
        let path = folder.appendingPathComponent("slow.sh").path
        try "#!/bin/sh\ncat >> \"\(folder.path)/heard\"\necho >> \"\(folder.path)/heard\"\nsleep 0.2\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        let hook = ScanHook(program: path, environment: [:], logger: Logger { _ in }, queueLimit: 4, clock: MonotonicClock())
        for i in 0..<4 { hook.submit(symbology: "QR-Code", payload: Array("told \(i)".utf8)) }
        // The end of a replay: each of the four is heard (shutDown alone drops what waits).
        hook.settle(unless: StopSignal())
        XCTAssertTrue(hook.isIdle)
        XCTAssertEqual(hook.finished, 4)
        let heard = try String(contentsOfFile: folder.appendingPathComponent("heard").path, encoding: .utf8)
        XCTAssertEqual(heard.split(separator: "\n"), ["told 0", "told 1", "told 2", "told 3"])
        // A stop asked for does not wait.
        for i in 0..<4 { hook.submit(symbology: "QR-Code", payload: Array("later \(i)".utf8)) }
        let stop = StopSignal()
        stop.request("SIGTERM")
        let t0 = Date()
        hook.settle(unless: stop)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 0.15)
        hook.shutDown()
    }

    func testProgramThatCannotStartIsLogged() {
        let lines = Lines()
        let hook = ScanHook(program: "/nonexistent/hook", environment: [:], logger: Logger { lines.add($0) }, clock: MonotonicClock())
        hook.submit(symbology: "QR-Code", payload: [0x31])
        waitIdle(hook)
        hook.shutDown()
        XCTAssertTrue(lines.of("hook_failed").first?["error"]?.contains("No such file") ?? false, "\(lines.all)")
    }

    func testAProgramThatIgnoresStdinDoesNotKillTheKiosk() throws {
        // The kiosk ignores SIGPIPE (as `run` does); a large payload to a program that exits at once.
        signal(SIGPIPE, SIG_IGN)
        let lines = Lines()
        let hook = ScanHook(program: "/bin/true", environment: [:], logger: Logger { lines.add($0) }, clock: MonotonicClock())
        hook.submit(symbology: "QR-Code", payload: [UInt8](repeating: 0x41, count: 1 << 20))
        waitIdle(hook)
        hook.shutDown()
        XCTAssertEqual(lines.of("hook").first?["status"], "0", "\(lines.all)")
    }
}
