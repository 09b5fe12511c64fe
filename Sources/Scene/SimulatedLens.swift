// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// The simulated camera's lens: a Camera Module 3 as the Raspberry Pi IPA presents it, so that the
/// kiosk's focus settings meet the same table a real one has (`LensPosition` 0-15 dioptres, the
/// lens parked at 1.0 dioptre, about 1 m, when nothing is asked; `AfMode`, the AE modes).
///
/// What it does to the picture: a code held at `d` centimetres is sharp when the lens is at 100/d
/// dioptres; off by more than the depth of field it is blurred, by `blurPerDioptre` pixels of
/// radius for each dioptre beyond it. With 4 px modules at 15 cm, the lens at 1 m (5.7 dioptres
/// off) smears each module over about eight of its neighbours: nothing reads, as on a real door.
/// Continuous autofocus (`auto`) moves the lens a fraction of the way to the code each frame.
public struct SimulatedLens: Sendable {
    /// The IPA's default lens position (imx708.json "rpi.af" ranges.normal.default).
    public static let parkedDioptres = 1.0
    public var blurPerDioptre = 1.5
    /// Half the depth of field, in dioptres: within it the picture is sharp.
    public var depthOfField = 0.5
    /// The controls the lens offers, as the IPA advertises them.
    public static let offered: [LibcameraControlOffer] = [
        .init(name: "AfMode", minimum: 0, maximum: 2, defaultValue: 0),
        .init(name: "AfRange", minimum: 0, maximum: 2, defaultValue: 0),
        .init(name: "AfSpeed", minimum: 0, maximum: 1, defaultValue: 0),
        .init(name: "AfMetering", minimum: 0, maximum: 1, defaultValue: 0),
        .init(name: "AfWindows", minimum: 0, maximum: 0),
        .init(name: "LensPosition", minimum: 0, maximum: 15, defaultValue: parkedDioptres),
        .init(name: "AeMeteringMode", minimum: 0, maximum: 3, defaultValue: 0),
        .init(name: "AeConstraintMode", minimum: 0, maximum: 3, defaultValue: 0),
        .init(name: "AeExposureMode", minimum: 0, maximum: 3, defaultValue: 0),
    ]

    public private(set) var position = parkedDioptres
    public private(set) var continuous = false
    public private(set) var report: CameraControlReport?

    public init() {}

    /// Takes the start controls as the IPA would: manual mode and a position, or continuous.
    public mutating func start(_ settings: CameraSettings) {
        let plan = LibcameraControls.atStart(settings, offered: Self.offered, afWindow: PixelRect(x: 0, y: 0, width: 1, height: 1))
        position = Self.parkedDioptres
        continuous = false
        for setting in plan.settings {
            switch (setting.name, setting.value) {
            case ("AfMode", .int(let mode)): continuous = mode == 2
            case ("LensPosition", .float(let d)): position = d
            default: break
            }
        }
        report = plan.report
    }

    /// One frame of continuous autofocus towards a code at `dioptres` (nil: nothing to focus on).
    public mutating func track(_ dioptres: Double?) {
        guard continuous, let dioptres else { return }
        position += (dioptres - position) * 0.3
    }

    /// The blur radius in pixels for a code at `dioptres`.
    public func blurRadius(forCodeAt dioptres: Double) -> Int {
        let off = abs(dioptres - position) - depthOfField
        return off <= 0 ? 0 : Int((off * blurPerDioptre).rounded())
    }
}

extension GrayImage {
    /// A lens's blur: three box blurs of `radius` (close to a Gaussian), edges clamped.
    public func blurred(radius: Int) -> GrayImage {
        guard radius > 0 else { return self }
        var image = self
        for _ in 0..<3 {
            image = image.boxBlur(radius: radius, horizontal: true).boxBlur(radius: radius, horizontal: false)
        }
        return image
    }

    private func boxBlur(radius: Int, horizontal: Bool) -> GrayImage {
        var out = self
        let (lines, length) = horizontal ? (height, width) : (width, height)
        let window = 2 * radius + 1
        for line in 0..<lines {
            func at(_ i: Int) -> Int {
                let c = min(length - 1, max(0, i))
                return Int(horizontal ? pixels[line * width + c] : pixels[c * width + line])
            }
            var sum = 0
            for i in -radius...radius { sum += at(i) }
            for i in 0..<length {
                let v = UInt8((sum + window / 2) / window)
                if horizontal { out.pixels[line * width + i] = v } else { out.pixels[i * width + line] = v }
                sum += at(i + radius + 1) - at(i - radius)
            }
        }
        return out
    }
}

/// `image` turned by `degrees` (clockwise on screen) about its centre, on a canvas just large
/// enough, the corners filled with `fill`; bilinear, as a camera's optics and sensor would blur it.
public func rotated(_ image: GrayImage, degrees: Double, fill: UInt8) -> GrayImage {
    let a = degrees * Double.pi / 180, c = cos(a), s = sin(a)
    let w = Double(image.width), h = Double(image.height)
    let width = Int((abs(w * c) + abs(h * s)).rounded(.up)), height = Int((abs(w * s) + abs(h * c)).rounded(.up))
    var out = GrayImage(width: width, height: height, fill: fill)
    for y in 0..<height {
        for x in 0..<width {
            let dx = Double(x) - Double(width) / 2, dy = Double(y) - Double(height) / 2
            let sx = c * dx + s * dy + w / 2, sy = -s * dx + c * dy + h / 2
            guard sx >= 0, sy >= 0, sx < w - 1, sy < h - 1 else { continue }
            let x0 = Int(sx), y0 = Int(sy), fx = sx - Double(x0), fy = sy - Double(y0)
            let v = Double(image[x0, y0]) * (1 - fx) * (1 - fy) + Double(image[x0 + 1, y0]) * fx * (1 - fy)
                + Double(image[x0, y0 + 1]) * (1 - fx) * fy + Double(image[x0 + 1, y0 + 1]) * fx * fy
            out[x, y] = UInt8(v.rounded())
        }
    }
    return out
}
