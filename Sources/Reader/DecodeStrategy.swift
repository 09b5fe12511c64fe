// SPDX-License-Identifier: Apache-2.0
import Policy
/// The passes tried on a region after plain zbar found nothing in it, and what they cost and won.
///
/// The zbar passes turn the region's luma (gathered once into a reusable buffer) into another
/// picture in a second reusable buffer and hand that to zbar; the zxing pass reads the region
/// itself with zxing-cpp. Which passes are kept, and in which order, was measured on the photo
/// corpus (`kiosk-dev accuracy --corpus`, docs/measurements/accuracy.md).
public enum ExtraPass: String, CaseIterable, Sendable {
    /// zxing-cpp on the region, upright: the only reader of Aztec, Data Matrix, PDF417 and Micro
    /// QR, and a second opinion for the QR and 1D codes plain zbar did not read.
    case zxing
    /// 3x3 sharpening (2 x centre - mean of the 4 neighbours): blurred and shadowed bars get their
    /// edges back. The largest win on the photo corpus (13 of the 28 regions plain zbar missed).
    case sharpen
    /// Bilinear 2x enlargement, then `sharpen`: small QR modules and thin bars get enough pixels
    /// for zbar's finder (8 more of the 28, after `sharpen`).
    case upscaleSharpen = "up2sharp"

    /// The passes, in the order they are tried. Measured on the corpus (docs/measurements/accuracy.md): a
    /// global contrast stretch, a local (adaptive) threshold, a 2x2 downscale, a 3x3 blur and a
    /// plain 2x upscale won nothing that these do not, and were removed. Inversion, which won
    /// nothing on the corpus either, is an `Attempt`: tried on a later frame of a
    /// presentation, not on every decode.
    public static let kept: [ExtraPass] = [.zxing, .sharpen, .upscaleSharpen]

    /// How many times larger the pass's picture is than the region, each way.
    var scale: Int { self == .upscaleSharpen ? 2 : 1 }
}

/// What a presentation that did not read on its first decode is given on each later decoded
/// frame, one a frame (`AttemptSchedule` in Policy says which), before the extra passes:
/// a picture made from the region for what a phone screen does to a code, read by zbar (and by
/// zxing where said). Measured on the drawn screens (`kiosk-dev screens`, docs/measurements/phone-screens.md): seven candidates were tried; a 2x2 area average, a 3x3 closing against the
/// pixel grid, the local stretch alone and zxing's global-histogram binariser read no frame that
/// these three do not, and were removed.
public enum Attempt: String, CaseIterable, Sendable {
    /// A local contrast stretch (`PassImage.stretch`: each pixel between the darkest and lightest
    /// of the 3x3 blocks around it), then a 3x3 minimum (each dark module grows by a pixel all
    /// round), read by zbar. An overexposed screen's light spills into its dark modules before
    /// the sensor clips it (bloom): they come out a pixel or two thinner than the light ones, in
    /// 35-55 levels of contrast, and neither reader finds a QR code's finder pattern in
    /// proportion (1:1:3:1:1); the stretch gives the contrast back and the minimum the pixels.
    /// It also reads most codes whose moiré or pixel grid defeats plain zbar (the grid's light
    /// dots inside dark modules are the same thinning).
    case bloom
    /// Each row stretched on its own (`PassImage.rowStretch`: between the darkest and lightest
    /// pixel of the row within a twentieth of the region's width), read by zbar: a dimmed
    /// screen's PWM seen through a rolling shutter darkens whole rows in bands; a glare spot's
    /// slope flattens too.
    case rows
    /// 255 - luma, read by zbar and then zxing: light-on-dark codes (a phone's dark mode), which
    /// neither reads as they are (zxing-cpp 1.4 has no inverted reading; 2.x's is turned off in
    /// the shim so that both versions read alike). zxing here reads the dark-mode screens whose
    /// moiré zbar misses: without it one in four of the drawn ones was read, late, not at all.
    case invert

    /// The attempts in the order a presentation gets them, one a frame: by the frames each reads
    /// that no attempt before it read, a millisecond of its cost, each look counted alike
    /// (docs/measurements/phone-screens.md).
    public static let kept: [Attempt] = [.bloom, .rows, .invert]
}

/// How often each part of the strategy ran and won. The bench prints them.
public struct DecodeCounters: Sendable, Equatable {
    /// Regions scanned.
    public var regions = 0
    /// Regions where plain zbar's pass gave a confirmed code.
    public var plainWins = 0
    /// Regions where plain zbar found nothing and the structure test said there was nothing to look for.
    public var skippedByStructureTest = 0
    /// Regions that spent extra budget.
    public var extraRegions = 0
    /// Regions where the budget ran out before every pass was tried.
    public var budgetExhausted = 0
    /// 1D symbols found that were not reported: one scan line only, not read alike by the other
    /// reader, not seen in the previous frame.
    public var unconfirmed1D = 0
    /// Places where readings disagreed (nothing was reported there).
    public var contested = 0
    public var runs: [ExtraPass: Int] = [:]
    public var wins: [ExtraPass: Int] = [:]
    public var attemptRuns: [Attempt: Int] = [:]
    public var attemptWins: [Attempt: Int] = [:]
    /// The safety net's glances at a flat ROI, those that read a code, and those that asked for a
    /// full look (`BarcodeScanner.glance`).
    public var glances = 0
    public var glanceReads = 0
    public var glanceLookAgain = 0

    public init() {}

    public static func + (a: DecodeCounters, b: DecodeCounters) -> DecodeCounters {
        var c = a
        c.regions += b.regions
        c.plainWins += b.plainWins
        c.skippedByStructureTest += b.skippedByStructureTest
        c.extraRegions += b.extraRegions
        c.budgetExhausted += b.budgetExhausted
        c.unconfirmed1D += b.unconfirmed1D
        c.contested += b.contested
        c.runs.merge(b.runs, uniquingKeysWith: +)
        c.wins.merge(b.wins, uniquingKeysWith: +)
        c.glances += b.glances
        c.glanceReads += b.glanceReads
        c.glanceLookAgain += b.glanceLookAgain
        c.attemptRuns.merge(b.attemptRuns, uniquingKeysWith: +)
        c.attemptWins.merge(b.attemptWins, uniquingKeysWith: +)
        return c
    }
}

/// Image operations of the extra passes on 8-bit buffers, without allocation (the caller owns
/// the buffers and keeps them between frames).
enum PassImage {
    /// The cheap structure test: does the region hold bar-like or finder-like structure at all?
    /// Every 4th row and column is sampled; an edge is a step of at least a quarter of the
    /// region's sampled contrast (and at least 20 levels) over 2 pixels. A code gives runs of
    /// such edges close together; paper, a wall or a face in soft focus does not.
    static func looksLikeCode(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int) -> Bool {
        looksLikeCode(p, width: w, height: h, every: 1)
    }

    /// A code held close has modules of 10-20 pixels, whose edges are too far apart for
    /// `looksLikeCode`: the same test on every 4th pixel (measured: the zxing corpus's large Aztec,
    /// Data Matrix and PDF417 pictures pass only so). Such a region gets the zxing pass only: the
    /// zbar passes are for small and soft codes, and a brick wall at 1280x720 passes this test
    /// too (measured: (b) motion at 1280x720 went from 5.3 to 22.7 ms a frame with every pass).
    static func looksLikeLargeCode(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int) -> Bool {
        looksLikeCode(p, width: w, height: h, every: 4)
    }

    /// The structure test on the picture made of every `s`th pixel of every `s`th row.
    static func looksLikeCode(_ base: UnsafePointer<UInt8>, width fullWidth: Int, height fullHeight: Int, every s: Int) -> Bool {
        let w = fullWidth / s, h = fullHeight / s
        guard w >= 16, h >= 16 else { return false }
        let rowStride = fullWidth * s
        @inline(__always) func at(_ x: Int, _ y: Int) -> Int { Int(base[y * rowStride + x * s]) }
        var lo = 255, hi = 0
        var y = 0
        while y < h {
            var x = 0
            while x < w { let v = at(x, y); lo = min(lo, v); hi = max(hi, v); x += 3 }
            y += 4
        }
        let step = max(20, (hi - lo) / 4)
        // Lines (rows, then columns) with a cluster of at least 6 edges within 48 pixels.
        func clustered(count n: Int, lines: Int, at: (Int, Int) -> Int) -> Int {
            var hits = 0
            var line = 0
            while line < lines {
                var recent = [Int](repeating: -1000, count: 6)
                var k = 0
                var i = 2
                while i < n {
                    let d = at(line, i) - at(line, i - 2)
                    if d >= step || d <= -step {
                        recent[k % 6] = i
                        k += 1
                        if k >= 6 && i - recent[(k) % 6] <= 48 { hits += 1; break }
                        i += 2
                        continue
                    }
                    i += 1
                }
                line += 4
            }
            return hits
        }
        let rows = clustered(count: w, lines: h) { y, x in at(x, y) }
        if rows >= 2 { return true }
        let cols = clustered(count: h, lines: w) { x, y in at(x, y) }
        return cols >= 2
    }

    /// Where the region's strong edges are: the median column and row of the edges on every 4th
    /// row and column (the structure test's sampling and threshold), in region pixels, and their
    /// spread (twice the interquartile range, the side of the square they would fill evenly);
    /// nil when there are none. A code is where its edges are; medians and quartiles keep a stray
    /// edge or two of the background from moving it much.
    static func edgeCentre(_ p: UnsafePointer<UInt8>, width w: Int, height h: Int) -> (x: Int, y: Int, spread: Int)? {
        guard w >= 16, h >= 16 else { return nil }
        var lo = 255, hi = 0
        var y = 0
        while y < h {
            var x = 0
            while x < w { let v = Int(p[y * w + x]); lo = min(lo, v); hi = max(hi, v); x += 3 }
            y += 4
        }
        let step = max(20, (hi - lo) / 4)
        var xs: [Int] = [], ys: [Int] = []
        y = 0
        while y < h {
            var x = 2
            while x < w {
                let d = Int(p[y * w + x]) - Int(p[y * w + x - 2])
                if d >= step || d <= -step { xs.append(x); ys.append(y) }
                x += 2
            }
            y += 4
        }
        var x = 0
        while x < w {
            var y = 2
            while y < h {
                let d = Int(p[y * w + x]) - Int(p[(y - 2) * w + x])
                if d >= step || d <= -step { xs.append(x); ys.append(y) }
                y += 2
            }
            x += 4
        }
        guard !xs.isEmpty else { return nil }
        xs.sort(); ys.sort()
        let n = xs.count
        let spread = 2 * max(xs[3 * n / 4] - xs[n / 4], ys[3 * n / 4] - ys[n / 4])
        return (xs[n / 2], ys[n / 2], spread)
    }

    static func invert(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, into dst: UnsafeMutablePointer<UInt8>) {
        for i in 0..<(w * h) { dst[i] = 255 &- src[i] }
    }

    /// The 2x2 area average into `dst` ((w / 2) x (h / 2)); a last odd row or column is dropped.
    static func downscale2x(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, into dst: UnsafeMutablePointer<UInt8>) {
        let ow = w / 2, oh = h / 2
        for y in 0..<oh {
            let a = src + 2 * y * w, b = a + w, out = dst + y * ow
            for x in 0..<ow {
                let s = Int(a[2 * x]) + Int(a[2 * x + 1]) + Int(b[2 * x]) + Int(b[2 * x + 1])
                out[x] = UInt8((s + 2) >> 2)
            }
        }
    }

    /// The minimum of each 3x3 neighbourhood (edges clamped) through `tmp`; `dst` may be `src`.
    static func minimum3(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, tmp: UnsafeMutablePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>) {
        extreme3(src, width: w, height: h, into: tmp, maximum: false, horizontal: true)
        extreme3(tmp, width: w, height: h, into: dst, maximum: false, horizontal: false)
    }

    /// The maximum (or minimum) of each pixel and its two neighbours along rows or columns.
    static func extreme3(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, into dst: UnsafeMutablePointer<UInt8>, maximum: Bool, horizontal: Bool) {
        @inline(__always) func pick(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 { maximum ? max(a, max(b, c)) : min(a, min(b, c)) }
        if horizontal {
            for y in 0..<h {
                let row = src + y * w, out = dst + y * w
                for x in 0..<w { out[x] = pick(row[max(0, x - 1)], row[x], row[min(w - 1, x + 1)]) }
            }
        } else {
            for y in 0..<h {
                let up = src + max(0, y - 1) * w, row = src + y * w, down = src + min(h - 1, y + 1) * w, out = dst + y * w
                for x in 0..<w { out[x] = pick(up[x], row[x], down[x]) }
            }
        }
    }

    /// The row stretch of `Attempt.rows`: each pixel between the darkest and lightest pixel of its
    /// row within `reach` pixels each side (van Herk's running extremes: three comparisons a
    /// pixel, whatever the reach), a range below `minimumRange` widened below the light as in
    /// `stretch`. `scratch` holds at least 4 x w.
    static func rowStretch(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, reach: Int, minimumRange: Int,
                           scratch: inout [UInt8], into dst: UnsafeMutablePointer<UInt8>) {
        if scratch.count < 4 * w { scratch = [UInt8](repeating: 0, count: 4 * w) }
        let k = 2 * reach + 1
        scratch.withUnsafeMutableBufferPointer { buf in
            let forward = buf.baseAddress!, backward = forward + w, lo = forward + 2 * w, hi = forward + 3 * w
            for y in 0..<h {
                let row = src + y * w
                for pass in 0..<2 {
                    let maximum = pass == 1
                    @inline(__always) func pick(_ a: UInt8, _ b: UInt8) -> UInt8 { maximum ? max(a, b) : min(a, b) }
                    // Extremes from each block's start forwards and from its end backwards.
                    var x = 0
                    while x < w {
                        let end = min(w, x + k)
                        forward[x] = row[x]
                        for i in (x + 1)..<max(x + 1, end) { forward[i] = pick(forward[i - 1], row[i]) }
                        backward[end - 1] = row[end - 1]
                        var i = end - 2
                        while i >= x { backward[i] = pick(backward[i + 1], row[i]); i -= 1 }
                        x = end
                    }
                    let out = maximum ? hi : lo
                    for x in 0..<w {
                        let a = max(0, x - reach), b = min(w - 1, x + reach)
                        // [a, b] spans at most two blocks: the backward run from a, the forward run to
                        // b. Within one block it is cut by the row's start (a is the block's start)
                        // or end (b is the last block's end).
                        if a / k != b / k {
                            out[x] = pick(backward[a], forward[b])
                        } else {
                            out[x] = a % k == 0 ? forward[b] : backward[a]
                        }
                    }
                }
                let o = dst + y * w
                for x in 0..<w {
                    let u = Int(hi[x]), l = u - Int(lo[x]) < minimumRange ? u - 4 * minimumRange : Int(lo[x])
                    o[x] = UInt8(max(0, min(255, (Int(row[x]) - l) * 255 / max(1, u - l))))
                }
            }
        }
    }

    /// The local contrast stretch of `Attempt.stretch`: the region in blocks of `block` pixels; each
    /// block's darkest and lightest pixel, then the darkest and lightest of its 3x3 blocks; each
    /// pixel stretched between those of the nearest four block centres (bilinear), so that its
    /// neighbourhood's dark is 0 and its light 255. Where the neighbourhood's range is below
    /// `minimumRange` (a uniform area: the quiet zone, the room behind the phone), the range is
    /// taken as four times that below the light: noise stays near white instead of being
    /// stretched to black and white (zbar finds no QR code in a region of stretched noise, even
    /// beside a clean one). `levels` holds at least 4 x blocks across x blocks down.
    static func stretch(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, block: Int, minimumRange: Int,
                        levels: inout [Int32], into dst: UnsafeMutablePointer<UInt8>) {
        let bw = (w + block - 1) / block, bh = (h + block - 1) / block, n = bw * bh
        if levels.count < 4 * n { levels = [Int32](repeating: 0, count: 4 * n) }
        levels.withUnsafeMutableBufferPointer { buf in
            let lo = buf.baseAddress!, hi = lo + n, lo3 = lo + 2 * n, hi3 = lo + 3 * n
            for i in 0..<n { lo[i] = 255; hi[i] = 0 }
            for y in 0..<h {
                let row = src + y * w, b = (y / block) * bw
                for x in 0..<w {
                    let v = Int32(row[x]), i = b + x / block
                    if v < lo[i] { lo[i] = v }
                    if v > hi[i] { hi[i] = v }
                }
            }
            for by in 0..<bh {
                for bx in 0..<bw {
                    var l: Int32 = 255, u: Int32 = 0
                    for j in max(0, by - 1)...min(bh - 1, by + 1) {
                        for i in max(0, bx - 1)...min(bw - 1, bx + 1) {
                            l = min(l, lo[j * bw + i]); u = max(u, hi[j * bw + i])
                        }
                    }
                    if u - l < Int32(minimumRange) { l = u - 4 * Int32(minimumRange) }
                    lo3[by * bw + bx] = l
                    hi3[by * bw + bx] = u
                }
            }
            // Bilinear between block centres, in 1/256ths of a block.
            for y in 0..<h {
                let fy = max(0, min((bh - 1) * 256, ((2 * y + 1 - block) * 256) / (2 * block)))
                let j0 = fy >> 8, j1 = min(bh - 1, j0 + 1), ty = Int32(fy & 255)
                let row = src + y * w, out = dst + y * w
                for x in 0..<w {
                    let fx = max(0, min((bw - 1) * 256, ((2 * x + 1 - block) * 256) / (2 * block)))
                    let i0 = fx >> 8, i1 = min(bw - 1, i0 + 1), tx = Int32(fx & 255)
                    @inline(__always) func mix(_ p: UnsafeMutablePointer<Int32>) -> Int32 {
                        let top = p[j0 * bw + i0] * (256 - tx) + p[j0 * bw + i1] * tx
                        let bottom = p[j1 * bw + i0] * (256 - tx) + p[j1 * bw + i1] * tx
                        return (top * (256 - ty) + bottom * ty) >> 16
                    }
                    let l = mix(lo3), u = mix(hi3)
                    let v = (Int32(row[x]) - l) * 255 / max(1, u - l)
                    out[x] = UInt8(max(0, min(255, v)))
                }
            }
        }
    }

    /// Bilinear 2x enlargement into `dst` (2w x 2h).
    static func upscale2x(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, into dst: UnsafeMutablePointer<UInt8>) {
        let ow = w * 2, oh = h * 2
        for y in 0..<oh {
            // Output pixel centre y maps to (y - 0.5) / 2 in the source, counted in quarters.
            let sy4 = max(0, 2 * y - 1), y0 = min(h - 1, sy4 / 4), y1 = min(h - 1, y0 + 1), fy = sy4 & 3
            for x in 0..<ow {
                let sx4 = max(0, 2 * x - 1), x0 = min(w - 1, sx4 / 4), x1 = min(w - 1, x0 + 1), fx = sx4 & 3
                let a = Int(src[y0 * w + x0]) * (4 - fx) + Int(src[y0 * w + x1]) * fx
                let b = Int(src[y1 * w + x0]) * (4 - fx) + Int(src[y1 * w + x1]) * fx
                dst[y * ow + x] = UInt8((a * (4 - fy) + b * fy + 8) >> 4)
            }
        }
    }

    /// 3x3 sharpening: 2 x centre - mean of the 4 neighbours, clamped; the border is copied.
    static func sharpen(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, into dst: UnsafeMutablePointer<UInt8>) {
        for y in 0..<h {
            let row = y * w
            guard y > 0, y < h - 1 else { dst.advanced(by: row).update(from: src + row, count: w); continue }
            dst[row] = src[row]
            dst[row + w - 1] = src[row + w - 1]
            for x in 1..<max(1, w - 1) {
                let i = row + x
                let n = Int(src[i - w]) + Int(src[i + w]) + Int(src[i - 1]) + Int(src[i + 1])
                dst[i] = UInt8(min(255, max(0, 2 * Int(src[i]) - n / 4)))
            }
        }
    }
}

/// EAN/UPC check digits (zbar checks them too; a wrong read must not slip through a config change).
enum CheckDigit {
    static func valid(_ bytes: [UInt8], symbology: Symbology) -> Bool {
        switch symbology {
        case .ean13, .ean8, .upca, .isbn13:
            guard bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            let expectedCount = symbology == .ean8 ? 8 : symbology == .upca ? 12 : 13
            // zbar may give UPC-A as 13 digits with a leading 0 when EAN-13 reports it.
            guard bytes.count == expectedCount || (symbology == .upca && bytes.count == 13) else { return false }
            let digits = bytes.map { Int($0 - 0x30) }
            var sum = 0
            for (i, d) in digits.dropLast().reversed().enumerated() { sum += i % 2 == 0 ? 3 * d : d }
            return (10 - sum % 10) % 10 == digits.last!
        default:
            return true
        }
    }
}

extension Attempt {
    /// The picture attempt `self` makes of `region` for zbar, as the scanner makes it: for the
    /// bench's pictures and the tests.
    public func picture(of region: GrayImage) -> GrayImage {
        let w = region.width, h = region.height
        var out = [UInt8](repeating: 0, count: w * h), tmp = out
        var levels: [Int32] = [], scratch: [UInt8] = []
        region.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                tmp.withUnsafeMutableBufferPointer { t in
                    draw(src.baseAddress!, width: w, height: h, tmp: t.baseAddress!, levels: &levels, scratch: &scratch, into: dst.baseAddress!)
                }
            }
        }
        return GrayImage(width: w, height: h, pixels: out)
    }

    /// The attempt's picture of `src` (w x h) into `dst`, through `tmp` (w x h) and the stretches'
    /// reusable `levels` and `scratch`.
    func draw(_ src: UnsafePointer<UInt8>, width w: Int, height h: Int, tmp: UnsafeMutablePointer<UInt8>,
              levels: inout [Int32], scratch: inout [UInt8], into dst: UnsafeMutablePointer<UInt8>) {
        switch self {
        case .invert: PassImage.invert(src, width: w, height: h, into: dst)
        case .bloom:
            PassImage.stretch(src, width: w, height: h, block: max(6, min(w, h) / 30), minimumRange: Attempt.minimumRange, levels: &levels, into: dst)
            PassImage.minimum3(dst, width: w, height: h, tmp: tmp, into: dst)
        case .rows:
            PassImage.rowStretch(src, width: w, height: h, reach: max(8, w / 20), minimumRange: Attempt.minimumRange, scratch: &scratch, into: dst)
        }
    }

    /// The stretches' least range (luma steps): a window of less is a uniform area (see `PassImage.stretch`).
    static let minimumRange = 24
}
