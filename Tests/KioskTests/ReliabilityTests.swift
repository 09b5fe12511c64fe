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

/// Time that moves only when the service sleeps or a source says it waited.
/// A camera that does what its script says: frames, failures, silence, and openings that fail.
final class FaultySource: FrameSource {
    enum Step {
        case frames(Int)
        case fail(CameraError)
        /// `n` calls that time out (each moves the clock by the timeout asked for).
        case silence(Int)
        case end
    }

    var script: [Step]
    /// Errors for the next `open` calls, in order; an open with none left succeeds.
    var openFailures: [CameraError] = []
    var clock: ManualClock?
    var afterFrame: (Int) -> Void = { _ in }
    private(set) var opens = 0
    private(set) var closes = 0
    private(set) var isOpen = false
    private(set) var handed = 0
    var skippedFrames: Int { 0 }
    var exposure: CameraExposure? { nil }
    private let picture = GrayImage(width: 64, height: 48, fill: 128)

    init(script: [Step], openFailures: [CameraError] = [], clock: ManualClock? = nil) {
        self.script = script
        self.openFailures = openFailures
        self.clock = clock
    }

    func open() throws -> CameraDescription {
        opens += 1
        if !openFailures.isEmpty { throw openFailures.removeFirst() }
        isOpen = true
        return CameraDescription(device: "faulty", format: "GREY", width: 64, height: 48, fps: 30)
    }

    func nextFrame(timeoutMs: Int) throws -> FrameWait {
        precondition(isOpen, "nextFrame on a closed camera")
        if handed > 0 { afterFrame(handed) }
        guard let step = script.first else { return .ended }
        switch step {
        case .frames(let n):
            if n <= 1 { script.removeFirst() } else { script[0] = .frames(n - 1) }
            handed += 1
            return picture.pixels.withUnsafeBufferPointer { buf in
                .frame(Frame(luma: LumaPlane(base: buf.baseAddress!, width: 64, height: 48, rowStride: 64),
                             sequence: UInt64(handed - 1), timestampNs: UInt64(handed) * 33_000_000, capturedNs: monotonicNanoseconds()))
            }
        case .fail(let error):
            script.removeFirst()
            throw error
        case .silence(let n):
            if n <= 1 { script.removeFirst() } else { script[0] = .silence(n - 1) }
            clock?.nowNs += UInt64(timeoutMs) * 1_000_000
            return .timedOut
        case .end:
            return .ended
        }
    }

    func close() {
        if isOpen { closes += 1 }
        isOpen = false
    }
}

final class ReliabilityTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
        var events: [String] { all.map { Logfmt.fields($0)["event"] ?? "?" } }
        func of(_ event: String) -> [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    func service(_ source: FrameSource, clock: ManualClock, stop: StopSignal = StopSignal()) -> (ScanService, Lines) {
        let lines = Lines()
        let logger = Logger(level: .debug) { lines.all.append($0) }
        return (ScanService(configuration: Configuration(), source: source, logger: logger, stop: stop, clock: clock), lines)
    }

    let enodev = CameraError("/dev/video0: VIDIOC_DQBUF", errno: ENODEV)
    let enoent = CameraError("/dev/video0: open", errno: ENOENT)

    func testBackoffDoublesToTenSeconds() {
        XCTAssertEqual((1...8).map { Backoff().delay(attempt: $0) / 1_000_000 }, [500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000])
    }

    func testLostCameraIsReopenedWithBackoffAndScanningResumes() throws {
        let clock = ManualClock()
        let source = FaultySource(script: [.frames(5), .fail(enodev), .frames(5)], clock: clock)
        let (svc, lines) = service(source, clock: clock)
        var lostCalls = 0
        svc.observe().onCameraLost = { lostCalls += 1; XCTAssertTrue(source.isOpen, "outputs go off before the camera is closed") }
        // The device comes back on the 4th attempt.
        source.openFailures = []
        var failuresLeft = 3
        clock.afterSleep = { if failuresLeft > 0 { source.openFailures = [self.enoent]; failuresLeft -= 1 } }
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(svc.frames, 10)
        XCTAssertEqual(lostCalls, 1)
        XCTAssertEqual(clock.sleeps.map { $0 / 1_000_000 }, [500, 1000, 2000, 4000])
        XCTAssertEqual(lines.events.filter { $0.hasPrefix("camera") }, ["camera_open", "camera_lost", "camera_reopen_failed", "camera_reopen_failed",
                                                                     "camera_reopen_failed", "camera_reopen"])
        XCTAssertEqual(lines.of("camera_reopen").first?["attempt"], "4")
        XCTAssertEqual(lines.of("camera_reopen").first?["ms"], "7500.0")
        XCTAssertTrue(lines.of("camera_lost").first?["error"]?.contains("No such device") ?? false)
        XCTAssertEqual(source.opens, 5)
        XCTAssertEqual(source.closes, 2, "closed when lost, and at the end")
    }

    func testAStalledCameraCountsAsLostAfterTwoSeconds() throws {
        let clock = ManualClock()
        // 100 ms per empty wait: 20 of them make the 2 s stall.
        let source = FaultySource(script: [.frames(3), .silence(25), .frames(2)], clock: clock)
        let (svc, lines) = service(source, clock: clock)
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(lines.of("camera_lost").first?["error"], "no frame for 2.0 s")
        XCTAssertEqual(lines.of("camera_reopen").count, 1)
        XCTAssertEqual(svc.frames, 5)
    }

    func testShortSilencesAreNotALoss() throws {
        let clock = ManualClock()
        let source = FaultySource(script: [.frames(3), .silence(19), .frames(2), .silence(19), .frames(1)], clock: clock)
        let (svc, lines) = service(source, clock: clock)
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(lines.of("camera_lost").count, 0)
    }

    func testStartupRetriesForThirtySecondsThenGivesUp() {
        let clock = ManualClock()
        let source = FaultySource(script: [], openFailures: Array(repeating: enoent, count: 100), clock: clock)
        let (svc, lines) = service(source, clock: clock)
        XCTAssertThrowsError(try svc.run()) { error in XCTAssertEqual((error as? CameraError)?.errno, Errno(ENOENT)) }
        XCTAssertEqual(clock.sleeps.map { $0 / 1_000_000 }, [500, 1000, 2000, 4000, 8000, 10_000, 4500])
        XCTAssertEqual(clock.sleeps.reduce(0, +), 30_000_000_000)
        XCTAssertEqual(lines.of("camera_open_failed").count, 7)
    }

    func testCameraThatComesBackDuringStartup() throws {
        let clock = ManualClock()
        let source = FaultySource(script: [.frames(1)], openFailures: [enoent, enoent], clock: clock)
        let (svc, lines) = service(source, clock: clock)
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(lines.events.filter { $0.hasPrefix("camera") }, ["camera_open_failed", "camera_open_failed", "camera_open"])
    }

    func testStopDuringBackoffEndsAtOnce() throws {
        let clock = ManualClock()
        let stop = StopSignal()
        let source = FaultySource(script: [.frames(2), .fail(enodev), .frames(100)], openFailures: [], clock: clock)
        let (svc, _) = service(source, clock: clock, stop: stop)
        clock.afterSleep = { source.openFailures = [self.enoent]; if clock.sleeps.count == 3 { stop.request("SIGTERM") } }
        XCTAssertEqual(try svc.run(), .signal("SIGTERM"))
        XCTAssertEqual(clock.sleeps.count, 3)
        XCTAssertFalse(source.isOpen)
    }

    func testStopWhileStartingUpEndsAtOnce() throws {
        let clock = ManualClock()
        let stop = StopSignal()
        let source = FaultySource(script: [], openFailures: Array(repeating: enoent, count: 100), clock: clock)
        let (svc, _) = service(source, clock: clock, stop: stop)
        clock.afterSleep = { stop.request("SIGINT") }
        XCTAssertEqual(try svc.run(), .signal("SIGINT"))
    }

    func testStopRequestEndsTheLoopAndClosesTheCamera() throws {
        let stop = StopSignal()
        let clock = ManualClock()
        let source = FaultySource(script: [.frames(1000)], clock: clock)
        let (svc, _) = service(source, clock: clock, stop: stop)
        source.afterFrame = { n in if n == 5 { stop.request("SIGTERM") } }
        XCTAssertEqual(try svc.run(), .signal("SIGTERM"))
        // The signal came while the 6th frame was awaited: that frame is processed, no more.
        XCTAssertEqual(svc.frames, 6)
        XCTAssertFalse(source.isOpen)
    }

    // MARK: The real V4L2 camera code over the fake driver

    func yuyvCamera(_ device: FakeV4L2Device) -> V4L2Camera {
        device.offered = [V4L2FormatDescription(pixelFormat: fourcc("YUYV"))]
        device.deliveries = (0..<2000).map { _ in .init(bytes: [UInt8](repeating: 128, count: 64 * 48 * 2)) }
        return V4L2Camera(device: "/dev/video0", width: 64, height: 48, fps: 30, v4l2: device)
    }

    func testEIOOnPollIsALossAndTheCameraComesBack() throws {
        let device = FakeV4L2Device()
        let camera = yuyvCamera(device)
        device.fail(.poll, errno: EIO, onCall: 4)
        let clock = ManualClock()
        let stop = StopSignal()
        let (svc, lines) = service(camera, clock: clock, stop: stop)
        var frames = 0
        svc.observe().onCameraLost = { XCTAssertEqual(frames, 3) }
        svc.observe().onFrame = FrameCounter(stop: stop, limit: 10) { frames = $0 }.count
        XCTAssertEqual(try svc.run(), .signal("enough"))
        XCTAssertEqual(lines.of("camera_lost").count, 1)
        XCTAssertTrue(lines.of("camera_lost")[0]["error"]?.contains("errno 5") ?? false, "\(lines.all)")
        XCTAssertEqual(lines.of("camera_reopen").count, 1)
        XCTAssertEqual(device.openFds, [])
        XCTAssertEqual(device.openMappings, 0)
        XCTAssertEqual(device.misuses, [])
    }

    func testEINTRStormIsRetriedSilently() throws {
        let device = FakeV4L2Device()
        let camera = yuyvCamera(device)
        for n in stride(from: 2, to: 100, by: 2) { device.fail(.dequeueBuffer, errno: EINTR, onCall: n) }
        let clock = ManualClock()
        let stop = StopSignal()
        let (svc, lines) = service(camera, clock: clock, stop: stop)
        svc.observe().onFrame = FrameCounter(stop: stop, limit: 60) { _ in }.count
        XCTAssertEqual(try svc.run(), .signal("enough"))
        XCTAssertEqual(lines.of("camera_lost").count, 0, "\(lines.all.prefix(5))")
        XCTAssertEqual(svc.frames, 60)
    }

    func testHundredLossesLeakNoDescriptorOrMapping() throws {
        let device = FakeV4L2Device()
        let camera = yuyvCamera(device)
        let clock = ManualClock()
        let stop = StopSignal()
        let (svc, _) = service(camera, clock: clock, stop: stop)
        // Warm up once (first open, first mapping of Foundation's own bits), then count.
        _ = try camera.open(); camera.close()
        let fdsBefore = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        let mapsBefore = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n").count
        var lost = 0
        svc.observe().onFrame = { n in
            // Every third frame the device is unplugged (ENODEV on the next DQBUF).
            if n % 3 == 0 { device.fail(.dequeueBuffer, errno: ENODEV, onCall: device.calls(.dequeueBuffer) + 1) }
            if n >= 300 { stop.request("enough") }
        }
        svc.observe().onCameraLost = { lost += 1 }
        XCTAssertEqual(try svc.run(), .signal("enough"))
        XCTAssertGreaterThanOrEqual(lost, 99)
        XCTAssertEqual(device.openFds, [])
        XCTAssertEqual(device.openMappings, 0)
        let fdsAfter = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        let mapsAfter = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n").count
        XCTAssertEqual(fdsAfter, fdsBefore)
        XCTAssertLessThanOrEqual(mapsAfter, mapsBefore + 2, "allocator arenas may add a region, never one per cycle")
    }

    func testFailingBuzzerWritesAreLoggedOnceAMinuteAndScanningGoesOn() throws {
        // One clock drives the beep's end and the rate limit.
        let chip = FakeChip(), clock = ManualClock()
        let lines = Lines()
        let logger = Logger { lines.all.append($0) }
        let buzzer = PatternPlayer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: false), clock: clock)
        buzzer.onError = GPIOWriteFailures(logger: logger, clock: clock).report
        chip.failWrites = true
        // A beep every 5 s for 150 s: one failing write each (on; the off 100 ms later is no change
        // to drive, since the line never went on).
        for _ in 0..<30 {
            buzzer.play(onOffMilliseconds: [100])
            clock.advance(byMs: 5000)
        }
        let said = lines.all.filter { $0.contains("event=gpio_write_failed") }
        XCTAssertEqual(said.count, 3, "at 0 s, 60 s and 120 s")
        XCTAssertEqual(said.map { Logfmt.fields($0)["since_last"] }, ["0", "11", "11"])
    }

    // MARK: libcamera (the camera code over a scripted plugin)

    let hq = LibcameraInfo(id: "imx477", format: "YUV420", width: 640, height: 480, fps: 30, canCrop: true,
                           cropMaximum: PixelRect(x: 0, y: 0, width: 4056, height: 3040))

    /// A Camera Module that stops delivering: camera_lost after 2 s, then the service ends with the
    /// camera's "needs a new process" error (the command exits 69, systemd restarts it) instead of
    /// reopening into libcamera's fatal assert.
    func testAStalledLibcameraCameraEndsTheServiceForARestart() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: hq, picture: GrayImage(width: 640, height: 480), script: [.frames(3), .silence(30)], clock: clock)
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        let (svc, lines) = service(camera, clock: clock)
        XCTAssertThrowsError(try svc.run()) { error in
            XCTAssertEqual((error as? CameraError)?.needsRestart, true, "\(error)")
        }
        XCTAssertEqual(lines.events.filter { $0.hasPrefix("camera") && $0 != "camera_controls" }, ["camera_open", "camera_lost", "camera_reopen_failed"])
        XCTAssertEqual(lines.of("camera_lost").first?["error"], "no frame for 2.0 s")
        XCTAssertEqual(lines.of("camera_reopen_failed").first?["level"], "error")
        XCTAssertEqual(plugin.closes, [true], "closed as stalled, once")
        XCTAssertEqual(plugin.opens, 1)
        XCTAssertEqual(svc.frames, 3)
    }

    /// With zoom the frames show the crop, and the frame loop scans the ROI where it lies in them:
    /// a code in the part of the frame that the zoomed ROI covers, and the unzoomed one does not,
    /// is read once the zoom is in force, never before.
    func testZoomedFramesAreScannedWhereTheROILiesInThem() throws {
        let clock = ManualClock()
        var picture = GrayImage(width: 640, height: 480, fill: 255)
        let code = try QRCodeImage.render("ZOOM-1", moduleSize: 4)
        picture.paste(code, x: 40, y: 170)  // left of x = 160, where the unzoomed ROI starts
        let plugin = FakeLibcameraPlugin(info: hq, picture: picture, script: [.frames(4)], clock: clock)
        plugin.defaultCrop = PixelRect(x: 2, y: 0, width: 4052, height: 3040)
        var config = Configuration()
        config.zoom = true
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30,
                                     zoomROI: config.mount.sensorRegion(fromUpright: config.uprightROI), plugin: plugin, clock: clock)
        let lines = Lines()
        let svc = ScanService(configuration: config, source: camera, logger: Logger(level: .debug) { lines.all.append($0) }, stop: StopSignal(), clock: clock)
        var reported: [(String, UInt64)] = []
        svc.observe().onReport = { symbol, frame in reported.append((symbol.text ?? "", frame.sequence)) }
        _ = try camera.open()
        for _ in 0..<4 {  // the decodes are waited for: each frame's codes are reported on it
            guard case .frame(let f) = try camera.nextFrame(timeoutMs: 100) else { return XCTFail("no frame") }
            svc.process(f)
        }
        XCTAssertLessThan(40 + code.width, 160)
        XCTAssertEqual(svc.sensorROI(width: 640, height: 480), PixelRect(x: 160, y: 120, width: 320, height: 240))
        let zoomedROI = svc.sensorROI(width: 640, height: 480, view: SensorZoom.view(of: camera.zoomCrop!, reference: plugin.defaultCrop!))
        XCTAssertLessThanOrEqual(zoomedROI.x, 40)
        XCTAssertEqual(reported.map(\.0), ["ZOOM-1"])
        XCTAssertGreaterThanOrEqual(reported.first?.1 ?? 0, 1, "not from the first, unzoomed, frame")
        XCTAssertTrue(lines.all.contains { $0.contains("event=roi") && $0.contains("view=") })
    }

    func testRateLimitSaysOncePerInterval() {
        var limit = RateLimit(intervalNs: 60_000_000_000)
        let s = UInt64(1_000_000_000)
        XCTAssertTrue(limit.shouldSay(at: 0).say)
        XCTAssertFalse(limit.shouldSay(at: 10 * s).say)
        XCTAssertFalse(limit.shouldSay(at: 59 * s).say)
        let next = limit.shouldSay(at: 60 * s)
        XCTAssertTrue(next.say)
        XCTAssertEqual(next.suppressed, 2)
    }
}

/// Stops the service after `limit` frames.
final class FrameCounter {
    let stop: StopSignal
    let limit: Int
    let seen: (Int) -> Void
    init(stop: StopSignal, limit: Int, seen: @escaping (Int) -> Void) {
        self.stop = stop
        self.limit = limit
        self.seen = seen
    }
    func count(_ n: Int) {
        seen(n)
        if n >= limit { stop.request("enough") }
    }
}
