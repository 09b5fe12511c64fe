// SPDX-License-Identifier: Apache-2.0
@testable import Policy
import XCTest

/// ScalerCrop from the ROI, and the ROI inside a zoomed frame, with the figures of a real camera:
/// the Raspberry Pi HQ camera (IMX477), whose metadata reported ScalerCrop=(2, 0, 4052, 3040) on
/// an unzoomed stream (picamera2 issue 768), with ScalerCropMaximum (0, 0, 4056, 3040).
final class SensorZoomTests: XCTestCase {
    let maximum = PixelRect(x: 0, y: 0, width: 4056, height: 3040)
    let reference = PixelRect(x: 2, y: 0, width: 4052, height: 3040)
    /// Off-centre and not square, so that every mount gives another crop.
    let roi = NormalizedRect(x: 0.1, y: 0.2, width: 0.3, height: 0.4)

    func crop(_ mount: Mount) -> PixelRect {
        SensorZoom.crop(for: mount.sensorRegion(fromUpright: roi), reference: reference, maximum: maximum,
                        streamWidth: 640, streamHeight: 480)
    }

    /// Worked out by hand: the ROI on the sensor, 5% more each side, grown to 4:3, centred on it.
    func testCropsWorkedOutByHand() {
        // Upright = sensor: x 0.1-0.4, y 0.2-0.6. 0.3*1.1*4052 = 1337.2 wide, 0.4*1.1*3040 = 1337.6
        // high; 4:3 makes it 1783.5 x 1337.6; centre (2 + 0.25*4052, 0.4*3040) = (1015, 1216).
        XCTAssertEqual(crop(Mount()), PixelRect(x: 124, y: 547, width: 1783, height: 1338))
        // Mirrored: x 0.6-0.9 on the sensor, centre x 2 + 0.75*4052 = 3041.
        XCTAssertEqual(crop(Mount(mirrored: true)), PixelRect(x: 2150, y: 547, width: 1783, height: 1338))
        // Turned 90: on the sensor x 0.2-0.6, y 0.6-0.9: 1782.9 x 1003.2, 4:3 makes it 1782.9 x
        // 1337.2; centre (2 + 0.4*4052, 0.75*3040) = (1622.8, 2280).
        XCTAssertEqual(crop(Mount(rotation: .quarter)), PixelRect(x: 731, y: 1612, width: 1783, height: 1337))
    }

    func testEveryMountsCropHoldsTheROIAtTheStreamsAspectInsideTheSensor() {
        var crops = Set<String>()
        for mount in Mount.all {
            let c = crop(mount)
            crops.insert(c.description)
            XCTAssertEqual(Double(c.width) / Double(c.height), 4.0 / 3.0, accuracy: 0.002, "\(mount)")
            XCTAssertTrue(c.x >= maximum.x && c.y >= maximum.y && c.x + c.width <= maximum.width && c.y + c.height <= maximum.height, "\(mount): \(c)")
            // The ROI's sensor area lies inside the crop, with the margin.
            let r = mount.sensorRegion(fromUpright: roi)
            let rx0 = Double(reference.x) + r.x * Double(reference.width), rx1 = rx0 + r.width * Double(reference.width)
            let ry0 = Double(reference.y) + r.y * Double(reference.height), ry1 = ry0 + r.height * Double(reference.height)
            XCTAssertLessThanOrEqual(Double(c.x), rx0 - 0.04 * r.width * Double(reference.width), "\(mount)")
            XCTAssertGreaterThanOrEqual(Double(c.x + c.width), rx1 + 0.04 * r.width * Double(reference.width), "\(mount)")
            XCTAssertLessThanOrEqual(Double(c.y), ry0 - 0.04 * r.height * Double(reference.height), "\(mount)")
            XCTAssertGreaterThanOrEqual(Double(c.y + c.height), ry1 + 0.04 * r.height * Double(reference.height), "\(mount)")
        }
        XCTAssertEqual(crops.count, 8, "each mount puts the ROI elsewhere on the sensor")
    }

    /// In a zoomed frame the ROI is found where the crop put it, and read with more pixels: the
    /// point of zooming.
    func testTheROIInAZoomedFrameIsTheSameSceneWithMorePixels() {
        for mount in Mount.all {
            let c = crop(mount)
            let view = SensorZoom.view(of: c, reference: reference)
            let zoomed = mount.sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480, view: view)
            let whole = mount.sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480)
            XCTAssertEqual(mount.sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480, view: .whole), whole)
            XCTAssertGreaterThan(zoomed.width * zoomed.height, 5 * whole.width * whole.height, "\(mount)")
            XCTAssertEqual(zoomed.clamped(width: 640, height: 480), zoomed, "\(mount): the ROI is all in the zoomed frame")
            // A point of the ROI maps to the same sensor spot through either frame.
            let centre = mount.sensorPoint(fromUpright: NormalizedPoint(x: 0.25, y: 0.4))
            let inZoomed = NormalizedPoint(x: (Double(c.x - reference.x) + view.width * Double(reference.width) * ((centre.x - view.x) / view.width)) / Double(reference.width),
                                           y: (Double(c.y - reference.y) + view.height * Double(reference.height) * ((centre.y - view.y) / view.height)) / Double(reference.height))
            XCTAssertEqual(inZoomed.x, centre.x, accuracy: 1e-9)
            XCTAssertEqual(inZoomed.y, centre.y, accuracy: 1e-9)
            let zx = (centre.x - view.x) / view.width * 640, zy = (centre.y - view.y) / view.height * 480
            XCTAssertTrue(zoomed.contains(x: Int(zx), y: Int(zy)), "\(mount): the ROI's centre is in the zoomed ROI")
        }
    }

    func testAnROITooBigForTheSensorGetsTheLargestCropOfTheStreamsAspect() {
        let c = SensorZoom.crop(for: .whole, reference: reference, maximum: maximum, streamWidth: 640, streamHeight: 480)
        XCTAssertEqual(c.height, 3040)
        XCTAssertEqual(c.width, 4053)
        // A 16:9 stream on the 4:3 sensor: full width.
        let wide = SensorZoom.crop(for: .whole, reference: reference, maximum: maximum, streamWidth: 1280, streamHeight: 720)
        XCTAssertEqual(wide.width, 4056)
        XCTAssertEqual(wide.height, 2282)
        // An ROI at the sensor's corner slides in rather than being cut.
        let corner = SensorZoom.crop(for: NormalizedRect(x: 0, y: 0, width: 0.2, height: 0.2), reference: reference,
                                     maximum: maximum, streamWidth: 640, streamHeight: 480)
        XCTAssertEqual(corner.x, 0)
        XCTAssertEqual(corner.y, 0)
    }

    func testViewOfTheReferenceIsTheWholePicture() {
        XCTAssertEqual(SensorZoom.view(of: reference, reference: reference), .whole)
        XCTAssertEqual(NormalizedRect(x: 0.2, y: 0.2, width: 0.1, height: 0.1).relative(to: .whole),
                       NormalizedRect(x: 0.2, y: 0.2, width: 0.1, height: 0.1))
        let half = NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 0.5)
        XCTAssertEqual(NormalizedRect(x: 0.75, y: 0.25, width: 0.25, height: 0.25).relative(to: half),
                       NormalizedRect(x: 0.5, y: 0.5, width: 0.5, height: 0.5))
    }
}

/// Light from libcamera's metadata, with the figures a Raspberry Pi HQ camera reported
/// (picamera2 issue 768): at night, ExposureTime 2000000 us, AnalogueGain 16, Lux 0.063; in
/// daylight, ExposureTime 1683 us, AnalogueGain 1.0, Lux 4252.
final class SensorLightTests: XCTestCase {
    func testRecordedNightAndDayGiveTheTorchTheRightSide() {
        let night = SensorLight(exposureMicroseconds: 2_000_000, analogueGain: 16, lux: 0.063)
        let day = SensorLight(exposureMicroseconds: 1683, analogueGain: 1.0, lux: 4252.04)
        XCTAssertEqual(night.exposure, CameraExposure(seconds: 2, gain: 16))
        XCTAssertEqual(day.exposure, CameraExposure(seconds: 0.001683, gain: 1))
        // Auto-exposure keeps both pictures mid-grey (mean luma about 110): only the exposure
        // tells night from day. 110 * (10 ms / 2 s) / 16 and 110 * (10 ms / 1.683 ms).
        XCTAssertEqual(ambientBrightness(meanLuma: 110, exposure: night.exposure), 0.034375, accuracy: 1e-9)
        XCTAssertEqual(ambientBrightness(meanLuma: 110, exposure: day.exposure), 653.6, accuracy: 0.1)
        // Two seconds of frames at 10 fps with the default thresholds: on at night, off by day.
        for (light, on) in [(night, true), (day, false)] {
            var torch = TorchPolicy(settings: .init(mode: .auto, onBelow: 50, offAbove: 80, holdNs: 2_000_000_000))
            for i in 0...20 { _ = torch.observe(brightness: ambientBrightness(meanLuma: 110, exposure: light.exposure), at: UInt64(i) * 100_000_000) }
            XCTAssertEqual(torch.isOn, on, "\(light)")
        }
    }

    func testMissingFiguresFallBackToTheMeanLuma() {
        // vimc reports none of them: the torch then runs on the picture, as a V4L2 camera without controls.
        XCTAssertNil(SensorLight().exposure)
        XCTAssertEqual(ambientBrightness(meanLuma: 42, exposure: SensorLight().exposure), 42)
        // A gain alone says nothing; an exposure without a gain counts as unity gain.
        XCTAssertNil(SensorLight(analogueGain: 4).exposure)
        XCTAssertEqual(SensorLight(exposureMicroseconds: 10_000).exposure, CameraExposure(seconds: 0.01, gain: 1))
        XCTAssertEqual(SensorLight(exposureMicroseconds: 10_000, analogueGain: 0).exposure, CameraExposure(seconds: 0.01, gain: 1))
        XCTAssertNil(SensorLight(exposureMicroseconds: 0, analogueGain: 2).exposure)
    }
}
