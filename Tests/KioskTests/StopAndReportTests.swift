// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Reader
import Foundation
@testable import Kiosk
import Platform
import Policy
import Scene
@testable import Systemd
import TestSupport
import XCTest

/// What the service promises on its ways out and for each report: systemd hears STOPPING=1 however
/// the loop ends, the metrics file gets the final totals, a long text payload is cut between two
/// characters, the scan program gets the symbol's exact bytes, and a reopened camera's first frame
/// is decoded.
final class StopAndReportTests: XCTestCase {
    final class RecordingNotifier: ServiceNotifier {
        var messages: [String] = []
        let watchdogIntervalNs: UInt64? = nil
        func notify(_ state: String) { messages.append(state) }
    }

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var all: [String] { lock.lock(); defer { lock.unlock() }; return stored }
        func add(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
        func of(_ event: String) -> [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    func testStoppingIsSentWhenAReplayEnds() throws {
        let notifier = RecordingNotifier()
        let svc = ScanService(configuration: Configuration(), source: FaultySource(script: [.frames(3)]), features: ScanFeatures(notifier: notifier), logger: Logger { _ in }, stop: StopSignal(), clock: ManualClock())
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertTrue(notifier.messages.last?.hasPrefix("STOPPING=1\nSTATUS=stopping (end of frames)") ?? false, "\(notifier.messages)")
    }

    func testStoppingIsSentWhenTheCameraNeverOpens() throws {
        let notifier = RecordingNotifier()
        let enoent = CameraError("/dev/video0: open", errno: ENOENT)
        let source = FaultySource(script: [], openFailures: Array(repeating: enoent, count: 1000))
        let svc = ScanService(configuration: Configuration(), source: source, features: ScanFeatures(notifier: notifier), logger: Logger { _ in }, stop: StopSignal(), clock: ManualClock())
        XCTAssertThrowsError(try svc.run())
        let last = try XCTUnwrap(notifier.messages.last)
        XCTAssertTrue(last.hasPrefix("STOPPING=1\nSTATUS=stopping (camera unavailable: "), last)
        XCTAssertTrue(last.contains("/dev/video0"), last)
    }

    func testStoppingIsSentOnASignal() throws {
        let notifier = RecordingNotifier()
        let stop = StopSignal()
        let source = FaultySource(script: [.frames(100)])
        source.afterFrame = { n in if n == 5 { stop.request("SIGTERM") } }
        let svc = ScanService(configuration: Configuration(), source: source, features: ScanFeatures(notifier: notifier), logger: Logger { _ in }, stop: stop, clock: ManualClock())
        XCTAssertEqual(try svc.run(), .signal("SIGTERM"))
        XCTAssertEqual(notifier.messages.filter { $0.hasPrefix("STOPPING=1") }, ["STOPPING=1\nSTATUS=stopping (SIGTERM)"])
    }

    /// A run shorter than KIOSK_STATS_S: before, the file was never written.
    func testTheMetricsFileIsWrittenAtStopEvenForAShortRun() throws {
        let path = folder.appendingPathComponent("kiosk.prom").path
        let stats = StatsReporter(intervalSeconds: 60, metricsFile: path, logger: Logger { _ in })
        let svc = ScanService(configuration: Configuration(), source: FaultySource(script: [.frames(7)]), features: ScanFeatures(stats: stats), logger: Logger { _ in }, stop: StopSignal(), clock: ManualClock())
        _ = try svc.run()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("\nkiosk_frames_total 7\n"), text)
    }

    func scene(_ picture: GrayImage) -> ScriptedScene {
        let steps = [ScriptedScene.Step(start: 0, narration: "held", codes: [.init(picture: picture, centre: NormalizedPoint(x: 0.5, y: 0.5))])]
        return ScriptedScene(steps: steps, duration: 0.1, fps: 30, uprightWidth: 640, uprightHeight: 480, mount: Mount(), realTime: false)
    }

    /// 240 three-byte characters: 720 bytes, and 512 falls inside the 171st character.
    func testALongTextIsCutBetweenCharactersWithItsLengthInTheSameBytes() throws {
        let text = String(repeating: "日", count: 240)
        let lines = Lines()
        let svc = ScanService(configuration: Configuration(), source: scene(try QRCodeImage.render(text, moduleSize: 2)), logger: Logger { lines.add($0) }, stop: StopSignal(), clock: MonotonicClock())
        _ = try svc.run()
        let scan = try XCTUnwrap(lines.of("scan").first, "\(lines.all)")
        XCTAssertEqual(scan["data"], String(repeating: "日", count: 170), "cut at 510 bytes, not inside a character")
        XCTAssertEqual(scan["length"], "720")
        XCTAssertEqual(scan["truncated"], "true")
    }

    func testUTF8BoundaryNeverSplitsACharacter() {
        let bytes = Array("aé日😀".utf8)  // 1 + 2 + 3 + 4 bytes
        XCTAssertEqual((0...bytes.count + 2).map { PayloadBytes.utf8Boundary(in: bytes, atMost: $0) },
                       [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 10, 10])
    }

    /// A Shift-JIS QR code (no ECI) is shown as text in the log, but the program gets its bytes.
    func testTheScanProgramGetsTheExactBytesNotTheText() throws {
        let shiftJIS: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]  // 日本語
        let out = folder.appendingPathComponent("stdin").path
        let program = folder.appendingPathComponent("hook.sh").path
        try "#!/bin/sh\ncat > '\(out)'\n".write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        let lines = Lines()
        let logger = Logger { lines.add($0) }
        let hook = ScanHook(program: program, environment: ["PATH": "/usr/bin:/bin"], logger: logger, clock: MonotonicClock())
        let svc = ScanService(configuration: Configuration(), source: scene(try QRCodeImage.render(bytes: shiftJIS, moduleSize: 4)), features: ScanFeatures(hook: hook), logger: logger, stop: StopSignal(), clock: MonotonicClock())
        _ = try svc.run()
        // shutDown drops what waits: let the one run finish first.
        XCTAssertEventually("the scan program's run finished", within: 10) { hook.finished >= 1 }
        hook.shutDown()
        XCTAssertEqual(lines.of("scan").first?["data"], "日本語")
        XCTAssertEqual(FileManager.default.contents(atPath: out).map { Array($0) }, shiftJIS, "\(lines.all)")
    }

    /// Payloads without an ECI in other character sets: the log shows the text the guess gives
    /// (zxing's guessEncoding), the scan program gets the bytes as encoded.
    func testEachCharacterSetIsShownAsTextAndItsBytesGoToTheProgram() throws {
        let payloads: [([UInt8], String)] = [
            ([0xC3, 0xDE, 0xBB, 0xDE, 0xB2, 0xDD], "ﾃﾞｻﾞｲﾝ"),
            (Array("ORDER 4711 ".utf8) + [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA, 0x82, 0xCC, 0x83, 0x65, 0x83, 0x4C, 0x83, 0x58, 0x83, 0x67], "ORDER 4711 日本語のテキスト"),
            (Array("Caf".utf8) + [0xE9, 0x20, 0x5A, 0xFC, 0x72, 0x69, 0x63, 0x68], "Café Zürich"),
            (Array("Grüße, 東京 ✓".utf8), "Grüße, 東京 ✓"),
        ]
        for (index, (bytes, text)) in payloads.enumerated() {
            let out = folder.appendingPathComponent("stdin-\(index)").path
            let program = folder.appendingPathComponent("hook-\(index).sh").path
            try "#!/bin/sh\ncat > '\(out)'\n".write(toFile: program, atomically: true, encoding: .utf8)
            chmod(program, 0o755)
            let lines = Lines()
            let logger = Logger { lines.add($0) }
            let hook = ScanHook(program: program, environment: ["PATH": "/usr/bin:/bin"], logger: logger, clock: MonotonicClock())
            let svc = ScanService(configuration: Configuration(), source: scene(try QRCodeImage.render(bytes: bytes, moduleSize: 4)), features: ScanFeatures(hook: hook), logger: logger, stop: StopSignal(), clock: MonotonicClock())
            _ = try svc.run()
            XCTAssertEventually("the scan program's run finished", within: 10) { hook.finished >= 1 }
            hook.shutDown()
            XCTAssertEqual(lines.of("scan").first?["data"], text, "\(lines.all)")
            XCTAssertEqual(FileManager.default.contents(atPath: out).map { Array($0) }, bytes, text)
        }
    }

    /// Flat frames are skipped by the gate, except a camera's first: after a reopen, the new
    /// camera's first frame is decoded too.
    func testAReopenedCameraHasItsFirstFrameDecoded() throws {
        let enodev = CameraError("/dev/video0: VIDIOC_DQBUF", errno: ENODEV)
        let source = FaultySource(script: [.frames(5), .fail(enodev), .frames(5)])
        let svc = ScanService(configuration: Configuration(), source: source, logger: Logger { _ in }, stop: StopSignal(), clock: ManualClock())
        _ = try svc.run()
        XCTAssertEqual(svc.reopenings, 1)
        XCTAssertEqual(svc.decoding.stats.reasons[.first], 2, "\(svc.decoding.stats.reasons)")
    }
}
