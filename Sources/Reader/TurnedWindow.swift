// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// A matrix code held at a slant, turned upright for a reader that wants it square to the
/// picture: zxing-cpp 1.4's Aztec detector reads an Aztec code turned by 0 or 90
/// degrees and misses nearly every one turned by 10 to 45 (measured on zint-drawn tickets,
/// modules of 2-4 pixels: SecondReaderTests), where 2.3 reads them.
///
/// The slant is the direction of the picture's edges: a code's module edges run along its two
/// axes, so the gradient directions, taken four times (which folds the four axis directions onto
/// one), point the same way; their magnitude-weighted mean, divided by four, is the code's angle
/// modulo 90 degrees. The window is then resampled (bilinear) turned back by that angle.
enum TurnedWindow {
    /// The angle in degrees (-45, 45] that the edges of `p` (a `width` x `height` window in rows
    /// of `rowStride`) make with the picture's axes, how strongly they agree (0-1), and how much
    /// of that is one axis alone (`oneAxis`, 0-1: the directions taken twice): a matrix code's
    /// edges run along both its axes (oneAxis near 0), a linear code's bars along one (near 1);
    /// nil when the window has no edges.
    static func slant(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int)
        -> (degrees: Double, agreement: Double, oneAxis: Double)? {
        guard w >= 8, h >= 8 else { return nil }
        var c = 0.0, s = 0.0, total = 0.0, c1 = 0.0, s1 = 0.0
        var y = 1
        while y < h - 1 {
            var x = 1
            while x < w - 1 {
                let i = y * rowStride + x
                // Sobel.
                let gx = Double(Int(p[i - rowStride + 1]) + 2 * Int(p[i + 1]) + Int(p[i + rowStride + 1])
                    - Int(p[i - rowStride - 1]) - 2 * Int(p[i - 1]) - Int(p[i + rowStride - 1]))
                let gy = Double(Int(p[i + rowStride - 1]) + 2 * Int(p[i + rowStride]) + Int(p[i + rowStride + 1])
                    - Int(p[i - rowStride - 1]) - 2 * Int(p[i - rowStride]) - Int(p[i - rowStride + 1]))
                let m2 = gx * gx + gy * gy
                if m2 > 400 {
                    // cos 4φ and sin 4φ from cos 2φ and sin 2φ, without trigonometry.
                    let c2 = (gx * gx - gy * gy) / m2, s2 = 2 * gx * gy / m2
                    let m = m2.squareRoot()
                    c += m * (c2 * c2 - s2 * s2)
                    s += m * (2 * s2 * c2)
                    c1 += m * c2
                    s1 += m * s2
                    total += m
                }
                x += 2
            }
            y += 2
        }
        guard total > 0 else { return nil }
        let coarse = atan2(s, c) / 4
        let agreement = (c * c + s * s).squareRoot() / total
        let oneAxis = (c1 * c1 + s1 * s1).squareRoot() / total
        return (coarse * 180 / Double.pi, agreement, oneAxis)
    }

    /// The mean gradient direction (`slant`) is off by a degree or so (Sobel's own bias, the
    /// paper's edges), which a large code cannot take: 1 degree moves the sampling of a module
    /// 30 modules from the bullseye by half a module. Refined (degrees) by the angle, within 2.5
    /// degrees of `degrees`, at which the edge pixels line up best: projected across their edge
    /// onto the axis their gradient runs along, they pile into the fewest one-pixel bins.
    static func refined(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int, around degrees: Double) -> Double {
        let coarse = degrees * Double.pi / 180
        var us: [Double] = [], vs: [Double] = [], alongFirst: [Bool] = []
        let step = max(1, Int((Double(w * h) / 40_000).squareRoot()))
        let cc = cos(coarse), sc = sin(coarse)
        var y = 1
        while y < h - 1 {
            var x = 1
            while x < w - 1 {
                let i = y * rowStride + x
                let gx = Int(p[i + 1]) - Int(p[i - 1]), gy = Int(p[i + rowStride]) - Int(p[i - rowStride])
                if gx * gx + gy * gy > 900 {
                    // Along the code's first axis (gradient near `coarse`) or its second.
                    let a = abs(Double(gx) * cc + Double(gy) * sc), b = abs(-Double(gx) * sc + Double(gy) * cc)
                    us.append(Double(x)); vs.append(Double(y)); alongFirst.append(a >= b)
                }
                x += step
            }
            y += step
        }
        guard us.count >= 50 else { return degrees }
        var best = coarse, bestScore = -1.0
        var bins = [Int](repeating: 0, count: 2 * (w + h) + 8)
        for k in -25...25 {
            let t = coarse + Double(k) * 0.1 * Double.pi / 180
            let ct = cos(t), st = sin(t)
            for b in bins.indices { bins[b] = 0 }
            let offset = w + h + 4
            for n in us.indices {
                let q = alongFirst[n] ? us[n] * ct + vs[n] * st : -us[n] * st + vs[n] * ct
                bins[Int(q.rounded()) + offset] += 1
            }
            var score = 0.0
            for b in bins where b > 1 { score += Double(b * b) }
            if score > bestScore { bestScore = score; best = t }
        }
        return best * 180 / Double.pi
    }

    /// The square `side` x `side` picture centred at (`cx`, `cy`) of `p` (`width` x `height`,
    /// rows of `rowStride`), turned by `degrees` (the slant) so that what was at that slant is
    /// square to it; points outside take the nearest edge pixel.
    static func turned(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int,
                       cx: Double, cy: Double, side: Int, degrees: Double, scale: Double = 1) -> [UInt8] {
        let a = degrees * Double.pi / 180, ca = cos(a) / scale, sa = sin(a) / scale
        var out = [UInt8](repeating: 0, count: side * side)
        let half = Double(side) / 2
        out.withUnsafeMutableBufferPointer { o in
            for v in 0..<side {
                let dy = Double(v) + 0.5 - half
                for u in 0..<side {
                    let dx = Double(u) + 0.5 - half
                    let sx = min(max(cx + ca * dx - sa * dy - 0.5, 0), Double(w - 1))
                    let sy = min(max(cy + sa * dx + ca * dy - 0.5, 0), Double(h - 1))
                    let value = bilinear(p, width: w, height: h, rowStride: rowStride, x: sx, y: sy)
                    o[v * side + u] = UInt8(min(255, max(0, value.rounded())))
                }
            }
        }
        return out
    }

    /// `p` (`width` x `height`, rows of `rowStride`) at (`x`, `y`), pixel indices within it,
    /// between its four nearest pixels.
    static func bilinear(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int, x: Double, y: Double) -> Double {
        let x0 = min(Int(x), w - 2), y0 = min(Int(y), h - 2), fx = x - Double(x0), fy = y - Double(y0)
        let i = y0 * rowStride + x0
        let top = Double(p[i]) * (1 - fx) + Double(p[i + 1]) * fx
        let bottom = Double(p[i + rowStride]) * (1 - fx) + Double(p[i + rowStride + 1]) * fx
        return top * (1 - fy) + bottom * fy
    }

    /// A point of the turned picture back in the picture it was taken from.
    static func untilted(_ point: PixelPoint, cx: Double, cy: Double, side: Int, degrees: Double, scale: Double = 1) -> PixelPoint {
        let a = degrees * Double.pi / 180
        let dx = (Double(point.x) + 0.5 - Double(side) / 2) / scale, dy = (Double(point.y) + 0.5 - Double(side) / 2) / scale
        return PixelPoint(x: Int((cx + cos(a) * dx - sin(a) * dy).rounded(.down)), y: Int((cy + sin(a) * dx + cos(a) * dy).rounded(.down)))
    }
}
