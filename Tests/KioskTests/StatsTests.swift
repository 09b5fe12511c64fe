// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Foundation
@testable import Kiosk
import Platform
import Policy
@testable import Systemd
import TestSupport
import XCTest

final class StatsTests: XCTestCase {
    func testStatsLineEveryIntervalWithTheIntervalsFigures() throws {
        let clock = ManualClock()
        // 30 frames, then 25 empty waits of 100 ms each (a stall at 2 s reopens), then 30 frames.
        let source = FaultySource(script: [.frames(30), .silence(25), .frames(30)], clock: clock)
        var lines: [String] = []
        let logger = Logger { lines.append($0) }
        let stats = StatsReporter(intervalSeconds: 1, metricsFile: nil, logger: logger)
        let svc = ScanService(configuration: Configuration(), source: source, features: ScanFeatures(stats: stats), logger: logger, stop: StopSignal(), clock: clock)
        _ = try svc.run()
        let reports = lines.map(Logfmt.fields).filter { $0["event"] == "stats" }
        XCTAssertGreaterThanOrEqual(reports.count, 2, "\(lines)")
        XCTAssertEqual(reports.map { Int($0["frames"] ?? "") ?? -1 }.reduce(0, +), 30, "the frames before the last interval")
        XCTAssertTrue(reports.allSatisfy { $0["torch"] == "none" && $0["brightness"] != nil && $0["cpu_ms_per_frame"] != nil })
        XCTAssertEqual(reports.first?["fps"].flatMap(Double.init) ?? 0, 30, accuracy: 31, "a figure, not a crash")
    }

    func testStatsOffWithZero() {
        let stats = StatsReporter(intervalSeconds: 0, metricsFile: nil, logger: Logger { _ in })
        XCTAssertFalse(stats.isDue(at: 1_000_000_000_000))
    }

    func testMetricsTextHasNoLabelsAndAllFigures() {
        var s = StatsSnapshot()
        s.frames = 10; s.decoded = 2; s.skipped = 1; s.reopenings = 3; s.brightness = 42.5; s.torchOn = true
        let text = StatsReporter.prometheusText(s, fps: 29.97, cpuMsPerFrame: 1.5)
        XCTAssertTrue(text.contains("\nkiosk_frames_total 10\n"))
        XCTAssertTrue(text.contains("\nkiosk_codes_total 2\n"))
        XCTAssertTrue(text.contains("\nkiosk_torch_on 1\n"))
        XCTAssertTrue(text.contains("\nkiosk_brightness 42.5\n"))
        XCTAssertFalse(text.contains("{"), "no labels, so no payload can ever be one")
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    func testMetricsFileIsAlwaysCompleteWhileRewritten() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("kiosk.prom").path
        var s = StatsSnapshot()
        s.brightness = 50
        s.torchOn = false
        try StatsReporter.writeMetrics(StatsReporter.prometheusText(s, fps: 30, cpuMsPerFrame: 1), to: path)
        final class Done: @unchecked Sendable { var flag = false; let lock = NSLock() }
        let done = Done()
        let writer = Thread {
            for i in 0..<300 {
                var t = StatsSnapshot()
                t.frames = i * 1000
                t.brightness = Double(i)
                t.torchOn = i % 2 == 0
                try? StatsReporter.writeMetrics(StatsReporter.prometheusText(t, fps: 30, cpuMsPerFrame: 1), to: path)
            }
            done.lock.lock(); done.flag = true; done.lock.unlock()
        }
        writer.start()
        var reads = 0
        while true {
            done.lock.lock(); let finished = done.flag; done.lock.unlock()
            if finished { break }
            let text = try String(contentsOfFile: path, encoding: .utf8)
            reads += 1
            XCTAssertTrue(text.hasSuffix("\n"))
            XCTAssertEqual(text.components(separatedBy: "# TYPE").count - 1, 8, "a half-written file was read")
        }
        XCTAssertGreaterThan(reads, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["kiosk.prom"], "no temporary left")
    }
}
