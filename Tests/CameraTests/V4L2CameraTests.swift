// SPDX-License-Identifier: Apache-2.0
import Camera
import Platform
import Policy
import TestSupport
import Glibc
import XCTest

final class V4L2CameraTests: XCTestCase {
    private func camera(_ fake: FakeV4L2Device, width: Int = 8, height: Int = 4, fps: Double = 30,
                        format: RequestedPixelFormat = .auto) -> V4L2Camera {
        V4L2Camera(device: "/dev/video9", width: width, height: height, fps: fps, format: format, v4l2: fake)
    }

    private func fake(offering codes: [String] = ["YUYV"]) -> FakeV4L2Device {
        let fake = FakeV4L2Device()
        fake.offered = codes.map { V4L2FormatDescription(pixelFormat: fourcc($0)) }
        return fake
    }

    /// The luma value the test frames carry at (x, y), distinct per pixel and per frame.
    private func luma(_ x: Int, _ y: Int, frame: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: 16 + x + 10 * y + 50 * frame)
    }

    /// A frame's bytes in the layout the fake driver set: luma at pixelStride, chroma 0x80, padding 0xAA.
    private func frameBytes(_ fake: FakeV4L2Device, frame: Int) -> [UInt8] {
        let format = fake.format!
        let yuyv = format.pixelFormat == fourcc("YUYV")
        var bytes = [UInt8](repeating: 0x80, count: format.sizeImage)
        for y in 0..<format.height {
            for x in 0..<format.bytesPerLine {
                let pixel = yuyv ? x / 2 : x
                let isLuma = !yuyv || x % 2 == 0
                if pixel >= format.width {
                    bytes[y * format.bytesPerLine + x] = 0xAA
                } else if isLuma {
                    bytes[y * format.bytesPerLine + x] = luma(pixel, y, frame: frame)
                }
            }
        }
        return bytes
    }

    private func deliver(_ fake: FakeV4L2Device, frames: Int, from first: Int = 0) {
        for n in first..<(first + frames) {
            fake.deliveries.append(.init(bytes: frameBytes(fake, frame: n), timestampNs: 1_000_000 * UInt64(n + 1)))
        }
    }

    private func nextFrame(_ camera: V4L2Camera, file: StaticString = #filePath, line: UInt = #line) throws -> Frame {
        switch try camera.nextFrame(timeoutMs: 100) {
        case .frame(let frame): return frame
        case .timedOut: XCTFail("timed out", file: file, line: line)
        case .ended: XCTFail("ended", file: file, line: line)
        }
        throw CameraError("no frame")
    }

    private func assertLuma(_ frame: Frame, frame n: Int, file: StaticString = #filePath, line: UInt = #line) {
        for y in 0..<frame.luma.height {
            for x in 0..<frame.luma.width where frame.luma[x, y] != luma(x, y, frame: n) {
                XCTFail("frame \(n) luma at (\(x),\(y)) is \(frame.luma[x, y])", file: file, line: line)
                return
            }
        }
    }

    private func assertReleased(_ fake: FakeV4L2Device, closes: Int = 1, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fake.openMappings, 0, "mappings left", file: file, line: line)
        XCTAssertTrue(fake.openFds.isEmpty, "descriptors left open", file: file, line: line)
        XCTAssertEqual(fake.closes, closes, "closes", file: file, line: line)
        XCTAssertEqual(fake.allocatedBuffers, 0, "driver buffers not freed", file: file, line: line)
        XCTAssertFalse(fake.streaming, "still streaming", file: file, line: line)
        XCTAssertEqual(fake.misuses, [], file: file, line: line)
    }

    // MARK: Negotiation

    func testOpenReportsTheSizeAndRateTheDriverGave() throws {
        let fake = fake(offering: ["MJPG", "YUYV"])
        fake.adjustSize = { _, _ in (1280, 720) }
        fake.grantTimePerFrame = { _ in V4L2Fraction(numerator: 1, denominator: 15) }
        let camera = camera(fake, width: 1920, height: 1080, fps: 30)

        let description = try camera.open()

        XCTAssertEqual(description, CameraDescription(device: "/dev/video9", format: "YUYV", width: 1280, height: 720, fps: 15))
        XCTAssertEqual(camera.description, description)
        XCTAssertEqual(fake.requestedFormat, V4L2PixFormat(width: 1920, height: 1080, pixelFormat: fourcc("YUYV")))
        XCTAssertEqual(fake.requestedTimePerFrame, V4L2Fraction(numerator: 1, denominator: 30))
        camera.close()
    }

    func testFractionalFrameRateIsAskedInThousandths() throws {
        let fake = fake()
        let camera = camera(fake, fps: 29.97)
        let description = try camera.open()
        XCTAssertEqual(fake.requestedTimePerFrame, V4L2Fraction(numerator: 1000, denominator: 29970))
        XCTAssertEqual(description.fps, 29.97, accuracy: 0.001)
        camera.close()
    }

    func testFrameRateIsLeftAloneWithoutTimePerFrameCapability() throws {
        let fake = fake()
        fake.timing = V4L2StreamTiming(canSetTimePerFrame: false, timePerFrame: V4L2Fraction(numerator: 1, denominator: 25))
        let camera = camera(fake)
        XCTAssertEqual(try camera.open().fps, 25)
        XCTAssertEqual(fake.calls(.setTimePerFrame), 0)
        camera.close()
    }

    func testDriverWithoutStreamParametersStillOpensWithUnknownRate() throws {
        let fake = fake()
        fake.fail(.streamTiming, errno: ENOTTY)
        let camera = camera(fake)
        XCTAssertEqual(try camera.open().fps, 0)
        camera.close()
    }

    func testOpenNegotiatesThroughLibv4lConversionForMjpg() throws {
        let fake = FakeV4L2Device()
        fake.offered = [V4L2FormatDescription(pixelFormat: fourcc("MJPG")),
                        V4L2FormatDescription(pixelFormat: fourcc("YU12"), isEmulated: true)]
        let camera = camera(fake, format: .mjpg)
        XCTAssertEqual(try camera.open().format, "YU12")
        XCTAssertEqual(camera.pixelFormat, PixelFormatChoice(format: .yu12, convertedByLibv4l: true))
        XCTAssertEqual(fake.requestedFormat?.pixelFormat, fourcc("YU12"))
        camera.close()
    }

    func testExplicitFormatTheDeviceLacksFailsAndReleasesEverything() {
        let fake = fake(offering: ["YUYV", "MJPG"])
        let camera = camera(fake, format: .grey)
        XCTAssertThrowsError(try camera.open()) { error in
            let message = (error as? CameraError)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("/dev/video9: "), message)
            XCTAssertTrue(message.contains("does not offer GREY; it offers: YUYV, MJPG"), message)
        }
        assertReleased(fake)
    }

    func testDriverSubstitutingAnotherFormatIsAnError() {
        let fake = fake(offering: ["GREY"])
        fake.substituteFormat = fourcc("BA81")
        let camera = camera(fake)
        XCTAssertThrowsError(try camera.open()) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("the driver set BA81"))
        }
        assertReleased(fake)
    }

    func testNonCaptureOrNonStreamingDevicesAreRefused() {
        let outputOnly = fake()
        outputOnly.capabilities.deviceCaps = V4L2Capabilities.streaming  // no video capture
        XCTAssertThrowsError(try camera(outputOnly).open()) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("not a single-planar video capture device"))
        }
        assertReleased(outputOnly)

        let readOnly = fake()
        readOnly.capabilities.deviceCaps = V4L2Capabilities.videoCapture  // no streaming
        XCTAssertThrowsError(try camera(readOnly).open()) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("cannot stream"))
        }
        assertReleased(readOnly)
    }

    // MARK: Buffers

    func testFewerThanThreeBuffersIsAClearError() {
        let fake = fake()
        fake.buffersGranted = 2
        let camera = camera(fake)
        XCTAssertThrowsError(try camera.open()) { error in
            let message = (error as? CameraError)?.message ?? ""
            XCTAssertTrue(message.contains("granted 2 buffers, at least 3"), message)
        }
        assertReleased(fake)
    }

    func testEveryGrantedBufferIsMappedAndQueued() throws {
        for granted in [3, 4, 6] {
            let fake = fake()
            fake.buffersGranted = granted
            let camera = camera(fake)
            _ = try camera.open()
            XCTAssertEqual(fake.openMappings, granted)
            XCTAssertEqual(fake.queued, Array(0..<granted))
            XCTAssertTrue(fake.streaming)
            camera.close()
            assertReleased(fake)
        }
    }

    func testBufferShorterThanTheLumaPlaneIsRefused() {
        let fake = fake()
        fake.bufferLength = 10  // an 8x4 YUYV luma plane needs 64 bytes
        XCTAssertThrowsError(try camera(fake).open()) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("holds 10 bytes"))
        }
        assertReleased(fake)
    }

    // MARK: Frames

    func testGreyFramesWithPaddedRows() throws {
        let fake = fake(offering: ["GREY"])
        fake.rowPadding = 5
        let camera = camera(fake, width: 7, height: 3)
        _ = try camera.open()
        deliver(fake, frames: 3)

        for n in 0..<3 {
            let frame = try nextFrame(camera)
            XCTAssertEqual(frame.sequence, UInt64(n))
            XCTAssertEqual(frame.luma.width, 7)
            XCTAssertEqual(frame.luma.height, 3)
            XCTAssertEqual(frame.luma.rowStride, 12)
            XCTAssertEqual(frame.luma.pixelStride, 1)
            assertLuma(frame, frame: n)
        }
        camera.close()
        assertReleased(fake)
    }

    func testYuyvFramesHaveLumaEverySecondByte() throws {
        let fake = fake(offering: ["YUYV"])
        let camera = camera(fake, width: 6, height: 4)
        XCTAssertEqual(try camera.open().format, "YUYV")
        deliver(fake, frames: 2)

        for n in 0..<2 {
            let frame = try nextFrame(camera)
            XCTAssertEqual(frame.sequence, UInt64(n))
            XCTAssertEqual(frame.luma.pixelStride, 2)
            XCTAssertEqual(frame.luma.rowStride, 12)
            assertLuma(frame, frame: n)
        }
        camera.close()
    }

    func testPlanarFramesReadTheFirstPlane() throws {
        for code in ["NV12", "YU12"] {
            let fake = fake(offering: [code])
            fake.rowPadding = 8
            let camera = camera(fake, width: 8, height: 4)
            XCTAssertEqual(try camera.open().format, code)
            deliver(fake, frames: 2)
            for n in 0..<2 {
                let frame = try nextFrame(camera)
                XCTAssertEqual(frame.sequence, UInt64(n))
                XCTAssertEqual(frame.luma.pixelStride, 1)
                XCTAssertEqual(frame.luma.rowStride, 16)
                assertLuma(frame, frame: n)
            }
            camera.close()
            assertReleased(fake)
        }
    }

    func testEachBufferIsRequeuedExactlyOnceAfterItsFrame() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        deliver(fake, frames: 10)
        XCTAssertEqual(fake.queueLog, [0, 1, 2, 3])

        var lent: [Int] = []
        for n in 0..<10 {
            let frame = try nextFrame(camera)
            assertLuma(frame, frame: n)
            let index = fake.dequeueLog.last!
            lent.append(index)
            // The lent buffer stays with the caller; every other one is back with the driver.
            XCTAssertFalse(fake.queued.contains(index))
            XCTAssertEqual(fake.queued.count, 3)
        }
        XCTAssertEqual(lent, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1])
        // Initial queueing, then each frame's buffer once, when the next frame was asked for.
        XCTAssertEqual(fake.queueLog, [0, 1, 2, 3] + lent.dropLast())
        XCTAssertEqual(fake.misuses, [])
        camera.close()
        assertReleased(fake)
    }

    func testFlaggedAndShortBuffersAreSkippedCountedAndRequeued() throws {
        let fake = fake(offering: ["GREY"])
        let camera = camera(fake, width: 8, height: 4)
        _ = try camera.open()
        let good0 = frameBytes(fake, frame: 0)
        let good1 = frameBytes(fake, frame: 1)
        fake.deliveries = [
            .init(bytes: good0),
            .init(bytes: good1, flags: V4L2DequeuedBuffer.flagError | V4L2DequeuedBuffer.flagTimestampMonotonic),
            .init(bytes: good1, bytesUsed: 31),  // 8x4 GREY needs 32
            .init(bytes: good1),
        ]

        let first = try nextFrame(camera)
        assertLuma(first, frame: 0)
        let second = try nextFrame(camera)
        XCTAssertEqual(second.sequence, 1)
        assertLuma(second, frame: 1)
        XCTAssertEqual(camera.skippedFrames, 2)
        // Buffers 1 and 2 carried the bad frames and went straight back; buffer 3 is lent.
        XCTAssertEqual(fake.dequeueLog, [0, 1, 2, 3])
        XCTAssertEqual(fake.queueLog, [0, 1, 2, 3, 0, 1, 2])
        XCTAssertEqual(fake.misuses, [])
        camera.close()
    }

    func testTimestampsComeFromTheDriverWhenMonotonic() throws {
        let fake = fake(offering: ["GREY"])
        let camera = camera(fake)
        _ = try camera.open()
        let bytes = frameBytes(fake, frame: 0)
        fake.deliveries = [.init(bytes: bytes, timestampNs: 123_456_789_000),
                           .init(bytes: bytes, flags: 0, timestampNs: 42)]  // unknown clock

        let stamped = try nextFrame(camera)
        XCTAssertEqual(stamped.timestampNs, 123_456_789_000)
        XCTAssertEqual(stamped.capturedNs, 123_456_789_000)

        let before = monotonicNanoseconds()
        let unstamped = try nextFrame(camera)
        let after = monotonicNanoseconds()
        XCTAssertGreaterThanOrEqual(unstamped.timestampNs, before)
        XCTAssertLessThanOrEqual(unstamped.timestampNs, after)
        XCTAssertEqual(unstamped.capturedNs, unstamped.timestampNs)
        camera.close()
    }

    func testNoFrameIsATimeout() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        guard case .timedOut = try camera.nextFrame(timeoutMs: 40) else { return XCTFail("expected a timeout") }
        XCTAssertEqual(fake.pollTimeouts.count, 1)
        XCTAssertLessThanOrEqual(fake.pollTimeouts[0], 40)
        XCTAssertGreaterThan(fake.pollTimeouts[0], 0)

        // Woken, but DQBUF says EAGAIN: also a timeout, not an error.
        fake.wakeWithoutFrame = true
        guard case .timedOut = try camera.nextFrame(timeoutMs: 40) else { return XCTFail("expected a timeout") }
        XCTAssertEqual(fake.calls(.dequeueBuffer), 1)

        // Frames still come afterwards.
        fake.wakeWithoutFrame = false
        deliver(fake, frames: 1)
        XCTAssertEqual(try nextFrame(camera).sequence, 0)
        camera.close()
    }

    // MARK: Failures while streaming

    func testDeviceGoneMidStreamThrowsENODEV() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        deliver(fake, frames: 3)
        _ = try nextFrame(camera)
        fake.fail(.dequeueBuffer, errno: ENODEV, onCall: 2)
        fake.fail(.streamOff, errno: ENODEV)

        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 100)) { error in
            XCTAssertEqual((error as? CameraError)?.errno, Errno(ENODEV))
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("/dev/video9"))
        }
        camera.close()  // STREAMOFF fails too; everything is still released.
        assertReleased(fake)
    }

    func testPollErrorThrowsWithErrno() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        fake.fail(.poll, errno: EIO)
        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 100)) { error in
            XCTAssertEqual((error as? CameraError)?.errno, Errno(EIO))
        }
        camera.close()
        assertReleased(fake)
    }

    func testFailedRequeueThrowsWithErrno() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        deliver(fake, frames: 2)
        _ = try nextFrame(camera)
        fake.fail(.queueBuffer, errno: EIO, onCall: 5)  // 4 at open, then the requeue
        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 100)) { error in
            XCTAssertEqual((error as? CameraError)?.errno, Errno(EIO))
        }
        camera.close()
        assertReleased(fake)
    }

    func testNextFrameBeforeOpenOrAfterCloseThrows() throws {
        let fake = fake()
        let camera = camera(fake)
        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 10))
        _ = try camera.open()
        camera.close()
        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 10))
        XCTAssertEqual(fake.calls(.poll), 0)
    }

    // MARK: Closing

    func testCloseReleasesEverythingOnceAndIsIdempotent() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        deliver(fake, frames: 1)
        _ = try nextFrame(camera)  // one buffer lent when closing
        camera.close()
        assertReleased(fake)
        XCTAssertEqual(fake.calls(.streamOff), 1)
        XCTAssertEqual(fake.calls(.unmap), 4)
        XCTAssertNil(camera.description)
        camera.close()
        assertReleased(fake)
        XCTAssertEqual(fake.calls(.unmap), 4)
    }

    func testFailureAtEveryStepOfOpenReleasesEverything() {
        let steps: [(FakeV4L2Device.Call, Int)] = [
            (.open, 1), (.queryCapabilities, 1), (.enumerateFormats, 1), (.setFormat, 1), (.streamTiming, 1),
            (.setTimePerFrame, 1), (.requestBuffers, 1), (.queryBuffer, 1), (.queryBuffer, 3), (.map, 1),
            (.map, 4), (.queueBuffer, 1), (.queueBuffer, 3), (.streamOn, 1),
        ]
        for (call, nth) in steps {
            let fake = fake()
            fake.fail(call, errno: EIO, onCall: nth)
            let camera = camera(fake)
            XCTAssertThrowsError(try camera.open(), "\(call) #\(nth)") { error in
                XCTAssertEqual((error as? CameraError)?.errno, Errno(EIO), "\(call) #\(nth)")
            }
            let closes = call == .open ? 0 : 1
            assertReleased(fake, closes: closes)
            camera.close()
            assertReleased(fake, closes: closes)
            XCTAssertNil(camera.description)
        }
    }

    func testCameraReopensAfterClose() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        deliver(fake, frames: 2)
        _ = try nextFrame(camera)
        _ = try nextFrame(camera)
        camera.close()

        _ = try camera.open()
        deliver(fake, frames: 1, from: 5)
        let frame = try nextFrame(camera)
        XCTAssertEqual(frame.sequence, 0)
        assertLuma(frame, frame: 5)
        camera.close()
        assertReleased(fake, closes: 2)
    }

    func testOpeningTwiceIsRefusedWithoutLeaking() throws {
        let fake = fake()
        let camera = camera(fake)
        _ = try camera.open()
        XCTAssertThrowsError(try camera.open())
        XCTAssertEqual(fake.calls(.open), 1)
        camera.close()
        assertReleased(fake)
    }
}
