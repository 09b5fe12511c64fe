// SPDX-License-Identifier: Apache-2.0
/// How the camera is mounted: the sensor frame is made upright by first mirroring it left-right
/// (when `mirrored`), then turning it clockwise by `rotation` degrees (interface.md,
/// `KIOSK_MIRROR` / `KIOSK_ROTATE`).
///
/// The installer thinks in the upright picture; the camera delivers the sensor frame. As the
/// phone articles warn (background.md section 2), mapping a region between the two with a formula
/// per case silently scans the wrong place when one case is wrong, so there is one transform here,
/// on normalised coordinates (0...1 on each axis), and its inverse.
public struct Mount: Equatable, Sendable {
    public enum Rotation: Int, CaseIterable, Sendable {
        case none = 0, quarter = 90, half = 180, threeQuarters = 270
    }

    public var rotation: Rotation
    public var mirrored: Bool

    public init(rotation: Rotation = .none, mirrored: Bool = false) {
        self.rotation = rotation
        self.mirrored = mirrored
    }

    public static let all: [Mount] = Rotation.allCases.flatMap { r in [false, true].map { Mount(rotation: r, mirrored: $0) } }

    /// True when the upright picture's width is the sensor's height.
    public var swapsAxes: Bool { rotation == .quarter || rotation == .threeQuarters }

    /// Where a point of the sensor frame appears in the upright picture.
    public func uprightPoint(fromSensor p: NormalizedPoint) -> NormalizedPoint {
        let m = mirrored ? NormalizedPoint(x: 1 - p.x, y: p.y) : p
        return Mount.turnClockwise(m, by: rotation)
    }

    /// Where a point of the upright picture lies on the sensor: the inverse of `uprightPoint`.
    public func sensorPoint(fromUpright p: NormalizedPoint) -> NormalizedPoint {
        let inverse = Rotation(rawValue: (360 - rotation.rawValue) % 360)!
        let m = Mount.turnClockwise(p, by: inverse)
        return mirrored ? NormalizedPoint(x: 1 - m.x, y: m.y) : m
    }

    /// Turning a picture clockwise by 90 degrees moves its point (x, y) to (1 - y, x).
    static func turnClockwise(_ p: NormalizedPoint, by rotation: Rotation) -> NormalizedPoint {
        switch rotation {
        case .none: return p
        case .quarter: return NormalizedPoint(x: 1 - p.y, y: p.x)
        case .half: return NormalizedPoint(x: 1 - p.x, y: 1 - p.y)
        case .threeQuarters: return NormalizedPoint(x: p.y, y: 1 - p.x)
        }
    }

    /// The upright picture's size for a sensor frame of the given size.
    public func uprightSize(sensorWidth: Int, sensorHeight: Int) -> (width: Int, height: Int) {
        swapsAxes ? (sensorHeight, sensorWidth) : (sensorWidth, sensorHeight)
    }

    /// The sensor frame's size for an upright picture of the given size.
    public func sensorSize(uprightWidth: Int, uprightHeight: Int) -> (width: Int, height: Int) {
        swapsAxes ? (uprightHeight, uprightWidth) : (uprightWidth, uprightHeight)
    }

    /// The upright region mapped to sensor fractions.
    public func sensorRegion(fromUpright r: NormalizedRect) -> NormalizedRect {
        NormalizedRect(enclosing: sensorPoint(fromUpright: r.origin), sensorPoint(fromUpright: r.farCorner))
    }

    /// The sensor region mapped to upright fractions.
    public func uprightRegion(fromSensor r: NormalizedRect) -> NormalizedRect {
        NormalizedRect(enclosing: uprightPoint(fromSensor: r.origin), uprightPoint(fromSensor: r.farCorner))
    }

    /// The sensor pixels to scan for an upright region of interest, computed once at start-up.
    /// Rounded outward so that a region never loses a pixel row it was given.
    public func sensorROI(fromUpright r: NormalizedRect, sensorWidth: Int, sensorHeight: Int) -> PixelRect {
        sensorRegion(fromUpright: r).pixels(width: sensorWidth, height: sensorHeight)
    }
}

public struct NormalizedPoint: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// A rectangle in fractions of a picture's width and height: `KIOSK_ROI`'s unit.
public struct NormalizedRect: Equatable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    init(enclosing a: NormalizedPoint, _ b: NormalizedPoint) {
        self.init(x: min(a.x, b.x), y: min(a.y, b.y), width: abs(a.x - b.x), height: abs(a.y - b.y))
    }

    public static let whole = NormalizedRect(x: 0, y: 0, width: 1, height: 1)

    var origin: NormalizedPoint { NormalizedPoint(x: x, y: y) }
    var farCorner: NormalizedPoint { NormalizedPoint(x: x + width, y: y + height) }

    public func contains(_ p: NormalizedPoint) -> Bool {
        p.x >= x && p.x <= x + width && p.y >= y && p.y <= y + height
    }

    /// The pixels of a `width` x `height` picture that this region covers, rounded outward and
    /// clamped to the picture.
    public func pixels(width w: Int, height h: Int) -> PixelRect {
        // A small tolerance keeps 0.25 * 640 = 160 from becoming 159 through rounding noise.
        let e = 1e-9
        let x0 = max(0, Int((x * Double(w) + e).rounded(.down)))
        let y0 = max(0, Int((y * Double(h) + e).rounded(.down)))
        let x1 = min(w, Int(((x + width) * Double(w) - e).rounded(.up)))
        let y1 = min(h, Int(((y + height) * Double(h) - e).rounded(.up)))
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public var description: String { "\(fmt(x)),\(fmt(y)),\(fmt(width)),\(fmt(height))" }

    private func fmt(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }
}

/// A rectangle of whole pixels.
public struct PixelRect: Equatable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

extension PixelRect {
    /// The part of this rectangle inside a width x height image (empty when it lies outside).
    public func clamped(width w: Int, height h: Int) -> PixelRect {
        let x0 = min(max(0, x), w), y0 = min(max(0, y), h)
        let x1 = min(max(x0, x + width), w), y1 = min(max(y0, y + height), h)
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

extension Mount {
    /// The frame as the installer sees it: mirrored and turned as the mount says.
    public func uprightImage(of luma: LumaPlane) -> GrayImage {
        let size = uprightSize(sensorWidth: luma.width, sensorHeight: luma.height)
        var out = GrayImage(width: size.width, height: size.height)
        for uy in 0..<size.height {
            for ux in 0..<size.width {
                let p = sensorPoint(fromUpright: NormalizedPoint(x: (Double(ux) + 0.5) / Double(size.width),
                                                                 y: (Double(uy) + 0.5) / Double(size.height)))
                let sx = min(luma.width - 1, Int(p.x * Double(luma.width)))
                let sy = min(luma.height - 1, Int(p.y * Double(luma.height)))
                out[ux, uy] = luma[sx, sy]
            }
        }
        return out
    }
}
