// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import GPIO
@testable import Kiosk
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// Focus and the torch's glare through the real frame loop and real zbar: the simulated
/// camera's lens blurs a code by how far the lens is from it, and a phone screen's glass reflects
/// the torch across its code.
final class CameraAtTheDoorTests: XCTestCase {
    struct Outcome {
        var scans: [String]
        var torch: [(on: Bool, reason: String, frame: Int)]
        var log: [String]
    }

    /// `seconds` of a 640x480 scene at 30 fps, not in real time: the window empty for a second,
    /// then `code` held at 15 cm in the middle of the default ROI.
    func run(_ code: ScriptedScene.Placement, focus: FocusSetting = .distance(centimetres: 15), torch mode: TorchPolicy.Mode = .off,
             room: Double = 1.0, screenMs: Int = 400, seconds: Double = 3) throws -> Outcome {
        var lighting = Lighting { _ in room }
        lighting.autoExposure = true
        let steps = [ScriptedScene.Step(start: 0, narration: "empty"), ScriptedScene.Step(start: 1, narration: "held", codes: [code])]
        var settings = CameraSettings()
        settings.focus = focus
        let scene = ScriptedScene(steps: steps, duration: seconds, fps: 30, uprightWidth: 640, uprightHeight: 480, mount: Mount(),
                                  realTime: false, lighting: lighting, lens: SimulatedLens(), cameraSettings: settings)
        let lines = LineCollector()
        let logger = Logger(level: .info) { lines.append($0) }
        let chip = FakeChip()
        let output = try SwitchedOutput(chip: chip, offset: 17, activeLow: false)
        let torch = Torch(policy: TorchPolicy(settings: .init(mode: mode, onBelow: 50, offAbove: 80, holdNs: 2_000_000_000)),
                          output: output, logger: logger, screenLook: ScreenLook(settings: .init(afterMs: screenMs)))
        var frame = 0
        var switches: [(Bool, Int)] = []
        torch.onSwitch = { on in
            scene.torchOn = on
            switches.append((on, frame))
        }
        var config = Configuration()
        config.fps = 30
        let svc = ScanService(configuration: config, source: scene, features: ScanFeatures(torch: torch), logger: logger, stop: StopSignal(), clock: ManualClock())
        var scans: [String] = []
        svc.observe().onReport = { symbol, _ in scans.append(symbol.text ?? "") }
        svc.observe().onFrame = { frame = $0 }
        _ = try svc.run()
        let torchLines = lines.all.filter { $0.contains("event=torch ") }
        XCTAssertEqual(torchLines.count, switches.count)
        let reasons = torchLines.map { line in line.contains("reason=screen") ? "screen" : "policy" }
        return Outcome(scans: scans, torch: zip(switches, reasons).map { (on: $0.0, reason: $1, frame: $0.1) }, log: lines.all)
    }

    func qr(_ text: String, distanceCm: Double = 15, screen: Bool = false) throws -> ScriptedScene.Placement {
        .init(picture: try QRCodeImage.render(text, moduleSize: 4), centre: NormalizedPoint(x: 0.5, y: 0.5), distanceCm: distanceCm, screen: screen)
    }

    func testACodeAtFifteenCentimetresReadsWithTheDefaultFocusAndNotWithTheLensLeftAtOneMetre() throws {
        let focused = try run(try qr("HELD-AT-15CM"))
        XCTAssertEqual(focused.scans, ["HELD-AT-15CM"])
        XCTAssertTrue(focused.log.contains { $0.contains("event=camera_controls") && $0.contains("AfMode=manual,LensPosition=6.67") },
                      focused.log.joined(separator: "\n"))
        // The lens parked where the IPA puts it when nothing is asked: 1 dioptre.
        let parked = try run(try qr("HELD-AT-15CM"), focus: .camera)
        XCTAssertEqual(parked.scans, [])
        // At 30 cm the 15 cm setting is 3.3 dioptres off: blurred too.
        XCTAssertEqual(try run(try qr("HELD-AT-30CM", distanceCm: 30)).scans, [])
        XCTAssertEqual(try run(try qr("HELD-AT-30CM", distanceCm: 30), focus: .distance(centimetres: 30)).scans, ["HELD-AT-30CM"])
    }

    func testContinuousAutofocusFindsTheCode() throws {
        let o = try run(try qr("AUTOFOCUS", distanceCm: 20), focus: .auto)
        XCTAssertEqual(o.scans, ["AUTOFOCUS"])
        XCTAssertTrue(o.log.contains { $0.contains("event=camera_controls") && $0.contains("AfMode=continuous,AfRange=macro,AfSpeed=fast") })
    }

    func testAPhoneScreenUnderTheTorchReadsAfterTheTorchsScreenLook() throws {
        // A dim lobby with the torch on: the reflection hides the code until the torch goes off.
        let o = try run(try qr("PHONE-TICKET", screen: true), torch: .on, room: 0.12)
        XCTAssertEqual(o.scans, ["PHONE-TICKET"])
        XCTAssertEqual(o.torch.map(\.on), [true, false, true])
        XCTAssertEqual(o.torch.map(\.reason), ["policy", "screen", "screen"])
        // The look began 400 ms after the phone came (frame 30 at 1 s; +12 frames; the gate's first
        // look at it may take a frame).
        XCTAssertEqual(Double(o.torch[1].frame), 42, accuracy: 2)
        XCTAssertTrue(o.log.contains { $0.contains("event=torch state=on") && $0.contains("reason=screen read=true") })

        // Without the look, the reflection never leaves: nothing reads.
        let never = try run(try qr("PHONE-TICKET", screen: true), torch: .on, room: 0.12, screenMs: 0)
        XCTAssertEqual(never.scans, [])
        XCTAssertEqual(never.torch.map(\.on), [true])
    }

    func testAPaperCodeUnderTheTorchReadsWithoutTheTorchMoving() throws {
        let o = try run(try qr("PAPER-TICKET"), torch: .on, room: 0.12)
        XCTAssertEqual(o.scans, ["PAPER-TICKET"])
        XCTAssertEqual(o.torch.map(\.on), [true])
    }
}

/// Log lines from the logger's closure (the frame loop's thread and the test's).
final class LineCollector: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
