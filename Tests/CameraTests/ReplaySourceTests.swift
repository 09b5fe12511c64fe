// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import Platform
import Policy
import XCTest

final class ReplaySourceTests: XCTestCase {
    private var folder: TempFolder!

    override func setUpWithError() throws {
        folder = try TempFolder()
    }

    override func tearDown() {
        folder.remove()
    }

    /// Writes a flat image whose grey level identifies it.
    private func writeFlat(_ name: String, value: UInt8, width: Int = 4, height: Int = 3) throws {
        let image = GrayImage(width: width, height: height, fill: value)
        if name.lowercased().hasSuffix(".png") {
            try ImageFile.writePNG(image, to: folder.file(name))
        } else {
            try ImageFile.writePGM(image, to: folder.file(name))
        }
    }

    private struct Played {
        var value: UInt8
        var width: Int
        var height: Int
        var sequence: UInt64
        var timestampNs: UInt64
        var capturedNs: UInt64
    }

    /// Plays the source to its end; fails if it never ends.
    private func playAll(_ source: ReplaySource) throws -> [Played] {
        var played: [Played] = []
        for _ in 0..<100 {
            switch try source.nextFrame(timeoutMs: 0) {
            case .frame(let frame):
                played.append(Played(value: frame.luma[0, 0], width: frame.luma.width, height: frame.luma.height,
                                     sequence: frame.sequence, timestampNs: frame.timestampNs,
                                     capturedNs: frame.capturedNs))
            case .timedOut:
                XCTFail("a replay never times out")
            case .ended:
                return played
            }
        }
        XCTFail("replay did not end")
        return played
    }

    private func openError(_ source: ReplaySource, file: StaticString = #filePath, line: UInt = #line) -> CameraError? {
        do {
            _ = try source.open()
            XCTFail("open should fail", file: file, line: line)
            return nil
        } catch let error as CameraError {
            return error
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    func testPlaysImageFilesInByteWiseNameOrder() throws {
        // Byte-wise: "1.PNG" < "10.pgm" ('.' 0x2E < '0' 0x30) < "2.pgm" < "B.pgm" < "a.pgm" < "b.png".
        try writeFlat("2.pgm", value: 3)
        try writeFlat("10.pgm", value: 2)
        try writeFlat("1.PNG", value: 1)
        try writeFlat("b.png", value: 6)
        try writeFlat("a.pgm", value: 5)
        try writeFlat("B.pgm", value: 4)
        // Not played: other extensions and hidden files.
        try folder.write(Array("notes".utf8), to: "notes.txt")
        try writeFlat("pgm", value: 99)
        try writeFlat(".hidden.pgm", value: 98)
        try writeFlat("._b.png", value: 97)

        let source = ReplaySource(directory: folder.path, fps: 10)
        _ = try source.open()
        let played = try playAll(source)
        XCTAssertEqual(played.map(\.value), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(played.map(\.sequence), [0, 1, 2, 3, 4, 5])
        XCTAssertEqual(source.skippedFrames, 0)
        XCTAssertNil(source.lastSkip)
    }

    func testTimestampsFollowFileIndexOverFPSAndThenEnds() throws {
        for i in 0..<4 {
            try writeFlat("frame\(i).pgm", value: UInt8(i))
        }
        let source = ReplaySource(directory: folder.path, fps: 30)
        _ = try source.open()
        let before = monotonicNanoseconds()
        let played = try playAll(source)
        XCTAssertEqual(played.map(\.sequence), [0, 1, 2, 3])
        // i * 1e9 / 30, rounded to the nanosecond.
        XCTAssertEqual(played.map(\.timestampNs), [0, 33_333_333, 66_666_667, 100_000_000])
        for (earlier, later) in zip(played, played.dropFirst()) {
            XCTAssertLessThanOrEqual(earlier.capturedNs, later.capturedNs)
        }
        XCTAssertGreaterThanOrEqual(played.first?.capturedNs ?? 0, before)
        // Ended stays ended.
        guard case .ended = try source.nextFrame(timeoutMs: 100) else {
            return XCTFail("expected .ended again")
        }
    }

    func testOpenDescribesTheReplay() throws {
        try writeFlat("a.pgm", value: 1, width: 8, height: 6)
        try writeFlat("b.pgm", value: 2, width: 3, height: 2)
        let source = ReplaySource(directory: folder.path, fps: 12.5)
        let description = try source.open()
        XCTAssertEqual(description, CameraDescription(device: "replay:\(folder.path)", format: "PGM/PNG",
                                                      width: 8, height: 6, fps: 12.5))
    }

    func testFramesOfDifferentSizesCarryTheirOwnSizeAndPixels() throws {
        try writeFlat("a.pgm", value: 10, width: 2, height: 2)
        var big = GrayImage(width: 5, height: 4, fill: 0)
        for i in big.pixels.indices { big.pixels[i] = UInt8(i) }
        try ImageFile.writePNG(big, to: folder.file("b.png"))
        try writeFlat("c.pgm", value: 30, width: 3, height: 1)

        let source = ReplaySource(directory: folder.path, fps: 1)
        _ = try source.open()
        guard case .frame(let first) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual([first.luma.width, first.luma.height], [2, 2])
        XCTAssertEqual(first.luma[1, 1], 10)

        guard case .frame(let second) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual([second.luma.width, second.luma.height, second.luma.rowStride], [5, 4, 5])
        var pixels: [UInt8] = []
        for y in 0..<4 { for x in 0..<5 { pixels.append(second.luma[x, y]) } }
        XCTAssertEqual(pixels, big.pixels)

        guard case .frame(let third) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual([third.luma.width, third.luma.height], [3, 1])
        XCTAssertEqual([third.luma[0, 0], third.luma[2, 0]], [30, 30])
        XCTAssertEqual(third.timestampNs, 2_000_000_000)
    }

    func testBadFilesInTheMiddleAreSkippedAndCounted() throws {
        try writeFlat("00.pgm", value: 100)
        try folder.write(Array("P5\n4 3\n255\n".utf8) + [1, 2, 3], to: "01.pgm")  // truncated
        try folder.write(Array("not an image at all".utf8), to: "02.png")
        try writeFlat("03.png", value: 103)
        try folder.write([], to: "04.pgm")  // empty
        try writeFlat("05.pgm", value: 105)

        let fps = 4.0
        let source = ReplaySource(directory: folder.path, fps: fps)
        _ = try source.open()

        guard case .frame(let first) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual(first.luma[0, 0], 100)
        XCTAssertEqual(source.skippedFrames, 0)

        // Both bad files are passed over within one call; the good file after them still comes,
        // stamped by its own position in the folder.
        guard case .frame(let next) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual(next.luma[0, 0], 103)
        XCTAssertEqual(next.sequence, 3)
        XCTAssertEqual(next.timestampNs, 750_000_000)
        XCTAssertEqual(source.skippedFrames, 2)
        XCTAssertEqual(source.lastSkip?.file, "02.png")
        XCTAssertTrue(source.lastSkip?.reason.contains("not an image") ?? false, "\(String(describing: source.lastSkip))")

        let rest = try playAll(source)
        XCTAssertEqual(rest.map(\.value), [105])
        XCTAssertEqual(rest.map(\.sequence), [5])
        XCTAssertEqual(source.skippedFrames, 3)
        XCTAssertEqual(source.lastSkip?.file, "04.pgm")
    }

    func testUnreadableFirstFileStillOpensWithTheNextImagesSize() throws {
        try folder.write(Array("P5\n9 9\n255\n".utf8), to: "0.pgm")  // truncated
        try writeFlat("1.pgm", value: 7, width: 6, height: 2)
        let source = ReplaySource(directory: folder.path, fps: 5)
        let description = try source.open()
        XCTAssertEqual([description.width, description.height], [6, 2])
        let played = try playAll(source)
        XCTAssertEqual(played.map(\.sequence), [1])
        XCTAssertEqual(source.skippedFrames, 1)
        XCTAssertEqual(source.lastSkip?.file, "0.pgm")
        XCTAssertTrue(source.lastSkip?.reason.contains("truncated") ?? false)
    }

    func testFolderWithoutImagesFailsToOpen() throws {
        try folder.write(Array("notes".utf8), to: "notes.txt")
        let error = openError(ReplaySource(directory: folder.path, fps: 10))
        XCTAssertTrue(error?.message.contains("no .pgm or .png files") ?? false, "\(String(describing: error))")
        XCTAssertTrue(error?.message.contains(folder.path) ?? false)
    }

    func testFolderOfOnlyUnreadableImagesFailsToOpen() throws {
        try folder.write(Array("junk".utf8), to: "a.png")
        try folder.write(Array("junk".utf8), to: "b.pgm")
        let error = openError(ReplaySource(directory: folder.path, fps: 10))
        XCTAssertTrue(error?.message.contains("none of the 2 image files can be read") ?? false,
                      "\(String(describing: error))")
    }

    func testMissingFolderFailsToOpen() {
        let path = folder.file("not-there")
        let error = openError(ReplaySource(directory: path, fps: 10))
        XCTAssertEqual(error?.errno, Errno(ENOENT))
        XCTAssertTrue(error?.description.contains("replay:\(path)") ?? false)
        XCTAssertTrue(error?.description.contains("No such file or directory") ?? false, "\(String(describing: error))")
    }

    func testAFileGivenAsFolderFailsToOpen() throws {
        try writeFlat("a.pgm", value: 1)
        let error = openError(ReplaySource(directory: folder.file("a.pgm"), fps: 10))
        XCTAssertEqual(error?.errno, Errno(ENOTDIR))
    }

    func testNonPositiveFPSFailsToOpen() throws {
        try writeFlat("a.pgm", value: 1)
        XCTAssertNotNil(openError(ReplaySource(directory: folder.path, fps: 0)))
        XCTAssertNotNil(openError(ReplaySource(directory: folder.path, fps: .nan)))
    }

    func testNextFrameWhenNotOpenThrowsAndReopenStartsOver() throws {
        try writeFlat("a.pgm", value: 1)
        try writeFlat("b.pgm", value: 2)
        let source = ReplaySource(directory: folder.path, fps: 10)
        XCTAssertThrowsError(try source.nextFrame(timeoutMs: 0))

        _ = try source.open()
        guard case .frame(let frame) = try source.nextFrame(timeoutMs: 0) else { return XCTFail("no frame") }
        XCTAssertEqual(frame.luma[0, 0], 1)
        source.close()
        source.close()  // safe twice
        XCTAssertThrowsError(try source.nextFrame(timeoutMs: 0))

        _ = try source.open()
        XCTAssertEqual(try playAll(source).map(\.value), [1, 2])
    }
}
