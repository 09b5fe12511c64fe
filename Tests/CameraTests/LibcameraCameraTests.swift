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
