// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Reader
import Foundation
import GPIO
@testable import Kiosk
import Policy
@testable import Systemd
import TestSupport
import XCTest

final class DoctorTests: XCTestCase {
    func doctor(_ env: [String: String], chip: FakeChip? = nil, uid: uid_t = 0) -> [Doctor.Check] {
        var d = Doctor(configuration: Configuration.read(environment: env).configuration)
        if let chip { d.openChip = { _ in chip } }
        d.groups = { (uid, [1000]) }
        d.systemdState = { nil }
        return d.run()
    }

    func testMissingCameraFails() {
        let checks = doctor(["KIOSK_CAMERA": "/dev/video-nowhere"])
        XCTAssertEqual(checks.first?.verdict, .fail)
        XCTAssertTrue(checks.first?.detail.contains("/dev/video-nowhere does not exist") ?? false)
    }

    func testNotAVideoDeviceFails() {
        let checks = doctor(["KIOSK_CAMERA": "/dev/null"])
        XCTAssertTrue(checks.contains { $0.verdict == .fail && $0.subject == "camera" && $0.detail.contains("cannot open") }, "\(checks.map(\.line))")
    }

    func testMissingChipFailsThroughTheRealLibgpiod() {
        let checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_GPIO_CHIP": "gpiochip977", "KIOSK_BUZZER_LINE": "4"])
        let gpio = checks.first { $0.subject == "gpio" }
        XCTAssertEqual(gpio?.verdict, .fail)
        XCTAssertTrue(gpio?.detail.contains("gpiochip977") ?? false)
    }

    func testBusyLineNamesItsHolderAndFreeLinePasses() {
        let chip = FakeChip()
        chip.busy[18] = "door-lock.py"
        let checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_BUZZER_LINE": "18", "KIOSK_TORCH_LINE": "17"], chip: chip)
        let buzzer = checks.first { $0.subject == "gpio buzzer" }
        XCTAssertEqual(buzzer?.verdict, .fail)
        XCTAssertTrue(buzzer?.detail.contains("\"door-lock.py\"") ?? false)
        XCTAssertEqual(checks.first { $0.subject == "gpio torch" }?.verdict, .pass)
        XCTAssertTrue(checks.contains { $0.subject == "gpio" && $0.detail.contains("fake-gpio") })
    }

    func testLineHeldByTheRunningKioskIsOnlyAWarningAndAMissingLineFails() {
        let chip = FakeChip()
        chip.busy[18] = "kiosk"
        var checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_BUZZER_LINE": "18"], chip: chip)
        XCTAssertEqual(checks.first { $0.subject == "gpio buzzer" }?.verdict, .warn)
        checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_BUZZER_LINE": "40"], chip: chip)
        XCTAssertEqual(checks.first { $0.subject == "gpio buzzer" }?.verdict, .fail)
    }

    func testTheDoorsLinesHoldersPatternsAndAWiegandSample() {
        let chip = FakeChip()
        chip.busy[23] = "door-relay.py"
        let exe = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-doc-verdict-\(UUID().uuidString)").path
        XCTAssertTrue(FileManager.default.createFile(atPath: exe, contents: Data("#!/bin/sh\nexit 1\n".utf8)))
        chmod(exe, 0o755)
        defer { unlink(exe) }
        var checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": exe, "KIOSK_BUZZER_LINE": "18",
                             "KIOSK_GRANTED_LED_LINE": "5", "KIOSK_DENIED_LED_LINE": "6", "KIOSK_DOOR_LINE": "23",
                             "KIOSK_BEEP_DENIED": "60,60,60"], chip: chip)
        let lines = checks.map(\.line)
        XCTAssertTrue(lines.contains("PASS gpio granted LED: line 5 (GPIO5) is free"), "\(lines)")
        XCTAssertTrue(lines.contains("PASS gpio denied LED: line 6 (GPIO6) is free"), "\(lines)")
        XCTAssertTrue(lines.contains("FAIL gpio door strike: line 23 (GPIO23) is held by \"door-relay.py\": stop that program or choose another line"), "\(lines)")
        let verdict = checks.first { $0.subject == "verdict" }?.detail ?? ""
        XCTAssertTrue(verdict.contains("within 2000 ms"), verdict)
        XCTAssertTrue(verdict.contains("read silent, granted 400, denied 60,60,60, error 200,200,200 on line 18"), verdict)
        XCTAssertEqual(checks.first { $0.subject == "door" }?.detail,
                       "granted LED line 5, denied LED line 6 lit 2000 ms, door strike line 23 open 3000 ms on each grant")
        checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21",
                         "KIOSK_WIEGAND_FACILITY": "18"], chip: chip)
        XCTAssertTrue(checks.map(\.line).contains("PASS gpio wiegand D0: line 20 (GPIO20) is free"))
        let wiegand = checks.first { $0.subject == "wiegand" }?.detail ?? ""
        XCTAssertTrue(wiegand.hasSuffix("the code 18:36963 is sent as 0 00010010 1001000001100011 1"), wiegand)
        XCTAssertTrue(wiegand.contains("50 us pulses every 2000 us (the pin goes high for a pulse)"), wiegand)
        // None of the door's variables: no door lines in the doctor's say.
        checks = doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_BUZZER_LINE": "18"], chip: chip)
        XCTAssertFalse(checks.contains { ["verdict", "door", "wiegand"].contains($0.subject) })
    }

    func testAUserOutsideTheDevicesGroupIsToldHowToJoinIt() throws {
        // /dev/null is world-writable; a root-only file is the stand-in for a video device.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-dev-\(UUID().uuidString)").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { unlink(path) }
        chmod(path, 0o660)
        var st = stat()
        stat(path, &st)
        var d = Doctor(configuration: Configuration())
        d.groups = { (1234, [1000]) }
        let check = d.access(path: path, st: st, role: "camera", group: "video")
        XCTAssertEqual(check.verdict, .fail)
        XCTAssertTrue(check.detail.contains("usermod -aG"))
        d.groups = { (1234, [st.st_gid]) }
        XCTAssertEqual(d.access(path: path, st: st, role: "camera", group: "video").verdict, .pass)
    }

    func testFocusAndExposureAsTheCameraTookThem() {
        // A Camera Module 2: no lens motor. Doctor says it is fixed-focus and how to check it.
        let fixed = Doctor(configuration: Configuration()).controlChecks(
            CameraControlReport(set: ["AeConstraintMode=highlight"], missing: ["AfMode", "LensPosition"], fixedFocus: true), lens: nil)
        XCTAssertEqual(fixed.map(\.subject), ["controls", "focus"])
        XCTAssertEqual(fixed[0].verdict, .pass)
        XCTAssertTrue(fixed[0].detail.contains("the camera lacks AfMode,LensPosition"), fixed[0].detail)
        XCTAssertEqual(fixed[1].verdict, .warn)
        XCTAssertTrue(fixed[1].detail.hasPrefix("fixed focus") && fixed[1].detail.contains("kiosk aim"), fixed[1].detail)
        // A Camera Module 3 held at 15 cm.
        let held = Doctor(configuration: Configuration()).controlChecks(
            CameraControlReport(set: ["AfMode=manual", "LensPosition=6.67"], missing: [], fixedFocus: false), lens: LensReading(position: 6.67))
        XCTAssertEqual(held.map(\.verdict), [.pass, .pass])
        XCTAssertEqual(held[1].detail, "lens at 6.67 (KIOSK_FOCUS=15cm)")
        // A refused control is a warning; a replay has no controls to tell.
        let refused = Doctor(configuration: Configuration()).controlChecks(
            CameraControlReport(set: [], missing: [], fixedFocus: false, refused: ["backlight_compensation=0: EIO"]), lens: nil)
        XCTAssertEqual(refused.first?.verdict, .warn)
        XCTAssertEqual(Doctor(configuration: Configuration()).controlChecks(nil, lens: nil).count, 0)
    }

    func testBrightnessAndTorchAdviceFromAReplay() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ImageFile.writePGM(GrayImage(width: 64, height: 48, fill: 30), to: folder.appendingPathComponent("0.pgm").path)
        let checks = doctor(["KIOSK_CAMERA": "replay:\(folder.path)"])
        let b = try XCTUnwrap(checks.first { $0.subject == "brightness" })
        XCTAssertTrue(b.detail.hasPrefix("30.0"), b.detail)
        XCTAssertTrue(b.detail.contains("the torch would go on"), b.detail)
    }
}

final class SnapshotTests: XCTestCase {
    func testUprightPictureWithTheROIOutlinedForEveryMount() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-snap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for mount in Mount.all {
            // An upright picture with a dark marker in its top-left corner, as the camera sees it.
            var upright = GrayImage(width: 160, height: 120, fill: 128)
            for y in 0..<12 { for x in 0..<16 { upright[x, y] = 10 } }
            let sensor = SensorViewFixture.sensorImage(upright, mount: mount)
            let frames = folder.appendingPathComponent("frames-\(mount.rotation.rawValue)-\(mount.mirrored)")
            try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
            try ImageFile.writePGM(sensor, to: frames.appendingPathComponent("0.pgm").path)
            let out = folder.appendingPathComponent("snap.png").path
            let env = ["KIOSK_CAMERA": "replay:\(frames.path)", "KIOSK_ROTATE": String(mount.rotation.rawValue),
                       "KIOSK_MIRROR": mount.mirrored ? "1" : "0", "KIOSK_ROI": "0.25,0.25,0.5,0.5"]
            XCTAssertEqual(Snapshot.run([out], environment: env), 0)
            let picture = try ImageFile.read(path: out)
            XCTAssertEqual(picture.width, 160, "\(mount)")
            XCTAssertEqual(picture.height, 120 + 22, "upright height plus the caption band, \(mount)")
            XCTAssertEqual(picture[2, 2], 10, "the marker is upright top-left, \(mount)")
            XCTAssertEqual(picture[157, 117], 128)
            // ROI 40..119 x 30..89: white outline, black inside it.
            XCTAssertEqual(picture[40, 60], 255)
            XCTAssertEqual(picture[41, 60], 0)
            XCTAssertEqual(picture[119, 60], 255)
            XCTAssertEqual(picture[80, 30], 255)
            XCTAssertEqual(picture[80, 31], 0)
            XCTAssertEqual(picture[80, 89], 255)
            XCTAssertEqual(picture[80, 60], 128, "the inside is the picture")
            // The caption band has white letters on black.
            let band = (120..<142).flatMap { y in (0..<160).map { picture[$0, y] } }
            XCTAssertTrue(band.contains(255) && band.contains(0))
        }
    }

    func testSensorOptionKeepsTheCamerasOrientationWithTheROIMapped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-snap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try ImageFile.writePGM(GrayImage(width: 120, height: 160, fill: 128), to: folder.appendingPathComponent("0.pgm").path)
        let out = folder.appendingPathComponent("s.png").path
        XCTAssertEqual(Snapshot.run(["--sensor", out], environment: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_ROTATE": "90",
                                                                     "KIOSK_ROI": "0,0,0.5,0.25"]), 0)
        let picture = try ImageFile.read(path: out)
        XCTAssertEqual(picture.width, 120)
        // Upright top strip of a camera turned 90 degrees: the sensor's left columns, lower half.
        let roi = Mount(rotation: .quarter).sensorROI(fromUpright: NormalizedRect(x: 0, y: 0, width: 0.5, height: 0.25), sensorWidth: 120, sensorHeight: 160)
        XCTAssertEqual(roi, PixelRect(x: 0, y: 80, width: 30, height: 80))
        XCTAssertEqual(picture[15, 80], 255)
        XCTAssertEqual(picture[15, 81], 0)
    }

    func testNoCameraFails() {
        XCTAssertEqual(Snapshot.run(["/tmp/never.png"], environment: ["KIOSK_CAMERA": "replay:/nonexistent"]), 1)
    }
}

enum SensorViewFixture {
    /// The sensor frame made by undoing the mount with the test support's own rotation.
    static func sensorImage(_ upright: GrayImage, mount: Mount) -> GrayImage {
        let unturned = rotatedClockwise(upright, quarterTurns: -mount.rotation.rawValue / 90)
        return mount.mirrored ? mirroredLeftRight(unturned) : unturned
    }
}
