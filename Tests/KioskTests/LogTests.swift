// SPDX-License-Identifier: Apache-2.0
@testable import Commands
@testable import Kiosk
import Policy
@testable import Systemd
import TestSupport
import XCTest

final class LogTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
    }

    func logged(format: LogFormat = .logfmt, prefix: Bool = false, level: LogLevel = .debug,
                _ body: (Logger) -> Void) -> [String] {
        let lines = Lines()
        let logger = Logger(level: level, format: format, priorityPrefix: prefix) { lines.all.append($0) }
        body(logger)
        return lines.all
    }

    func testPlainFieldsStayBare() {
        let lines = logged { $0.info("scan", ["symbology": "QR-Code", "data": .bytes(Array("ABC-123".utf8)), "frame": 7, "latency_ms": .ms(12.345)]) }
        XCTAssertEqual(lines, ["level=info event=scan symbology=QR-Code data=ABC-123 frame=7 latency_ms=12.3"])
    }

    func testHostileBytesCannotBreakTheLineOrForgeAField() {
        let hostile: [UInt8] = Array("ok\nlevel=error event=forged \"quoted\" back\\slash\tx\r".utf8) + [0x00, 0x1B, 0x7F, 0xFF, 0xC3]
        let line = logged { $0.info("scan", ["data": .bytes(hostile)]) }
        XCTAssertEqual(line.count, 1)
        XCTAssertEqual(line[0], #"level=info event=scan data="ok\nlevel=error event=forged \"quoted\" back\\slash\tx\r\x00\x1b\x7f\xff\xc3""#)
        XCTAssertFalse(line[0].contains("\n"))
        XCTAssertEqual(Logfmt.parse(line[0]).map(\.key), ["level", "event", "data"], "no forged field")
    }

    func testValidUnicodeStaysReadableButSeparatorsAndC1AreEscaped() {
        let line = logged { $0.info("scan", ["data": .bytes(Array("Grüße 東京\u{2028}\u{85}".utf8))]) }
        XCTAssertEqual(line, [#"level=info event=scan data="Grüße 東京\u2028\u0085""#])
    }

    func testBidiOverridesAndLeadingCombiningMarksAreEscaped() {
        // U+202E would show the rest of the line reversed; a combining mark first would fuse with the quote.
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("\u{0301}ok\u{202E}gpj.exe".utf8))), #""\u0301ok\u202egpj.exe""#)
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("e\u{0301}".utf8))), "\"e\u{0301}\"", "a mark on a letter stays readable")
        XCTAssertEqual(LogEscape.jsonString(Array("\u{E0001}".utf8)), #""\udb40\udc01""#)
    }

    /// Marks that are not "Mark" by category: Thai SARA AM (Lo, a spacing mark to grapheme
    /// breaking), the half-width voiced sound mark (Lm, extends), a skin-tone modifier (Sk,
    /// extends) fuse with the opening quote; Malayalam DOT REPH (Lo, Prepend) with the closing
    /// one or with an escape's backslash. Each is escaped there, and stays as it is inside a word.
    func testScalarsThatWouldJoinTheQuotesAreEscaped() {
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("\u{0E33}1".utf8))), #""\u0e331""#)
        XCTAssertEqual(LogEscape.jsonString(Array("\u{FF9E}a".utf8)), #""\uff9ea""#)
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("\u{1F3FB}".utf8))), #""\U0001f3fb""#)
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("a\u{0D4E}".utf8))), #""a\u0d4e""#)
        XCTAssertEqual(LogEscape.logfmt(.bytes(Array("\u{0E01}\u{0E33}".utf8))), "\"\u{0E01}\u{0E33}\"", "inside a word it stays")
        for value in ["\u{0E33}1", "\u{FF9E}a", "\u{1F3FB}", "a\u{0D4E}", "\"\u{0E33}", "\u{0D4E}\"", "\u{0D4E}\u{0}"] {
            for line in [LogEscape.logfmt(.bytes(Array(value.utf8))), LogEscape.jsonString(Array(value.utf8))] {
                XCTAssertEqual(line.first, "\"", "the opening quote of \(line) is a grapheme of its own")
                XCTAssertEqual(line.last, "\"", "the closing quote of \(line) is a grapheme of its own")
                XCTAssertFalse(line.contains { $0 != "\\" && $0.unicodeScalars.first == "\\" }, "a backslash joined: \(line)")
            }
        }
    }

    func testEmptyAndSpacesAndEqualsAreQuoted() {
        XCTAssertEqual(LogEscape.logfmt(.text("")), "\"\"")
        XCTAssertEqual(LogEscape.logfmt(.text("a b")), "\"a b\"")
        XCTAssertEqual(LogEscape.logfmt(.text("a=b")), "\"a=b\"")
    }

    func testOverlongAndSurrogateEncodingsAreTreatedAsInvalidBytes() {
        // Overlong "/" and an encoded UTF-16 surrogate: both must show as raw bytes.
        XCTAssertEqual(LogEscape.logfmt(.bytes([0xC0, 0xAF])), #""\xc0\xaf""#)
        XCTAssertEqual(LogEscape.logfmt(.bytes([0xED, 0xA0, 0x80])), #""\xed\xa0\x80""#)
    }

    func testTenKilobytePayloadIsOneLine() {
        let payload = [UInt8]((0..<10_240).map { UInt8($0 % 256) })
        let lines = logged { $0.info("scan", ["data": .bytes(payload)]) }
        XCTAssertEqual(lines.count, 1)
        XCTAssertFalse(lines[0].contains("\n"))
        XCTAssertFalse(lines[0].contains("\r"))
        XCTAssertGreaterThan(lines[0].utf8.count, 10_240)
        XCTAssertTrue(lines[0].hasSuffix("\""))
    }

    func testJSONEscapesAndStaysParseable() throws {
        let hostile: [UInt8] = Array("a\"b\\c\nd".utf8) + [0x01, 0xFF]
        let line = logged(format: .json) { $0.info("scan", ["data": .bytes(hostile), "frame": 3, "ok": .bool(true), "ms": .ms(1.25)]) }
        XCTAssertEqual(line.count, 1)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line[0].utf8)) as? [String: Any])
        XCTAssertEqual(object["event"] as? String, "scan")
        XCTAssertEqual(object["level"] as? String, "info")
        XCTAssertEqual(object["data"] as? String, "a\"b\\c\nd\u{01}\\xff")
        XCTAssertEqual(object["frame"] as? Int, 3)
        XCTAssertEqual(object["ok"] as? Bool, true)
    }

    func testLevelsFilterAndJournalPrefix() {
        let lines = logged(prefix: true, level: .info) { log in
            log.debug("beep", ["ms": 120])
            log.info("ready", ["ms": .ms(5)])
            log.warning("camera_lost", ["error": "gone"])
            log.error("config_error", ["var": "KIOSK_FPS"])
        }
        XCTAssertEqual(lines, ["<6>level=info event=ready ms=5.0", "<4>level=warning event=camera_lost error=gone",
                               "<3>level=error event=config_error var=KIOSK_FPS"])
    }

    func testAnyBytesGiveExactlyOneLineThatUnescapesToThemselves() {
        var rng = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 33 }
        for round in 0..<3000 {
            let length = Int(next() % 64)
            // Bias towards the bytes that matter: controls, quotes, backslashes, =, high bytes.
            let specials: [UInt8] = [0x00, 0x0A, 0x0D, 0x09, 0x22, 0x5C, 0x3D, 0x20, 0x7F, 0x80, 0xC2, 0x85, 0xE2, 0x80, 0xA8, 0xFF]
            let bytes: [UInt8] = (0..<length).map { _ in next() % 3 == 0 ? specials[Int(next() % UInt64(specials.count))] : UInt8(next() % 256) }
            let lines = logged { $0.info("scan", ["data": .bytes(bytes), "frame": .int(round)]) }
            XCTAssertEqual(lines.count, 1)
            let line = lines[0]
            XCTAssertFalse(line.contains("\n") && line.contains("\n") == false)
            XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{2029}" },
                           "a control or separator reached the log: \(bytes)")
            let fields = Logfmt.parse(line)
            XCTAssertEqual(fields.map(\.key), ["level", "event", "data", "frame"], "\(bytes)")
            XCTAssertEqual(Logfmt.unescape(fields[2].value), bytes, "round trip of \(bytes)")
        }
    }
}
