// SPDX-License-Identifier: Apache-2.0
import CV4L2
import Glibc
import Platform
import Policy

/// A V4L2 pixel format code from its four characters ("YUYV").
public func fourcc(_ code: String) -> UInt32 {
    let c = Array(code.utf8) + [UInt8](repeating: 0x20, count: 4)
    return kiosk_v4l2_fourcc(c[0], c[1], c[2], c[3])
}

/// The four characters of a V4L2 pixel format code, for messages and the `camera_open` event.
public func fourccString(_ code: UInt32) -> String {
    let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
    return String(decoding: bytes, as: UTF8.self)
}

/// The pixel formats whose luma plane the kiosk reads straight out of the mapped buffer.
public enum V4L2LumaFormat: String, CaseIterable {
    case grey = "GREY"  // 8-bit greyscale: the frame is all luma
    case yuyv = "YUYV"  // packed 4:2:2: Y U Y V, luma every second byte
    case nv12 = "NV12"  // planar 4:2:0: the luma plane first, then interleaved CbCr
    case yu12 = "YU12"  // planar 4:2:0 (YUV420): the luma plane first, then Cb, then Cr

    public var fourcc: UInt32 { Camera.fourcc(rawValue) }

    /// Bytes from one luma sample to the next in a row.
    public var lumaPixelStride: Int { self == .yuyv ? 2 : 1 }
}

/// The outcome of format negotiation: what to ask S_FMT for.
public struct PixelFormatChoice: Equatable {
    public var format: V4L2LumaFormat
    /// libv4l2 produces this format in software from another (MJPG, usually): costs CPU.
    public var convertedByLibv4l: Bool

    public init(format: V4L2LumaFormat, convertedByLibv4l: Bool) {
        self.format = format
        self.convertedByLibv4l = convertedByLibv4l
    }
}

/// Picks the format to ask for from what VIDIOC_ENUM_FMT listed (libv4l2 lists its conversions
/// as emulated entries). Formats the sensor gives directly come before conversions, because
/// converting costs CPU the decoder needs; among them GREY, YUYV, NV12, YU12 in that order.
public func choosePixelFormat(requested: RequestedPixelFormat,
                              offered: [V4L2FormatDescription]) throws -> PixelFormatChoice {
    func entry(_ format: V4L2LumaFormat) -> V4L2FormatDescription? {
        // A native entry wins over an emulated one of the same code.
        let matching = offered.filter { $0.pixelFormat == format.fourcc }
        return matching.first { !$0.isEmulated } ?? matching.first
    }
    func choice(_ format: V4L2LumaFormat) -> PixelFormatChoice? {
        entry(format).map { PixelFormatChoice(format: format, convertedByLibv4l: $0.isEmulated) }
    }
    let offeredList = offered.isEmpty ? "nothing"
        : offered.map { fourccString($0.pixelFormat) + ($0.isEmulated ? " (converted by libv4l)" : "") }
            .joined(separator: ", ")

    switch requested {
    case .auto:
        let preference = V4L2LumaFormat.allCases
        for format in preference {
            if let e = entry(format), !e.isEmulated { return PixelFormatChoice(format: format, convertedByLibv4l: false) }
        }
        for format in preference {
            if let found = choice(format) { return found }
        }
        throw CameraError("the camera offers no format the kiosk can read luma from "
                          + "(GREY, YUYV, NV12, YU12, or MJPG through libv4l); it offers: \(offeredList)")
    case .mjpg:
        guard offered.contains(where: { $0.pixelFormat == fourcc("MJPG") && !$0.isEmulated }) else {
            throw CameraError("the camera does not offer MJPG; it offers: \(offeredList)")
        }
        guard let found = choice(.yu12) else {
            throw CameraError("MJPG needs libv4l's conversion to YU12, which the camera does not list; "
                              + "it offers: \(offeredList)")
        }
        return found
    case .grey, .yuyv, .nv12, .yu12:
        let format = V4L2LumaFormat(rawValue: requested.rawValue)!
        guard let found = choice(format) else {
            throw CameraError("the camera does not offer \(format.rawValue); it offers: \(offeredList)")
        }
        return found
    }
}

/// A camera read through V4L2 (libv4l2 by default): memory-mapped streaming, one frame lent at a time.
public final class V4L2Camera: FrameSource {
    public let devicePath: String
    public let requestedWidth: Int
    public let requestedHeight: Int
    /// Frames per second to ask for; 0 or less leaves the driver's rate alone.
    public let requestedFps: Double
    public let requestedFormat: RequestedPixelFormat
    /// Focus, exposure and the mains filter to set at open (`V4L2CameraControls`).
    public let settings: CameraSettings
    /// What `open` set and what the camera lacks (the `camera_controls` event).
    public private(set) var controls: CameraControlReport?

    /// What was negotiated, while open. `fps` is 0 when the driver does not say.
    public private(set) var description: CameraDescription?
    /// The negotiated pixel format, while open.
    public private(set) var pixelFormat: PixelFormatChoice?
    /// Buffers dropped since `open` because the driver flagged them or they were too short for a frame.
    public private(set) var skippedFrames = 0

    /// Fewer buffers than this and the sensor stalls while the decoder holds one.
    public static let minimumBuffers = 3
    public static let buffersToRequest = 4

    private let v4l2: V4L2Device
    private var fd: Int32?
    private var exposureRange: V4L2ControlRange?
    private var gainRange: V4L2ControlRange?
    private var exposureReadNs: UInt64?
    private var lastExposure: CameraExposure?
    /// The control settings applied at open, read back after the stream started.
    private var appliedControls: [V4L2ControlSetting] = []
    /// Whether the first frame's read-back of the controls is still to do.
    private var readBackAtFirstFrame = false
    private var hasFocusAbsolute = false
    private var lensReadNs: UInt64?
    private var lastLens: LensReading?
    private var streaming = false
    private var buffersRequested = false
    private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    /// The buffer whose frame the caller holds; requeued at the start of the next `nextFrame`.
    private var lentIndex: Int?
    private var sequence: UInt64 = 0
    // Luma geometry of every frame, fixed at open.
    private var width = 0
    private var height = 0
    private var rowStride = 0
    private var pixelStride = 1
    /// Bytes a buffer must hold for the whole luma plane.
    private var lumaBytes = 0

    public init(device: String, width: Int, height: Int, fps: Double,
                format: RequestedPixelFormat = .auto, settings: CameraSettings = CameraSettings(),
                v4l2: V4L2Device = LibV4L2Device()) {
        self.devicePath = device
        self.settings = settings
        self.requestedWidth = width
        self.requestedHeight = height
        self.requestedFps = fps
        self.requestedFormat = format
        self.v4l2 = v4l2
    }

    deinit { close() }

    public func open() throws -> CameraDescription {
        guard fd == nil else { throw CameraError("\(devicePath) is already open") }
        do {
            return try openSteps()
        } catch {
            // Half-way failures leave buffers mapped and the fd open: release them here.
            close()
            guard let error = error as? CameraError else { throw error }
            throw CameraError("\(devicePath): \(error.message)", errno: error.errno)
        }
    }

    private func openSteps() throws -> CameraDescription {
        let fd = try v4l2.open(path: devicePath)
        self.fd = fd
        skippedFrames = 0
        sequence = 0

        let caps = try v4l2.queryCapabilities(fd: fd)
        guard caps.canCaptureVideo else {
            let multiplanar = caps.deviceCaps & V4L2Capabilities.videoCaptureMultiplanar != 0
            throw CameraError("\(caps.card) (\(caps.driver)) is not a single-planar video capture device"
                              + (multiplanar ? " (multi-planar capture is not supported)" : ""))
        }
        guard caps.canStream else {
            throw CameraError("\(caps.card) (\(caps.driver)) cannot stream (no V4L2_CAP_STREAMING)")
        }

        let choice = try choosePixelFormat(requested: requestedFormat, offered: v4l2.enumerateFormats(fd: fd))
        let format = try v4l2.setFormat(fd: fd, V4L2PixFormat(width: requestedWidth, height: requestedHeight,
                                                               pixelFormat: choice.format.fourcc))
        // Drivers may swap in another format instead of failing; luma would then be read wrongly.
        guard format.pixelFormat == choice.format.fourcc else {
            throw CameraError("asked for \(choice.format.rawValue), the driver set \(fourccString(format.pixelFormat))")
        }
        guard format.width > 0, format.height > 0 else {
            throw CameraError("the driver set an empty size \(format.width)x\(format.height)")
        }
        pixelStride = choice.format.lumaPixelStride
        width = format.width
        height = format.height
        // bytesperline 0 would mean "no padding" from an old driver.
        rowStride = format.bytesPerLine > 0 ? format.bytesPerLine : width * pixelStride
        guard rowStride >= width * pixelStride else {
            throw CameraError("the driver's row stride \(rowStride) is shorter than a row of \(width) pixels")
        }
        lumaBytes = rowStride * height

        let fps = try negotiateFrameRate(fd: fd)
        // Which exposure controls the camera has: asked once, read about once a second later.
        exposureRange = try? v4l2.queryControl(fd: fd, id: V4L2Control.exposureAbsolute)
        gainRange = try? v4l2.queryControl(fd: fd, id: V4L2Control.gain)
        exposureReadNs = nil
        lastExposure = nil
        applyControls(fd: fd)

        let granted = try v4l2.requestBuffers(fd: fd, count: Self.buffersToRequest)
        buffersRequested = true
        guard granted >= Self.minimumBuffers else {
            throw CameraError("the driver granted \(granted) buffers, at least \(Self.minimumBuffers) are needed")
        }
        buffers.reserveCapacity(granted)
        for index in 0..<granted {
            let info = try v4l2.queryBuffer(fd: fd, index: index)
            let address = try v4l2.map(fd: fd, info)
            buffers.append((address, info.length))
            // A buffer shorter than the luma plane would let frames read past the mapping.
            guard info.length >= lumaBytes else {
                throw CameraError("buffer \(index) holds \(info.length) bytes, a \(width)x\(height) "
                                  + "luma plane needs \(lumaBytes)")
            }
        }
        for index in buffers.indices {
            try v4l2.queueBuffer(fd: fd, index: index)
        }
        try v4l2.streamOn(fd: fd)
        streaming = true
        // Some firmware (Logitech's) resets focus at stream start: what it changed is set again,
        // now and once more at the first frame.
        reapplyDriftedControls(fd: fd)
        readBackAtFirstFrame = true

        let description = CameraDescription(device: devicePath, format: choice.format.rawValue,
                                            width: width, height: height, fps: fps)
        self.description = description
        self.pixelFormat = choice
        return description
    }

    /// Asks for `requestedFps` when the driver allows it; returns the rate in force, 0 if unknown.
    private func negotiateFrameRate(fd: Int32) throws -> Double {
        let timing: V4L2StreamTiming
        do {
            timing = try v4l2.streamTiming(fd: fd)
        } catch let error as CameraError where error.errno == ENOTTY || error.errno == EINVAL {
            return 0  // The driver has no frame-rate control at all.
        }
        guard timing.canSetTimePerFrame, requestedFps > 0 else {
            return timing.timePerFrame.framesPerSecond ?? 0
        }
        // Whole rates as 1/fps; others (29.97) in thousandths.
        let perFrame = requestedFps == requestedFps.rounded()
            ? V4L2Fraction(numerator: 1, denominator: UInt32(clamping: Int(requestedFps)))
            : V4L2Fraction(numerator: 1000, denominator: UInt32(clamping: Int((requestedFps * 1000).rounded())))
        let got = try v4l2.setTimePerFrame(fd: fd, perFrame)
        return got.timePerFrame.framesPerSecond ?? 0
    }

    public func nextFrame(timeoutMs: Int) throws -> FrameWait {
        guard let fd else { throw CameraError("\(devicePath) is not open") }
        do {
            return try waitForFrame(fd: fd, timeoutMs: timeoutMs)
        } catch let error as CameraError where error.errno == EINTR || error.errno == EAGAIN {
            // Interrupted or not ready: nothing is wrong with the camera; the caller asks again.
            return .timedOut
        } catch let error as CameraError {
            throw CameraError("\(devicePath): \(error.message)", errno: error.errno)
        }
    }

    private func waitForFrame(fd: Int32, timeoutMs: Int) throws -> FrameWait {
        // The caller is done with the previous frame: give its buffer back to the driver.
        if let index = lentIndex {
            lentIndex = nil
            try v4l2.queueBuffer(fd: fd, index: index)
        }
        let deadline = timeoutMs >= 0 ? monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000 : nil
        while true {
            var wait = -1
            if let deadline {
                let now = monotonicNanoseconds()
                wait = now >= deadline ? 0 : Int((deadline - now + 999_999) / 1_000_000)
            }
            guard try v4l2.poll(fd: fd, timeoutMs: wait) else { return .timedOut }
            // EAGAIN after a wake-up: nothing filled after all; the caller asks again.
            guard let buffer = try v4l2.dequeueBuffer(fd: fd) else { return .timedOut }
            guard buffers.indices.contains(buffer.index) else {
                throw CameraError("the driver returned buffer \(buffer.index), only \(buffers.count) exist")
            }
            let dequeuedNs = monotonicNanoseconds()
            if buffer.hasError || buffer.bytesUsed < lumaBytes {
                skippedFrames += 1
                try v4l2.queueBuffer(fd: fd, index: buffer.index)
                continue
            }
            lentIndex = buffer.index
            if readBackAtFirstFrame {
                readBackAtFirstFrame = false
                reapplyDriftedControls(fd: fd)
            }
            let capturedNs = buffer.hasMonotonicTimestamp ? buffer.timestampNs : dequeuedNs
            let base = UnsafePointer(buffers[buffer.index].address.assumingMemoryBound(to: UInt8.self))
            let frame = Frame(luma: LumaPlane(base: base, width: width, height: height,
                                              rowStride: rowStride, pixelStride: pixelStride),
                              sequence: sequence, timestampNs: capturedNs, capturedNs: capturedNs)
            sequence += 1
            return .frame(frame)
        }
    }

    /// Exposure and gain as the camera reports them, read at most once a second (a control read is
    /// an ioctl; the frame loop asks every frame). Nil when the camera has no exposure control.
    public var exposure: CameraExposure? {
        guard let fd, exposureRange != nil else { return nil }
        let now = monotonicNanoseconds()
        if let read = exposureReadNs, now &- read < 1_000_000_000 { return lastExposure }
        exposureReadNs = now
        guard let value = try? v4l2.control(fd: fd, id: V4L2Control.exposureAbsolute), value > 0 else {
            lastExposure = nil
            return nil
        }
        var gain = 1.0
        if let g = gainRange, let v = try? v4l2.control(fd: fd, id: V4L2Control.gain) {
            // Gain units are the driver's own; relative to its default, offset so that 0 works.
            gain = Double(v - g.minimum + 1) / Double(max(1, g.defaultValue - g.minimum + 1))
        }
        lastExposure = CameraExposure(seconds: Double(value) * 100e-6, gain: gain)
        return lastExposure
    }

    /// Asks which of the planned controls the camera has, and sets the plan's settings in order,
    /// each its own VIDIOC_S_CTRL. A refusal is reported, never fatal: the camera still reads.
    private func applyControls(fd: Int32) {
        var offered: [V4L2CameraControl: V4L2ControlOffer] = [:]
        for control in V4L2CameraControl.allCases {
            guard let range = try? v4l2.queryControl(fd: fd, id: V4L2Control.id(control)) else { continue }
            offered[control] = V4L2ControlOffer(minimum: Int(range.minimum), maximum: Int(range.maximum),
                                                step: Int(range.step), defaultValue: Int(range.defaultValue))
        }
        hasFocusAbsolute = offered[.focusAbsolute] != nil
        lensReadNs = nil
        lastLens = nil
        let plan = V4L2CameraControls.plan(settings, offered: offered)
        var report = plan.report
        report.set = []
        appliedControls = []
        for setting in plan.settings {
            do {
                try v4l2.setControl(fd: fd, id: V4L2Control.id(setting.control), value: Int32(clamping: setting.value))
                appliedControls.append(setting)
                report.set.append(setting.description)
            } catch {
                report.refused.append("\(setting): \(error)")
            }
        }
        controls = report
    }

    /// Reads the applied controls back and sets again those the camera changed.
    private func reapplyDriftedControls(fd: Int32) {
        guard !appliedControls.isEmpty else { return }
        var readBack: [V4L2CameraControl: Int] = [:]
        for setting in appliedControls {
            if let v = try? v4l2.control(fd: fd, id: V4L2Control.id(setting.control)) { readBack[setting.control] = Int(v) }
        }
        for setting in V4L2CameraControls.drifted(appliedControls, readBack: readBack) {
            do {
                try v4l2.setControl(fd: fd, id: V4L2Control.id(setting.control), value: Int32(clamping: setting.value))
                controls?.reapplied.append(setting.description)
            } catch {
                controls?.refused.append("\(setting) (again after the stream started): \(error)")
            }
        }
    }

    /// The range of `focus_absolute`, when the open camera has one (`kiosk aim --sweep`).
    public var focusRange: V4L2ControlOffer? {
        guard let fd, hasFocusAbsolute, let r = try? v4l2.queryControl(fd: fd, id: V4L2Control.id(.focusAbsolute)) else { return nil }
        return V4L2ControlOffer(minimum: Int(r.minimum), maximum: Int(r.maximum), step: Int(r.step), defaultValue: Int(r.defaultValue))
    }

    /// Autofocus off (where there is one), then `focus_absolute` = `value` on the control's step;
    /// returns the value set. For `kiosk aim --sweep` while streaming.
    public func setFocusAbsolute(_ value: Int) throws -> Int {
        guard let fd, let range = focusRange else { throw CameraError("\(devicePath) has no focus_absolute") }
        let hasAuto = (try? v4l2.queryControl(fd: fd, id: V4L2Control.id(.focusAuto))) != nil
        if hasAuto { try v4l2.setControl(fd: fd, id: V4L2Control.id(.focusAuto), value: 0) }
        let v = range.clamp(value)
        try v4l2.setControl(fd: fd, id: V4L2Control.id(.focusAbsolute), value: Int32(v))
        lensReadNs = nil
        // This is the focus in force now: the read-back at the first frame must not put the
        // open's autofocus back (found by the VM's UVC gadget: the sweep's first step stayed sharp).
        appliedControls.removeAll { $0.control == .focusAuto || $0.control == .focusAbsolute }
        appliedControls.insert(contentsOf: (hasAuto ? [V4L2ControlSetting(.focusAuto, 0)] : []) + [V4L2ControlSetting(.focusAbsolute, v)], at: 0)
        return v
    }

    /// `focus_absolute` as the camera reports it, read at most once a second; nil without one.
    public var lens: LensReading? {
        guard let fd, hasFocusAbsolute else { return nil }
        let now = monotonicNanoseconds()
        if let read = lensReadNs, now &- read < 1_000_000_000 { return lastLens }
        lensReadNs = now
        lastLens = (try? v4l2.control(fd: fd, id: V4L2Control.id(.focusAbsolute))).map { LensReading(position: Double($0)) }
        return lastLens
    }

    public func close() {
        guard let fd else { return }
        // Errors are ignored from here on: the device may be gone (unplugged), and every later
        // step must still run so nothing stays mapped or open.
        if streaming { try? v4l2.streamOff(fd: fd) }
        streaming = false
        for buffer in buffers { try? v4l2.unmap(buffer.address, length: buffer.length) }
        buffers.removeAll()
        // Freeing the driver's buffers needs them unmapped first (else EBUSY).
        if buffersRequested { _ = try? v4l2.requestBuffers(fd: fd, count: 0) }
        buffersRequested = false
        try? v4l2.close(fd: fd)
        self.fd = nil
        lentIndex = nil
        description = nil
        pixelFormat = nil
    }
}
