// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy
import Systemd
import Scene

/// The built-in scene of `kiosk demo`: what a visitor at the door does, scripted, seen through
/// the configured mount, decoded by the real pipeline.
enum DemoScene {
    static let codeInsideROI = "KIOSK-DEMO-0001"
    static let codeOutsideROI = "OUTSIDE-THE-ROI"
    static let codeUnderTorch = "KIOSK-DEMO-0002"
    static let codeOnPhone = "KIOSK-DEMO-PHONE"
    /// The demo's own ROI and repeat window, so that the script means what its narration says.
    static let roi = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
    static let repeatMs = 3000
    static let duration = 27.0
    /// Scans the script should produce: the inside code, the same code after the repeat window,
    /// a phone's code read with the torch off for a moment, and a paper code read under the torch.
    static let expectedScans = 4
    /// Codes are held 15 cm from the lens (the default KIOSK_FOCUS): `KIOSK_FOCUS=camera` leaves
    /// the simulated lens at 1 m, and nothing reads.
    static let heldAtCm = 15.0
    /// The room: lit, dusk from 13.5 s to 15.5 s, the lights back on from 22.5 s to 23.5 s.
    static let lighting: Lighting = {
        var l = Lighting { t in t < 22.5 ? Lighting.ramp(from: 1.0, to: 0.12, start: 13.5, end: 15.5)(t)
                                         : Lighting.ramp(from: 0.12, to: 1.0, start: 22.5, end: 23.5)(t) }
        l.autoExposure = true
        return l
    }()

    /// The demo's settings over the configured ones: the simulated chip (a buzzer on 18, a torch
    /// on 17 unless the buzzer is there), its ROI and repeat window.
    static func configure(_ configuration: Configuration) -> Configuration {
        var config = configuration
        config.gpioChip = "sim"
        config.uprightROI = roi
        config.repeatMs = repeatMs
        if config.buzzerLine == nil { config.buzzerLine = 18 }
        if config.torchLine == nil && config.buzzerLine != 17 { config.torchLine = 17 }
        return config
    }

    /// Where frames come from: the scripted scene (`kiosk demo`: the torch lights it, its tally
    /// judges the run at the end) or the configured camera.
    static func source(_ a: Assembly, torch: Torch?) throws -> (FrameSource, ScriptedSceneHandle?) {
        guard a.demo else { return (KioskService.makeSource(a.config, clock: a.clock), nil) }
        do {
            let scene = try make(mount: a.config.mount, fps: a.config.fps, realTime: true, cameraSettings: a.config.cameraSettings)
            let logger = a.logger
            scene.onStep = { step in logger.info("demo", ["step": .text(step.narration)]) }
            torch?.onSwitch = { scene.torchOn = $0 }
            return (scene, ScriptedSceneHandle())
        } catch {
            a.logger.error("demo_error", ["error": .text(String(describing: error))])
            throw ServiceExit(ExitStatus.failure)
        }
    }

    static func make(mount: Mount, fps: Double, realTime: Bool, cameraSettings: CameraSettings = CameraSettings()) throws -> ScriptedScene {
        let inside = try QRCodeImage.render(codeInsideROI, moduleSize: 4)
        let outside = try QRCodeImage.render(codeOutsideROI, moduleSize: 3)
        let second = try QRCodeImage.render(codeUnderTorch, moduleSize: 4)
        let phone = try QRCodeImage.render(codeOnPhone, moduleSize: 4)
        let centre = NormalizedPoint(x: 0.5, y: 0.5)
        let cm = heldAtCm
        // Top-left corner: wholly outside the default ROI (x < 0.25 of the width, y < 0.25 of the height).
        let corner = NormalizedPoint(x: 0.12, y: 0.13)
        let steps = [
            ScriptedScene.Step(start: 0, narration: "the window is empty"),
            ScriptedScene.Step(start: 1.0, narration: "a visitor holds a QR code inside the ROI: expect one scan and one beep, then silence while it is held",
                               codes: [.init(picture: inside, centre: centre, distanceCm: cm)]),
            ScriptedScene.Step(start: 3.5, narration: "the code is taken away"),
            ScriptedScene.Step(start: 7.0, narration: "the same code is shown again after the 3 s repeat window: expect a second scan",
                               codes: [.init(picture: inside, centre: centre, distanceCm: cm)]),
            ScriptedScene.Step(start: 8.5, narration: "the code is taken away"),
            ScriptedScene.Step(start: 9.5, narration: "a QR code is held outside the ROI: it must never be reported",
                               codes: [.init(picture: outside, centre: corner, distanceCm: cm)]),
            ScriptedScene.Step(start: 11.5, narration: "the camera's cable is pulled for a second: expect camera_lost, then camera_reopen when it is back",
                               unplugged: true),
            ScriptedScene.Step(start: 12.8, narration: "the camera is back; the window is empty"),
            ScriptedScene.Step(start: 13.5, narration: "dusk: the room darkens (the camera's auto-exposure keeps the picture grey); expect the torch to go on once"),
            ScriptedScene.Step(start: 18.0, narration: "a visitor holds up a phone under the torch: its glass reflects the torch across the code; expect the torch off for a moment (reason=screen), a scan, the torch back on",
                               codes: [.init(picture: phone, centre: centre, distanceCm: cm, screen: true)]),
            ScriptedScene.Step(start: 19.5, narration: "the phone is taken away"),
            ScriptedScene.Step(start: 20.5, narration: "a visitor holds a paper code under the torch: expect a scan (the torch stays on)",
                               codes: [.init(picture: second, centre: centre, distanceCm: cm)]),
            ScriptedScene.Step(start: 22.0, narration: "the code is taken away; the lights come back on: expect the torch to go off once"),
            ScriptedScene.Step(start: 26.0, narration: "the demo ends"),
        ]
        return ScriptedScene(steps: steps, duration: duration, fps: fps, uprightWidth: 640, uprightHeight: 480,
                             mount: mount, realTime: realTime, lighting: lighting, lens: SimulatedLens(), cameraSettings: cameraSettings)
    }
}
/// Counts what the demo reported, to say at the end whether the scene went as narrated.
final class ScriptedSceneHandle: ScanListener {
    private var inside = 0
    private var outside = 0

    func codeReported(_ code: ReportedCode) {
        if [DemoScene.codeInsideROI, DemoScene.codeUnderTorch, DemoScene.codeOnPhone].contains(code.symbol.text) { inside += 1 }
        if code.symbol.text == DemoScene.codeOutsideROI { outside += 1 }
    }

    func judge(logger: Logger, reopenings: Int, torchChanges: Int, screenLooks: Int) -> Int32 {
        let pass = inside == DemoScene.expectedScans && outside == 0 && reopenings == 1 && torchChanges == 2 && screenLooks == 1
        logger.log(pass ? .info : .error, "demo_result", [
            "result": pass ? "pass" : "fail", "expected_scans": .int(DemoScene.expectedScans),
            "scans": .int(inside), "outside_roi_scans": .int(outside), "camera_reopens": .int(reopenings),
            "torch_changes": .int(torchChanges), "screen_looks": .int(screenLooks),
        ])
        return pass ? ExitStatus.ok : ExitStatus.failure
    }
}
