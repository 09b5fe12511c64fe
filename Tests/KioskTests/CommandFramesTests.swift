// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Glibc
import Platform
import Policy
import XCTest

/// The frames `snapshot` and `aim` take: one rule for a camera that gives none (5 s without a
/// frame, or a failure: unavailable, exit 69), whichever command asks.
final class CommandFramesTests: XCTestCase {
    private func frames(_ script: [FaultySource.Step], stop: StopSignal? = nil) throws -> (CommandFrames, FaultySource) {
        let source = FaultySource(script: script)
        _ = try source.open()
        return (CommandFrames(source, command: "kiosk test", camera: .replay(folder: "/nowhere"), stop: stop), source)
    }

    private func kinds(_ frames: inout CommandFrames, _ n: Int) -> [String] {
        (0..<n).map { _ in
            switch frames.next() {
            case .frame?: return "frame"
            case .ended?: return "ended"
            case nil: return "unavailable"
            }
        }
    }

    /// Four silent seconds between frames are waited out; the silence counts from the last frame.
    func testSilenceShorterThanFiveSecondsIsWaitedOut() throws {
        var (f, source) = try frames([.silence(4), .frames(1), .silence(4), .frames(1), .end])
        XCTAssertEqual(kinds(&f, 3), ["frame", "frame", "ended"])
        XCTAssertEqual(source.handed, 2)
    }

    func testFiveSilentSecondsMakeTheCameraUnavailable() throws {
        var (f, source) = try frames([.frames(1), .silence(5), .frames(1)])
        XCTAssertEqual(kinds(&f, 2), ["frame", "unavailable"])
        XCTAssertEqual(source.script.count, 1, "the fifth timeout is the last call: the frame after it is never asked for")
    }

    func testAFailingCameraIsUnavailable() throws {
        var (f, _) = try frames([.fail(CameraError("VIDIOC_DQBUF", errno: Errno(EIO))), .frames(1)])
        XCTAssertEqual(kinds(&f, 1), ["unavailable"])
    }

    /// A stop asked for ends the wait at once, as the end of a replay does.
    func testAStopEndsTheWait() throws {
        let stop = StopSignal()
        stop.request("test")
        var (f, source) = try frames([.silence(100)], stop: stop)
        XCTAssertEqual(kinds(&f, 1), ["ended"])
        XCTAssertEqual(source.script.count, 1)
        if case .silence(let n) = source.script[0] { XCTAssertEqual(n, 100, "the camera was not asked") } else { XCTFail() }
    }
}
