// SPDX-License-Identifier: Apache-2.0

/// A region of a sensor frame seen upright (mirrored and turned as the mount says) without a copy:
/// where each upright pixel lies in the sensor frame, as an affine map of whole pixels. A reader
/// that takes an image as a pointer and two strides (zxing-cpp's ImageView) reads the upright
/// code straight from the frame; its outline comes back through `sensorPixel`.
///
/// Made from `Mount.sensorPoint` (the one transform) at three pixel centres, so it cannot
/// disagree with the ROI mapping.
public struct UprightView: Equatable, Sendable {
    /// The upright size of the region.
    public let width: Int
    public let height: Int
    /// The sensor pixel of upright pixel (0, 0), and the sensor steps of one upright pixel right
    /// and one down.
    public let origin: (x: Int, y: Int)
    public let right: (x: Int, y: Int)
    public let down: (x: Int, y: Int)

    public init(mount: Mount, sensorRegion r: PixelRect) {
        let size = mount.uprightSize(sensorWidth: r.width, sensorHeight: r.height)
        width = size.width
        height = size.height
        func sensor(_ u: Int, _ v: Int) -> (x: Int, y: Int) {
            let p = mount.sensorPoint(fromUpright: NormalizedPoint(x: (Double(u) + 0.5) / Double(max(1, size.width)),
                                                                   y: (Double(v) + 0.5) / Double(max(1, size.height))))
            return (r.x + min(r.width - 1, Int(p.x * Double(r.width))), r.y + min(r.height - 1, Int(p.y * Double(r.height))))
        }
        let o = sensor(0, 0), a = sensor(1, 0), b = sensor(0, 1)
        origin = o
        // A one-pixel-wide region has no second column (or row): its step is whatever the mount
        // says a step is, found from the far side instead.
        right = size.width > 1 ? (a.x - o.x, a.y - o.y) : UprightView.unitStep(mount, along: true)
        down = size.height > 1 ? (b.x - o.x, b.y - o.y) : UprightView.unitStep(mount, along: false)
    }

    /// The sensor pixel of upright pixel (u, v) of the region (outside it for points outside).
    public func sensorPixel(_ u: Int, _ v: Int) -> PixelPoint {
        PixelPoint(x: origin.x + u * right.x + v * down.x, y: origin.y + u * right.y + v * down.y)
    }

    /// The byte offset of upright pixel (0, 0) and the byte strides of a plane with these strides.
    public func strides(rowStride: Int, pixelStride: Int) -> (offset: Int, pixel: Int, row: Int) {
        (origin.y * rowStride + origin.x * pixelStride,
         right.y * rowStride + right.x * pixelStride,
         down.y * rowStride + down.x * pixelStride)
    }

    static func unitStep(_ mount: Mount, along horizontal: Bool) -> (x: Int, y: Int) {
        let big = UprightView(mount: mount, sensorRegion: PixelRect(x: 0, y: 0, width: 4, height: 4))
        return horizontal ? big.right : big.down
    }

    public static func == (a: UprightView, b: UprightView) -> Bool {
        a.width == b.width && a.height == b.height && a.origin == b.origin && a.right == b.right && a.down == b.down
    }
}
