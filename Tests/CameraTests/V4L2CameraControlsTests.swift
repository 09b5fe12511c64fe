// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Policy
import TestSupport
import XCTest

/// The focus and exposure sequence a V4L2 camera receives at open, against fakes with a
/// webcam's control lists and rules. The same sequence on a real driver: the VM tier's UVC gadget.
final class V4L2CameraControlsTests: XCTestCase {
    let auto = V4L2Control.id(.focusAuto), absolute = V4L2Control.id(.focusAbsolute)
    let priority = V4L2Control.id(.exposureAutoPriority), backlight = V4L2Control.id(.backlightCompensation)
    let mains = V4L2Control.id(.powerLineFrequency)

    /// A Logitech C920's controls as uvcvideo lists them; it refuses `focus_absolute` (EBUSY, as
    /// uvcvideo answers for an inactive control) while its autofocus is on.
    func c920() -> FakeV4L2Device {
        let fake = FakeV4L2Device()
        fake.controls = [
            auto: (V4L2ControlRange(minimum: 0, maximum: 1, defaultValue: 1), 1),
            absolute: (V4L2ControlRange(minimum: 0, maximum: 250, defaultValue: 0, step: 5), 0),
            priority: (V4L2ControlRange(minimum: 0, maximum: 1, defaultValue: 0), 1),
            backlight: (V4L2ControlRange(minimum: 0, maximum: 1, defaultValue: 0), 1),
            mains: (V4L2ControlRange(minimum: 0, maximum: 2, defaultValue: 2), 2),
        ]
        let auto = self.auto, absolute = self.absolute
        fake.refuseControl = { id, _, controls in id == absolute && controls[auto]?.value == 1 ? EBUSY : nil }
        return fake
    }

    /// A Logitech C270: no focus control.
    func c270() -> FakeV4L2Device {
        let fake = FakeV4L2Device()
        fake.controls = [
            priority: (V4L2ControlRange(minimum: 0, maximum: 1, defaultValue: 0), 1),
            backlight: (V4L2ControlRange(minimum: 0, maximum: 1, defaultValue: 0), 0),
            mains: (V4L2ControlRange(minimum: 0, maximum: 2, defaultValue: 2), 2),
        ]
        return fake
    }

    func camera(_ fake: FakeV4L2Device, _ settings: CameraSettings) -> V4L2Camera {
        V4L2Camera(device: "/dev/video9", width: 8, height: 4, fps: 30, settings: settings, v4l2: fake)
    }

    func testAFixedFocusIsSetWithAutofocusOffFirstOnACameraThatRefusesTheOtherOrder() throws {
        let fake = c920()
        let camera = camera(fake, CameraSettings(focus: .v4l2(122)))
        _ = try camera.open()
        defer { camera.close() }
        XCTAssertEqual(fake.controlsSet.map { [$0.id, UInt32($0.value)] },
                       [[auto, 0], [absolute, 120], [priority, 0], [backlight, 0], [mains, 1]])
        XCTAssertEqual(camera.controls?.set, ["focus_automatic_continuous=0", "focus_absolute=120", "exposure_dynamic_framerate=0",
                                              "backlight_compensation=0", "power_line_frequency=1"])
        XCTAssertEqual(camera.controls?.missing, [])
        XCTAssertEqual(camera.controls?.refused, [])
        XCTAssertEqual(camera.lens, LensReading(position: 120))
    }

    func testWhatTheFirmwareResetsAtStreamStartIsSetAgain() throws {
        let fake = c920()
        let (auto, absolute) = (self.auto, self.absolute)
        fake.onStreamOn = { f in
            f.controls[auto]!.value = 1
            f.controls[absolute]!.value = 0
        }
        let camera = camera(fake, CameraSettings(focus: .v4l2(60)))
        _ = try camera.open()
        defer { camera.close() }
        XCTAssertEqual(fake.controls[absolute]?.value, 60)
        XCTAssertEqual(fake.controls[auto]?.value, 0)
        XCTAssertEqual(camera.controls?.reapplied, ["focus_automatic_continuous=0", "focus_absolute=60"])
        XCTAssertEqual(Array(fake.controlsSet.suffix(2).map { [$0.id, UInt32($0.value)] }), [[auto, 0], [absolute, 60]])
    }

    func testADistanceKeepsAWebcamsAutofocusAndAFixedFocusWebcamIsSaidToBeOne() throws {
        let fake = c920()
        let camera = camera(fake, CameraSettings())
        _ = try camera.open()
        XCTAssertEqual(camera.controls?.set.first, "focus_automatic_continuous=1")
        XCTAssertEqual(camera.controls?.missing, ["auto_focus_range"])
        camera.close()

        let fixed = c270()
        let plain = self.camera(fixed, CameraSettings(mainsHz: 60))
        _ = try plain.open()
        defer { plain.close() }
        XCTAssertEqual(plain.controls?.fixedFocus, true)
        XCTAssertEqual(plain.controls?.missing, ["focus_automatic_continuous"])
        XCTAssertEqual(fixed.controlsSet.map(\.id), [priority, backlight, mains])
        XCTAssertEqual(fixed.controls[mains]?.value, 2)
        XCTAssertNil(plain.lens)
    }

    func testAFocusSetWhileStreamingIsNotUndoneByTheFirstFramesReadBack() throws {
        // kiosk aim --sweep on a camera opened with autofocus kept: the sweep's first step comes
        // before the first frame, whose read-back must not turn the open's autofocus back on.
        let fake = c920()
        let camera = camera(fake, CameraSettings())
        _ = try camera.open()
        defer { camera.close() }
        XCTAssertEqual(fake.controls[auto]?.value, 1)
        XCTAssertEqual(camera.focusRange, V4L2ControlOffer(minimum: 0, maximum: 250, step: 5, defaultValue: 0))
        XCTAssertEqual(try camera.setFocusAbsolute(62), 60)
        fake.deliveries.append(.init(bytes: [UInt8](repeating: 128, count: fake.format!.sizeImage), timestampNs: 1_000_000))
        guard case .frame = try camera.nextFrame(timeoutMs: 100) else { return XCTFail("no frame") }
        XCTAssertEqual(fake.controls[auto]?.value, 0)
        XCTAssertEqual(fake.controls[absolute]?.value, 60)
        XCTAssertEqual(camera.lens, LensReading(position: 60))
    }

    func testARefusedControlIsReportedAndTheCameraStillOpens() throws {
        let fake = c920()
        let backlight = self.backlight
        fake.refuseControl = { id, _, _ in id == backlight ? EIO : nil }
        let camera = camera(fake, CameraSettings(focus: .camera))
        XCTAssertNoThrow(try camera.open())
        defer { camera.close() }
        XCTAssertEqual(camera.controls?.set, ["exposure_dynamic_framerate=0", "power_line_frequency=1"])
        XCTAssertEqual(camera.controls?.refused.count, 1)
        XCTAssertTrue(camera.controls?.refused.first?.hasPrefix("backlight_compensation=0: ") ?? false, "\(camera.controls!)")
        // `camera` for focus: the autofocus is left as the camera has it.
        XCTAssertFalse(fake.controlsSet.contains { $0.id == self.auto })
    }
}
