// SPDX-License-Identifier: Apache-2.0
import Camera
import Platform
import Policy

/// libcamera's plugin as the camera code sees it, doing what its script says: frames (of a
/// picture, with metadata), silence, a failure. It records what it was asked (start controls,
/// per-request controls, crops, closes) and, as the real plugin does, refuses a control the
/// camera's info does not advertise and frames before the start.
/// Only for the LibcameraCamera and ScanService logic around the plugin; the plugin itself runs
/// against real libcamera (vimc) in the VM tier.
public final class FakeLibcameraPlugin: LibcameraPlugin {
    public enum Step {
        case frames(Int)
        /// Waits that time out (each advances the clock by the wait).
        case silence(Int)
        case fail(String)
        /// The lens metadata of the frames from here on (no frame; nil: none).
        case lens(LensReading?)
    }

    public var script: [Step]
    public var info: LibcameraInfo
    public var picture: GrayImage
    public var light = SensorLight()
    /// LensPosition, AfState, FocusFoM of the frames (`Step.lens` changes it).
    public var lens: LensReading?
    /// The crop the "pipeline" reports before any is set (the unzoomed picture's).
    public var defaultCrop: PixelRect?
    public private(set) var crops: [PixelRect] = []
    /// The controls of each start, in order.
    public private(set) var starts: [[LibcameraControlSetting]] = []
    /// Each list given for every request (`setControls`), in order; the last is in force.
    public private(set) var requestControls: [[LibcameraControlSetting]] = []
    public var startFailure: String?
    private var started = false
    public private(set) var closes: [Bool] = []
    public private(set) var opens = 0
    /// Whether a close with `stalled` abandons the camera, as the real plugin does.
    public var abandonsWhenStalled = true
    public var openFailure: String?
    private let clock: ManualClock
    /// The picture's pixels where the "camera" lends them from (stable for the plugin's life).
    private let buffer: UnsafeMutableBufferPointer<UInt8>

    public init(info: LibcameraInfo, picture: GrayImage, script: [Step], clock: ManualClock) {
        self.info = info
        self.picture = picture
        self.script = script
        self.clock = clock
        buffer = .allocate(capacity: picture.pixels.count)
        _ = buffer.initialize(from: picture.pixels)
    }

    deinit { buffer.deallocate() }

    public func open(camera: String, width: Int, height: Int, fps: Double) throws -> (LibcameraHandle, LibcameraInfo) {
        opens += 1
        started = false
        if let openFailure { throw CameraError(openFailure) }
        return (LibcameraHandle(raw: nil), info)
    }

    public func start(_ handle: LibcameraHandle, controls: [LibcameraControlSetting]) throws {
        try check(controls)
        if let startFailure { throw CameraError(startFailure) }
        starts.append(controls)
        started = true
    }

    public func setControls(_ handle: LibcameraHandle, _ controls: [LibcameraControlSetting]) throws {
        try check(controls)
        requestControls.append(controls)
    }

    /// The plugin's refusal of a control the camera lacks, named.
    private func check(_ controls: [LibcameraControlSetting]) throws {
        for c in controls where !info.controls.contains(where: { $0.name == c.name }) {
            throw CameraError("libcamera: the camera has no control \(c.name)")
        }
    }

    public func setCrop(_ handle: LibcameraHandle, _ crop: PixelRect) throws { crops.append(crop) }

    public func next(_ handle: LibcameraHandle, timeoutMs: Int) throws -> LibcameraFrame? {
        guard started else { throw CameraError("libcamera: the camera is not started") }
        while case .lens(let reading)? = script.first {
            lens = reading
            script.removeFirst()
        }
        guard let step = script.first else {
            clock.advance(byMs: timeoutMs)
            return nil
        }
        switch step {
        case .frames(let n):
            if n <= 1 { script.removeFirst() } else { script[0] = .frames(n - 1) }
            clock.advance(byMs: 33)
            let luma = LumaPlane(base: UnsafePointer(buffer.baseAddress!), width: picture.width, height: picture.height,
                                 rowStride: picture.width)
            return LibcameraFrame(luma: luma, timestampNs: clock.nowNs, light: light, crop: crops.last ?? defaultCrop, lens: lens)
        case .silence(let n):
            if n <= 1 { script.removeFirst() } else { script[0] = .silence(n - 1) }
            clock.advance(byMs: timeoutMs)
            return nil
        case .fail(let message):
            script.removeFirst()
            throw CameraError(message)
        case .lens:
            fatalError("consumed above")
        }
    }

    public func close(_ handle: LibcameraHandle, stalled: Bool) -> Bool {
        closes.append(stalled)
        started = false
        return stalled && abandonsWhenStalled
    }
}
