// SPDX-License-Identifier: Apache-2.0
import Policy
/// The passes tried on a region after plain zbar found nothing in it, and what they cost and won.
///
/// The zbar passes turn the region's luma (gathered once into a reusable buffer) into another
/// picture in a second reusable buffer and hand that to zbar; the zxing pass reads the region
/// itself with zxing-cpp. Which passes are kept, and in which order, was measured on the photo
/// corpus (`kiosk-dev accuracy --corpus`, docs/development.md "Accuracy").
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
    /// 255 - luma: light-on-dark codes (phone screens in dark mode). It never wins on the photo
    /// corpus, which has no such code; it is kept for them (the generated test), last and cheap.
    case invert

    /// The passes, in the order they are tried. Measured on the corpus (docs/development.md, "Accuracy"): a
    /// global contrast stretch, a local (adaptive) threshold, a 2x2 downscale, a 3x3 blur and a
    /// plain 2x upscale won nothing that these do not, and were removed.
    public static let kept: [ExtraPass] = [.zxing, .sharpen, .upscaleSharpen, .invert]

    /// How many times larger the pass's picture is than the region, each way.
    var scale: Int { self == .upscaleSharpen ? 2 : 1 }
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
