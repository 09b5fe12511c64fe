// SPDX-License-Identifier: Apache-2.0
@testable import DevTools
import Reader
import Policy
import Scene
import XCTest

/// The zoom's point, with the real decoder: a QR code too small to read in the whole sensor
/// scaled to the stream is read in the stream made from the crop `SensorZoom` asks for.
final class ZoomBenchTests: XCTestCase {
    func testTheCropReadsACodeTooSmallForTheWholeFrame() throws {
        let sensor = PixelRect(x: 0, y: 0, width: 2028, height: 1520)
        let roi = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
        let crop = SensorZoom.crop(for: roi, reference: sensor, maximum: sensor, streamWidth: 640, streamHeight: 480)
        let code = try QRCodeImage.render("KIOSK-ZOOM-0001", moduleSize: 4, quietZone: 4)  // 1.3 stream pixels a module unzoomed
        var picture = GrayImage(width: 2028, height: 1520, fill: 235)
        picture.paste(code, x: (2028 - code.width) / 2, y: (1520 - code.height) / 2)
        let scanner = BarcodeScanner(symbologies: [.qrcode])
        let plain = ZoomBench.scaled(picture, from: sensor, width: 640, height: 480)
        let zoomed = ZoomBench.scaled(picture, from: crop, width: 640, height: 480)
        let view = SensorZoom.view(of: crop, reference: sensor)
        XCTAssertEqual(scanner.scan(plain, in: Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480)).compactMap(\.text), [])
        XCTAssertEqual(scanner.scan(zoomed, in: Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480, view: view)).compactMap(\.text),
                       ["KIOSK-ZOOM-0001"])
        // The same code twice the size is read either way: the scaler is not what fails.
        let big = try QRCodeImage.render("KIOSK-ZOOM-0001", moduleSize: 8, quietZone: 4)
        var bigPicture = GrayImage(width: 2028, height: 1520, fill: 235)
        bigPicture.paste(big, x: (2028 - big.width) / 2, y: (1520 - big.height) / 2)
        XCTAssertEqual(scanner.scan(ZoomBench.scaled(bigPicture, from: sensor, width: 640, height: 480),
                                    in: Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480)).compactMap(\.text),
                       ["KIOSK-ZOOM-0001"])
    }
}
