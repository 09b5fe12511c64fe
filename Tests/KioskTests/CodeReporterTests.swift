// SPDX-License-Identifier: Apache-2.0
@testable import Kiosk
import Policy
import Reader
import TestSupport
import XCTest

/// A code is classified once, when it is reported: its kind decides who judges it and how the
/// log shows it.
final class CodeReporterTests: XCTestCase {

    func testAPassIsShownAsItsBytesNeverAsAGuessedText() {
        // Half-width katakana bytes: read as text they would be Shift_JIS; a pass keeps them as bytes.
        let kana: [UInt8] = [0xc3, 0xde, 0xbb, 0xde, 0xb2, 0xdd, 0xb1, 0xb2]
        let pass = Pass.encode(form: .holder, credential: kana, slot: 360_000_000, proof: Array(repeating: kana, count: 8).flatMap { $0 })
        let symbol = DecodedSymbol(symbology: .qrcode, bytes: pass, location: [], quality: 1)
        let kind = CodeKind.of(pass, signedPrefix: "KC1:")
        XCTAssertEqual(kind, .credential(.pass))
        let fields = Dictionary(CodeReporter.plainScanFields(symbol, kind: kind).map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(fields["data"], .bytes(pass), "the exact bytes, escaped by the log")
        XCTAssertEqual(fields["data_hex"], .text(PayloadBytes.hex(pass)))
        // The same bytes as a plain code: the reader's text, no hex.
        let text = DecodedSymbol(symbology: .qrcode, bytes: Array("HELLO".utf8), location: [], quality: 1)
        let plain = Dictionary(CodeReporter.plainScanFields(text, kind: .plain).map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(plain["data"], .bytes(Array("HELLO".utf8)))
        XCTAssertNil(plain["data_hex"])
    }

    func testWithoutTheVerifierEveryCodeIsTheProgramsWhateverItsKind() {
        let noVerifier = CodeReporter(credentials: nil, programJudges: true, signedPrefix: "KC1:", logger: Logger { _ in }, clock: ManualClock())
        XCTAssertEqual(noVerifier.judge(.credential(.pass)), .program, "without credentials mode every code is the program's")
        XCTAssertEqual(noVerifier.judge(.plain), .program)
    }
}
