// SPDX-License-Identifier: Apache-2.0
import Camera
import Platform
import Policy
import TestSupport
import XCTest

/// The camera code around the libcamera plugin: zoom, light, stalls. The plugin is a scripted
/// fake here; the real plugin against real libcamera (vimc) is the VM tier's group libcamera.
final class LibcameraCameraTests: XCTestCase {
    /// A Raspberry Pi HQ camera's figures (see SensorZoomTests).
    let hq = LibcameraInfo(id: "/base/soc/i2c0mux/i2c@1/imx477@1a", model: "imx477", format: "YUV420", width: 640, height: 480,
                           fps: 30, canCrop: true, cropMaximum: PixelRect(x: 0, y: 0, width: 4056, height: 3040),
                           controls: [LibcameraControlOffer(name: "AeMeteringMode", minimum: 0, maximum: 3)])
    let unzoomed = PixelRect(x: 2, y: 0, width: 4052, height: 3040)
    let roi = Mount(rotation: .quarter, mirrored: true).sensorRegion(fromUpright: NormalizedRect(x: 0.1, y: 0.2, width: 0.3, height: 0.4))

    func frame(_ camera: LibcameraCamera) throws -> Frame {
        guard case .frame(let f) = try camera.nextFrame(timeoutMs: 100) else { throw CameraError("no frame") }
        return f
    }

    func testZoomAsksForTheCropUnderTheROIOnceTheFirstFrameSaysWhatTheSensorShows() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: hq, picture: GrayImage(width: 640, height: 480, fill: 128), script: [.frames(3)], clock: clock)
        plugin.defaultCrop = unzoomed
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, zoomROI: roi, plugin: plugin, clock: clock)
        let d = try camera.open()
        XCTAssertEqual(d.device, "libcamera (/base/soc/i2c0mux/i2c@1/imx477@1a)")
        XCTAssertEqual(d.format, "YUV420")
        XCTAssertTrue(plugin.crops.isEmpty, "the unzoomed picture's crop is not known before a frame")
        XCTAssertEqual(try frame(camera).view, .whole)
        let expected = SensorZoom.crop(for: roi, reference: unzoomed, maximum: hq.cropMaximum, streamWidth: 640, streamHeight: 480)
        XCTAssertEqual(plugin.crops, [expected])
        XCTAssertEqual(camera.zoomCrop, expected)
        let zoomed = try frame(camera)
        XCTAssertEqual(zoomed.view, SensorZoom.view(of: expected, reference: unzoomed))
        XCTAssertLessThan(zoomed.view.width, 0.6)
        _ = try frame(camera)
        XCTAssertEqual(plugin.crops.count, 1, "asked once")
    }

    func testWithoutZoomOrWithoutScalerCropNoCropIsAsked() throws {
        let clock = ManualClock()
        for (zoom, canCrop) in [(false, true), (true, false)] {
            var info = hq
            info.canCrop = canCrop
            let plugin = FakeLibcameraPlugin(info: info, picture: GrayImage(width: 640, height: 480), script: [.frames(2)], clock: clock)
            plugin.defaultCrop = unzoomed
            let camera = LibcameraCamera(camera: "0", width: 640, height: 480, fps: 30, zoomROI: zoom ? roi : nil, plugin: plugin, clock: clock)
            _ = try camera.open()
            XCTAssertEqual(try frame(camera).view, .whole)
            XCTAssertEqual(try frame(camera).view, .whole)
            XCTAssertTrue(plugin.crops.isEmpty)
        }
    }

    func testTheLightFiguresAreTheLatestFramesMetadata() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: hq, picture: GrayImage(width: 640, height: 480), script: [.frames(2)], clock: clock)
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        _ = try camera.open()
        XCTAssertNil(camera.exposure)
        plugin.light = SensorLight(exposureMicroseconds: 2_000_000, analogueGain: 16, lux: 0.063)
        _ = try frame(camera)
        XCTAssertEqual(camera.exposure, CameraExposure(seconds: 2, gain: 16))
        XCTAssertEqual(camera.lux, 0.063)
        // vimc: no figures at all.
        plugin.light = SensorLight()
        _ = try frame(camera)
        XCTAssertNil(camera.exposure)
        XCTAssertNil(camera.lux)
    }

    /// libcamera's Camera::stop() asserts (aborting the process) on a camera that stopped
    /// delivering: a close after a stall says so, the plugin abandons the camera, and the camera
    /// refuses to reopen with an error that asks for a new process.
    func testAStalledCameraIsAbandonedAndAsksForANewProcess() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: hq, picture: GrayImage(width: 640, height: 480), script: [.frames(1), .silence(21)], clock: clock)
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        _ = try camera.open()
        _ = try frame(camera)
        for _ in 0..<21 {
            guard case .timedOut = try camera.nextFrame(timeoutMs: 100) else { return XCTFail("a frame during the silence") }
        }
        camera.close()
        XCTAssertEqual(plugin.closes, [true])
        XCTAssertTrue(camera.abandoned)
        XCTAssertThrowsError(try camera.open()) { error in
            XCTAssertEqual((error as? CameraError)?.needsRestart, true, "\(error)")
        }
        XCTAssertEqual(plugin.opens, 1, "the plugin is not asked again")
    }

    func testACloseWhileFramesFlowStopsTheCameraAndItReopens() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: hq, picture: GrayImage(width: 640, height: 480), script: [.frames(2), .silence(5), .frames(1)], clock: clock)
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        _ = try camera.open()
        _ = try frame(camera)
        camera.close()
        for _ in 0..<5 { _ = try? camera.nextFrame(timeoutMs: 100) }   // not open: errors, no clock
        _ = try camera.open()
        _ = try frame(camera)
        for _ in 0..<5 { _ = try camera.nextFrame(timeoutMs: 100) }    // 0.5 s of silence: no stall
        camera.close()
        XCTAssertEqual(plugin.closes, [false, false])
        XCTAssertFalse(camera.abandoned)
        XCTAssertEqual(plugin.opens, 2)
    }

    // MARK: focus and exposure

    /// A Camera Module 3 (imx708) as the Raspberry Pi pipeline advertises it (ipa_base.cpp's
    /// control tables; LensPosition's range from the imx708 tuning's map, 0-15, default 1.0).
    /// A 640x480 stream shows a 4:3 crop of the 16:9 sensor.
    let imx708 = LibcameraInfo(
        id: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a", model: "imx708", format: "YUV420", width: 640, height: 480,
        fps: 30, canCrop: true, cropMaximum: PixelRect(x: 0, y: 0, width: 4608, height: 2592),
        controls: [
            LibcameraControlOffer(name: "AeMeteringMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "AeConstraintMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "AeExposureMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "ScalerCrop", minimum: 0, maximum: 0),
            LibcameraControlOffer(name: "FrameDurationLimits", minimum: 33333, maximum: 120000),
            LibcameraControlOffer(name: "AfMode", minimum: 0, maximum: 2),
            LibcameraControlOffer(name: "AfRange", minimum: 0, maximum: 2),
            LibcameraControlOffer(name: "AfSpeed", minimum: 0, maximum: 1),
            LibcameraControlOffer(name: "AfMetering", minimum: 0, maximum: 1),
            LibcameraControlOffer(name: "AfWindows", minimum: 0, maximum: 0),
            LibcameraControlOffer(name: "AfTrigger", minimum: 0, maximum: 1),
            LibcameraControlOffer(name: "LensPosition", minimum: 0, maximum: 15, defaultValue: 1),
        ])
    let imx708Unzoomed = PixelRect(x: 576, y: 0, width: 3456, height: 2592)
    /// A Camera Module 2 (imx219): no lens motor, so no Af* and no LensPosition.
    let imx219 = LibcameraInfo(
        id: "/base/soc/i2c0mux/i2c@1/imx219@10", model: "imx219", format: "YUV420", width: 640, height: 480,
        fps: 30, canCrop: true, cropMaximum: PixelRect(x: 0, y: 0, width: 3280, height: 2464),
        controls: [
            LibcameraControlOffer(name: "AeMeteringMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "AeConstraintMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "AeExposureMode", minimum: 0, maximum: 3, defaultValue: 0),
            LibcameraControlOffer(name: "ScalerCrop", minimum: 0, maximum: 0),
        ])

    func testTheDefaultFocusHoldsTheLensAt15cmFromTheStart() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480), script: [.frames(3)], clock: clock)
        plugin.defaultCrop = imx708Unzoomed
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, sensorROI: roi, plugin: plugin, clock: clock)
        XCTAssertNil(camera.controls)
        _ = try camera.open()
        XCTAssertEqual(plugin.starts.count, 1)
        let start = plugin.starts.first ?? []
        // AfMode manual before LensPosition: the lens never goes to the tuning's 1 m default.
        XCTAssertEqual(start.prefix(2).map(\.name), ["AfMode", "LensPosition"])
        XCTAssertEqual(start.first?.value, .int(0))
        guard case .float(let dioptres)? = start.dropFirst().first?.value else { return XCTFail("\(start)") }
        XCTAssertEqual(dioptres, 100.0 / 15, accuracy: 1e-9)
        XCTAssertEqual(start.dropFirst(2).map(\.description),
                       ["AeMeteringMode=centre-weighted", "AeConstraintMode=highlight", "AeExposureMode=short"])
        XCTAssertEqual((camera as FrameSource).controls?.set, ["AfMode=manual", "LensPosition=6.67", "AeMeteringMode=centre-weighted",
                                              "AeConstraintMode=highlight", "AeExposureMode=short"])
        XCTAssertEqual(camera.controls?.missing, [])
        XCTAssertEqual(camera.controls?.fixedFocus, false)
        for _ in 0..<3 { _ = try frame(camera) }
        XCTAssertEqual(plugin.requestControls, [], "a held lens needs nothing per request")
        // A focus closer than the lens can go is clamped to its range.
        let near = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480), script: [], clock: clock)
        var settings = CameraSettings()
        settings.focus = .distance(centimetres: 5)
        _ = try LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, settings: settings, plugin: near, clock: clock).open()
        XCTAssertEqual(near.starts.first?.first { $0.name == "LensPosition" }?.value, .float(15))
    }

    func testAutofocusLooksAtTheROIAndFollowsTheCrop() throws {
        var settings = CameraSettings()
        settings.focus = .auto
        for zoom in [false, true] {
            let clock = ManualClock()
            let plugin = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480), script: [.frames(4)], clock: clock)
            plugin.defaultCrop = imx708Unzoomed
            let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, settings: settings, sensorROI: roi,
                                         zoomROI: zoom ? roi : nil, plugin: plugin, clock: clock)
            _ = try camera.open()
            let start = plugin.starts.first ?? []
            XCTAssertEqual(start.prefix(4).map(\.description), ["AfMode=continuous", "AfRange=macro", "AfSpeed=fast", "AfMetering=windows"])
            // Before a frame: the ROI in ScalerCropMaximum coordinates.
            let atStart = LibcameraControls.afWindow(sensorRegion: roi, crop: imx708.cropMaximum)
            XCTAssertEqual(start.first { $0.name == "AfWindows" }?.value, .rectangles([atStart]), "zoom \(zoom)")
            XCTAssertTrue(plugin.requestControls.isEmpty)
            _ = try frame(camera)
            // The frames show a crop of the sensor (4:3 of 16:9; with zoom, the area under the
            // ROI): the window moves to where the ROI is in sensor pixels, once.
            guard let given = plugin.requestControls.last, given.count == 1, given[0].name == "AfWindows",
                  case .rectangles(let rects) = given[0].value, rects.count == 1 else {
                return XCTFail("zoom \(zoom): \(plugin.requestControls)")
            }
            let window = rects[0]
            let inUnzoomed = LibcameraControls.afWindow(sensorRegion: roi, crop: imx708Unzoomed)
            if zoom {
                let crop = try XCTUnwrap(camera.zoomCrop)
                XCTAssertEqual(plugin.crops, [crop])
                XCTAssertEqual(window, LibcameraControls.afWindow(sensorRegion: roi.relative(to: SensorZoom.view(of: crop, reference: imx708Unzoomed)),
                                                                  crop: crop))
                XCTAssertTrue(window.x >= crop.x && window.y >= crop.y && window.x + window.width <= crop.x + crop.width
                              && window.y + window.height <= crop.y + crop.height, "\(window) inside \(crop)")
            } else {
                XCTAssertEqual(window, inUnzoomed)
            }
            // The same sensor area either way (to the pixel's rounding).
            for (a, b) in [(window.x, inUnzoomed.x), (window.y, inUnzoomed.y), (window.width, inUnzoomed.width), (window.height, inUnzoomed.height)] {
                XCTAssertLessThanOrEqual(abs(a - b), 2, "zoom \(zoom): \(window) vs \(inUnzoomed)")
            }
            XCTAssertNotEqual(window, atStart)
            for _ in 0..<3 { _ = try frame(camera) }
            XCTAssertEqual(plugin.requestControls.count, 1, "given once, when it moved")
        }
    }

    func testAFixedFocusCameraGetsNoFocusControl() throws {
        for focus in [FocusSetting.distance(centimetres: 15), .auto] {
            let clock = ManualClock()
            let plugin = FakeLibcameraPlugin(info: imx219, picture: GrayImage(width: 640, height: 480), script: [.frames(2)], clock: clock)
            let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, settings: CameraSettings(focus: focus),
                                         sensorROI: roi, zoomROI: roi, plugin: plugin, clock: clock)
            _ = try camera.open()
            _ = try frame(camera)
            _ = try frame(camera)
            let given = (plugin.starts + plugin.requestControls).flatMap { $0 }.map(\.name)
            XCTAssertFalse(given.contains { $0.hasPrefix("Af") || $0 == "LensPosition" }, "\(focus): \(given)")
            XCTAssertEqual(plugin.starts.first?.map(\.name), ["AeMeteringMode", "AeConstraintMode", "AeExposureMode"])
            XCTAssertEqual(camera.controls?.fixedFocus, true)
            XCTAssertEqual(camera.controls?.missing, ["AfMode", "LensPosition"])
        }
        // KIOSK_FOCUS=camera and KIOSK_EXPOSURE=camera: nothing at all.
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480), script: [], clock: clock)
        _ = try LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, settings: CameraSettings(focus: .camera, exposure: .camera),
                                plugin: plugin, clock: clock).open()
        XCTAssertEqual(plugin.starts, [[]])
    }

    func testTheFramesLensMetadataIsTheCamerasLens() throws {
        let clock = ManualClock()
        let focused = LensReading(position: 6.5, afState: "focused", focusFoM: 1234)
        let plugin = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480),
                                         script: [.frames(1), .lens(focused), .frames(1), .lens(nil), .frames(1)], clock: clock)
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        _ = try camera.open()
        XCTAssertNil(camera.lens)
        _ = try frame(camera)
        XCTAssertNil(camera.lens)
        _ = try frame(camera)
        XCTAssertEqual(camera.lens, focused)
        _ = try frame(camera)
        XCTAssertNil(camera.lens, "the latest frame's, not the last one that had it")
    }

    /// A start the plugin refuses (a control the camera lacks, libcamera's error) closes the
    /// camera: the error says what, and the camera opens again.
    func testARefusedStartClosesTheCameraAndSaysWhy() throws {
        let clock = ManualClock()
        let plugin = FakeLibcameraPlugin(info: imx708, picture: GrayImage(width: 640, height: 480), script: [.frames(1)], clock: clock)
        plugin.startFailure = "libcamera: /base/...: start: Invalid argument"
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30, plugin: plugin, clock: clock)
        XCTAssertThrowsError(try camera.open()) { error in
            XCTAssertTrue("\(error)".contains("start: Invalid argument"), "\(error)")
        }
        XCTAssertEqual(plugin.closes, [false])
        XCTAssertNil(camera.controls)
        XCTAssertThrowsError(try camera.nextFrame(timeoutMs: 100), "not open")
        plugin.startFailure = nil
        _ = try camera.open()
        _ = try frame(camera)
        XCTAssertEqual(plugin.opens, 2)
    }

    /// The settings as the plugin's C struct takes them.
    func testControlsAsThePluginTakesThem() throws {
        let lens = try LoadedLibcameraPlugin.control(LibcameraControlSetting("LensPosition", .float(100.0 / 15)))
        XCTAssertEqual(String(cField: lens.name), "LensPosition")
        XCTAssertEqual(lens.f, Float(100.0 / 15))
        let mode = try LoadedLibcameraPlugin.control(LibcameraControlSetting("AfMode", .int(2), label: "continuous"))
        XCTAssertEqual(mode.i, 2)
        XCTAssertNotEqual(mode.type, lens.type)
        let windows = try LoadedLibcameraPlugin.control(LibcameraControlSetting("AfWindows", .rectangles([
            PixelRect(x: 1, y: 2, width: 3, height: 4), PixelRect(x: 5, y: 6, width: 7, height: 8)])))
        XCTAssertEqual(windows.count, 2)
        XCTAssertEqual(windows.rects.1.x, 5)
        XCTAssertEqual(windows.rects.1.height, 8)
        XCTAssertThrowsError(try LoadedLibcameraPlugin.control(LibcameraControlSetting(String(repeating: "A", count: 32), .int(0))))
        XCTAssertThrowsError(try LoadedLibcameraPlugin.control(LibcameraControlSetting("AfWindows", .rectangles([]))))
        XCTAssertThrowsError(try LoadedLibcameraPlugin.control(LibcameraControlSetting("AfWindows", .rectangles(Array(
            repeating: PixelRect(x: 0, y: 0, width: 1, height: 1), count: 5)))))
    }

    func testPluginSearchOrder() {
        XCTAssertEqual(LoadedLibcameraPlugin.candidates(executable: "/opt/kiosk/bin/kiosk"),
                       ["/opt/kiosk/bin/kiosk-libcamera.so", "/usr/local/lib/kiosk/kiosk-libcamera.so", "/usr/lib/kiosk/kiosk-libcamera.so"])
    }

    /// Without a plugin file anywhere, the error names each place looked at and how to build one.
    func testAMissingPluginSaysWhereItLookedAndHowToBuildOne() {
        let camera = LibcameraCamera(camera: "", width: 640, height: 480, fps: 30)
        guard !LoadedLibcameraPlugin.candidates().contains(where: Files.exists) else {
            return  // a plugin is installed here: the message is for machines without one
        }
        XCTAssertThrowsError(try camera.open()) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("/usr/lib/kiosk/kiosk-libcamera.so: not there"), text)
            XCTAssertTrue(text.contains("libcamera-dev"), text)
            XCTAssertEqual((error as? CameraError)?.needsRestart, false)
        }
    }
}
