// SPDX-License-Identifier: Apache-2.0
import CPNG
import Glibc
import Policy

/// What went wrong reading or writing an image file, naming the file.
public struct ImageFileError: Error, Equatable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable, CustomStringConvertible {
        /// The file does not exist.
        case missing
        /// The file exists but could not be opened or read (permissions, a directory, I/O error).
        case unreadable(String)
        /// The first bytes are neither a PNG signature nor a PGM header.
        case notAnImage
        /// A valid image of a kind the kiosk does not read (16-bit PGM, plain-text PGM, PPM, ...).
        case unsupported(String)
        /// The PGM header is wrong (bad number, zero size, missing separator).
        case malformed(String)
        /// The PGM file ends before its header or pixels do.
        case truncated(String)
        /// libpng refused the file; its message is kept as is.
        case png(String)
        /// Writing the file failed.
        case writeFailed(String)

        public var description: String {
            switch self {
            case .missing: return "no such file"
            case .unreadable(let why): return "cannot read: \(why)"
            case .notAnImage: return "not an image (neither PNG nor binary PGM by its first bytes)"
            case .unsupported(let what): return "unsupported: \(what)"
            case .malformed(let what): return "malformed PGM: \(what)"
            case .truncated(let what): return "truncated PGM: \(what)"
            case .png(let message): return "PNG error: \(message)"
            case .writeFailed(let why): return "cannot write: \(why)"
            }
        }
    }

    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}

/// Reads and writes the still images the kiosk replays and the tests produce:
/// binary PGM (P5, 8-bit) and PNG (any colour type, read as grey).
public enum ImageFile {
    /// The eight bytes every PNG file starts with.
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads a PGM or PNG file as 8-bit grey. The format is chosen by the file's first bytes,
    /// not its name, so a misnamed file still reads and a non-image named `.png` fails clearly.
    public static func read(path: String) throws -> GrayImage {
        let bytes = try readAll(path: path)
        if bytes.count >= pngSignature.count && Array(bytes.prefix(pngSignature.count)) == pngSignature {
            // libpng reads the file again by path; the shim's interface stays path-based and the
            // second read comes from the page cache.
            return try readPNG(path: path)
        }
        if bytes.count >= 2 && bytes[0] == UInt8(ascii: "P") {
            switch bytes[1] {
            case UInt8(ascii: "5"):
                return try parsePGM(bytes, path: path)
            case UInt8(ascii: "2"):
                throw ImageFileError(path: path, problem: .unsupported("plain (ASCII) PGM P2; only binary P5 is read"))
            case UInt8(ascii: "1"), UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "6"), UInt8(ascii: "7"):
                throw ImageFileError(path: path, problem: .unsupported(
                    "Netpbm type P\(Character(Unicode.Scalar(bytes[1]))); only greyscale PGM P5 is read"))
            default:
                break
            }
        }
        throw ImageFileError(path: path, problem: .notAnImage)
    }

    /// Writes a binary PGM (P5, maxval 255).
    public static func writePGM(_ image: GrayImage, to path: String) throws {
        var data = Array("P5\n\(image.width) \(image.height)\n255\n".utf8)
        data.append(contentsOf: image.pixels)
        guard let file = fopen(path, "wb") else {
            throw ImageFileError(path: path, problem: .writeFailed(errnoText()))
        }
        let written = data.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        let writeErrno = errno
        // fclose flushes; a full disk may only show up here.
        let closed = fclose(file)
        if written != data.count {
            throw ImageFileError(path: path, problem: .writeFailed(String(cString: strerror(writeErrno))))
        }
        if closed != 0 {
            throw ImageFileError(path: path, problem: .writeFailed(errnoText()))
        }
    }

    /// Writes an 8-bit greyscale PNG.
    public static func writePNG(_ image: GrayImage, to path: String) throws {
        var message = [CChar](repeating: 0, count: 256)
        let result = image.pixels.withUnsafeBufferPointer { pixels in
            kiosk_png_write_gray(path, Int32(image.width), Int32(image.height), Int32(image.width),
                                 pixels.baseAddress, &message, message.count)
        }
        if result != 0 {
            throw ImageFileError(path: path, problem: .writeFailed(String(cString: message)))
        }
    }

    // MARK: - Reading

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }

    /// The whole file, or `.missing` / `.unreadable` with the system's reason.
    private static func readAll(path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            let code = errno
            if code == ENOENT {
                throw ImageFileError(path: path, problem: .missing)
            }
            throw ImageFileError(path: path, problem: .unreadable(String(cString: strerror(code))))
        }
        defer { fclose(file) }

        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBufferPointer { fread($0.baseAddress, 1, $0.count, file) }
            bytes.append(contentsOf: chunk[0..<count])
            if count < chunk.count {
                // Short read: end of file or an error (a directory gives EISDIR here).
                if ferror(file) != 0 {
                    throw ImageFileError(path: path, problem: .unreadable(errnoText()))
                }
                return bytes
            }
        }
    }

    private static func readPNG(path: String) throws -> GrayImage {
        var width: Int32 = 0
        var height: Int32 = 0
        var pixels: UnsafeMutablePointer<UInt8>? = nil
        var message = [CChar](repeating: 0, count: 256)
        guard kiosk_png_read_gray(path, &width, &height, &pixels, &message, message.count) == 0,
              let pixels else {
            throw ImageFileError(path: path, problem: .png(String(cString: message)))
        }
        defer { kiosk_png_free(pixels) }
        let count = Int(width) * Int(height)
        return GrayImage(width: Int(width), height: Int(height),
                         pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    /// Parses a binary PGM: "P5", width, height, maxval as ASCII decimals separated by whitespace
    /// (with `#` comments running to the end of a line allowed between them), then exactly one
    /// whitespace byte, then width*height bytes. Bytes after the raster are ignored (a PGM file
    /// may hold several images; the first is used).
    static func parsePGM(_ bytes: [UInt8], path: String) throws -> GrayImage {
        var position = 2  // after "P5"

        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
        }

        func header(_ name: String) throws -> Int {
            // Skip whitespace and comments before the number.
            while position < bytes.count {
                if isSpace(bytes[position]) {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "#") {
                    while position < bytes.count && bytes[position] != 0x0A && bytes[position] != 0x0D {
                        position += 1
                    }
                } else {
                    break
                }
            }
            guard position < bytes.count else {
                throw ImageFileError(path: path, problem: .truncated("file ends before the \(name) in the header"))
            }
            var value = 0
            var digits = 0
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                // Anything past 9 digits is absurd for an image; stop before Int could overflow.
                guard digits < 9 else {
                    throw ImageFileError(path: path, problem: .malformed("\(name) is too large"))
                }
                value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                digits += 1
                position += 1
            }
            guard digits > 0 else {
                throw ImageFileError(path: path, problem: .malformed("expected a number for the \(name)"))
            }
            return value
        }

        let width = try header("width")
        let height = try header("height")
        let maxval = try header("maxval")

        guard width > 0 && height > 0 else {
            throw ImageFileError(path: path, problem: .malformed("size \(width)x\(height)"))
        }
        guard maxval >= 1 && maxval <= 65535 else {
            throw ImageFileError(path: path, problem: .malformed("maxval \(maxval) outside 1...65535"))
        }
        guard maxval <= 255 else {
            throw ImageFileError(path: path, problem: .unsupported(
                "16-bit PGM (maxval \(maxval)); only 8-bit PGM with maxval up to 255 is read"))
        }

        // Exactly one whitespace byte separates maxval from the raster; the raster may itself
        // start with bytes that look like whitespace, so no more is skipped.
        guard position < bytes.count else {
            throw ImageFileError(path: path, problem: .truncated("file ends after the header, no pixels"))
        }
        guard isSpace(bytes[position]) else {
            throw ImageFileError(path: path, problem: .malformed("no whitespace after maxval"))
        }
        position += 1

        // Both are below 10^9 (header limits them to 9 digits), so the product fits an Int.
        let count = width * height
        let available = bytes.count - position
        guard count <= available else {
            throw ImageFileError(path: path, problem: .truncated(
                "\(width)x\(height) needs \(count) pixel bytes, file has \(available)"))
        }

        var pixels = Array(bytes[position..<(position + count)])
        if maxval < 255 {
            // Rescale so grey levels mean the same whatever the file's maxval. Values above
            // maxval are invalid PGM; they are clamped rather than failing the whole frame.
            for i in pixels.indices {
                let value = min(Int(pixels[i]), maxval)
                pixels[i] = UInt8((value * 255 + maxval / 2) / maxval)
            }
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }
}
