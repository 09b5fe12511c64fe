// SPDX-License-Identifier: Apache-2.0
@testable import Reader
import Policy
import Scene
import TestSupport
import XCTest
import ZintDrawing

/// The module grid (`ModuleGrid`): found at the angle and pitch a code was drawn
/// with, and any picture (noise, flat, finer than it looks for) taken without a crash.
final class ModuleGridTests: XCTestCase {
    func grid(_ picture: GrayImage, near: Double) -> ModuleGrid? {
        picture.pixels.withUnsafeBufferPointer {
            ModuleGrid.find($0.baseAddress!, width: picture.width, height: picture.height, rowStride: picture.width, near: near)
        }
    }

    /// A rail ticket's Aztec code drawn at 2 and 3 px modules, turned: the grid's first axis is
    /// the turn (modulo 90 degrees) within a fifth of a degree, its pitch the module's within
    /// 0.5%, found from a slant up to 4 degrees off (what the edges' slant gives for 2 px modules).
    func testTheGridIsTheDrawnCodesAngleAndPitch() throws {
        let ticket = String(repeating: "UIC918-3 TICKET 0042 ZURICH HB BERN ", count: 6)
        for module in [2, 3] {
            for angle in [0.0, 12, 27, 41] {
                let code = rotated(try ZintImage.render(.aztec, text: ticket, moduleSize: module, quietZone: 2), degrees: angle, fill: 255)
                let found = try XCTUnwrap(grid(code, near: angle - 4), "module \(module), \(angle) degrees")
                let off = (found.degrees - angle).remainder(dividingBy: 90)
                XCTAssertLessThan(abs(off), 0.2, "module \(module), \(angle) degrees: \(found.degrees)")
                XCTAssertEqual(found.pitch.u, Double(module), accuracy: 0.005 * Double(module), "module \(module), \(angle) degrees")
                XCTAssertEqual(found.pitch.v, Double(module), accuracy: 0.005 * Double(module), "module \(module), \(angle) degrees")
            }
        }
    }

    /// A stranger's picture is hostile input: noise, flat grey, a 1 px checkerboard (finer than
    /// any pitch looked for) and windows as small as the scanner gives are taken without a
    /// crash, and what is drawn from any grid found stays inside its own bounds.
    func testAnyPictureIsTakenWithoutACrash() {
        var rng = SystemRandomNumberGenerator()
        var pictures: [GrayImage] = []
        for side in [48, 97, 200] {
            pictures.append(GrayImage(width: side, height: side, pixels: (0..<(side * side)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            pictures.append(GrayImage(width: side, height: side, fill: 128))
            pictures.append(GrayImage(width: side, height: side, pixels: (0..<(side * side)).map { ($0 % side + $0 / side) % 2 == 0 ? 0 : 255 }))
        }
        for picture in pictures {
            for near in [-45.0, 0, 44.9] {
                guard let found = grid(picture, near: near) else { continue }
                let drawing = picture.pixels.withUnsafeBufferPointer {
                    found.drawn($0.baseAddress!, width: picture.width, height: picture.height, rowStride: picture.width, moduleSize: 3, quietZone: 3)
                }
                if let drawing { XCTAssertEqual(drawing.pixels.count, drawing.side * drawing.side) }
            }
        }
    }
}
