// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy

/// A matrix code's module grid, found in the picture and read module by module, for zxing-cpp
/// 1.4's Aztec reader. 1.4 builds its whole sampling grid from the bullseye's four
/// corners (v1.4.0 `AZDetector.cpp`, `SampleGrid`): a span of 10-14 modules extrapolated to the
/// 60-80 modules of a large ticket, so that a third of a pixel at the bullseye is a whole module
/// at the corners; it misses large tickets of 2-3 px modules at a slant, even turned square and
/// enlarged (`TurnedWindow`). Here the grid comes from the whole code at once: the module
/// boundaries of a code on the picture's paper lie on two families of parallel, evenly spaced
/// lines, so the picture's edges, projected across each family, pile up with the modules' pitch.
/// The angle and pitch at which that pile-up is strongest (the Fourier magnitude of the projected
/// edges at the pitch's frequency) are the grid's, and the phase of that component is where its
/// boundaries lie. Each module is then read at its centre and drawn again, crisp and square, a
/// few pixels to a module, for zxing to read as it reads a printed code.
///
/// A flat code seen square on (a ticket held to the window) has such a grid; one bent or seen at
/// a steep perspective has not and is left to the other reads.
struct ModuleGrid {
    /// The first axis's direction, in degrees from the picture's x axis; the second is 90 more.
    var degrees: Double
    /// Pixels per module along each axis.
    var pitch: (u: Double, v: Double)
    /// Where a module boundary lies on each axis (pixels, projected on it from the window's origin).
    var phase: (u: Double, v: Double)

    /// The smallest and largest module pitch looked for, in pixels.
    static let pitches = (smallest: 1.6, largest: 12.0)

    /// The grid of the code filling most of `p` (`width` x `height`, rows of `rowStride`), its
    /// axes within 6 degrees of `near` (the edges' slant, `TurnedWindow.slant`); nil when the
    /// window's edges have no even spacing at any angle there.
    static func find(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int, near: Double) -> ModuleGrid? {
        let edges = EdgePoints(p, width: w, height: h, rowStride: rowStride)
        guard edges.count >= 200 else { return nil }
        // Coarse: every half degree, every pitch the profiles' spectra tell apart; half-pixel
        // bins and every other edge are enough for that.
        let coarseBin = 0.5
        let length = EdgeProfile.spectrumLength(width: w, height: h, bin: coarseBin)
        let span = Double(length) * coarseBin
        var best = (score: 0.0, degrees: near, pitch: 0.0)
        for k in -12...12 {
            let degrees = near + Double(k) * 0.5
            let profiles = edges.profiles(degrees: degrees, every: 2, bin: coarseBin)
            let u = profiles.u.spectrum(length: length), v = profiles.v.spectrum(length: length)
            for f in Int((span / pitches.largest).rounded(.up))...Int(span / pitches.smallest) where u[f] + v[f] > best.score {
                best = (u[f] + v[f], degrees, span / Double(f))
            }
        }
        guard best.score > 0 else { return nil }
        // Fine: a twentieth of a degree and a tenth of a percent of pitch (each axis its own),
        // one after the other, then the angle again at those pitches.
        var fine = (degrees: best.degrees, u: best.pitch, v: best.pitch)
        // The coarse angle is within a quarter degree; the pitches move the best one by less.
        func bestAngle(within steps: Int) {
            var top = 0.0, degrees = fine.degrees
            for k in -steps...steps {
                let d = fine.degrees + Double(k) * 0.05
                let profiles = edges.profiles(degrees: d)
                let score = profiles.u.strength(pitch: fine.u).magnitude + profiles.v.strength(pitch: fine.v).magnitude
                if score > top { top = score; degrees = d }
            }
            fine.degrees = degrees
        }
        bestAngle(within: 5)
        let atAngle = edges.profiles(degrees: fine.degrees)
        fine.u = atAngle.u.bestPitch(around: fine.u).pitch
        fine.v = atAngle.v.bestPitch(around: fine.v).pitch
        bestAngle(within: 2)
        let profiles = edges.profiles(degrees: fine.degrees)
        let u = profiles.u.strength(pitch: fine.u), v = profiles.v.strength(pitch: fine.v)
        // Evenly spaced edges stand well out of the spread of edges: a grid's component holds a
        // good share of the edges' weight (measured: 0.25-0.5 for zint tickets of 2-4 px
        // modules at any angle; under 0.05 for text or a photo's clutter).
        guard u.magnitude >= 0.12 * profiles.u.total, v.magnitude >= 0.12 * profiles.v.total else { return nil }
        return ModuleGrid(degrees: fine.degrees, pitch: (fine.u, fine.v), phase: (u.phase, v.phase))
    }

    /// The picture point (pixels from the window's origin) at module coordinates (`i`, `j`):
    /// whole numbers are module corners, halves are centres.
    func point(_ i: Double, _ j: Double) -> (x: Double, y: Double) {
        let a = degrees * Double.pi / 180, qu = phase.u + i * pitch.u, qv = phase.v + j * pitch.v
        return (qu * cos(a) - qv * sin(a), qu * sin(a) + qv * cos(a))
    }

    /// The module coordinates of a picture point (pixels from the window's origin).
    func modules(_ x: Double, _ y: Double) -> (i: Double, j: Double) {
        let a = degrees * Double.pi / 180
        let qu = x * cos(a) + y * sin(a), qv = -x * sin(a) + y * cos(a)
        return ((qu - phase.u) / pitch.u, (qv - phase.v) / pitch.v)
    }

    /// The code drawn again from `p` (the window it was found in): each module whose centre lies
    /// in the window read there (bilinear) and drawn `moduleSize` pixels square, black when
    /// darker than half-way between the window's ink and paper (its 5th and 95th percentiles),
    /// within the dark modules' bounding box and a `quietZone` of white modules. `first` is the
    /// module at the drawing's origin (for `point`).
    func drawn(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int, moduleSize k: Int, quietZone: Int)
        -> (pixels: [UInt8], side: Int, first: (i: Int, j: Int))? {
        let threshold = Self.midGrey(p, width: w, height: h, rowStride: rowStride)
        // The module range whose centres can fall inside the window.
        let corners = [modules(0, 0), modules(Double(w), 0), modules(0, Double(h)), modules(Double(w), Double(h))]
        let i0 = Int(corners.map(\.i).min()!.rounded(.down)), i1 = Int(corners.map(\.i).max()!.rounded(.up))
        let j0 = Int(corners.map(\.j).min()!.rounded(.down)), j1 = Int(corners.map(\.j).max()!.rounded(.up))
        let cols = i1 - i0 + 1, rows = j1 - j0 + 1
        var dark = [Bool](repeating: false, count: cols * rows)
        var box = (i0: Int.max, i1: Int.min, j0: Int.max, j1: Int.min)
        for j in j0...j1 {
            for i in i0...i1 {
                let c = point(Double(i) + 0.5, Double(j) + 0.5)
                guard c.x >= 0.5, c.y >= 0.5, c.x <= Double(w) - 1.5, c.y <= Double(h) - 1.5 else { continue }
                if TurnedWindow.bilinear(p, width: w, height: h, rowStride: rowStride, x: c.x - 0.5, y: c.y - 0.5) < threshold {
                    dark[(j - j0) * cols + (i - i0)] = true
                    box = (min(box.i0, i), max(box.i1, i), min(box.j0, j), max(box.j1, j))
                }
            }
        }
        guard box.i0 <= box.i1 else { return nil }
        let modulesAcross = max(box.i1 - box.i0, box.j1 - box.j0) + 1 + 2 * quietZone
        let side = modulesAcross * k
        var out = [UInt8](repeating: 255, count: side * side)
        let first = (box.i0 - quietZone, box.j0 - quietZone)
        for j in box.j0...box.j1 {
            for i in box.i0...box.i1 where dark[(j - j0) * cols + (i - i0)] {
                let x = (i - first.0) * k, y = (j - first.1) * k
                for r in 0..<k { for c in 0..<k { out[(y + r) * side + x + c] = 0 } }
            }
        }
        return (out, side, first)
    }

    /// Half-way between the window's ink and its paper: its 5th and 95th percentiles.
    static func midGrey(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int) -> Double {
        var histogram = [Int](repeating: 0, count: 256)
        for y in 0..<h { for x in 0..<w { histogram[Int(p[y * rowStride + x])] += 1 } }
        func percentile(_ f: Double) -> Int {
            var seen = 0
            for (v, n) in histogram.enumerated() { seen += n; if Double(seen) >= f * Double(w * h) { return v } }
            return 255
        }
        return Double(percentile(0.05) + percentile(0.95)) / 2
    }
}

/// The window's edge pixels: where and how steeply its brightness changes (a 2x2 difference, at
/// the centre of each 2x2 block), the flat ones left out.
struct EdgePoints {
    /// x, y, and the gradient's x and y, one point after another.
    private var points: [Float] = []
    private let width: Double, height: Double

    init(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int, rowStride: Int) {
        width = Double(w)
        height = Double(h)
        for r in 0..<(h - 1) {
            for c in 0..<(w - 1) {
                let i = r * rowStride + c
                let a = Int(p[i]), b = Int(p[i + 1]), d = Int(p[i + rowStride]), e = Int(p[i + rowStride + 1])
                let dx = (b + e - a - d), dy = (d + e - a - b)
                // A difference of 8 levels or more (halved sums).
                if dx * dx + dy * dy >= 256 {
                    points.append(Float(c + 1)); points.append(Float(r + 1))
                    points.append(Float(dx) / 2); points.append(Float(dy) / 2)
                }
            }
        }
    }

    var count: Int { points.count / 4 }

    /// The edges (every `every`th of them) projected on the axis at `degrees` and on the one at
    /// 90 more, each weighted by its gradient's component along that axis (a module boundary
    /// across it), in bins of `bin` pixels.
    func profiles(degrees: Double, every: Int = 1, bin: Double = EdgeProfile.bin) -> (u: EdgeProfile, v: EdgeProfile) {
        let a = degrees * Double.pi / 180, ca = cos(a), sa = sin(a)
        let us = [0, width * ca, height * sa, width * ca + height * sa], vs = [0, -width * sa, height * ca, -width * sa + height * ca]
        var u = EdgeProfile(from: us.min()!, to: us.max()!, bin: bin), v = EdgeProfile(from: vs.min()!, to: vs.max()!, bin: bin)
        let c = Float(ca), s = Float(sa), scale = Float(1 / bin)
        // Each weight shared between the two nearest bins: rounded to one, the edges' places (a
        // lattice of whole pixels, projected) would beat with the bins and make an evenly spaced
        // pile-up of their own (at 45 degrees and half-pixel bins, every 1.7 pixels).
        let uo = Float(-u.origin / bin), vo = Float(-v.origin / bin)
        var ut: Float = 0, vt: Float = 0
        u.bins.withUnsafeMutableBufferPointer { ub in
            v.bins.withUnsafeMutableBufferPointer { vb in
                points.withUnsafeBufferPointer { e in
                    var n = 0
                    while n < e.count {
                        let x = e[n], y = e[n + 1], gx = e[n + 2], gy = e[n + 3]
                        let wu = abs(gx * c + gy * s), wv = abs(gy * c - gx * s)
                        let qu = (x * c + y * s) * scale + uo, qv = (y * c - x * s) * scale + vo
                        let iu = Int(qu), iv = Int(qv), fu = qu - Float(iu), fv = qv - Float(iv)
                        ub[iu] += Double(wu * (1 - fu)); ub[iu + 1] += Double(wu * fu)
                        vb[iv] += Double(wv * (1 - fv)); vb[iv + 1] += Double(wv * fv)
                        ut += wu
                        vt += wv
                        n += 4 * every
                    }
                }
            }
        }
        u.total = Double(ut)
        v.total = Double(vt)
        return (u, v)
    }
}

/// Edge weight along one axis in bins (a quarter of a pixel unless told).
struct EdgeProfile {
    static let bin = 0.25
    fileprivate var bins: [Double]
    fileprivate let origin: Double
    let bin: Double
    fileprivate(set) var total = 0.0

    init(from lowest: Double, to highest: Double, bin: Double = EdgeProfile.bin) {
        origin = lowest
        self.bin = bin
        bins = [Double](repeating: 0, count: Int((highest - lowest) / bin) + 2)
    }

    /// The profile's Fourier component at the frequency of `pitch`: its magnitude, and the phase
    /// as the position (pixels on the axis, in [0, pitch)) of the boundaries it puts its weight on.
    func strength(pitch: Double) -> (magnitude: Double, phase: Double) {
        // e^(-2πi q / pitch) from bin to bin by one rotation.
        let step = -2 * Double.pi * bin / pitch
        let cs = cos(step), sn = sin(step)
        let start = -2 * Double.pi * origin / pitch
        var wr = cos(start), wi = sin(start), re = 0.0, im = 0.0
        for b in bins {
            if b != 0 { re += b * wr; im += b * wi }
            let t = wr * cs - wi * sn
            wi = wr * sn + wi * cs
            wr = t
        }
        // re + i im = Σ w e^(-2πi q/pitch): the boundaries at q = -arg * pitch / 2π.
        let phase = -atan2(im, re) * pitch / (2 * Double.pi)
        return ((re * re + im * im).squareRoot(), phase - (phase / pitch).rounded(.down) * pitch)
    }

    /// The length (a power of two) of the spectra of a `width` x `height` window's profiles.
    static func spectrumLength(width: Int, height: Int, bin: Double) -> Int {
        var n = 1
        while Double(n) * bin < 1.5 * Double(width + height) { n *= 2 }
        return n
    }

    /// The magnitudes of the profile's discrete Fourier transform, zero-padded to `length` (a
    /// power of two, at least the profile's): entry f is the component whose period is
    /// `length * bin / f` pixels.
    func spectrum(length n: Int) -> [Double] {
        precondition(n >= bins.count && n & (n - 1) == 0)
        var re = [Double](repeating: 0, count: n), im = [Double](repeating: 0, count: n)
        // Radix-2, in place: the bins in bit-reversed order, then log2(n) rounds of butterflies.
        var j = 0
        for i in 0..<n {
            if i < bins.count, j < n { re[j] = bins[i] }
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
        }
        var size = 2
        while size <= n {
            let step = -2 * Double.pi / Double(size), cs = cos(step), sn = sin(step)
            var start = 0
            while start < n {
                var wr = 1.0, wi = 0.0
                for k in 0..<(size / 2) {
                    let a = start + k, b = a + size / 2
                    let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                    let t = wr * cs - wi * sn
                    wi = wr * sn + wi * cs
                    wr = t
                }
                start += size
            }
            size *= 2
        }
        return (0..<n).map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
    }

    /// The pitch within 3% of `pitch` whose component is strongest, to a tenth of a percent.
    func bestPitch(around pitch: Double) -> (pitch: Double, magnitude: Double) {
        var best = (pitch: pitch, magnitude: 0.0)
        for k in -30...30 {
            let q = pitch * (1 + Double(k) * 0.001)
            let m = strength(pitch: q).magnitude
            if m > best.magnitude { best = (q, m) }
        }
        return best
    }
}
