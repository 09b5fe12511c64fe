// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Glibc
import Platform
import Policy

/// A simulated camera looking at the kiosk's window: a script of codes held up at given places
/// (in the upright picture) over given times, seen through a camera mounted with a given `Mount`.
/// It is a `FrameSource`, so the kiosk's real frame loop, real zbar and real ROI mapping run on it.
public final class ScriptedScene: FrameSource {
    /// One stretch of the script: from `start` seconds until the next step, these codes are in view.
    public struct Step {
        public var start: Double
        /// Said in the log when the step begins, so a newcomer can follow the demo.
        public var narration: String
        public var codes: [Placement]
        /// The camera is unplugged during this step: frames fail with ENODEV and opening fails
        /// with ENOENT until the step is over.
        public var unplugged: Bool

        public init(start: Double, narration: String, codes: [Placement] = [], unplugged: Bool = false) {
            self.start = start
            self.narration = narration
            self.codes = codes
            self.unplugged = unplugged
        }
    }

    /// A picture (usually a code) placed with its centre at a point of the upright frame, given in
    /// fractions of the frame.
    public struct Placement {
        public var picture: GrayImage
        public var centre: NormalizedPoint
        /// How far from the camera it is held, for the lens (nil: on the window, always sharp).
        public var distanceCm: Double?
        /// A phone screen: lit by itself, not by the room or the torch; the torch's reflection on
        /// its glass wipes out a band across its middle while the torch is lit.
        public var screen: Bool
        public init(picture: GrayImage, centre: NormalizedPoint, distanceCm: Double? = nil, screen: Bool = false) {
            self.picture = picture
            self.centre = centre
            self.distanceCm = distanceCm
            self.screen = screen
        }
    }

    public let steps: [Step]
    public let duration: Double
    public let fps: Double
    public let view: SensorView
    /// When true, frames come no faster than the frame rate (the demo); else as fast as asked (tests).
    public let realTime: Bool
    /// Called with a step's narration when its first frame is handed out.
    public var onStep: (Step) -> Void = { _ in }

    private let background: GrayImage
    private var upright: GrayImage
    private var sensor: GrayImage
    private var index: UInt64 = 0
    private var renderedStep = -1
    /// When the script started (the first `open`): its clock runs on while the camera is unplugged.
    private var sceneStartNs: UInt64?
    private var isOpen = false

    private var light: LightingState?
    private var lit: GrayImage
    /// The lens, when the scene has one; it takes `cameraSettings` at open as a Camera Module 3 would.
    public private(set) var simulatedLens: SimulatedLens?
    public let cameraSettings: CameraSettings
    /// The blur radius each placement of the rendered step was drawn with.
    private var renderedBlur: [Int] = []

    /// The kiosk's torch, as the scene sees it: set by whatever drives the torch line.
    public var torchOn: Bool {
        get { light?.torchOn ?? false }
        set {
            guard light != nil, newValue != light!.torchOn else { return }
            light!.torchOn = newValue
            light!.torchSwitchedAt = Double(index) / fps
        }
    }

    /// The simulated exposure, when the lighting has automatic exposure (as a camera reports it).
    public var exposure: CameraExposure? {
        guard let light, light.lighting.autoExposure else { return nil }
        return CameraExposure(seconds: light.exposureSeconds)
    }

    public init(steps: [Step], duration: Double, fps: Double, uprightWidth: Int, uprightHeight: Int,
                mount: Mount, realTime: Bool, lighting: Lighting? = nil, lens: SimulatedLens? = nil,
                cameraSettings: CameraSettings = CameraSettings()) {
        precondition(!steps.isEmpty && fps > 0 && duration > 0)
        self.steps = steps.sorted { $0.start < $1.start }
        self.duration = duration
        self.fps = fps
        self.realTime = realTime
        view = SensorView(mount: mount, uprightWidth: uprightWidth, uprightHeight: uprightHeight)
        background = ScriptedScene.window(width: uprightWidth, height: uprightHeight)
        upright = background
        sensor = GrayImage(width: view.sensorWidth, height: view.sensorHeight)
        lit = sensor
        light = lighting.map(LightingState.init)
        simulatedLens = lens
        self.cameraSettings = cameraSettings
    }

    public var controls: CameraControlReport? { simulatedLens?.report }

    public var lens: LensReading? {
        guard let l = simulatedLens else { return nil }
        return LensReading(position: l.position, afState: l.continuous ? "scanning" : nil)
    }

    public func open() throws -> CameraDescription {
        if realTime {
            let now = monotonicNanoseconds()
            let start = sceneStartNs ?? now
            sceneStartNs = start
            // Carry on where the script's clock is now: the frames of an unplugged spell are lost.
            let t = Double(now - start) / 1e9
            if let step = step(at: t), step.unplugged { throw CameraError("the simulated camera is unplugged", errno: ENOENT) }
            index = max(index, UInt64(t * fps))
        } else if let step = step(at: Double(index) / fps), step.unplugged {
            // Without a clock, reopening skips the unplugged step.
            let next = steps.first { $0.start > step.start }?.start ?? duration
            index = UInt64((next * fps).rounded(.up))
        }
        isOpen = true
        simulatedLens?.start(cameraSettings)
        renderedStep = -1
        return CameraDescription(device: "scene", format: "GREY", width: view.sensorWidth,
                                 height: view.sensorHeight, fps: fps)
    }

    private func step(at t: Double) -> Step? {
        steps.last { $0.start <= t }
    }

    public func nextFrame(timeoutMs: Int) throws -> FrameWait {
        guard isOpen else { throw CameraError("the simulated scene is not open", errno: EBADF) }
        let t = Double(index) / fps
        if t >= duration { return .ended }
        let timestampNs = UInt64(t * 1e9)
        if realTime, let start = sceneStartNs {
            let due = start + timestampNs
            let now = monotonicNanoseconds()
            if due > now {
                let waitNs = due - now
                if waitNs > UInt64(timeoutMs) * 1_000_000 {
                    usleep(UInt32(timeoutMs) * 1000)
                    return .timedOut
                }
                usleep(UInt32(waitNs / 1000))
            }
        }
        let stepIndex = steps.lastIndex { $0.start <= t } ?? 0
        if simulatedLens != nil {
            simulatedLens!.track(steps[stepIndex].codes.compactMap(\.distanceCm).first.map { 100 / $0 })
        }
        if stepIndex != renderedStep {
            renderedStep = stepIndex
            compose(steps[stepIndex])
            onStep(steps[stepIndex])
        } else if blurRadii(steps[stepIndex]) != renderedBlur {
            compose(steps[stepIndex])  // the lens moved
        }
        if steps[stepIndex].unplugged {
            throw CameraError("VIDIOC_DQBUF on the simulated camera", errno: ENODEV)
        }
        let seq = index
        index += 1
        let captured = realTime ? (sceneStartNs ?? 0) + timestampNs : monotonicNanoseconds()
        if light != nil {
            light!.render(sensor, at: t, fps: fps, view: view, into: &lit)
        }
        let picture = light == nil ? sensor : lit
        return picture.pixels.withUnsafeBufferPointer { buf in
            // The buffer lives in `self.sensor` (or `self.lit`) and is rewritten only by the next
            // call, so the frame stays valid until then, as the protocol promises.
            .frame(Frame(luma: LumaPlane(base: buf.baseAddress!, width: sensor.width, height: sensor.height,
                                         rowStride: sensor.width),
                         sequence: seq, timestampNs: timestampNs, capturedNs: captured))
        }
    }

    public func close() { isOpen = false }

    public var skippedFrames: Int { 0 }

    private func blurRadii(_ step: Step) -> [Int] {
        step.codes.map { code in
            guard let lens = simulatedLens, let cm = code.distanceCm else { return 0 }
            return lens.blurRadius(forCodeAt: 100 / cm)
        }
    }

    private func compose(_ step: Step) {
        upright = background
        renderedBlur = blurRadii(step)
        var screens: [PixelRect] = []
        for (code, blur) in zip(step.codes, renderedBlur) {
            let x = Int(code.centre.x * Double(upright.width)) - code.picture.width / 2
            let y = Int(code.centre.y * Double(upright.height)) - code.picture.height / 2
            upright.paste(code.picture.blurred(radius: blur), x: x, y: y)
            if code.screen {
                let area = NormalizedRect(x: max(0, Double(x) / Double(upright.width)), y: max(0, Double(y) / Double(upright.height)),
                                          width: min(1, Double(code.picture.width) / Double(upright.width)),
                                          height: min(1, Double(code.picture.height) / Double(upright.height)))
                screens.append(view.mount.sensorROI(fromUpright: area, sensorWidth: view.sensorWidth, sensorHeight: view.sensorHeight))
            }
        }
        light?.screens = screens
        view.render(upright, into: &sensor)
    }

    /// The kiosk's empty window: a soft vertical gradient with a faint deterministic texture, so
    /// that the decoder sees something like a real surface rather than a flat field.
    public static func window(width: Int, height: Int) -> GrayImage {
        var image = GrayImage(width: width, height: height)
        var seed: UInt32 = 0x9E37_79B9
        for y in 0..<height {
            let base = 150 + 60 * y / max(1, height - 1)
            for x in 0..<width {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let grain = Int(seed >> 28) - 8
                image[x, y] = UInt8(clamping: base + grain)
            }
        }
        return image
    }
}

extension ScriptedScene {
    /// A screen held up to the window: the empty window for `before` frames, then `picture(f)` for
    /// frame `f` in the middle of a `width` x `height` picture for `hold` frames, held in a hand
    /// (`tremor`: moved a pixel each frame, in a small loop) or still, then the empty window again
    /// ("away") for `after` frames; 30 fps, not in real time, the room lit, sensor noise of 2 steps.
    /// `ScreenScenes`' and `PassScreens`' scenes.
    static func held(_ narration: String, width: Int, height: Int, before: Int, hold: Int, after: Int, tremor: Bool = true,
                     picture: (_ frame: Int) throws -> GrayImage) rethrows -> ScriptedScene {
        let fps = 30.0
        let loop: [(Int, Int)] = [(0, 0), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
        var steps = [Step(start: 0, narration: "empty")]
        for f in 0..<hold {
            let code = try picture(f)
            let (dx, dy) = tremor ? loop[f % loop.count] : (0, 0)
            let centre = NormalizedPoint(x: 0.5 + Double(dx) / Double(width), y: 0.5 + Double(dy) / Double(height))
            steps.append(Step(start: Double(before + f) / fps, narration: narration, codes: [Placement(picture: code, centre: centre)]))
        }
        steps.append(Step(start: Double(before + hold) / fps, narration: "away"))
        var lighting = Lighting { _ in 1.0 }
        lighting.noise = 2
        return ScriptedScene(steps: steps, duration: Double(before + hold + after) / fps, fps: fps, uprightWidth: width,
                             uprightHeight: height, mount: Mount(), realTime: false, lighting: lighting)
    }
}
