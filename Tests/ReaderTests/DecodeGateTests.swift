// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy
import Scene
import TestSupport
import XCTest

final class DecodeGateTests: XCTestCase {
    let roi = PixelRect(x: 80, y: 60, width: 160, height: 120)

    /// A grey 320x240 window with faint grain and `noise` of a given seed, and optionally a picture at its centre.
    func frame(_ picture: GrayImage? = nil, seed: UInt32 = 1, noise: Int = 3, level: Int = 160) -> GrayImage {
        var image = GrayImage(width: 320, height: 240, fill: UInt8(level))
        if let picture { image.paste(picture, x: 160 - picture.width / 2, y: 120 - picture.height / 2) }
        var s = seed
        for i in image.pixels.indices {
            s = s &* 1_664_525 &+ 1_013_904_223
            image.pixels[i] = UInt8(clamping: Int(image.pixels[i]) + Int(s >> 24) % (2 * noise + 1) - noise)
        }
        return image
    }

    func decide(_ gate: inout DecodeGate, _ image: GrayImage) -> DecodeGate.Decision {
        image.withLumaPlane { gate.evaluate($0, roi: roi) }
    }

    func testFirstFrameIsDecodedThenAFlatWindowIsSkippedUntilTheSafetyNet() {
        var gate = DecodeGate()
        XCTAssertEqual(decide(&gate, frame(seed: 1)), .decode(.first))
        var decisions: [DecodeGate.Decision] = []
        for i in 2...61 { decisions.append(decide(&gate, frame(seed: UInt32(i)))) }
        XCTAssertEqual(decisions.filter { $0 == .skip(.flat) }.count, 58)
        XCTAssertEqual(decisions.filter { $0 == .decode(.glance) }.count, 2, "every 30 frames, a glance at a flat window")
        XCTAssertEqual(decisions[29], .decode(.glance))
    }

    /// Issue 37: the safety net glances at a flat window and decodes a held one whole; a glance
    /// that saw something asks for the next frame whole.
    func testTheSafetyNetGlancesAtAFlatWindowDecodesAHeldOneAndLooksAgainWhenAsked() throws {
        var gate = DecodeGate()
        let qr = try QRCodeImage.render("HELD", moduleSize: 3)
        _ = decide(&gate, frame(seed: 1))
        XCTAssertEqual(decide(&gate, frame(seed: 2)), .skip(.flat))
        gate.lookAgain()
        XCTAssertEqual(decide(&gate, frame(seed: 3)), .decode(.lookAgain), "whatever the frame looks like")
        XCTAssertEqual(decide(&gate, frame(seed: 4)), .skip(.flat), "once")
        XCTAssertEqual(decide(&gate, frame(qr, seed: 5)), .decode(.changed))
        gate.decodeRead(codes: true)
        let held = (6...40).map { decide(&gate, frame(qr, seed: UInt32($0))) }
        XCTAssertEqual(held.filter(\.decodes), [.decode(.safetyNet)], "held: a whole decode every 30 frames, as before")
    }

    func testACodeBroughtInIsDecodedAtOnceThenSettlesThenHeldStillIsSkipped() throws {
        var gate = DecodeGate()
        let qr = try QRCodeImage.render("GATE", moduleSize: 3)
        _ = decide(&gate, frame(seed: 1))
        _ = decide(&gate, frame(seed: 2))
        XCTAssertEqual(decide(&gate, frame(qr, seed: 3)), .decode(.changed))
        var held: [DecodeGate.Decision] = []
        for i in 4...10 { held.append(decide(&gate, frame(qr, seed: UInt32(i)))) }
        XCTAssertEqual(held, Array(repeating: .decode(.settling), count: 4) + Array(repeating: .skip(.unchanged), count: 3))
        XCTAssertTrue(held.last!.reusesLastResult)
        // Taken away: the ROI changed, but it is flat: nothing to read.
        XCTAssertEqual(decide(&gate, frame(seed: 11)), .skip(.flat))
    }

    func testADecodeThatReadACodeEndsTheSettling() throws {
        var gate = DecodeGate()
        let qr = try QRCodeImage.render("GATE", moduleSize: 3)
        _ = decide(&gate, frame(seed: 1))
        XCTAssertEqual(decide(&gate, frame(qr, seed: 2)), .decode(.changed))
        gate.decodeRead(codes: false)  // missed (sensor noise): settling goes on
        XCTAssertEqual(decide(&gate, frame(qr, seed: 3)), .decode(.settling))
        gate.decodeRead(codes: true)   // read: the frames like it reuse that reading
        let held = (4...8).map { decide(&gate, frame(qr, seed: UInt32($0))) }
        XCTAssertEqual(held, Array(repeating: .skip(.unchanged), count: 5))
        XCTAssertTrue(held.allSatisfy(\.reusesLastResult))
        // A new change settles again.
        let other = try QRCodeImage.render("OTHER", moduleSize: 4)
        XCTAssertEqual(decide(&gate, frame(other, seed: 9)), .decode(.changed))
        XCTAssertEqual(decide(&gate, frame(other, seed: 10)), .decode(.settling))
    }

    func testA1DCodeAndALowContrastCodeAreNotFlat() throws {
        for picture in [try Barcode1DImage.ean13("400638133393", moduleWidth: 1, height: 40),
                        try Barcode1DImage.code128("KIOSK", moduleWidth: 1, height: 30)] {
            var gate = DecodeGate()
            _ = decide(&gate, frame(seed: 1))
            XCTAssertEqual(decide(&gate, frame(picture, seed: 2)), .decode(.changed))
            XCTAssertGreaterThan(gate.lastEdges, 50)
        }
        // Black 60, white 120, under strong noise: still edges.
        var dim = try QRCodeImage.render("DIM", moduleSize: 3)
        for i in dim.pixels.indices { dim.pixels[i] = dim.pixels[i] == 0 ? 60 : 120 }
        var gate = DecodeGate()
        _ = decide(&gate, frame(seed: 1, noise: 8, level: 90))
        XCTAssertEqual(decide(&gate, frame(dim, seed: 2, noise: 8, level: 90)), .decode(.changed))
    }

    func testASlowDriftIsDecodedOnceItAddsUp() throws {
        let qr = try QRCodeImage.render("DRIFT", moduleSize: 3)
        var gate = DecodeGate()
        _ = decide(&gate, frame(qr, level: 120))
        for _ in 0..<4 { _ = decide(&gate, frame(qr, level: 120)) }  // settling
        var reasons: [DecodeGate.Reason] = []
        for step in 1...12 { reasons.append(decide(&gate, frame(qr, seed: UInt32(step), level: 120 + 2 * step)).reason) }
        XCTAssertTrue(reasons.contains(.changed), "\(reasons)")
        XCTAssertEqual(reasons.first, .unchanged)
    }

    func testPackedLumaGivesTheSameDecisionsAsPlanar() throws {
        let qr = try QRCodeImage.render("PACKED", moduleSize: 3)
        var planar = DecodeGate(), packed = DecodeGate()
        for (i, picture) in [nil, qr, qr, nil].enumerated() {
            let image = frame(picture, seed: UInt32(i + 1))
            let a = decide(&planar, image)
            var bytes = [UInt8](repeating: 128, count: image.pixels.count * 2)
            for (j, v) in image.pixels.enumerated() { bytes[2 * j] = v }
            let b = bytes.withUnsafeBufferPointer {
                packed.evaluate(LumaPlane(base: $0.baseAddress!, width: 320, height: 240, rowStride: 640, pixelStride: 2), roi: roi)
            }
            XCTAssertEqual(a, b, "frame \(i)")
        }
    }

    func testRenderedEAN13AndCode128ReadBackAndMatchZint() throws {
        let scanner = BarcodeScanner(symbologies: [.ean13, .code128])
        let ean = try Barcode1DImage.ean13("400638133393")
        XCTAssertEqual(scanner.scan(ean).map(\.text), ["4006381333931"])
        let zintEAN = try Barcode1D.render(symbology: .ean13, data: "400638133393", moduleWidth: 2, height: 80, quietZone: 10)
        XCTAssertEqual(ean, zintEAN, "module for module what zint draws")
        for text in ["KIOSK-C1", "Hello, world! ~{}|", "0"] {
            XCTAssertEqual(scanner.scan(try Barcode1DImage.code128(text)).map(\.text), [text])
        }
        XCTAssertThrowsError(try Barcode1DImage.ean13("4006381333932"), "a wrong check digit")
        XCTAssertThrowsError(try Barcode1DImage.code128("é"))
    }
}
