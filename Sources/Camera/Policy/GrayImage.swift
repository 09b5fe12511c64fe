// SPDX-License-Identifier: Apache-2.0
/// A borrowed view of a frame's luma (brightness) plane: the only part of a frame the kiosk reads.
///
/// `pixelStride` is 1 for planar formats (GREY, NV12, YU12) and 2 for packed YUYV, where luma
/// bytes alternate with chroma. The memory belongs to the frame source and is valid only until
/// the source hands out its next frame.
public struct LumaPlane {
    public let base: UnsafePointer<UInt8>
    public let width: Int
    public let height: Int
    public let rowStride: Int
    public let pixelStride: Int

    public init(base: UnsafePointer<UInt8>, width: Int, height: Int, rowStride: Int, pixelStride: Int = 1) {
        precondition(width > 0 && height > 0 && pixelStride >= 1 && rowStride >= width * pixelStride)
        self.base = base
        self.width = width
        self.height = height
        self.rowStride = rowStride
        self.pixelStride = pixelStride
    }

    @inline(__always)
    public subscript(x: Int, y: Int) -> UInt8 {
        base[y * rowStride + x * pixelStride]
    }
}

/// An 8-bit greyscale image that owns its pixels: a still picture, a replayed frame, a rendered code.
public struct GrayImage: Equatable {
    public var width: Int
    public var height: Int
    /// Row-major, `width` bytes a row.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, fill: UInt8 = 255) {
        precondition(width > 0 && height > 0)
        self.width = width
        self.height = height
        self.pixels = [UInt8](repeating: fill, count: width * height)
    }

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Lends the pixels as a luma plane for the duration of `body`.
    public func withLumaPlane<R>(_ body: (LumaPlane) throws -> R) rethrows -> R {
        try pixels.withUnsafeBufferPointer { buffer in
            try body(LumaPlane(base: buffer.baseAddress!, width: width, height: height, rowStride: width))
        }
    }
}

extension GrayImage {
    /// Copies `picture` onto this image with its top-left corner at (x, y), clipped at the edges.
    public mutating func paste(_ picture: GrayImage, x: Int, y: Int) {
        for py in 0..<picture.height {
            let ty = y + py
            guard ty >= 0, ty < height else { continue }
            for px in 0..<picture.width {
                let tx = x + px
                guard tx >= 0, tx < width else { continue }
                self[tx, ty] = picture[px, py]
            }
        }
    }
}
