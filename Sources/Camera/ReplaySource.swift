// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// Plays a folder of still images as a camera (`KIOSK_CAMERA=replay:DIR`).
///
/// Files named `*.pgm` or `*.png` (extension in any case) are played in byte-wise order of their
/// names, so "10.pgm" comes before "2.pgm": name files with leading zeros ("0002.pgm") to get
/// numeric order. Names starting with "." are ignored (editor and macOS `._` side files).
///
/// Frames are handed out as fast as the caller asks; `timeoutMs` is never waited on. The frame
/// from the file at position i in that order has `sequence` i and `timestampNs` i * 1e9 / fps,
/// so a replay runs on the same timeline however fast it is processed.
///
/// One bad file never stops a replay: a file that cannot be read is skipped, counted in
/// `skippedFrames` and kept in `lastSkip`, and the next file is played. Its position is still
/// used up, so later frames keep the sequence and timestamp of their position in the folder.
public final class ReplaySource: FrameSource {
    public let directory: String
    public let fps: Double

    /// Still images say nothing of exposure.
    public var exposure: CameraExposure? { nil }

    /// Files skipped because they could not be read, since `open`.
    public private(set) var skippedFrames = 0
    /// The most recently skipped file (its name in the folder) and why, for the caller to log.
    public private(set) var lastSkip: (file: String, reason: String)?

    private var files: [String] = []
    private var nextIndex = 0
    private var isOpen = false

    /// The pixels of the frame last handed out. The frame points into it, so it is owned here
    /// (an Array's storage may not be pointed to beyond a closure) and reused while big enough.
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferCapacity = 0

    public init(directory: String, fps: Double) {
        self.directory = directory
        self.fps = fps
    }

    deinit {
        buffer?.deallocate()
    }

    private var device: String { "replay:\(directory)" }

    public func open() throws -> CameraDescription {
        close()
        guard fps.isFinite && fps > 0 else {
            throw CameraError("\(device): fps must be a positive number, got \(fps)")
        }
        let names = try Self.imageNames(in: directory, device: device)
        guard !names.isEmpty else {
            throw CameraError("\(device): no .pgm or .png files in the folder")
        }

        // The description needs a size: take the first file that reads. It is read again when
        // its turn comes; if it is unreadable then, it is skipped like any other.
        var first: GrayImage?
        var lastProblem = ""
        for name in names {
            do {
                first = try ImageFile.read(path: path(of: name))
                break
            } catch let error as ImageFileError {
                lastProblem = "\(name): \(error.problem)"
            }
        }
        guard let first else {
            throw CameraError("\(device): none of the \(names.count) image files can be read (last: \(lastProblem))")
        }

        files = names
        nextIndex = 0
        skippedFrames = 0
        lastSkip = nil
        isOpen = true
        return CameraDescription(device: device, format: "PGM/PNG", width: first.width, height: first.height, fps: fps)
    }

    public func nextFrame(timeoutMs: Int) throws -> FrameWait {
        guard isOpen else {
            throw CameraError("\(device): nextFrame called while not open")
        }
        while nextIndex < files.count {
            let index = nextIndex
            nextIndex += 1
            let name = files[index]
            let image: GrayImage
            do {
                image = try ImageFile.read(path: path(of: name))
            } catch let error as ImageFileError {
                skippedFrames += 1
                lastSkip = (file: name, reason: error.problem.description)
                continue
            }
            let capturedNs = monotonicNanoseconds()
            let base = store(image)
            let timestampNs = UInt64((Double(index) * 1_000_000_000 / fps).rounded())
            let luma = LumaPlane(base: base, width: image.width, height: image.height, rowStride: image.width)
            return .frame(Frame(luma: luma, sequence: UInt64(index), timestampNs: timestampNs, capturedNs: capturedNs))
        }
        return .ended
    }

    public func close() {
        isOpen = false
        files = []
        nextIndex = 0
        buffer?.deallocate()
        buffer = nil
        bufferCapacity = 0
    }

    private func path(of name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Copies the image into the reusable buffer, growing it only when an image is bigger.
    private func store(_ image: GrayImage) -> UnsafePointer<UInt8> {
        let count = image.pixels.count
        if count > bufferCapacity {
            buffer?.deallocate()
            buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            bufferCapacity = count
        }
        let target = buffer!
        image.pixels.withUnsafeBufferPointer { source in
            target.update(from: source.baseAddress!, count: count)
        }
        return UnsafePointer(target)
    }

    /// The image file names in `directory`, sorted byte-wise.
    static func imageNames(in directory: String, device: String) throws -> [String] {
        guard let dir = opendir(directory) else {
            let code = errno
            throw CameraError("\(device): cannot open the replay folder", errno: code)
        }
        defer { closedir(dir) }

        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 {
                    throw CameraError("\(device): cannot list the replay folder", errno: errno)
                }
                break
            }
            // A name that is not valid UTF-8 cannot be turned back into the same path; skip it.
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(validatingCString: $0)
                }
            }
            guard let name, !name.hasPrefix(".") else { continue }
            let lower = name.lowercased()
            if lower.hasSuffix(".pgm") || lower.hasSuffix(".png") {
                names.append(name)
            }
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return names
    }
}
