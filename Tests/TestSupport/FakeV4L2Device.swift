// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc

/// An in-memory V4L2 driver for the camera's tests. It keeps the rules a real driver enforces
/// (a buffer is queued at most once, REQBUFS 0 fails while buffers are mapped, DQBUF only while
/// streaming) and counts what a leak would show: open descriptors and live mappings. Its
/// descriptors are real (`/dev/null`) and its buffers real anonymous mappings, so a leak also
/// shows in `/proc/self/fd` and `/proc/self/maps`.
public final class FakeV4L2Device: V4L2Device {
    public enum Call: Hashable, CaseIterable {
        case open, close, queryCapabilities, enumerateFormats, setFormat, streamTiming, setTimePerFrame
        case requestBuffers, queryBuffer, map, unmap, queueBuffer, dequeueBuffer, streamOn, streamOff, poll
    }

    /// One frame the "sensor" will produce.
    public struct Delivery {
        public var bytes: [UInt8]
        public var flags: UInt32 = V4L2DequeuedBuffer.flagTimestampMonotonic
        public var timestampNs: UInt64 = 0
        /// What the driver reports as filled; `bytes.count` when nil.
        public var bytesUsed: Int? = nil

        public init(bytes: [UInt8], flags: UInt32 = V4L2DequeuedBuffer.flagTimestampMonotonic, timestampNs: UInt64 = 0,
                    bytesUsed: Int? = nil) {
            self.bytes = bytes
            self.flags = flags
            self.timestampNs = timestampNs
            self.bytesUsed = bytesUsed
        }
    }

    public init() {}

    // MARK: What the fake driver offers

    public var capabilities = V4L2Capabilities(driver: "fake", card: "Fake Camera",
                                        deviceCaps: V4L2Capabilities.videoCapture | V4L2Capabilities.streaming)
    public var offered: [V4L2FormatDescription] = [V4L2FormatDescription(pixelFormat: fourcc("YUYV"))]
    /// The size the driver settles on for a requested size.
    public var adjustSize: (_ width: Int, _ height: Int) -> (Int, Int) = { ($0, $1) }
    /// Padding bytes the driver adds at the end of every row.
    public var rowPadding = 0
    /// When set, S_FMT silently sets this format instead of the one asked for (drivers do that).
    public var substituteFormat: UInt32?
    public var timing = V4L2StreamTiming(canSetTimePerFrame: true, timePerFrame: V4L2Fraction(numerator: 1, denominator: 30))
    /// The time per frame the driver settles on for a requested one.
    public var grantTimePerFrame: (V4L2Fraction) -> V4L2Fraction = { $0 }
    public var buffersGranted = 4
    /// A buffer length other than the format's sizeimage.
    public var bufferLength: Int?
    /// Frames the sensor produces, in order; one is taken by each DQBUF.
    public var deliveries: [Delivery] = []
    /// poll says "ready" even when no frame is there (DQBUF then says EAGAIN).
    public var wakeWithoutFrame = false

    /// Controls the fake camera has (V4L2_CID_* to range and current value).
    public var controls: [UInt32: (range: V4L2ControlRange, value: Int32)] = [:]

    // MARK: Fault injection

    private var faults: [Call: [Int: Int32]] = [:]

    /// Makes the `nth` call (1-based) of `call` fail with `errno`; several calls may be set to fail.
    public func fail(_ call: Call, errno: Int32, onCall nth: Int = 1) {
        faults[call, default: [:]][nth] = errno
    }

    // MARK: What can be observed

    public private(set) var callCounts: [Call: Int] = [:]
    public private(set) var openFds: Set<Int32> = []
    public private(set) var closes = 0
    /// Every mistake the camera made against the driver's rules (double queue, unknown unmap, ...).
    public private(set) var misuses: [String] = []
    public private(set) var format: V4L2PixFormat?
    public private(set) var requestedFormat: V4L2PixFormat?
    public private(set) var requestedTimePerFrame: V4L2Fraction?
    public private(set) var allocatedBuffers = 0
    public private(set) var streaming = false
    /// Buffers the driver holds, in the order it will fill them.
    public private(set) var queued: [Int] = []
    /// Every QBUF, in order.
    public private(set) var queueLog: [Int] = []
    /// Every buffer DQBUF handed back, in order.
    public private(set) var dequeueLog: [Int] = []
    public private(set) var pollTimeouts: [Int] = []
    private var mappings: [UnsafeMutableRawPointer: (index: Int, length: Int)] = [:]

    public var openMappings: Int { mappings.count }

    public func calls(_ call: Call) -> Int { callCounts[call, default: 0] }

    deinit {
        for address in mappings.keys { address.deallocate() }
    }

    private func enter(_ call: Call) throws {
        callCounts[call, default: 0] += 1
        if let errno = faults[call]?[callCounts[call]!] {
            throw CameraError("fake \(call)", errno: errno)
        }
    }

    private func checkFd(_ fd: Int32, _ call: Call) throws {
        guard openFds.contains(fd) else {
            misuses.append("\(call) on fd \(fd), which is not open")
            throw CameraError("fake \(call)", errno: EBADF)
        }
    }

    private func misuse(_ what: String, errno: Int32 = EINVAL) -> CameraError {
        misuses.append(what)
        return CameraError("fake: \(what)", errno: errno)
    }

    // MARK: V4L2Device

    public func open(path: String) throws -> Int32 {
        try enter(.open)
        let fd = Glibc.open("/dev/null", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw CameraError("fake open", errno: errno) }
        openFds.insert(fd)
        return fd
    }

    public func close(fd: Int32) throws {
        try checkFd(fd, .close)
        openFds.remove(fd)
        Glibc.close(fd)
        closes += 1
        try enter(.close)  // Like Linux: the descriptor is gone even when close reports an error.
    }

    public func queryCapabilities(fd: Int32) throws -> V4L2Capabilities {
        try checkFd(fd, .queryCapabilities)
        try enter(.queryCapabilities)
        return capabilities
    }

    public func enumerateFormats(fd: Int32) throws -> [V4L2FormatDescription] {
        try checkFd(fd, .enumerateFormats)
        try enter(.enumerateFormats)
        return offered
    }

    public func setFormat(fd: Int32, _ requested: V4L2PixFormat) throws -> V4L2PixFormat {
        try checkFd(fd, .setFormat)
        try enter(.setFormat)
        if allocatedBuffers > 0 { throw misuse("S_FMT with buffers allocated", errno: EBUSY) }
        requestedFormat = requested
        let code = substituteFormat ?? requested.pixelFormat
        let (width, height) = adjustSize(requested.width, requested.height)
        let lumaBytesPerPixel = code == fourcc("YUYV") ? 2 : 1
        let stride = width * lumaBytesPerPixel + rowPadding
        let planar420 = code == fourcc("NV12") || code == fourcc("YU12")
        let size = planar420 ? stride * height * 3 / 2 : stride * height
        let set = V4L2PixFormat(width: width, height: height, pixelFormat: code, bytesPerLine: stride, sizeImage: size)
        format = set
        return set
    }

    public func streamTiming(fd: Int32) throws -> V4L2StreamTiming {
        try checkFd(fd, .streamTiming)
        try enter(.streamTiming)
        return timing
    }

    public func setTimePerFrame(fd: Int32, _ timePerFrame: V4L2Fraction) throws -> V4L2StreamTiming {
        try checkFd(fd, .setTimePerFrame)
        try enter(.setTimePerFrame)
        guard timing.canSetTimePerFrame else { throw misuse("S_PARM without V4L2_CAP_TIMEPERFRAME") }
        requestedTimePerFrame = timePerFrame
        timing.timePerFrame = grantTimePerFrame(timePerFrame)
        return timing
    }

    public func requestBuffers(fd: Int32, count: Int) throws -> Int {
        try checkFd(fd, .requestBuffers)
        try enter(.requestBuffers)
        if streaming { throw misuse("REQBUFS while streaming", errno: EBUSY) }
        if !mappings.isEmpty { throw misuse("REQBUFS with buffers still mapped", errno: EBUSY) }
        allocatedBuffers = count == 0 ? 0 : buffersGranted
        queued = []
        return allocatedBuffers
    }

    public func queryBuffer(fd: Int32, index: Int) throws -> V4L2MappableBuffer {
        try checkFd(fd, .queryBuffer)
        try enter(.queryBuffer)
        guard index < allocatedBuffers, let format else { throw misuse("QUERYBUF of buffer \(index)") }
        return V4L2MappableBuffer(index: index, length: bufferLength ?? format.sizeImage, offset: Int64(index) << 20)
    }

    public func map(fd: Int32, _ buffer: V4L2MappableBuffer) throws -> UnsafeMutableRawPointer {
        try checkFd(fd, .map)
        try enter(.map)
        guard buffer.index < allocatedBuffers, buffer.offset == Int64(buffer.index) << 20 else {
            throw misuse("mmap of unknown buffer \(buffer.index)")
        }
        guard let address = mmap(nil, buffer.length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              address != MAP_FAILED else { throw CameraError("fake mmap", errno: errno) }
        address.initializeMemory(as: UInt8.self, repeating: 0xEE, count: buffer.length)
        mappings[address] = (buffer.index, buffer.length)
        return address
    }

    public func unmap(_ address: UnsafeMutableRawPointer, length: Int) throws {
        try enter(.unmap)
        guard let mapping = mappings[address], mapping.length == length else {
            throw misuse("munmap of something not mapped")
        }
        mappings[address] = nil
        munmap(address, length)
    }

    public func queueBuffer(fd: Int32, index: Int) throws {
        try checkFd(fd, .queueBuffer)
        try enter(.queueBuffer)
        guard index < allocatedBuffers else { throw misuse("QBUF of buffer \(index), not allocated") }
        guard !queued.contains(index) else { throw misuse("QBUF of buffer \(index), already queued") }
        queued.append(index)
        queueLog.append(index)
    }

    public func dequeueBuffer(fd: Int32) throws -> V4L2DequeuedBuffer? {
        try checkFd(fd, .dequeueBuffer)
        try enter(.dequeueBuffer)
        guard streaming else { throw misuse("DQBUF while not streaming") }
        guard !queued.isEmpty, !deliveries.isEmpty else { return nil }  // EAGAIN
        let index = queued.removeFirst()
        let delivery = deliveries.removeFirst()
        let (address, mapping) = mappings.first { $0.value.index == index }!
        delivery.bytes.withUnsafeBytes { bytes in
            address.copyMemory(from: bytes.baseAddress!, byteCount: min(bytes.count, mapping.length))
        }
        dequeueLog.append(index)
        return V4L2DequeuedBuffer(index: index, bytesUsed: delivery.bytesUsed ?? delivery.bytes.count,
                                  flags: delivery.flags, timestampNs: delivery.timestampNs,
                                  sequence: UInt32(dequeueLog.count - 1))
    }

    public func streamOn(fd: Int32) throws {
        try checkFd(fd, .streamOn)
        try enter(.streamOn)
        guard allocatedBuffers > 0 else { throw misuse("STREAMON without buffers") }
        streaming = true
        onStreamOn(self)
    }

    public func streamOff(fd: Int32) throws {
        try checkFd(fd, .streamOff)
        // STREAMOFF hands every buffer back to the application, even when it reports an error
        // (ENODEV from an unplugged camera).
        streaming = false
        queued = []
        try enter(.streamOff)
    }

    public func queryControl(fd: Int32, id: UInt32) throws -> V4L2ControlRange? {
        try checkFd(fd, .poll)
        return controls[id]?.range
    }

    public func control(fd: Int32, id: UInt32) throws -> Int32 {
        try checkFd(fd, .poll)
        guard let c = controls[id] else { throw CameraError("fake VIDIOC_G_CTRL", errno: EINVAL) }
        return c.value
    }

    /// Every VIDIOC_S_CTRL, in order: (id, value).
    public private(set) var controlsSet: [(id: UInt32, value: Int32)] = []
    /// Refuses a VIDIOC_S_CTRL (errno) when it returns one: a camera's own rules.
    public var refuseControl: (_ id: UInt32, _ value: Int32, _ controls: [UInt32: (range: V4L2ControlRange, value: Int32)]) -> Int32? = { _, _, _ in nil }
    /// Called at VIDIOC_STREAMON: firmware that resets controls at stream start.
    public var onStreamOn: (FakeV4L2Device) -> Void = { _ in }

    public func setControl(fd: Int32, id: UInt32, value: Int32) throws {
        try checkFd(fd, .poll)
        guard let c = controls[id] else { throw CameraError("fake VIDIOC_S_CTRL", errno: EINVAL) }
        if let errno = refuseControl(id, value, controls) { throw CameraError("fake VIDIOC_S_CTRL", errno: errno) }
        guard value >= c.range.minimum && value <= c.range.maximum else { throw CameraError("fake VIDIOC_S_CTRL", errno: ERANGE) }
        controlsSet.append((id, value))
        controls[id]!.value = value
    }

    public func poll(fd: Int32, timeoutMs: Int) throws -> Bool {
        try checkFd(fd, .poll)
        try enter(.poll)
        pollTimeouts.append(timeoutMs)
        // A fake never waits: either something is ready now or the timeout "passes".
        return streaming && !queued.isEmpty && (!deliveries.isEmpty || wakeWithoutFrame)
    }
}
