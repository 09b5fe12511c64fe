// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy
import Scene
import TestSupport
import XCTest

/// The product's promise about the region of interest, for every way the camera can be mounted:
/// a code inside the upright ROI is read from the sensor frame, a code outside it never is.
final class ROIDecodingTests: XCTestCase {
    let uprightROI = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)

    struct Case {
        var name: String
        var picture: GrayImage
        var text: String
        var symbology: Symbology
    }

    func cases() throws -> [Case] {
        [
            Case(name: "QR", picture: try QRCodeImage.render("ROI-TEST-QR", moduleSize: 4), text: "ROI-TEST-QR", symbology: .qrcode),
            Case(name: "EAN-13", picture: try Barcode1D.render(symbology: .ean13, data: "4006381333931", moduleWidth: 2, height: 90),
                 text: "4006381333931", symbology: .ean13),
            Case(name: "Code 128", picture: try Barcode1D.render(symbology: .code128, data: "DOOR-42", moduleWidth: 2, height: 90),
                 text: "DOOR-42", symbology: .code128),
        ]
    }

    /// The sensor frame made from the upright picture by undoing the mount with the test support's
    /// own rotate and mirror, written apart from `Mount`, so that an error in `Mount` cannot hide
    /// itself by being applied twice.
    func sensorFrame(upright: GrayImage, mount: Mount) -> GrayImage {
        let unturned = rotatedClockwise(upright, quarterTurns: -mount.rotation.rawValue / 90)
        return mount.mirrored ? mirroredLeftRight(unturned) : unturned
    }

    func upright(with picture: GrayImage, centreX: Int, centreY: Int) -> GrayImage {
        var scene = GrayImage(width: 640, height: 480, fill: 200)
        scene.paste(picture, x: centreX - picture.width / 2, y: centreY - picture.height / 2)
        return scene
    }

    func testCodeInsideTheUprightROIIsReadForEveryMount() throws {
        for c in try cases() {
            let scene = upright(with: c.picture, centreX: 320, centreY: 240)
            for mount in Mount.all {
                let sensor = sensorFrame(upright: scene, mount: mount)
                let roi = mount.sensorROI(fromUpright: uprightROI, sensorWidth: sensor.width, sensorHeight: sensor.height)
                let found = BarcodeScanner(symbologies: [c.symbology]).scan(sensor, in: roi)
                XCTAssertEqual(found.map(\.text), [c.text], "\(c.name) inside the ROI, \(mount)")
                XCTAssertEqual(found.first?.symbology, c.symbology)
            }
        }
    }

    func testCodeOutsideTheUprightROIIsNeverReadButIsReadable() throws {
        for c in try cases() {
            // Upright: the ROI spans x 160-480, y 120-360. Put the code in the band below it.
            let scene = upright(with: c.picture, centreX: 320, centreY: 360 + 2 + c.picture.height / 2)
            for mount in Mount.all {
                let sensor = sensorFrame(upright: scene, mount: mount)
                let roi = mount.sensorROI(fromUpright: uprightROI, sensorWidth: sensor.width, sensorHeight: sensor.height)
                let scanner = BarcodeScanner(symbologies: [c.symbology])
                XCTAssertEqual(scanner.scan(sensor, in: roi), [], "\(c.name) outside the ROI, \(mount)")
                // The same frame, scanned whole, does hold a readable code: the ROI is what kept it out.
                XCTAssertEqual(BarcodeScanner(symbologies: [c.symbology]).scan(sensor).map(\.text), [c.text], "\(c.name) whole frame, \(mount)")
            }
        }
    }

    func testSceneSimulatorAgreesWithAnIndependentRotation() throws {
        let scene = upright(with: try QRCodeImage.render("X"), centreX: 100, centreY: 100)
        for mount in Mount.all {
            let view = SensorView(mount: mount, uprightWidth: 640, uprightHeight: 480)
            XCTAssertEqual(view.sensorImage(of: scene), sensorFrame(upright: scene, mount: mount), "\(mount)")
        }
    }

    func testLocationIsInSensorPixels() throws {
        let qr = try QRCodeImage.render("WHERE", moduleSize: 4)
        let scene = upright(with: qr, centreX: 320, centreY: 240)
        let found = BarcodeScanner(symbologies: [.qrcode]).scan(scene, in: PixelRect(x: 160, y: 120, width: 320, height: 240))
        let xs = try XCTUnwrap(found.first).location.map(\.x)
        XCTAssertGreaterThanOrEqual(xs.min() ?? 0, 320 - qr.width / 2)
        XCTAssertLessThanOrEqual(xs.max() ?? 0, 320 + qr.width / 2)
    }
}
