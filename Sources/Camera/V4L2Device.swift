// SPDX-License-Identifier: Apache-2.0
import CV4L2
import Glibc
import Platform
import Policy

// The V4L2 calls the camera needs, one function per ioctl, as Swift values. Every failure is a
// `CameraError` carrying errno; nothing returns -1 upward. EINTR is retried here so the camera
// never sees it. `V4L2Camera` decides what to do; this layer only translates.
//
// Only single-planar video capture with memory-mapped buffers is covered: that is what the
// camera uses (USB UVC cameras, and the Pi's CSI camera through libcamerify).

/// What VIDIOC_QUERYCAP says about a device node.
public struct V4L2Capabilities: Equatable {
    public var driver: String
    public var card: String
    /// The capabilities of this node: `device_caps` when the driver fills it in, else `capabilities`.
    public var deviceCaps: UInt32

    public static let videoCapture = UInt32(V4L2_CAP_VIDEO_CAPTURE)
    public static let videoCaptureMultiplanar = UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE)
    public static let streaming = UInt32(V4L2_CAP_STREAMING)

    public init(driver: String, card: String, deviceCaps: UInt32) {
        self.driver = driver
        self.card = card
        self.deviceCaps = deviceCaps
    }

    public var canCaptureVideo: Bool { deviceCaps & Self.videoCapture != 0 }
    public var canStream: Bool { deviceCaps & Self.streaming != 0 }
}

/// One entry of VIDIOC_ENUM_FMT.
public struct V4L2FormatDescription: Equatable {
    public var pixelFormat: UInt32
    public var description: String
    /// libv4l2 converts to this format in software (V4L2_FMT_FLAG_EMULATED); the sensor does not give it.
    public var isEmulated: Bool

    public init(pixelFormat: UInt32, description: String = "", isEmulated: Bool = false) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.isEmulated = isEmulated
    }
}

/// The single-planar capture format (the parts of `v4l2_pix_format` the camera uses).
public struct V4L2PixFormat: Equatable {
    public var width: Int
    public var height: Int
    public var pixelFormat: UInt32
    /// Bytes from one row to the next of the first plane; 0 in a request (the driver decides).
    public var bytesPerLine: Int
    /// Bytes a whole frame needs; 0 in a request.
    public var sizeImage: Int

    public init(width: Int, height: Int, pixelFormat: UInt32, bytesPerLine: Int = 0, sizeImage: Int = 0) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerLine = bytesPerLine
        self.sizeImage = sizeImage
    }
}

/// A time per frame in seconds, as V4L2 states frame rates.
public struct V4L2Fraction: Equatable {
    public var numerator: UInt32
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Frames per second for a time per frame; nil when the driver left it unset (0/0).
    public var framesPerSecond: Double? {
        guard numerator > 0, denominator > 0 else { return nil }
        return Double(denominator) / Double(numerator)
    }
}

/// The capture parts of VIDIOC_G_PARM / S_PARM.
public struct V4L2StreamTiming: Equatable {
    /// V4L2_CAP_TIMEPERFRAME: the driver lets the application choose the frame rate.
    public var canSetTimePerFrame: Bool
    public var timePerFrame: V4L2Fraction

    public init(canSetTimePerFrame: Bool, timePerFrame: V4L2Fraction) {
        self.canSetTimePerFrame = canSetTimePerFrame
        self.timePerFrame = timePerFrame
    }
}

/// What VIDIOC_QUERYBUF says about one memory-mapped buffer.
public struct V4L2MappableBuffer: Equatable {
    public var index: Int
    public var length: Int
    /// The offset to pass to mmap.
    public var offset: Int64

    public init(index: Int, length: Int, offset: Int64) {
        self.index = index
        self.length = length
        self.offset = offset
    }
}

/// A buffer VIDIOC_DQBUF handed back, filled by the driver.
public struct V4L2DequeuedBuffer: Equatable {
    public var index: Int
    public var bytesUsed: Int
    public var flags: UInt32
    /// The driver's timestamp in nanoseconds; which clock it is on is in `flags`.
    public var timestampNs: UInt64
    /// The driver's frame counter (counts dropped frames too).
    public var sequence: UInt32

    public static let flagError = UInt32(V4L2_BUF_FLAG_ERROR)
    public static let flagTimestampMask = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK)
    public static let flagTimestampMonotonic = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)

    public init(index: Int, bytesUsed: Int, flags: UInt32, timestampNs: UInt64, sequence: UInt32) {
        self.index = index
        self.bytesUsed = bytesUsed
        self.flags = flags
        self.timestampNs = timestampNs
        self.sequence = sequence
    }

    /// The driver says the data may be corrupt (V4L2_BUF_FLAG_ERROR).
    public var hasError: Bool { flags & Self.flagError != 0 }
    /// The timestamp is on CLOCK_MONOTONIC, the clock `monotonicNanoseconds()` reads.
    public var hasMonotonicTimestamp: Bool { flags & Self.flagTimestampMask == Self.flagTimestampMonotonic }
}

/// The ioctl-level operations on a V4L2 capture device. File descriptors are passed explicitly,
/// like the system calls they stand for; all buffers are single-planar, memory-mapped capture
/// buffers.
public protocol V4L2Device: AnyObject {
    /// Opens the node for reading and writing, non-blocking (so DQBUF never waits: `poll` does).
    func open(path: String) throws -> Int32
    func close(fd: Int32) throws
    /// VIDIOC_QUERYCAP.
    func queryCapabilities(fd: Int32) throws -> V4L2Capabilities
    /// VIDIOC_ENUM_FMT for video capture, every index until the driver says EINVAL.
    func enumerateFormats(fd: Int32) throws -> [V4L2FormatDescription]
    /// VIDIOC_S_FMT; returns the format the driver actually set (it adjusts sizes).
    func setFormat(fd: Int32, _ format: V4L2PixFormat) throws -> V4L2PixFormat
    /// VIDIOC_G_PARM for video capture.
    func streamTiming(fd: Int32) throws -> V4L2StreamTiming
    /// VIDIOC_S_PARM with a time per frame; returns what the driver set.
    func setTimePerFrame(fd: Int32, _ timePerFrame: V4L2Fraction) throws -> V4L2StreamTiming
    /// VIDIOC_REQBUFS with memory-mapped buffers; returns how many the driver granted. 0 frees them.
    func requestBuffers(fd: Int32, count: Int) throws -> Int
    /// VIDIOC_QUERYBUF.
    func queryBuffer(fd: Int32, index: Int) throws -> V4L2MappableBuffer
    /// mmap of a queried buffer, shared and read-write.
    func map(fd: Int32, _ buffer: V4L2MappableBuffer) throws -> UnsafeMutableRawPointer
    func unmap(_ address: UnsafeMutableRawPointer, length: Int) throws
    /// VIDIOC_QBUF of a memory-mapped buffer.
    func queueBuffer(fd: Int32, index: Int) throws
    /// VIDIOC_DQBUF; nil when no filled buffer is ready (EAGAIN).
    func dequeueBuffer(fd: Int32) throws -> V4L2DequeuedBuffer?
    /// VIDIOC_STREAMON / VIDIOC_STREAMOFF for video capture.
    func streamOn(fd: Int32) throws
    func streamOff(fd: Int32) throws
    /// Waits up to `timeoutMs` (negative: no limit) until the device has something to say.
    /// True when it does (a filled buffer, or an error DQBUF will report); false on timeout.
    func poll(fd: Int32, timeoutMs: Int) throws -> Bool
    /// VIDIOC_QUERYCTRL: the control's range and default, or nil when the device has no such
    /// control (EINVAL) or it is disabled.
    func queryControl(fd: Int32, id: UInt32) throws -> V4L2ControlRange?
    /// VIDIOC_G_CTRL: the control's current value.
    func control(fd: Int32, id: UInt32) throws -> Int32
    /// VIDIOC_S_CTRL.
    func setControl(fd: Int32, id: UInt32, value: Int32) throws
}

public struct V4L2ControlRange: Equatable {
    public var minimum: Int32
    public var maximum: Int32
    public var defaultValue: Int32
    public var step: Int32
    public init(minimum: Int32, maximum: Int32, defaultValue: Int32, step: Int32 = 1) {
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.step = step
    }
}

/// The controls the brightness estimate reads (videodev2.h / v4l2-controls.h).
public enum V4L2Control {
    /// V4L2_CID_EXPOSURE_ABSOLUTE, in units of 100 microseconds.
    public static let exposureAbsolute: UInt32 = KIOSK_V4L2_CID_EXPOSURE_ABSOLUTE
    /// V4L2_CID_GAIN.
    public static let gain: UInt32 = KIOSK_V4L2_CID_GAIN

    /// The kernel's id of each control `V4L2CameraControls` plans with.
    public static func id(_ control: V4L2CameraControl) -> UInt32 {
        switch control {
        case .focusAuto: return KIOSK_V4L2_CID_FOCUS_AUTO
        case .focusAbsolute: return KIOSK_V4L2_CID_FOCUS_ABSOLUTE
        case .autoFocusRange: return KIOSK_V4L2_CID_AUTO_FOCUS_RANGE
        case .exposureAutoPriority: return KIOSK_V4L2_CID_EXPOSURE_AUTO_PRIORITY
        case .backlightCompensation: return KIOSK_V4L2_CID_BACKLIGHT_COMPENSATION
        case .powerLineFrequency: return KIOSK_V4L2_CID_POWER_LINE_FREQUENCY
        }
    }
}

/// Runs a C call until it does not fail with EINTR (a signal arrived; the call did nothing).
/// Any other failure becomes a `CameraError` naming `what` and carrying errno.
@discardableResult
func retryingInterrupts(_ what: @autoclosure () -> String, _ call: () -> Int32) throws -> Int32 {
    do throws(Errno) { return try Syscall.retryingEINTR(call) } catch { throw CameraError(what(), errno: error) }
}

/// The real device: V4L2 through libv4l2, which converts formats the sensor does not give
/// (MJPG to YU12, for one) and lists those conversions in ENUM_FMT.
public final class LibV4L2Device: V4L2Device {
    public init() {}

    public func open(path: String) throws -> Int32 {
        try retryingInterrupts("cannot open \(path)") { kiosk_v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
    }

    public func close(fd: Int32) throws {
        // Not retried on EINTR: Linux releases the descriptor even then, and a retry could close
        // a descriptor another thread has just been given.
        if kiosk_v4l2_close(fd) == -1 { throw CameraError("close", errno: errno) }
    }

    private func ioctl<T>(_ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String, _ arg: inout T) throws {
        try withUnsafeMutablePointer(to: &arg) { pointer in
            _ = try retryingInterrupts(name()) { kiosk_v4l2_ioctl(fd, request, pointer) }
        }
    }

    public func queryCapabilities(fd: Int32) throws -> V4L2Capabilities {
        var cap = v4l2_capability()
        try ioctl(fd, KIOSK_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", &cap)
        let hasDeviceCaps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
        return V4L2Capabilities(driver: String(cField: cap.driver), card: String(cField: cap.card),
                                deviceCaps: hasDeviceCaps ? cap.device_caps : cap.capabilities)
    }

    public func enumerateFormats(fd: Int32) throws -> [V4L2FormatDescription] {
        var formats: [V4L2FormatDescription] = []
        // Bounded so a broken driver cannot keep us here.
        for index in 0..<256 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            do {
                try ioctl(fd, KIOSK_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &desc)
            } catch let error as CameraError where error.errno == EINVAL {
                break  // EINVAL past the last index is how the list ends.
            }
            formats.append(V4L2FormatDescription(pixelFormat: desc.pixelformat,
                                                 description: String(cField: desc.description),
                                                 isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
        }
        return formats
    }

    public func setFormat(fd: Int32, _ format: V4L2PixFormat) throws -> V4L2PixFormat {
        var f = v4l2_format()
        f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        f.fmt.pix.width = UInt32(clamping: format.width)
        f.fmt.pix.height = UInt32(clamping: format.height)
        f.fmt.pix.pixelformat = format.pixelFormat
        f.fmt.pix.field = V4L2_FIELD_ANY.rawValue
        f.fmt.pix.bytesperline = UInt32(clamping: format.bytesPerLine)
        f.fmt.pix.sizeimage = UInt32(clamping: format.sizeImage)
        try ioctl(fd, KIOSK_VIDIOC_S_FMT, "VIDIOC_S_FMT", &f)
        return V4L2PixFormat(width: Int(f.fmt.pix.width), height: Int(f.fmt.pix.height),
                             pixelFormat: f.fmt.pix.pixelformat, bytesPerLine: Int(f.fmt.pix.bytesperline),
                             sizeImage: Int(f.fmt.pix.sizeimage))
    }

    public func streamTiming(fd: Int32) throws -> V4L2StreamTiming {
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try ioctl(fd, KIOSK_VIDIOC_G_PARM, "VIDIOC_G_PARM", &parm)
        return timing(parm.parm.capture)
    }

    public func setTimePerFrame(fd: Int32, _ timePerFrame: V4L2Fraction) throws -> V4L2StreamTiming {
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        parm.parm.capture.timeperframe = v4l2_fract(numerator: timePerFrame.numerator,
                                                    denominator: timePerFrame.denominator)
        try ioctl(fd, KIOSK_VIDIOC_S_PARM, "VIDIOC_S_PARM", &parm)
        return timing(parm.parm.capture)
    }

    private func timing(_ capture: v4l2_captureparm) -> V4L2StreamTiming {
        V4L2StreamTiming(canSetTimePerFrame: capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0,
                         timePerFrame: V4L2Fraction(numerator: capture.timeperframe.numerator,
                                                    denominator: capture.timeperframe.denominator))
    }

    public func requestBuffers(fd: Int32, count: Int) throws -> Int {
        var req = v4l2_requestbuffers()
        req.count = UInt32(clamping: count)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(fd, KIOSK_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &req)
        return Int(req.count)
    }

    private func captureBuffer(index: Int) -> v4l2_buffer {
        var buf = v4l2_buffer()
        buf.index = UInt32(clamping: index)
        buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buf.memory = V4L2_MEMORY_MMAP.rawValue
        return buf
    }

    public func queryBuffer(fd: Int32, index: Int) throws -> V4L2MappableBuffer {
        var buf = captureBuffer(index: index)
        try ioctl(fd, KIOSK_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buf)
        return V4L2MappableBuffer(index: Int(buf.index), length: Int(buf.length), offset: Int64(buf.m.offset))
    }

    public func map(fd: Int32, _ buffer: V4L2MappableBuffer) throws -> UnsafeMutableRawPointer {
        let mapFailed = UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED, a macro Swift cannot see
        do throws(Errno) {
            let address = try Syscall.retryingEINTR(failingWith: mapFailed) {
                kiosk_v4l2_mmap(nil, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, buffer.offset)
            }
            guard let address else { throw Errno(EFAULT) }  // never NULL without MAP_FIXED
            return address
        } catch {
            throw CameraError("mmap of buffer \(buffer.index)", errno: error)
        }
    }

    public func unmap(_ address: UnsafeMutableRawPointer, length: Int) throws {
        try retryingInterrupts("munmap") { kiosk_v4l2_munmap(address, length) }
    }

    public func queueBuffer(fd: Int32, index: Int) throws {
        var buf = captureBuffer(index: index)
        try ioctl(fd, KIOSK_VIDIOC_QBUF, "VIDIOC_QBUF", &buf)
    }

    public func dequeueBuffer(fd: Int32) throws -> V4L2DequeuedBuffer? {
        var buf = captureBuffer(index: 0)
        // Done by hand rather than through `ioctl` so that EAGAIN, which can follow a poll
        // wake-up, costs no thrown error.
        do throws(Errno) {
            try Syscall.retryingEINTR { kiosk_v4l2_ioctl(fd, KIOSK_VIDIOC_DQBUF, &buf) }
        } catch {
            if error == EAGAIN { return nil }
            throw CameraError("VIDIOC_DQBUF", errno: error)
        }
        let ns = UInt64(buf.timestamp.tv_sec) * 1_000_000_000 + UInt64(buf.timestamp.tv_usec) * 1_000
        return V4L2DequeuedBuffer(index: Int(buf.index), bytesUsed: Int(buf.bytesused), flags: buf.flags,
                                  timestampNs: ns, sequence: buf.sequence)
    }

    public func streamOn(fd: Int32) throws {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl(fd, KIOSK_VIDIOC_STREAMON, "VIDIOC_STREAMON", &type)
    }

    public func streamOff(fd: Int32) throws {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl(fd, KIOSK_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type)
    }

    public func queryControl(fd: Int32, id: UInt32) throws -> V4L2ControlRange? {
        var query = v4l2_queryctrl()
        query.id = id
        do {
            try ioctl(fd, KIOSK_VIDIOC_QUERYCTRL, "VIDIOC_QUERYCTRL", &query)
        } catch let error as CameraError where error.errno == EINVAL {
            return nil
        }
        if query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 { return nil }
        return V4L2ControlRange(minimum: query.minimum, maximum: query.maximum, defaultValue: query.default_value,
                                step: Int32(clamping: query.step))
    }

    public func setControl(fd: Int32, id: UInt32, value: Int32) throws {
        var control = v4l2_control()
        control.id = id
        control.value = value
        try ioctl(fd, KIOSK_VIDIOC_S_CTRL, "VIDIOC_S_CTRL", &control)
    }

    public func control(fd: Int32, id: UInt32) throws -> Int32 {
        var value = v4l2_control()
        value.id = id
        try ioctl(fd, KIOSK_VIDIOC_G_CTRL, "VIDIOC_G_CTRL", &value)
        return value.value
    }

    public func poll(fd: Int32, timeoutMs: Int) throws -> Bool {
        // After EINTR, wait only for what is left of the timeout, not the whole of it again.
        let deadline = timeoutMs >= 0 ? monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000 : nil
        var wait = timeoutMs >= 0 ? Int32(clamping: timeoutMs) : -1
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready: Int32
        do throws(Errno) {
            ready = try Syscall.retryingEINTR {
                defer {
                    if let deadline {
                        let now = monotonicNanoseconds()
                        wait = now >= deadline ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
                    }
                }
                pfd.revents = 0
                return Glibc.poll(&pfd, 1, wait)
            }
        } catch {
            throw CameraError("poll", errno: error)
        }
        if ready == 0 { return false }
        if Int32(pfd.revents) & Int32(POLLNVAL) != 0 { throw CameraError("poll", errno: EBADF) }
        return true
    }
}
