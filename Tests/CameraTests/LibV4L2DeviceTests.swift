// SPDX-License-Identifier: Apache-2.0
@testable import Camera
import Foundation
import Glibc
import Platform
import Synchronization
import XCTest

/// Counts SIGUSR1 deliveries; a C signal handler cannot capture context.
private let interruptions = Atomic<Int32>(0)

/// The real device over libv4l2. There is no camera on the build machine, so these exercise the
/// library link, errno reporting and EINTR handling with files and pipes.
final class LibV4L2DeviceTests: XCTestCase {
    func testOpeningSomethingThatIsNotAV4L2DeviceFailsWithENOTTY() {
        // libv4l2 opens the file, then VIDIOC_QUERYCAP fails: /dev/null knows no ioctls.
        XCTAssertThrowsError(try LibV4L2Device().open(path: "/dev/null")) { error in
            XCTAssertEqual((error as? CameraError)?.errno, Errno(ENOTTY))
        }
    }

    func testOpeningAMissingDeviceFailsWithENOENT() {
        XCTAssertThrowsError(try LibV4L2Device().open(path: "/dev/video-kiosk-does-not-exist")) { error in
            XCTAssertEqual((error as? CameraError)?.errno, Errno(ENOENT))
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("/dev/video-kiosk-does-not-exist"))
        }
    }

    func testCameraOverTheRealDeviceReportsTheErrorAndLeavesNothingOpen() {
        let camera = V4L2Camera(device: "/dev/null", width: 640, height: 480, fps: 30)
        let fdsBefore = openDescriptorCount()
        XCTAssertThrowsError(try camera.open()) { error in
            let error = error as? CameraError
            XCTAssertEqual(error?.errno, Errno(ENOTTY))
            XCTAssertTrue(error?.message.hasPrefix("/dev/null") ?? false)
        }
        XCTAssertEqual(openDescriptorCount(), fdsBefore)
        XCTAssertNil(camera.description)
    }

    func testRetryingInterruptsRetriesOnlyEINTR() throws {
        var calls = 0
        let result = try retryingInterrupts("test") {
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        XCTAssertEqual(result, 7)
        XCTAssertEqual(calls, 3)

        calls = 0
        XCTAssertThrowsError(try retryingInterrupts("test") { calls += 1; errno = EIO; return -1 }) { error in
            XCTAssertEqual(error as? CameraError, CameraError("test", errno: EIO))
        }
        XCTAssertEqual(calls, 1)
    }

    func testPollReportsReadinessAndTimeout() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { Glibc.close(fds[0]); Glibc.close(fds[1]) }
        let device = LibV4L2Device()
        XCTAssertFalse(try device.poll(fd: fds[0], timeoutMs: 10))
        var byte: UInt8 = 1
        XCTAssertEqual(write(fds[1], &byte, 1), 1)
        XCTAssertTrue(try device.poll(fd: fds[0], timeoutMs: 10))
    }

    func testPollIsNotCutShortByASignal() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { Glibc.close(fds[0]); Glibc.close(fds[1]) }

        // A handler without SA_RESTART: poll is interrupted with EINTR (it never restarts anyway).
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR1, &action, &previous), 0)
        defer { sigaction(SIGUSR1, &previous, nil) }

        interruptions.store(0, ordering: .relaxed)
        let target = pthread_self()
        // A storm of signals, one every 40 ms for up to 3 s. A poll that restarted its whole
        // timeout after each EINTR would not return until the storm ends; the right one returns
        // when its 300 ms are up. The bounds are far apart, so a loaded machine cannot blur them.
        final class Flag: @unchecked Sendable { let lock = NSLock(); var done = false }
        let pollReturned = Flag()
        let interrupter = Thread {
            for _ in 0..<75 {
                usleep(40_000)
                pollReturned.lock.lock(); let stop = pollReturned.done; pollReturned.lock.unlock()
                if stop { return }
                pthread_kill(target, SIGUSR1)
            }
        }
        interrupter.start()

        let start = monotonicNanoseconds()
        let ready = try LibV4L2Device().poll(fd: fds[0], timeoutMs: 300)
        let elapsedMs = (monotonicNanoseconds() - start) / 1_000_000
        pollReturned.lock.lock(); pollReturned.done = true; pollReturned.lock.unlock()
        XCTAssertFalse(ready)
        XCTAssertGreaterThanOrEqual(interruptions.load(ordering: .relaxed), 2, "the signals did not arrive during poll")
        XCTAssertGreaterThanOrEqual(elapsedMs, 295)
        XCTAssertLessThan(elapsedMs, 2500)
    }

    private func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}

/// The control IDs come from the kernel's headers through the shim, not from numbers of our own.
final class V4L2ControlIDTests: XCTestCase {
    func testControlIDsAreTheKernels() {
        XCTAssertEqual(V4L2Control.exposureAbsolute, 0x009a_0902, "V4L2_CID_CAMERA_CLASS_BASE + 2")
        XCTAssertEqual(V4L2Control.gain, 0x0098_0913, "V4L2_CID_USER_BASE + 19")
    }
}
