// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Fleet
import Policy
import XCTest

final class SpoolTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-spool-" + UUID().uuidString
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func payloads(_ spool: Spool) -> [String] { spool.records.map { String(decoding: $0.payload, as: UTF8.self) } }
    private var file: String { folder + "/mqtt-spool" }

    func testEventsComeBackInOrderWhenTheSpoolIsOpenedAgain() throws {
        let spool = try Spool(directory: folder, capacity: 10)
        for i in 1...5 { spool.append(Array("event-\(i)".utf8)) }
        XCTAssertTrue(spool.remove(sequence: 1))
        XCTAssertTrue(spool.remove(sequence: 3))
        XCTAssertFalse(spool.remove(sequence: 3))
        // The first spool is abandoned, not closed (as a killed process leaves it).
        let again = try Spool(directory: folder, capacity: 10)
        XCTAssertEqual(payloads(again), ["event-2", "event-4", "event-5"])
        XCTAssertEqual(again.records.map(\.sequence), [2, 4, 5])
        XCTAssertEqual(again.ignoredLines, 0)
        XCTAssertEqual(again.append(Array("event-6".utf8)).record.sequence, 6)
    }

    func testBytesOfAnyKindSurvive() throws {
        let hostile: [UInt8] = [0, 10, 13, 0x20, 0xFF, 0x53, 0x20, 0x58] + (0...255).map { UInt8($0) }
        let spool = try Spool(directory: folder, capacity: 10)
        spool.append(hostile)
        spool.append([])
        XCTAssertEqual(try Spool(directory: folder, capacity: 10).records.map(\.payload), [hostile, []])
    }

    func testATornLastLineIsIgnoredAndWhatFollowsIsNotLost() throws {
        let spool = try Spool(directory: folder, capacity: 10)
        spool.append(Array("whole-1".utf8))
        spool.append(Array("whole-2".utf8))
        // A crash in the middle of the third append.
        let fd = open(file, O_WRONLY | O_APPEND)
        let torn = Array("S 3 dG9yb".utf8)
        _ = torn.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let after = try Spool(directory: folder, capacity: 10)
        XCTAssertEqual(payloads(after), ["whole-1", "whole-2"])
        XCTAssertEqual(after.ignoredLines, 1)
        after.append(Array("next".utf8))
        let third = try Spool(directory: folder, capacity: 10)
        XCTAssertEqual(payloads(third), ["whole-1", "whole-2", "next"])
        XCTAssertEqual(third.ignoredLines, 0)
    }

    func testLinesThatDoNotParseAreIgnoredAndCounted() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = "S 1 \(Base64.encode(Array("one".utf8)))\nS x Zm9v\nQ 2 Zm9v\nS 2 not*base64\n\nS 3 \(Base64.encode(Array("three".utf8)))\nX 1\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let spool = try Spool(directory: folder, capacity: 10)
        XCTAssertEqual(payloads(spool), ["three"])
        XCTAssertEqual(spool.ignoredLines, 4)
        XCTAssertEqual(spool.append([1]).record.sequence, 4)
    }

    func testWhenFullTheOldestIsDroppedAndCounted() throws {
        let spool = try Spool(directory: folder, capacity: 3)
        var dropped: [UInt64] = []
        for i in 1...5 {
            if let d = spool.append(Array("e\(i)".utf8)).dropped { dropped.append(d.sequence) }
        }
        XCTAssertEqual(dropped, [1, 2])
        XCTAssertEqual(spool.dropped, 2)
        XCTAssertEqual(payloads(spool), ["e3", "e4", "e5"])
        XCTAssertEqual(payloads(try Spool(directory: folder, capacity: 3)), ["e3", "e4", "e5"])
        // Opened with a smaller queue: the oldest go, counted.
        let smaller = try Spool(directory: folder, capacity: 2)
        XCTAssertEqual(payloads(smaller), ["e4", "e5"])
        XCTAssertEqual(smaller.dropped, 1)
    }

    /// A duress alarm is spooled as an `A` line beside the scans' `S` lines, read back as an
    /// alarm (its topic is `<topic>/alarm`), in order with them; a full queue drops the oldest
    /// scan before any alarm, also when opened with a smaller queue.
    func testAlarmsAreSpooledBesideScansAndOutliveThem() throws {
        let spool = try Spool(directory: folder, capacity: 3)
        spool.append(Array("scan-1".utf8))
        spool.append(Array("alarm-2".utf8), kind: .alarm)
        spool.append(Array("scan-3".utf8))
        XCTAssertEqual(spool.append(Array("scan-4".utf8)).dropped?.sequence, 1, "the oldest scan")
        XCTAssertEqual(spool.append(Array("alarm-5".utf8), kind: .alarm).dropped?.sequence, 3, "a scan, not the older alarm")
        XCTAssertEqual(spool.append(Array("scan-6".utf8)).dropped?.sequence, 4)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(text.contains("A 2 \(Base64.encode(Array("alarm-2".utf8)))\n"), text)
        let again = try Spool(directory: folder, capacity: 3)
        XCTAssertEqual(payloads(again), ["alarm-2", "alarm-5", "scan-6"])
        XCTAssertEqual(again.records.map(\.kind), [.alarm, .alarm, .scan])
        // Opened with a queue of two: the scan goes, both alarms stay; with one, the older alarm goes.
        XCTAssertEqual(payloads(try Spool(directory: folder, capacity: 2)), ["alarm-2", "alarm-5"])
        XCTAssertEqual(payloads(try Spool(directory: folder, capacity: 1)), ["alarm-5"])
        let compacted = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertEqual(compacted, "A 5 \(Base64.encode(Array("alarm-5".utf8)))\n", "written back as an alarm")
    }

    func testTheFileDoesNotGrowWithAcknowledgedEvents() throws {
        let spool = try Spool(directory: folder, capacity: 100)
        let payload = [UInt8](repeating: 0x41, count: 200)
        for _ in 0..<3000 {
            let r = spool.append(payload).record
            spool.remove(sequence: r.sequence)
        }
        spool.append(payload)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        // At most the gone lines of one compaction (65 events' S and X lines) and the live one.
        XCTAssertLessThan(size, 70 * 2 * 300)
        XCTAssertEqual(try Spool(directory: folder, capacity: 100).records.map(\.sequence), [3001])
    }

    func testAFolderThatCannotBeMadeIsAnError() {
        XCTAssertThrowsError(try Spool(directory: "/proc/kiosk-no-such/spool", capacity: 1))
    }
}
