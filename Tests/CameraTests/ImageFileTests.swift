// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import Policy
import TestSupport
import XCTest

final class ImageFileTests: XCTestCase {
    private var folder: TempFolder!

    override func setUpWithError() throws {
        folder = try TempFolder()
    }

    override func tearDown() {
        folder.remove()
    }

    /// A gradient whose first pixels are 0x0A and 0x20: raster bytes that look like whitespace,
    /// which a PGM reader must not skip.
    private func sampleImage(width: Int = 7, height: Int = 5) -> GrayImage {
        var image = GrayImage(width: width, height: height)
        for i in image.pixels.indices {
            image.pixels[i] = UInt8((i * 37) % 256)
        }
        image.pixels[0] = 0x0A
        image.pixels[1] = 0x20
        return image
    }

    private func problem(reading path: String, file: StaticString = #filePath, line: UInt = #line) -> ImageFileError? {
        do {
            _ = try ImageFile.read(path: path)
            XCTFail("reading \(path) should fail", file: file, line: line)
            return nil
        } catch let error as ImageFileError {
            XCTAssertEqual(error.path, path, file: file, line: line)
            XCTAssertTrue(error.description.hasPrefix(path + ": "), error.description, file: file, line: line)
            return error
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    // MARK: PGM

    func testPGMRoundTrip() throws {
        let image = sampleImage()
        let path = folder.file("round.pgm")
        try ImageFile.writePGM(image, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(bytes.prefix(3)), Array("P5\n".utf8))
        XCTAssertEqual(bytes.count, "P5\n7 5\n255\n".utf8.count + 35)
        XCTAssertEqual(try ImageFile.read(path: path), image)
    }

    func testPGMWithCommentsInHeader() throws {
        let header = "P5\n# written by hand\n3 # width\n  2\n# maxval follows\n255\n"
        try folder.write(Array(header.utf8) + [0, 10, 20, 30, 40, 255], to: "comments.pgm")
        let image = try ImageFile.read(path: folder.file("comments.pgm"))
        XCTAssertEqual(image, GrayImage(width: 3, height: 2, pixels: [0, 10, 20, 30, 40, 255]))
    }

    func testPGMWithSmallMaxvalIsRescaledTo255() throws {
        try folder.write(Array("P5 3 1 15\n".utf8) + [0, 7, 15], to: "small.pgm")
        let image = try ImageFile.read(path: folder.file("small.pgm"))
        // 7/15 of full scale, rounded: (7 * 255 + 7) / 15 = 119.
        XCTAssertEqual(image.pixels, [0, 119, 255])
    }

    func testTruncatedPGMRaster() throws {
        try folder.write(Array("P5\n4 4\n255\n".utf8) + [UInt8](repeating: 9, count: 10), to: "short.pgm")
        let error = problem(reading: folder.file("short.pgm"))
        guard case .truncated(let detail)? = error?.problem else {
            return XCTFail("expected .truncated, got \(String(describing: error))")
        }
        XCTAssertTrue(detail.contains("16"), detail)
        XCTAssertTrue(detail.contains("10"), detail)
        XCTAssertTrue(error!.description.contains("truncated PGM"), error!.description)
    }

    func testTruncatedPGMHeader() throws {
        try folder.write(Array("P5\n4 ".utf8), to: "header.pgm")
        let error = problem(reading: folder.file("header.pgm"))
        guard case .truncated? = error?.problem else {
            return XCTFail("expected .truncated, got \(String(describing: error))")
        }
    }

    func testSixteenBitPGMIsRejectedClearly() throws {
        try folder.write(Array("P5\n2 1\n65535\n".utf8) + [0, 0, 255, 255], to: "deep.pgm")
        let error = problem(reading: folder.file("deep.pgm"))
        guard case .unsupported? = error?.problem else {
            return XCTFail("expected .unsupported, got \(String(describing: error))")
        }
        XCTAssertTrue(error!.description.contains("16-bit PGM"), error!.description)
        XCTAssertTrue(error!.description.contains("65535"), error!.description)
    }

    func testPlainTextPGMIsRejectedClearly() throws {
        try folder.write(Array("P2\n2 1\n255\n0 255\n".utf8), to: "plain.pgm")
        let error = problem(reading: folder.file("plain.pgm"))
        guard case .unsupported? = error?.problem else {
            return XCTFail("expected .unsupported, got \(String(describing: error))")
        }
    }

    func testZeroSizePGMIsMalformed() throws {
        try folder.write(Array("P5\n0 3\n255\n".utf8), to: "zero.pgm")
        let error = problem(reading: folder.file("zero.pgm"))
        guard case .malformed? = error?.problem else {
            return XCTFail("expected .malformed, got \(String(describing: error))")
        }
    }

    // MARK: PNG

    func testPNGRoundTrip() throws {
        let image = sampleImage(width: 33, height: 17)
        let path = folder.file("round.png")
        try ImageFile.writePNG(image, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertEqual(try ImageFile.read(path: path), image)
    }

    func testFormatIsChosenByContentNotName() throws {
        let image = sampleImage()
        try ImageFile.writePNG(image, to: folder.file("really-a-png.pgm"))
        try ImageFile.writePGM(image, to: folder.file("really-a-pgm.png"))
        XCTAssertEqual(try ImageFile.read(path: folder.file("really-a-png.pgm")), image)
        XCTAssertEqual(try ImageFile.read(path: folder.file("really-a-pgm.png")), image)
    }

    func testRGBPNGFromCorpusReadsAsPlausibleGrey() throws {
        // A 640x480 8-bit RGB photo of a QR code, one of those kept in the repository.
        let path = Corpus.inRepository.appendingPathComponent("qrcode-1/1.png").path
        let image = try ImageFile.read(path: path)
        XCTAssertEqual(image.width, 640)
        XCTAssertEqual(image.height, 480)
        // A printed code photographed: both dark modules and light paper must be there, and not
        // as a flat image.
        let dark = image.pixels.filter { $0 < 100 }.count
        let light = image.pixels.filter { $0 > 150 }.count
        XCTAssertGreaterThan(dark, image.pixels.count / 50, "too few dark pixels")
        XCTAssertGreaterThan(light, image.pixels.count / 10, "too few light pixels")
        XCTAssertGreaterThan(Set(image.pixels).count, 32, "expected a range of grey levels")
    }

    func testCorruptPNGReportsLibpngMessage() throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        try folder.write(signature + [UInt8](repeating: 0x42, count: 40), to: "broken.png")
        let error = problem(reading: folder.file("broken.png"))
        guard case .png(let message)? = error?.problem else {
            return XCTFail("expected .png, got \(String(describing: error))")
        }
        XCTAssertFalse(message.isEmpty)
    }

    // MARK: Neither

    func testNotAnImage() throws {
        try folder.write(Array("hello, this is text\n".utf8), to: "text.png")
        let error = problem(reading: folder.file("text.png"))
        XCTAssertEqual(error?.problem, .notAnImage)
        XCTAssertTrue(error?.description.contains("not an image") ?? false)
    }

    func testEmptyFileIsNotAnImage() throws {
        try folder.write([], to: "empty.pgm")
        XCTAssertEqual(problem(reading: folder.file("empty.pgm"))?.problem, .notAnImage)
    }

    func testMissingFile() {
        let error = problem(reading: folder.file("nothing-here.pgm"))
        XCTAssertEqual(error?.problem, .missing)
        XCTAssertTrue(error?.description.contains("no such file") ?? false)
    }

    func testDirectoryIsUnreadable() throws {
        try FileManager.default.createDirectory(atPath: folder.file("dir.png"), withIntermediateDirectories: false)
        let error = problem(reading: folder.file("dir.png"))
        guard case .unreadable? = error?.problem else {
            return XCTFail("expected .unreadable, got \(String(describing: error))")
        }
    }

    func testWriteIntoMissingFolderFails() {
        let path = folder.file("no/such/folder/x.png")
        XCTAssertThrowsError(try ImageFile.writePNG(sampleImage(), to: path)) { error in
            guard case .writeFailed? = (error as? ImageFileError)?.problem else {
                return XCTFail("expected .writeFailed, got \(error)")
            }
        }
        XCTAssertThrowsError(try ImageFile.writePGM(sampleImage(), to: folder.file("no/such/x.pgm")))
    }
}
