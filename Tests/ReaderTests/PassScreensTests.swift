// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// The reading-distance bench's passes (`kiosk-dev passes`, docs/measurements/passes.md): drawn
/// as the pass page draws them, and read back byte for byte.
final class PassScreensTests: XCTestCase {
    /// Form 2's 86 bytes and form 1's 284 in one 8-bit segment at level L are QR versions 5 and 11
    /// (what qrcode-generator's `qrcode(0, 'L')` makes of them), the payload starting `KH1:`.
    func testTheFormsAreVersions5And11() throws {
        for (form, version) in [(PassScreens.Form.holder, 5), (.selfContained, 11)] {
            let payload = PassScreens.payload(form, seed: 1)
            XCTAssertEqual(payload.count, form.bytes)
            XCTAssertEqual(Array(payload.prefix(4)), Array("KH1:".utf8))
            let (modules, v) = try PassScreens.modules(payload)
            XCTAssertEqual(v, version, "\(form)")
            XCTAssertEqual(modules.width, 17 + 4 * version + 8, "\(form): modules and the quiet zone")
        }
        XCTAssertNotEqual(PassScreens.payload(.holder, seed: 1), PassScreens.payload(.holder, seed: 2))
    }

    /// A clean screen at 5 px a module reads back exactly the payload's bytes (binary, not text):
    /// what the bench counts as read.
    func testACleanPassReadsBackItsExactBytes() throws {
        for form in PassScreens.Form.allCases {
            let payload = PassScreens.payload(form, seed: 3)
            let (modules, _) = try PassScreens.modules(payload)
            let picture = PassScreens.screen(.clean, modules: modules, moduleSize: 5, variant: 0).render()
            var scene = GrayImage(width: picture.width + 40, height: picture.height + 40, fill: 180)
            scene.paste(picture, x: 20, y: 20)
            let found = BarcodeScanner(symbologies: [.qrcode]).scan(scene)
            XCTAssertEqual(found.map(\.bytes), [payload], "\(form)")
        }
    }
}
