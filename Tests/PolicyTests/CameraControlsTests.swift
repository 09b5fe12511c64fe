// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The control plans against cameras as their libraries describe them.
final class CameraControlsTests: XCTestCase {
    // The Camera Module 3 (imx708) as the Raspberry Pi IPA advertises it: LensPosition 0-15
    // dioptres, default 1.0 ("rpi.af" map and ranges.normal.default in imx708.json); the Af* and
    // Ae* enums of libcamera's control_ids (AfMode Manual/Auto/Continuous, AeConstraintMode
    // Normal/Highlight/Shadows/Custom, AeExposureMode Normal/Short/Long/Custom).
    static let imx708: [LibcameraControlOffer] = [
        .init(name: "AfMode", minimum: 0, maximum: 2, defaultValue: 0),
        .init(name: "AfRange", minimum: 0, maximum: 2, defaultValue: 0),
        .init(name: "AfSpeed", minimum: 0, maximum: 1, defaultValue: 0),
        .init(name: "AfMetering", minimum: 0, maximum: 1, defaultValue: 0),
        .init(name: "AfWindows", minimum: 0, maximum: 0),
        .init(name: "AfTrigger", minimum: 0, maximum: 1, defaultValue: 0),
        .init(name: "AfPause", minimum: 0, maximum: 2, defaultValue: 0),
        .init(name: "LensPosition", minimum: 0, maximum: 15, defaultValue: 1),
        .init(name: "AeEnable", minimum: 0, maximum: 1, defaultValue: 1),
        .init(name: "AeMeteringMode", minimum: 0, maximum: 3, defaultValue: 0),
        .init(name: "AeConstraintMode", minimum: 0, maximum: 3, defaultValue: 0),
        .init(name: "AeExposureMode", minimum: 0, maximum: 3, defaultValue: 0),
        .init(name: "ScalerCrop", minimum: 0, maximum: 0),
        .init(name: "FrameDurationLimits", minimum: 33, maximum: 120_000),
    ]
    /// The Camera Module 2 (imx219): the same IPA, no lens motor.
    static let imx219 = imx708.filter { !$0.name.hasPrefix("Af") && $0.name != "LensPosition" }
    /// vimc, libcamera's virtual test pipeline: no lens, no AE modes.
    static let vimc: [LibcameraControlOffer] = [.init(name: "Brightness", minimum: -1, maximum: 1),
                                                .init(name: "Contrast", minimum: 0, maximum: 2)]

    // A Logitech C920 as uvcvideo lists it (v4l2-ctl --list-ctrls): focus_absolute 0-250 step 5,
    // focus_automatic_continuous default on, exposure_dynamic_framerate, backlight_compensation
    // 0-1, power_line_frequency menu 0-2 default 2 (60 Hz); no auto_focus_range.
    static let c920: [V4L2CameraControl: V4L2ControlOffer] = [
        .focusAbsolute: .init(minimum: 0, maximum: 250, step: 5, defaultValue: 0),
        .focusAuto: .init(minimum: 0, maximum: 1, defaultValue: 1),
        .exposureAutoPriority: .init(minimum: 0, maximum: 1, defaultValue: 0),
        .backlightCompensation: .init(minimum: 0, maximum: 1, defaultValue: 0),
        .powerLineFrequency: .init(minimum: 0, maximum: 2, defaultValue: 2),
    ]
    /// A Logitech C270: fixed focus.
    static let c270: [V4L2CameraControl: V4L2ControlOffer] = [
        .exposureAutoPriority: .init(minimum: 0, maximum: 1, defaultValue: 0),
        .backlightCompensation: .init(minimum: 0, maximum: 1, defaultValue: 0),
        .powerLineFrequency: .init(minimum: 0, maximum: 2, defaultValue: 2),
    ]

    func testFocusSettingsParseAsInterfaceMdWritesThem() {
        XCTAssertEqual(FocusSetting.parse("15cm"), .distance(centimetres: 15))
        XCTAssertEqual(FocusSetting.parse("5cm"), .distance(centimetres: 5))
        XCTAssertEqual(FocusSetting.parse("100cm"), .distance(centimetres: 100))
        XCTAssertEqual(FocusSetting.parse("auto"), .auto)
        XCTAssertEqual(FocusSetting.parse("camera"), .camera)
        XCTAssertEqual(FocusSetting.parse("v4l2:120"), .v4l2(120))
        for bad in ["4cm", "101cm", "15", "cm", "15 cm", "v4l2:", "v4l2:-1", "v4l2:x", "Auto", "", "0x10cm", "v4l2:99999999999999999999"] {
            XCTAssertNil(FocusSetting.parse(bad), bad)
        }
        XCTAssertEqual(FocusSetting.distance(centimetres: 15).dioptres!, 6.667, accuracy: 0.001)
    }

    // MARK: libcamera

    func testACameraModule3IsFocusedAtFifteenCentimetresInTheStartControlsManualModeFirst() {
        let plan = LibcameraControls.atStart(CameraSettings(), offered: Self.imx708, afWindow: nil)
        XCTAssertEqual(plan.settings.map(\.name), ["AfMode", "LensPosition", "AeMeteringMode", "AeConstraintMode", "AeExposureMode"])
        XCTAssertEqual(plan.settings[0].value, .int(0))
        guard case .float(let d) = plan.settings[1].value else { return XCTFail("LensPosition is a float") }
        XCTAssertEqual(d, 100.0 / 15, accuracy: 1e-9)
        XCTAssertEqual(plan.settings[3].value, .int(1))  // highlight
        XCTAssertEqual(plan.settings[4].value, .int(1))  // short
        XCTAssertEqual(plan.missing, [])
        XCTAssertFalse(plan.fixedFocus)
        XCTAssertEqual(plan.report.set.first, "AfMode=manual")
        XCTAssertEqual(plan.report.set[1], "LensPosition=6.67")
    }

    func testTheLensPositionIsClampedToTheControlsRange() {
        // 5 cm is 20 dioptres: beyond the standard lens's 15.
        let near = LibcameraControls.atStart(CameraSettings(focus: .distance(centimetres: 5)), offered: Self.imx708, afWindow: nil)
        XCTAssertEqual(near.settings[1], LibcameraControlSetting("LensPosition", .float(15)))
        var farLimited = Self.imx708
        farLimited[7] = .init(name: "LensPosition", minimum: 2, maximum: 15, defaultValue: 2)
        let far = LibcameraControls.atStart(CameraSettings(focus: .distance(centimetres: 100)), offered: farLimited, afWindow: nil)
        XCTAssertEqual(far.settings[1], LibcameraControlSetting("LensPosition", .float(2)))
    }

    func testAutoIsContinuousMacroFastOnTheROIWindow() {
        // The default ROI (0.25,0.25,0.5,0.5) on a 4608x2592 ScalerCropMaximum at the origin.
        let crop = PixelRect(x: 0, y: 0, width: 4608, height: 2592)
        let window = LibcameraControls.afWindow(sensorRegion: NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5), crop: crop)
        XCTAssertEqual(window, PixelRect(x: 1152, y: 648, width: 2304, height: 1296))
        let plan = LibcameraControls.atStart(CameraSettings(focus: .auto), offered: Self.imx708, afWindow: window)
        XCTAssertEqual(plan.report.set, ["AfMode=continuous", "AfRange=macro", "AfSpeed=fast", "AfMetering=windows",
                                         "AfWindows=2304x1296+1152+648", "AeMeteringMode=centre-weighted",
                                         "AeConstraintMode=highlight", "AeExposureMode=short"])
        XCTAssertEqual(plan.missing, [])
        // A crop that is not at the origin (a 2x2 binned mode's centred crop): the window moves with it.
        let binned = PixelRect(x: 16, y: 40, width: 4576, height: 2512)
        XCTAssertEqual(LibcameraControls.afWindow(sensorRegion: NormalizedRect(x: 0, y: 0, width: 1, height: 1), crop: binned), binned)
        // Zoomed: the window is recomputed for the new crop.
        let zoomed = PixelRect(x: 1152, y: 648, width: 2304, height: 1296)
        XCTAssertEqual(LibcameraControls.afWindowsUpdate(CameraSettings(focus: .auto), plan: plan,
                                                         sensorRegion: NormalizedRect(x: 0, y: 0, width: 1, height: 1), crop: zoomed),
                       [LibcameraControlSetting("AfWindows", .rectangles([zoomed]))])
        XCTAssertNil(LibcameraControls.afWindowsUpdate(CameraSettings(), plan: plan,
                                                       sensorRegion: NormalizedRect(x: 0, y: 0, width: 1, height: 1), crop: zoomed))
    }

    func testACameraModule2GetsNoFocusControlAndIsCalledFixedFocus() {
        for focus in [FocusSetting.distance(centimetres: 15), .auto] {
            let plan = LibcameraControls.atStart(CameraSettings(focus: focus), offered: Self.imx219, afWindow: PixelRect(x: 0, y: 0, width: 9, height: 9))
            XCTAssertEqual(plan.settings.map(\.name), ["AeMeteringMode", "AeConstraintMode", "AeExposureMode"], "\(focus)")
            XCTAssertEqual(plan.missing, ["AfMode", "LensPosition"])
            XCTAssertTrue(plan.fixedFocus)
        }
    }

    func testNothingIsSentThatTheCameraDoesNotAdvertise() {
        let settings: [CameraSettings] = [CameraSettings(), CameraSettings(focus: .auto), CameraSettings(focus: .v4l2(3)),
                                          CameraSettings(focus: .camera, exposure: .camera)]
        for offered in [Self.imx708, Self.imx219, Self.vimc, []] {
            let names = Set(offered.map(\.name))
            for s in settings {
                let plan = LibcameraControls.atStart(s, offered: offered, afWindow: PixelRect(x: 0, y: 0, width: 9, height: 9))
                for setting in plan.settings { XCTAssertTrue(names.contains(setting.name), "\(setting) sent to a camera without it") }
            }
        }
        let vimc = LibcameraControls.atStart(CameraSettings(), offered: Self.vimc, afWindow: nil)
        XCTAssertEqual(vimc.settings, [])
        XCTAssertEqual(vimc.missing, ["AfMode", "LensPosition", "AeMeteringMode", "AeConstraintMode", "AeExposureMode"])
        // `camera` sets nothing at all.
        let none = LibcameraControls.atStart(CameraSettings(focus: .camera, exposure: .camera), offered: Self.imx708, afWindow: nil)
        XCTAssertEqual(none, CameraControlPlan())
        // An enum value the camera does not offer is not sent either.
        var noShort = Self.imx708
        noShort[11] = .init(name: "AeExposureMode", minimum: 0, maximum: 0)
        XCTAssertEqual(LibcameraControls.atStart(CameraSettings(), offered: noShort, afWindow: nil).missing, ["AeExposureMode"])
    }

    // MARK: V4L2

    func testAFixedUSBFocusTurnsAutofocusOffFirstThenSetsTheValueOnItsStep() {
        let plan = V4L2CameraControls.plan(CameraSettings(focus: .v4l2(122)), offered: Self.c920)
        XCTAssertEqual(plan.settings.map(\.description), ["focus_automatic_continuous=0", "focus_absolute=120",
                                                          "exposure_dynamic_framerate=0", "backlight_compensation=0",
                                                          "power_line_frequency=1"])
        XCTAssertEqual(plan.missing, [])
        XCTAssertEqual(V4L2CameraControls.plan(CameraSettings(focus: .v4l2(123)), offered: Self.c920).settings[1].value, 125)
        XCTAssertEqual(V4L2CameraControls.plan(CameraSettings(focus: .v4l2(999)), offered: Self.c920).settings[1].value, 250)
    }

    func testADistanceOrAutoKeepsAUSBCamerasAutofocusAndSaysItHasNoNearRange() {
        for focus in [FocusSetting.distance(centimetres: 15), .auto] {
            let plan = V4L2CameraControls.plan(CameraSettings(focus: focus, mainsHz: 60), offered: Self.c920)
            XCTAssertEqual(plan.settings.map(\.description), ["focus_automatic_continuous=1", "exposure_dynamic_framerate=0",
                                                              "backlight_compensation=0", "power_line_frequency=2"])
            XCTAssertEqual(plan.missing, ["auto_focus_range"])
        }
        var withRange = Self.c920
        withRange[.autoFocusRange] = .init(minimum: 0, maximum: 3, defaultValue: 0)
        XCTAssertEqual(V4L2CameraControls.plan(CameraSettings(), offered: withRange).settings.prefix(2).map(\.description),
                       ["focus_automatic_continuous=1", "auto_focus_range=2"])
    }

    func testAFixedFocusWebcamGetsNoFocusControl() {
        let plan = V4L2CameraControls.plan(CameraSettings(mainsHz: 0), offered: Self.c270)
        XCTAssertEqual(plan.settings.map(\.description), ["exposure_dynamic_framerate=0", "backlight_compensation=0", "power_line_frequency=0"])
        XCTAssertEqual(plan.missing, ["focus_automatic_continuous"])
        XCTAssertTrue(plan.fixedFocus)
        XCTAssertEqual(V4L2CameraControls.plan(CameraSettings(focus: .v4l2(10)), offered: Self.c270).missing, ["focus_absolute"])
        // The camera's own exposure and focus: only the mains filter.
        XCTAssertEqual(V4L2CameraControls.plan(CameraSettings(focus: .camera, exposure: .camera), offered: Self.c920).settings,
                       [V4L2ControlSetting(.powerLineFrequency, 1)])
        // Nothing at all offered: nothing set, all missing.
        let bare = V4L2CameraControls.plan(CameraSettings(focus: .v4l2(5)), offered: [:])
        XCTAssertEqual(bare.settings, [])
        XCTAssertEqual(bare.missing, ["focus_absolute", "exposure_dynamic_framerate", "backlight_compensation", "power_line_frequency"])
    }

    func testWhatTheCameraChangedAtStreamStartIsSetAgainWithAutofocusOffFirst() {
        let plan = V4L2CameraControls.plan(CameraSettings(focus: .v4l2(120)), offered: Self.c920).settings
        // Logitech firmware turns autofocus back on and forgets the position.
        XCTAssertEqual(V4L2CameraControls.drifted(plan, readBack: [.focusAuto: 1, .focusAbsolute: 0, .exposureAutoPriority: 0,
                                                                   .backlightCompensation: 0, .powerLineFrequency: 1]).map(\.description),
                       ["focus_automatic_continuous=0", "focus_absolute=120"])
        // Only the position lost: autofocus off again before it all the same.
        XCTAssertEqual(V4L2CameraControls.drifted(plan, readBack: [.focusAuto: 0, .focusAbsolute: 0]).map(\.description),
                       ["focus_automatic_continuous=0", "focus_absolute=120"])
        XCTAssertEqual(V4L2CameraControls.drifted(plan, readBack: [.focusAuto: 0, .focusAbsolute: 120, .powerLineFrequency: 2]),
                       [V4L2ControlSetting(.powerLineFrequency, 1)])
        XCTAssertEqual(V4L2CameraControls.drifted(plan, readBack: [:]), [])
    }
}
