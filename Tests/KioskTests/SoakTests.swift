// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Reader
import Foundation
import GPIO
@testable import Kiosk
import Platform
import Policy
import Scene
@testable import Systemd
import TestSupport
import XCTest

/// 100,000 frames with codes coming and going, a camera that fails every 1,000 frames, the buzzer,
/// the torch and a scan program, in one process: memory and descriptors must not grow.
/// Run by `make soak` (release build); skipped in `make test`.
final class SoakTests: XCTestCase {
    /// A camera cycling through prepared frames: empty, code A, empty, code B, dark; it fails with
    /// ENODEV every `failEvery` frames and is back at once.
    final class SoakCamera: FrameSource {
        let frames: [GrayImage]
        let total: Int
        let failEvery: Int
        var index = 0
        var failed = false
        var skippedFrames: Int { 0 }
        var exposure: CameraExposure? { nil }

        init(total: Int, failEvery: Int) throws {
            var empty = GrayImage(width: 320, height: 240, fill: 190)
            for y in 0..<240 { for x in 0..<320 where (x * 7 + y * 13) % 31 == 0 { empty[x, y] = 150 } }
            var a = empty, b = empty
            let qrA = try QRCodeImage.render("SOAK-A", moduleSize: 3), qrB = try QRCodeImage.render("SOAK-B-0123456789", moduleSize: 3)
            a.paste(qrA, x: 160 - qrA.width / 2, y: 120 - qrA.height / 2)
            b.paste(qrB, x: 160 - qrB.width / 2, y: 120 - qrB.height / 2)
            let dark = GrayImage(width: 320, height: 240, fill: 20)
            frames = [empty, a, empty, b, dark]
            self.total = total
            self.failEvery = failEvery
        }

        func open() throws -> CameraDescription {
            CameraDescription(device: "soak", format: "GREY", width: 320, height: 240, fps: 30)
        }

        func nextFrame(timeoutMs: Int) throws -> FrameWait {
            guard index < total else { return .ended }
            if index > 0, index % failEvery == 0, !failed {
                failed = true
                throw CameraError("soak unplug", errno: ENODEV)
            }
            failed = false
            // 30 frames per picture, then the next: each code is held for a second.
            let picture = frames[ProcessInfo.processInfo.environment["KIOSK_SOAK_PICTURE"].flatMap { Int($0) } ?? ((index / 30) % frames.count)]
            let i = index
            index += 1
            return picture.pixels.withUnsafeBufferPointer { buf in
                .frame(Frame(luma: LumaPlane(base: buf.baseAddress!, width: 320, height: 240, rowStride: 320),
                             sequence: UInt64(i), timestampNs: UInt64(i) * 33_333_333 * 4, capturedNs: monotonicNanoseconds()))
            }
        }

        func close() {}
    }

    static func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
        return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func descriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    func testHundredThousandFramesWithFaultsDoNotGrow() throws {
        guard ProcessInfo.processInfo.environment["KIOSK_SOAK"] == "1" else {
            throw XCTSkip("the soak runs with `make soak` (KIOSK_SOAK=1)")
        }
        signal(SIGPIPE, SIG_IGN)
        let env = ProcessInfo.processInfo.environment
        let total = Int(env["KIOSK_SOAK_FRAMES"] ?? "") ?? 100_000
        // For finding what grows: KIOSK_SOAK_WITHOUT=hook,buzzer,torch leaves parts out.
        let without = Set((env["KIOSK_SOAK_WITHOUT"] ?? "").split(separator: ",").map(String.init))
        let camera = try SoakCamera(total: total, failEvery: 1_000)
        let chip = FakeChip()
        var reports = 0, lines = 0
        let logger = Logger(level: .info) { _ in lines += 1 }
        var config = Configuration()
        config.repeatMs = 500
        config.beepMs = 5
        let buzzer = DoorReader(configuration: config, lines: .init(buzzer: try SwitchedOutput(chip: chip, offset: 18, activeLow: false)),
                                logger: logger, clock: MonotonicClock())
        let torch = Torch(policy: TorchPolicy(settings: .init(mode: .auto, onBelow: 50, offAbove: 80, holdNs: 2_000_000_000)),
                          output: try SwitchedOutput(chip: chip, offset: 17, activeLow: false), logger: logger)
        let hook = ScanHook(program: "/bin/true", environment: [:], logger: logger, clock: MonotonicClock())
        let clock = ManualClock()
        let svc = ScanService(configuration: config, source: camera, features: ScanFeatures(door: without.contains("buzzer") ? nil : buzzer, hook: without.contains("hook") ? nil : hook, torch: without.contains("torch") ? nil : torch), logger: logger, stop: StopSignal(), clock: clock)
        var warm = (rss: 0, fds: 0)
        var peak = 0
        svc.observe().onReport = { _, _ in reports += 1 }
        svc.observe().onFrame = { n in
            if n == 10_000 {
                XCTAssertEventually("the scan program idle at frame 10,000", within: 60) { hook.isIdle }
                warm = (Self.residentBytes(), Self.descriptors())
            }
            if n % 1000 == 0 { peak = max(peak, Self.residentBytes()) }
        }
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEventually("the scan program idle at the end", within: 60) { hook.isIdle }
        let end = (rss: Self.residentBytes(), fds: Self.descriptors())
        hook.shutDown()
        buzzer.shutDown()
        torch.shutDown()
        print(String(format: "soak: %d frames, %d reports, %d reopenings, %d torch changes, %d hook runs, %d log lines; RSS after warm-up %.2f MB, at the end %.2f MB (growth %+.3f MB), peak %.2f MB; descriptors %d -> %d",
                     svc.frames, reports, svc.reopenings, torch.changes, hook.finished, lines,
                     Double(warm.rss) / 1e6, Double(end.rss) / 1e6, Double(end.rss - warm.rss) / 1e6, Double(peak) / 1e6, warm.fds, end.fds))
        XCTAssertEqual(svc.frames, total)
        XCTAssertEqual(svc.reopenings, (total - 1) / 1000)
        XCTAssertGreaterThan(reports, 1000)
        XCTAssertLessThan(end.rss - warm.rss, 1_000_000, "RSS grew by more than 1 MB after warm-up")
        XCTAssertEqual(end.fds, warm.fds)
    }
}
