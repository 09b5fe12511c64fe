// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Reader
@testable import Kiosk
import Platform
import Policy
import Scene
@testable import Systemd
import XCTest

final class DecodePipelineTests: XCTestCase {
    func image(_ text: String?) throws -> GrayImage {
        var image = GrayImage(width: 320, height: 240, fill: 180)
        if let text {
            let qr = try QRCodeImage.render(text, moduleSize: 3)
            image.paste(qr, x: 160 - qr.width / 2, y: 120 - qr.height / 2)
        }
        return image
    }

    func frame(_ image: GrayImage, _ n: UInt64, _ body: (Frame) -> Void) {
        image.withLumaPlane { body(Frame(luma: $0, sequence: n, timestampNs: n * 33_000_000, capturedNs: monotonicNanoseconds())) }
    }

    let roi = PixelRect(x: 40, y: 30, width: 240, height: 180)

    func testSynchronousResultsComeWithTheirFrameAndHeldCodesStayInView() throws {
        let pipeline = DecodePipeline(symbologies: [.qrcode])
        let empty = try image(nil), code = try image("PIPE")
        var seen: [(UInt64, [String?])] = []
        for n in 0..<12 {
            frame(n < 3 ? empty : code, UInt64(n)) { f in
                pipeline.decode(f, roi: roi) { symbols, decoded in seen.append((decoded.sequence, symbols.map(\.text))) }
            }
        }
        XCTAssertEqual(seen.map(\.0), Array(0..<12), "one admission a frame, in order")
        XCTAssertEqual(seen[3].1, ["PIPE"])
        XCTAssertTrue(seen[3...].allSatisfy { $0.1 == ["PIPE"] }, "held still: the last reading stands for skipped frames")
        XCTAssertLessThan(pipeline.stats.decodes, 12)
        let location = try XCTUnwrap({ () -> [PixelPoint]? in
            var loc: [PixelPoint]?
            frame(code, 99) { f in pipeline.resetGate(); pipeline.decode(f, roi: roi) { s, _ in loc = s.first?.location } }
            return loc
        }())
        XCTAssertTrue(location.allSatisfy { $0.x > 100 && $0.x < 220 && $0.y > 60 && $0.y < 180 }, "frame coordinates: \(location)")
        pipeline.shutDown()
    }

    func testABoundedWaitNeverLosesAResultAndKeepsFramesInOrder() throws {
        let pipeline = DecodePipeline(symbologies: [.qrcode], waitNs: 0)
        let code = try image("LATE"), empty = try image(nil)
        var admitted: [UInt64] = [], found: [UInt64] = []
        for n in 0..<40 {
            // Alternate so that every frame is decoded: results come late but all come.
            frame(n % 2 == 0 ? code : empty, UInt64(n)) { f in
                pipeline.decode(f, roi: roi) { symbols, decoded in
                    admitted.append(decoded.sequence)
                    if !symbols.isEmpty { found.append(decoded.sequence) }
                }
            }
        }
        pipeline.finish { symbols, decoded in
            admitted.append(decoded.sequence)
            if !symbols.isEmpty { found.append(decoded.sequence) }
        }
        XCTAssertEqual(admitted, admitted.sorted(), "frames in order")
        XCTAssertFalse(found.isEmpty)
        XCTAssertTrue(found.allSatisfy { $0 % 2 == 0 })
        XCTAssertEqual(Set(found).count, found.count, "each result admitted once")
        pipeline.shutDown()
        pipeline.shutDown()  // twice is fine
    }
}
