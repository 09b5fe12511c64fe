// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Reader
import GPIO
@testable import Kiosk
import Platform
import Policy
import Scene
@testable import Systemd
import TestSupport
import XCTest

final class ScanServiceTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
        var events: [String] { all.map { Logfmt.fields($0)["event"] ?? "?" } }
        func of(_ event: String) -> [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    func service(_ source: FrameSource, config: Configuration = Configuration(), chip: FakeChip? = nil,
                 clock: ManualClock? = nil, stop: StopSignal = StopSignal()) throws -> (ScanService, Lines) {
        let lines = Lines()
        let logger = Logger(level: .debug) { lines.all.append($0) }
        var door: DoorReader?
        if let chip, let clock {
            door = DoorReader(configuration: config, lines: .init(buzzer: try SwitchedOutput(chip: chip, offset: 18, activeLow: false)),
                              logger: logger, clock: clock)
        }
        return (ScanService(configuration: config, source: source, features: ScanFeatures(door: door), logger: logger, stop: stop, clock: MonotonicClock()), lines)
    }

    func scene(_ steps: [ScriptedScene.Step], duration: Double, mount: Mount = Mount()) -> ScriptedScene {
        ScriptedScene(steps: steps, duration: duration, fps: 30, uprightWidth: 640, uprightHeight: 480, mount: mount, realTime: false)
    }

    func testHeldCodeOnceRepeatAfterWindowOutsideNeverWithBeeps() throws {
        let code = try QRCodeImage.render("VISITOR-7", moduleSize: 4)
        let other = try QRCodeImage.render("NOT-HERE", moduleSize: 3)
        let inside = ScriptedScene.Placement(picture: code, centre: NormalizedPoint(x: 0.5, y: 0.5))
        let steps = [
            ScriptedScene.Step(start: 0, narration: "empty"),
            ScriptedScene.Step(start: 1, narration: "held", codes: [inside]),
            ScriptedScene.Step(start: 3, narration: "away briefly"),
            ScriptedScene.Step(start: 4, narration: "back within the window", codes: [inside]),
            ScriptedScene.Step(start: 5, narration: "away"),
            ScriptedScene.Step(start: 9, narration: "back after the window", codes: [inside]),
            ScriptedScene.Step(start: 10, narration: "outside", codes: [.init(picture: other, centre: NormalizedPoint(x: 0.12, y: 0.13))]),
        ]
        for mount in [Mount(), Mount(rotation: .quarter, mirrored: true)] {
            var config = Configuration()
            config.mount = mount
            let chip = FakeChip(), clock = ManualClock(startNs: 0)
            let (svc, lines) = try service(scene(steps, duration: 11, mount: mount), config: config, chip: chip, clock: clock)
            var reportedFrames: [UInt64] = []
            svc.observe().onReport = { _, frame in
                reportedFrames.append(frame.sequence)
                clock.advance(byMs: 200)  // let each beep finish
            }
            XCTAssertEqual(try svc.run(), .sourceEnded)
            XCTAssertEqual(reportedFrames, [30, 270], "\(mount)")
            XCTAssertEqual(svc.frames, 330)
            XCTAssertEqual(svc.decoded, 2)
            let scans = lines.of("scan")
            XCTAssertEqual(scans.map { $0["data"] }, ["VISITOR-7", "VISITOR-7"])
            XCTAssertEqual(scans.map { $0["symbology"] }, ["QR-Code", "QR-Code"])
            XCTAssertEqual(scans.map { $0["frame"] }, ["30", "270"])
            XCTAssertNotNil(Double(scans[0]["latency_ms"] ?? ""))
            XCTAssertEqual(chip.levels[18], [0, 1, 0, 1, 0], "two beeps")
            XCTAssertEqual(lines.events.filter { $0 != "roi" && $0 != "beep" }, ["camera_open", "ready", "scan", "scan"])
        }
    }

    func testLongPayloadIsCappedInTheLogWithItsLength() throws {
        let text = String(repeating: "0123456789", count: 70)  // 700 bytes
        let code = try QRCodeImage.render(text, moduleSize: 2)
        let steps = [ScriptedScene.Step(start: 0, narration: "long", codes: [.init(picture: code, centre: NormalizedPoint(x: 0.5, y: 0.5))])]
        let (svc, lines) = try service(scene(steps, duration: 0.1), config: Configuration())
        _ = try svc.run()
        let scan = try XCTUnwrap(lines.of("scan").first)
        XCTAssertEqual(scan["data"], String(text.prefix(512)))
        XCTAssertEqual(scan["length"], "700")
        XCTAssertEqual(scan["truncated"], "true")
    }

    func testROIIsComputedOncePerFrameSize() throws {
        let (svc, lines) = try service(FaultySource(script: [.frames(10)]))
        _ = try svc.run()
        XCTAssertEqual(lines.of("roi").map { $0["sensor"] }, ["32x24+16+12"])
    }
}

