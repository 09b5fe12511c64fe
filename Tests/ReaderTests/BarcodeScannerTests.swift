// SPDX-License-Identifier: Apache-2.0
import Camera
import CZbar
import Reader
import Policy
import Scene
import TestSupport
import XCTest

final class BarcodeScannerTests: XCTestCase {
    func frame(_ text: String) throws -> GrayImage {
        var scene = GrayImage(width: 320, height: 240, fill: 210)
        let qr = try QRCodeImage.render(text, moduleSize: 3)
        scene.paste(qr, x: 160 - qr.width / 2, y: 120 - qr.height / 2)
        return scene
    }

    func testPackedLumaWithPaddedRowsDecodesTheSame() throws {
        let picture = try frame("PACKED")
        // YUYV-like: luma in every other byte, chroma bytes in between, rows padded by 64 bytes.
        let rowStride = picture.width * 2 + 64
        var packed = [UInt8](repeating: 128, count: rowStride * picture.height)
        for y in 0..<picture.height {
            for x in 0..<picture.width { packed[y * rowStride + 2 * x] = picture[x, y] }
        }
        let found = packed.withUnsafeBufferPointer { buf in
            BarcodeScanner(symbologies: [.qrcode]).scan(
                LumaPlane(base: buf.baseAddress!, width: picture.width, height: picture.height, rowStride: rowStride, pixelStride: 2),
                in: PixelRect(x: 60, y: 20, width: 200, height: 200))
        }
        XCTAssertEqual(found.map(\.text), ["PACKED"])
        let location = try XCTUnwrap(found.first?.location)
        XCTAssertTrue(location.allSatisfy { $0.x >= 100 && $0.x <= 220 }, "location is in frame pixels: \(location)")
    }

    func testPlanarLumaWithPaddedRowsIsCroppedWithoutCopy() throws {
        let picture = try frame("PADDED")
        let rowStride = picture.width + 32
        var padded = [UInt8](repeating: 0, count: rowStride * picture.height)  // black padding
        for y in 0..<picture.height {
            for x in 0..<picture.width { padded[y * rowStride + x] = picture[x, y] }
        }
        let found = padded.withUnsafeBufferPointer { buf in
            BarcodeScanner(symbologies: [.qrcode]).scan(
                LumaPlane(base: buf.baseAddress!, width: picture.width, height: picture.height, rowStride: rowStride),
                in: PixelRect(x: 0, y: 0, width: 10_000, height: 10_000))  // clamped to the frame
        }
        XCTAssertEqual(found.map(\.text), ["PADDED"])
    }

    func testOnlyConfiguredSymbologiesAreRead() throws {
        var scene = GrayImage(width: 640, height: 240, fill: 230)
        scene.paste(try QRCodeImage.render("QR-HERE", moduleSize: 3), x: 20, y: 40)
        scene.paste(try Barcode1D.render(symbology: .ean13, data: "5901234123457", moduleWidth: 2, height: 100), x: 300, y: 60)
        XCTAssertEqual(BarcodeScanner(symbologies: [.qrcode]).scan(scene).map(\.text), ["QR-HERE"])
        XCTAssertEqual(BarcodeScanner(symbologies: [.ean13]).scan(scene).map(\.text), ["5901234123457"])
        XCTAssertEqual(Set(BarcodeScanner(symbologies: [.ean13, .qrcode]).scan(scene).compactMap(\.text)), ["QR-HERE", "5901234123457"])
        XCTAssertEqual(BarcodeScanner(symbologies: [.code128]).scan(scene), [])
    }

    func testBinaryPayloadComesBackAsBytes() throws {
        let found = BarcodeScanner(symbologies: [.qrcode]).scan(try frame("line1\nline2\"=x"))
        XCTAssertEqual(found.first?.bytes, Array("line1\nline2\"=x".utf8))
    }

    func testEmptyRegionScansNothing() throws {
        XCTAssertEqual(BarcodeScanner(symbologies: [.qrcode]).scan(try frame("X"), in: PixelRect(x: 400, y: 0, width: 10, height: 10)), [])
    }

    /// The core names symbologies without zbar; the names must be the ones zbar prints (and
    /// zxing's for the symbologies only zxing reads: SecondReaderTests).
    func testSymbologyNamesAreZbars() {
        XCTAssertEqual(Symbology.qrcode.displayName, "QR-Code")
        XCTAssertEqual(Symbology.ean13.displayName, "EAN-13")
        XCTAssertEqual(Symbology.code128.displayName, "CODE-128")
        for s in Symbology.allCases {
            guard let type = s.zbarType else { continue }
            XCTAssertEqual(s.displayName, String(cString: zbar_get_symbol_name(type)), "\(s)")
        }
    }
}
