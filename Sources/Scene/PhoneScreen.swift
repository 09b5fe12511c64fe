// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// A phone screen showing a code, as the kiosk's camera sees it: the screen's pixels are
/// RGB stripes with a black matrix between them, seen through a colour camera's Bayer filter and
/// demosaiced to luma, so that a screen pixel pitch near the camera's gives moiré, and a coarse
/// one a visible grid; then the screen's own light and what the glass adds (dark mode, PWM
/// dimming, a veil of reflected light that lifts the black, an exposure that clips the white, a
/// glare spot).
///
/// The model, per camera pixel: the screen's emission in red, green and blue is averaged over the
/// pixel's light-sensitive aperture (`fillFactor` of its area, centred; `samples` x `samples`
/// points), the pixel keeps the channel of its filter (RGGB), the other two are interpolated from
/// the neighbours (bilinear demosaicing), luma is BT.601 of the three. A screen pixel (`pitch`
/// camera pixels wide, turned by `degrees`) is three vertical stripes, R, G, B, each lit over
/// `1 - blackMatrix` of its width and height. Its content is the code's module under it
/// (`modulePixels` screen pixels a module): emission 1 for light, `black` for dark (swapped in
/// `darkMode`). Camera luma = clip(white x emission-weighted luma + veil + glare), white chosen
/// so that a light area shows `white` (more than 255: overexposed, clipped).
///
/// The lens blurs the light (`blur`) before the sensor's filter and aperture sample it.
/// Not modelled: the screen's viewing angle, a PenTile layout, bloom; the sensor's noise is the
/// scene's.
public struct PhoneScreen {
    /// The code, one pixel a module, quiet zone included: below 128 is a dark module.
    public var modules: GrayImage
    /// Screen pixels a module.
    public var modulePixels: Int
    /// Camera pixels a screen pixel.
    public var pitch: Double
    /// The screen turned against the sensor (degrees, clockwise).
    public var degrees = 0.0
    /// Light modules on a dark background (a phone's dark mode).
    public var darkMode = false
    /// The luma a light area of the screen gives before clipping (more than 255 is overexposed).
    public var white = 200.0
    /// A dark module's emission, as a fraction of a light one's (an LCD's black, a dark theme's grey).
    public var black = 0.03
    /// Light reflected by the glass, added everywhere (luma steps).
    public var veil = 0.0
    /// A glare spot: its centre in fractions of the picture, its radius (the Gaussian's sigma) in
    /// fractions of the picture's side, and its peak in luma steps.
    public var glare: (x: Double, y: Double, radius: Double, peak: Double)?
    /// PWM dimming seen through a rolling shutter: rows darker by `depth` over `duty` of each
    /// `period` rows, shifted by `phase` rows (it moves from frame to frame).
    public var bands: (period: Double, duty: Double, depth: Double, phase: Double)?
    /// Share of each sensor pixel that gathers light.
    public var fillFactor = 0.5
    /// Share of each subpixel's width (and of a screen pixel's height) that is the black matrix.
    public var blackMatrix = 0.3
    /// Sample points a side within a camera pixel's aperture.
    public var samples = 4
    /// The lens's blur before the sensor: a Gaussian's sigma in camera pixels (0: none).
    public var blur = 0.6

    public init(modules: GrayImage, modulePixels: Int, pitch: Double) {
        precondition(modulePixels >= 1 && pitch > 0)
        self.modules = modules
        self.modulePixels = modulePixels
        self.pitch = pitch
    }

    /// The code's side in camera pixels.
    public var side: Int { Int((Double(modules.width * modulePixels) * pitch).rounded()) }

    /// The camera's picture of the screen: `side` x `side` pixels (the code and its quiet zone).
    public func render() -> GrayImage {
        let n = side
        precondition(n >= 8)
        let screenSide = Double(modules.width * modulePixels)
        let theta = degrees * Double.pi / 180
        let (c, s) = (cos(theta), sin(theta))
        let centre = Double(n) / 2
        let aperture = fillFactor.squareRoot()
        let lit = 1 - blackMatrix
        // Each camera pixel's light in red, green and blue, through its aperture.
        var planes = [[Double]](repeating: [Double](repeating: 0, count: n * n), count: 3)
        let weight = 1 / Double(samples * samples)
        for y in 0..<n {
            for x in 0..<n {
                for sy in 0..<samples {
                    for sx in 0..<samples {
                        let u = Double(x) + 0.5 + aperture * ((Double(sx) + 0.5) / Double(samples) - 0.5) - centre
                        let v = Double(y) + 0.5 + aperture * ((Double(sy) + 0.5) / Double(samples) - 0.5) - centre
                        // Camera pixels to screen pixels, turned.
                        let px = (c * u + s * v) / pitch + screenSide / 2
                        let py = (-s * u + c * v) / pitch + screenSide / 2
                        guard px >= 0, py >= 0, px < screenSide, py < screenSide else { continue }
                        let fy = py - py.rounded(.down)
                        guard fy < lit else { continue }  // the black matrix between rows
                        let fx = (px - px.rounded(.down)) * 3
                        let stripe = min(2, Int(fx))
                        guard fx - Double(stripe) < lit else { continue }
                        let mx = Int(px) / modulePixels, my = Int(py) / modulePixels
                        let dark = modules[min(mx, modules.width - 1), min(my, modules.height - 1)] < 128
                        planes[stripe][y * n + x] += (dark != darkMode ? black : 1) * weight
                    }
                }
            }
        }
        if blur > 0 { for k in 0..<3 { planes[k] = PhoneScreen.gaussian(planes[k], side: n, sigma: blur) } }
        // The Bayer filter: each pixel keeps its own colour (RGGB: red at even x and y, blue at odd).
        var mosaic = [Double](repeating: 0, count: n * n)
        for y in 0..<n {
            for x in 0..<n {
                let channel = y % 2 == 0 ? (x % 2 == 0 ? 0 : 1) : (x % 2 == 0 ? 1 : 2)
                mosaic[y * n + x] = planes[channel][y * n + x]
            }
        }
        // Bilinear demosaicing, then BT.601 luma; a light area's stripes average (1 - bm)^2 / 3.
        let gain = white * 3 / (lit * lit)
        var out = GrayImage(width: n, height: n, fill: 0)
        func at(_ x: Int, _ y: Int) -> Double { mosaic[min(n - 1, max(0, y)) * n + min(n - 1, max(0, x))] }
        for y in 0..<n {
            for x in 0..<n {
                let cross = (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1)) / 4
                let diagonal = (at(x - 1, y - 1) + at(x + 1, y - 1) + at(x - 1, y + 1) + at(x + 1, y + 1)) / 4
                let across = (at(x - 1, y) + at(x + 1, y)) / 2, down = (at(x, y - 1) + at(x, y + 1)) / 2
                let here = at(x, y)
                let r: Double, g: Double, b: Double
                switch (x % 2, y % 2) {
                case (0, 0): (r, g, b) = (here, cross, diagonal)
                case (1, 1): (r, g, b) = (diagonal, cross, here)
                case (1, 0): (r, g, b) = (across, here, down)
                default: (r, g, b) = (down, here, across)
                }
                var luma = gain * (0.299 * r + 0.587 * g + 0.114 * b)
                if let bands {
                    let p = (Double(y) + bands.phase).truncatingRemainder(dividingBy: bands.period)
                    if (p < 0 ? p + bands.period : p) < bands.duty * bands.period { luma *= 1 - bands.depth }
                }
                luma += veil
                if let glare {
                    let dx = Double(x) - glare.x * Double(n), dy = Double(y) - glare.y * Double(n)
                    let sigma = glare.radius * Double(n)
                    luma += glare.peak * exp(-(dx * dx + dy * dy) / (2 * sigma * sigma))
                }
                out[x, y] = UInt8(max(0, min(255, luma.rounded())))
            }
        }
        return out
    }

    /// A separable Gaussian blur of a `side` x `side` plane, edges clamped.
    static func gaussian(_ plane: [Double], side n: Int, sigma: Double) -> [Double] {
        let radius = max(1, Int((2.5 * sigma).rounded(.up)))
        var kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var across = plane, out = plane
        for y in 0..<n {
            for x in 0..<n {
                var sum = 0.0
                for k in -radius...radius { sum += kernel[k + radius] * plane[y * n + min(n - 1, max(0, x + k))] }
                across[y * n + x] = sum
            }
        }
        for y in 0..<n {
            for x in 0..<n {
                var sum = 0.0
                for k in -radius...radius { sum += kernel[k + radius] * across[min(n - 1, max(0, y + k)) * n + x] }
                out[y * n + x] = sum
            }
        }
        return out
    }
}
