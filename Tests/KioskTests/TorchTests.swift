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

/// The torch against scripted light, through the real frame loop: the simulated scene renders
/// each frame's pixels, the brightness estimate reads them, the policy decides, the torch line
/// (a fake chip) switches and the scene's light follows.
final class TorchTests: XCTestCase {
    struct Outcome {
        var changes: [(t: Double, on: Bool, reason: String)]
        var levels: [Int]
        var brightness: [Double]
    }

    /// Runs `seconds` of a 160x120 scene at 10 fps under `lighting` with the default thresholds
    /// (on below 50, off above 80, hold 2 s). About 180 x illuminance is the brightness figure
    /// of the simulated window.
    func run(_ lighting: Lighting, seconds: Double, mode: TorchPolicy.Mode = .auto, reportExposure: Bool = true,
             unplugAt: Double? = nil) throws -> Outcome {
        var steps = [ScriptedScene.Step(start: 0, narration: "")]
        if let u = unplugAt {
            steps.append(.init(start: u, narration: "unplugged", unplugged: true))
            steps.append(.init(start: u + 0.5, narration: "back"))
        }
        let scene = ScriptedScene(steps: steps, duration: seconds, fps: 10, uprightWidth: 160, uprightHeight: 120,
                                  mount: Mount(), realTime: false, lighting: lighting)
        let chip = FakeChip()
        let output = try SwitchedOutput(chip: chip, offset: 17, activeLow: false)
        let torch = Torch(policy: TorchPolicy(settings: .init(mode: mode, onBelow: 50, offAbove: 80, holdNs: 2_000_000_000)),
                          output: output, logger: Logger(level: .error) { _ in })
        var changes: [(Double, Bool, String)] = []
        var time = 0.0
        torch.onSwitch = { on in
            scene.torchOn = on
            changes.append((time, on, ""))
        }
        var config = Configuration()
        config.fps = 10
        let source: FrameSource = reportExposure ? scene : ExposureHidden(scene)
        let clock = ManualClock()
        let svc = ScanService(configuration: config, source: source, features: ScanFeatures(torch: torch), logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: clock)
        var brightness: [Double] = []
        svc.observe().onFrame = { n in
            time = Double(n) / 10
            brightness.append(svc.brightness ?? -1)
        }
        _ = try svc.run()
        return Outcome(changes: changes.map { (t: $0.0, on: $0.1, reason: $0.2) }, levels: chip.levels[17] ?? [], brightness: brightness)
    }

    func lighting(_ ambient: @escaping @Sendable (Double) -> Double, autoExposure: Bool = false) -> Lighting {
        var l = Lighting(ambient: ambient)
        l.autoExposure = autoExposure
        return l
    }

    func testSlowDuskTurnsTheTorchOnOnceAndNeverBack() throws {
        // Bright to dark over three minutes.
        let o = try run(lighting(Lighting.ramp(from: 1.0, to: 0.05, start: 10, end: 190)), seconds: 240)
        XCTAssertEqual(o.changes.map(\.on), [true])
        // The figure crosses 50 where 180 x illuminance = 50: about illuminance 0.28, at ~145 s.
        let t = try XCTUnwrap(o.changes.first?.t)
        XCTAssertGreaterThan(t, 130)
        XCTAssertLessThan(t, 165)
        XCTAssertEqual(o.levels, [0, 1])
    }

    func testLightsOffAndOnSwitchOnceEachWayWithinHoldPlusSettling() throws {
        let o = try run(lighting { t in (20..<60).contains(t) ? 0.08 : 1.0 }, seconds: 90)
        XCTAssertEqual(o.changes.map(\.on), [true, false])
        XCTAssertEqual(o.changes[0].t, 20, accuracy: 2.0 + 0.6)
        XCTAssertGreaterThanOrEqual(o.changes[0].t, 20)
        XCTAssertEqual(o.changes[1].t, 60, accuracy: 2.0 + 0.6)
        XCTAssertGreaterThanOrEqual(o.changes[1].t, 60)
    }

    func testTorchBrighterThanTheGapDoesNotOscillate() throws {
        // The torch adds ~108 to the figure, far more than the 30 between the thresholds.
        var l = lighting { _ in 0.1 }
        l.torchIlluminance = 0.8
        let o = try run(l, seconds: 120)
        XCTAssertEqual(o.changes.map(\.on), [true])
    }

    func testHoveringAroundEachThresholdDoesNotChatter() throws {
        // Around ON_BELOW (illuminance 0.28 = figure ~50), with a slow wobble and sensor noise.
        let nearOn = try run(lighting { t in 0.28 + 0.03 * sin(t * 1.3) }, seconds: 120)
        XCTAssertLessThanOrEqual(nearOn.changes.count, 1, "\(nearOn.changes)")
        // Between the thresholds (figure ~60-75): never a change.
        let between = try run(lighting { t in 0.37 + 0.04 * sin(t * 0.9) }, seconds: 120)
        XCTAssertEqual(between.changes.count, 0)
        // Around OFF_ABOVE with the torch on: once on, it stays on while the ambient part wobbles
        // around 80 - at most one change per hold period, and no back-and-forth.
        let nearOff = try run(lighting { t in t < 10 ? 0.05 : 0.44 + 0.03 * sin(t * 1.7) }, seconds: 120)
        let onOff = nearOff.changes
        for (a, b) in zip(onOff, onOff.dropFirst()) { XCTAssertGreaterThanOrEqual(b.t - a.t, 2.0) }
        XCTAssertLessThanOrEqual(onOff.count, 2, "\(onOff.map { ($0.t, $0.on) })")
    }

    func testAutoExposureDoesNotHideTheDusk() throws {
        // The camera keeps the picture grey; the exposure it reports still tells the dusk.
        let o = try run(lighting(Lighting.ramp(from: 1.0, to: 0.05, start: 10, end: 70), autoExposure: true), seconds: 110)
        XCTAssertEqual(o.changes.map(\.on), [true])
        // And a bright room under auto-exposure never turns it on.
        let bright = try run(lighting({ _ in 1.0 }, autoExposure: true), seconds: 60)
        XCTAssertEqual(bright.changes.count, 0)
        XCTAssertGreaterThan(bright.brightness.last ?? 0, 100)
    }

    func testWithoutExposureFiguresAutoExposureWouldHideTheDusk() throws {
        // The control experiment: the same dusk, but the camera does not report its exposure.
        let o = try run(lighting(Lighting.ramp(from: 1.0, to: 0.05, start: 10, end: 70), autoExposure: true), seconds: 110,
                        reportExposure: false)
        XCTAssertEqual(o.changes.count, 0, "the grey picture alone never looks dim")
    }

    func testAPassingShadowChangesNothing() throws {
        var l = lighting { _ in 1.0 }
        l.shadows = [(from: 20, to: 21, area: NormalizedRect(x: 0, y: 0, width: 0.8, height: 1), factor: 0.15)]
        let o = try run(l, seconds: 40)
        XCTAssertEqual(o.changes.count, 0)
        XCTAssertLessThan(o.brightness[205], 60, "the shadow does darken the picture")
    }

    func testModesOnAndOffNeverChange() throws {
        let dusk = Lighting.ramp(from: 1.0, to: 0.05, start: 5, end: 20)
        let on = try run(lighting(dusk), seconds: 40, mode: .on)
        XCTAssertEqual(on.changes.map(\.on), [true])
        XCTAssertEqual(on.levels, [0, 1])
        let off = try run(lighting(dusk), seconds: 40, mode: .off)
        XCTAssertEqual(off.changes.count, 0)
        XCTAssertEqual(off.levels, [0])
    }

    func testCameraLossTurnsTheTorchOffAndItComesBackOnAfter() throws {
        let o = try run(lighting { _ in 0.08 }, seconds: 30, unplugAt: 12)
        XCTAssertEqual(o.changes.map(\.on), [true, false, true])
        XCTAssertEqual(o.changes[1].t, 12, accuracy: 0.2)
        XCTAssertEqual(o.levels, [0, 1, 0, 1])
    }
}

/// A camera that does not report its exposure.
final class ExposureHidden: FrameSource {
    let inner: FrameSource
    init(_ inner: FrameSource) { self.inner = inner }
    func open() throws -> CameraDescription { try inner.open() }
    func nextFrame(timeoutMs: Int) throws -> FrameWait { try inner.nextFrame(timeoutMs: timeoutMs) }
    func close() { inner.close() }
    var skippedFrames: Int { 0 }
    var exposure: CameraExposure? { nil }
}
