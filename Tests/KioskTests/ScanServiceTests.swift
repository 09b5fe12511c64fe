import Camera
import Decoder
import GPIO
@testable import Kiosk
import Scene
import TestSupport
import XCTest

final class ScanServiceTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
        var events: [String] { all.map { Logfmt.fields($0)["event"] ?? "?" } }
        func of(_ event: String) -> [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    func service(_ source: FrameSource, config: Configuration = Configuration(), chip: FakeChip? = nil,
                 clock: ManualScheduler? = nil, stop: StopSignal = StopSignal()) throws -> (ScanService, Lines) {
        let lines = Lines()
        let logger = Logger(level: .debug) { lines.all.append($0) }
        var buzzer: Buzzer?
        if let chip, let clock {
            buzzer = Buzzer(output: try SwitchedOutput(chip: chip, offset: 18, activeLow: false), beepMilliseconds: 120, scheduler: clock)
        }
        return (ScanService(configuration: config, source: source, buzzer: buzzer, logger: logger, stop: stop), lines)
    }

    func scene(_ steps: [ScriptedScene.Step], duration: Double, mount: Mount = Mount()) -> ScriptedScene {
        ScriptedScene(steps: steps, duration: duration, fps: 30, uprightWidth: 640, uprightHeight: 480, mount: mount, realTime: false)
    }

    func testHeldCodeOnceRepeatAfterWindowOutsideNeverWithBeeps() throws {
        let code = try QRCodeImage.render("VISITOR-7", moduleSize: 4)
        let other = try QRCodeImage.render("NOT-HERE", moduleSize: 3)
        let inside = ScriptedScene.Placement(picture: code, centre: NormalizedPoint(x: 0.5, y: 0.5))
        let steps = [
            ScriptedScene.Step(start: 0, narration: "empty"),
            ScriptedScene.Step(start: 1, narration: "held", codes: [inside]),
            ScriptedScene.Step(start: 3, narration: "away briefly"),
            ScriptedScene.Step(start: 4, narration: "back within the window", codes: [inside]),
            ScriptedScene.Step(start: 5, narration: "away"),
            ScriptedScene.Step(start: 9, narration: "back after the window", codes: [inside]),
            ScriptedScene.Step(start: 10, narration: "outside", codes: [.init(picture: other, centre: NormalizedPoint(x: 0.12, y: 0.13))]),
        ]
        for mount in [Mount(), Mount(rotation: .quarter, mirrored: true)] {
            var config = Configuration()
            config.mount = mount
            let chip = FakeChip(), clock = ManualScheduler()
            let (svc, lines) = try service(scene(steps, duration: 11, mount: mount), config: config, chip: chip, clock: clock)
            var reportedFrames: [UInt64] = []
            svc.onReport = { _, frame in
                reportedFrames.append(frame.sequence)
                clock.advance(to: clock.now + 200)  // let each beep finish
            }
            XCTAssertEqual(try svc.run(), .sourceEnded)
            XCTAssertEqual(reportedFrames, [30, 270], "\(mount)")
            XCTAssertEqual(svc.frames, 330)
            XCTAssertEqual(svc.decoded, 2)
            let scans = lines.of("scan")
            XCTAssertEqual(scans.map { $0["data"] }, ["VISITOR-7", "VISITOR-7"])
            XCTAssertEqual(scans.map { $0["symbology"] }, ["QR-Code", "QR-Code"])
            XCTAssertEqual(scans.map { $0["frame"] }, ["30", "270"])
            XCTAssertNotNil(Double(scans[0]["latency_ms"] ?? ""))
            XCTAssertEqual(chip.levels[18], [0, 1, 0, 1, 0], "two beeps")
            XCTAssertEqual(lines.events.filter { $0 != "roi" && $0 != "beep" }, ["camera_open", "ready", "scan", "scan"])
        }
    }

    func testStopRequestEndsTheLoopAndClosesTheCamera() throws {
        let stop = StopSignal()
        let source = ScriptedFailures(frames: 1000)
        let (svc, _) = try service(source, stop: stop)
        source.afterFrame = { n in if n == 5 { stop.request("SIGTERM") } }
        XCTAssertEqual(try svc.run(), .signal("SIGTERM"))
        // The signal came while the 6th frame was awaited: that frame is processed, no more.
        XCTAssertEqual(svc.frames, 6)
        XCTAssertEqual(source.closed, 1)
    }

    func testStopWhileTheCameraIsSilent() throws {
        let stop = StopSignal()
        let source = ScriptedFailures(frames: 0, timeouts: Int.max)
        let (svc, _) = try service(source, stop: stop)
        source.afterTimeout = { n in if n == 3 { stop.request("SIGINT") } }
        XCTAssertEqual(try svc.run(), .signal("SIGINT"))
        XCTAssertEqual(source.closed, 1)
    }

    func testCameraErrorMidStreamIsLoggedAndEndsTheLoop() throws {
        let source = ScriptedFailures(frames: 3, then: CameraError("/dev/video0: VIDIOC_DQBUF", errno: ENODEV))
        let (svc, lines) = try service(source)
        guard case .cameraLost = try svc.run() else { return XCTFail("expected camera lost") }
        XCTAssertEqual(lines.of("camera_lost").count, 1)
        XCTAssertTrue(lines.of("camera_lost")[0]["error"]?.contains("No such device") ?? false, "\(lines.all)")
        XCTAssertEqual(source.closed, 1)
        XCTAssertEqual(StopReason.cameraLost("x").exitStatus, 69)
    }

    func testCameraThatCannotOpenThrows() throws {
        let source = ScriptedFailures(frames: 0, openError: CameraError("/dev/video0", errno: ENOENT))
        let (svc, _) = try service(source)
        XCTAssertThrowsError(try svc.run())
    }

    func testROIIsComputedOncePerFrameSize() throws {
        let (svc, lines) = try service(ScriptedFailures(frames: 10))
        _ = try svc.run()
        XCTAssertEqual(lines.of("roi").map { $0["sensor"] }, ["32x24+16+12"])
    }
}

/// A frame source that plays flat frames and then fails as told.
final class ScriptedFailures: FrameSource {
    let frames: Int
    var timeouts: Int
    let failure: CameraError?
    let openError: CameraError?
    var handed = 0
    var timedOut = 0
    var closed = 0
    var afterFrame: (Int) -> Void = { _ in }
    var afterTimeout: (Int) -> Void = { _ in }
    private let picture = GrayImage(width: 64, height: 48, fill: 128)

    init(frames: Int, timeouts: Int = 0, then failure: CameraError? = nil, openError: CameraError? = nil) {
        self.frames = frames
        self.timeouts = timeouts
        self.failure = failure
        self.openError = openError
    }

    func open() throws -> CameraDescription {
        if let openError { throw openError }
        return CameraDescription(device: "scripted", format: "GREY", width: 64, height: 48, fps: 30)
    }

    func nextFrame(timeoutMs: Int) throws -> FrameWait {
        if handed > 0 { afterFrame(handed) }
        if handed < frames {
            handed += 1
            return picture.pixels.withUnsafeBufferPointer { buf in
                .frame(Frame(luma: LumaPlane(base: buf.baseAddress!, width: 64, height: 48, rowStride: 64),
                             sequence: UInt64(handed - 1), timestampNs: UInt64(handed) * 33_000_000, capturedNs: monotonicNanoseconds()))
            }
        }
        if let failure { throw failure }
        if timedOut < timeouts {
            timedOut += 1
            afterTimeout(timedOut)
            return .timedOut
        }
        return .ended
    }

    func close() { closed += 1 }
}
