// SPDX-License-Identifier: Apache-2.0
import Reader
import Policy
import Scene
import XCTest

/// A pass (`KH1:` + CBOR) is handed on as the QR code's exact bytes: zbar in binary mode. That it
/// is binary (no text guessed for it, even where its bytes would read as text in a legacy set) is
/// its kind's, decided once when it is reported (`CodeKind`; the log: KioskTests.CodeReporterTests).
final class PassBytesTests: XCTestCase {
    func scan(_ bytes: [UInt8]) throws -> [DecodedSymbol] {
        var scene = GrayImage(width: 400, height: 400, fill: 210)
        let qr = try QRCodeImage.render(bytes: bytes, moduleSize: 3)
        scene.paste(qr, x: 200 - qr.width / 2, y: 200 - qr.height / 2)
        return BarcodeScanner(symbologies: [.qrcode]).scan(scene)
    }

    func testAPassIsItsBytesAndNoText() throws {
        // Half-width katakana bytes (Shift_JIS 0xA1-0xDF) in the key_id and the proof: read as
        // text they would become katakana; a pass keeps them as they are.
        let kana: [UInt8] = [0xc3, 0xde, 0xbb, 0xde, 0xb2, 0xdd, 0xb1, 0xb2]
        let pass = Pass.encode(form: .holder, credential: kana, slot: 360_000_000, proof: Array(repeating: kana, count: 8).flatMap { $0 })
        let found = try scan(pass)
        XCTAssertEqual(found.map(\.bytes), [pass])
        XCTAssertEqual(found.map { CodeKind.of($0.bytes, signedPrefix: "KC1:") }, [.credential(.pass)])
        XCTAssertTrue(CodeKind.credential(.pass).isBinary, "no text for a pass")
        // Without the prefix the bytes are the same (their text is PayloadText's rule, not tested here).
        let other = Array(pass.dropFirst(4))
        XCTAssertEqual(try scan(other).map(\.bytes), [other])
        XCTAssertEqual(CodeKind.of(other, signedPrefix: "KC1:"), .plain)
        XCTAssertFalse(CodeKind.of(Array("KC1:AB".utf8), signedPrefix: "KC1:").isBinary)
    }
}
