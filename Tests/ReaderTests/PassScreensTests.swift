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

    /// The setup form is a setup code's size, version 15, but no `KS1:` code: the frame loop would
    /// hand one to the setup desk and to no listener, and the bench, a listener, would count every
    /// presentation unread (it did: `--forms 3` read 0 in every cell).
    func testTheSetupFormIsASetupCodesSizeThatTheFrameLoopReportsToTheBench() throws {
        let payload = PassScreens.payload(.setup, seed: 1)
        XCTAssertEqual(payload.count, 469)
        XCTAssertEqual(try PassScreens.modules(payload).version, 15)
        XCTAssertEqual(Array(payload.prefix(4)), Array("KS0:".utf8))
        XCTAssertEqual(CodeKind.of(payload, signedPrefix: "KC1:"), .plain, "a code the frame loop reports to its listeners")
        var real = payload
        real.replaceSubrange(0..<4, with: Array("KS1:".utf8))
        XCTAssertEqual(CodeKind.of(real, signedPrefix: "KC1:"), .setup, "the same bytes as a KS1: code go to the setup desk")
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
