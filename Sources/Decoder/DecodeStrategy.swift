/// The passes tried on a region after plain zbar found nothing in it, and what they cost and won.
///
/// Each pass turns the region's luma (gathered once into a reusable buffer) into another
/// picture in a second reusable buffer and hands that to zbar. Which passes are kept, and in
/// which order, was measured on the photo corpus (`kiosk bench --corpus`, README "Accuracy").
public enum ExtraPass: String, CaseIterable, Sendable {
    /// Light on dark codes (phone screens in dark mode): 255 - luma.
    case invert
    /// Local (adaptive) threshold: black where darker than the mean of a window around it.
    /// Shadows and uneven light stop mattering to zbar's edge detector.
    case adaptiveThreshold = "adaptive"
    /// Each 2x2 block averaged into one pixel: less sensor noise and blur per pixel for large codes.
    case downscale2x = "down2"
    /// Bilinear 2x enlargement: small modules get enough pixels for zbar's finder.
    case upscale2x = "up2"
    /// Global contrast stretch between the 1st and 99th percentile.
    case stretch
    /// 3x3 unsharp mask.
    case sharpen
    /// 3x3 box blur.
    case blur

    /// The passes kept, in the order they are tried (measured on the corpus; see README "Accuracy").
    public static let kept: [ExtraPass] = [.adaptiveThreshold, .downscale2x, .upscale2x, .invert]

    /// How many times larger (2) or smaller (1/2) the pass's picture is than the region.
    var scale: (num: Int, den: Int) {
        switch self {
        case .downscale2x: return (1, 2)
        case .upscale2x: return (2, 1)
        default: return (1, 1)
        }
    }
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
    /// 1D symbols zbar found that were not reported: one scan line only and not seen in the previous frame.
    public var unconfirmed1D = 0
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
        guard w >= 16, h >= 16 else { return false }
        var lo = 255, hi = 0
        var y = 0
        while y < h {
            var x = 0
            while x < w { let v = Int(p[y * w + x]); lo = min(lo, v); hi = max(hi, v); x += 3 }
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
        let rows = clustered(count: w, lines: h) { y, x in Int(p[y * w + x]) }
        if rows >= 2 { return true }
        let cols = clustered(count: h, lines: w) { x, y in Int(p[y * w + x]) }
        return cols >= 2
    }

    /// Runs `pass` from `src` (w x h) into `dst`; returns the output size.
    static func apply(_ pass: ExtraPass, src: UnsafePointer<UInt8>, width w: Int, height h: Int,
                      dst: UnsafeMutablePointer<UInt8>, integral: UnsafeMutablePointer<UInt32>) -> (Int, Int) {
        switch pass {
        case .invert:
            for i in 0..<(w * h) { dst[i] = 255 &- src[i] }
            return (w, h)
        case .downscale2x:
            let ow = w / 2, oh = h / 2
            for y in 0..<oh {
                let r0 = src + (2 * y) * w, r1 = r0 + w
                for x in 0..<ow {
                    let s = Int(r0[2 * x]) + Int(r0[2 * x + 1]) + Int(r1[2 * x]) + Int(r1[2 * x + 1])
                    dst[y * ow + x] = UInt8((s + 2) >> 2)
                }
            }
            return (ow, oh)
        case .upscale2x:
            let ow = w * 2, oh = h * 2
            for y in 0..<oh {
                // Sample centres: output pixel y maps to (y - 0.5) / 2 in the source, in quarters.
                let sy4 = max(0, 2 * y - 1), y0 = min(h - 1, sy4 / 4), y1 = min(h - 1, y0 + 1), fy = sy4 & 3
                for x in 0..<ow {
                    let sx4 = max(0, 2 * x - 1), x0 = min(w - 1, sx4 / 4), x1 = min(w - 1, x0 + 1), fx = sx4 & 3
                    let a = Int(src[y0 * w + x0]) * (4 - fx) + Int(src[y0 * w + x1]) * fx
                    let b = Int(src[y1 * w + x0]) * (4 - fx) + Int(src[y1 * w + x1]) * fx
                    dst[y * ow + x] = UInt8((a * (4 - fy) + b * fy + 8) >> 4)
                }
            }
            return (ow, oh)
        case .adaptiveThreshold:
            // Integral image, (w+1) x (h+1).
            let iw = w + 1
            for x in 0...w { integral[x] = 0 }
            for y in 0..<h {
                var rowSum: UInt32 = 0
                integral[(y + 1) * iw] = 0
                for x in 0..<w {
                    rowSum &+= UInt32(src[y * w + x])
                    integral[(y + 1) * iw + x + 1] = integral[y * iw + x + 1] &+ rowSum
                }
            }
            // The window: an eighth of the larger side, so that it spans several bars or modules.
            let r = max(4, max(w, h) / 16)
            for y in 0..<h {
                let y0 = max(0, y - r), y1 = min(h, y + r + 1)
                for x in 0..<w {
                    let x0 = max(0, x - r), x1 = min(w, x + r + 1)
                    let sum = integral[y1 * iw + x1] &- integral[y0 * iw + x1] &- integral[y1 * iw + x0] &+ integral[y0 * iw + x0]
                    let area = (y1 - y0) * (x1 - x0)
                    // Darker than 94% of the local mean is ink.
                    dst[y * w + x] = Int(src[y * w + x]) * area * 100 < Int(sum) * 94 ? 0 : 255
                }
            }
            return (w, h)
        case .stretch:
            var histogram = [Int](repeating: 0, count: 256)
            for i in 0..<(w * h) { histogram[Int(src[i])] += 1 }
            let cut = (w * h) / 100
            var lo = 0, acc = 0
            while lo < 255 && acc + histogram[lo] <= cut { acc += histogram[lo]; lo += 1 }
            var hi = 255; acc = 0
            while hi > lo && acc + histogram[hi] <= cut { acc += histogram[hi]; hi -= 1 }
            let span = max(1, hi - lo)
            for i in 0..<(w * h) { dst[i] = UInt8(min(255, max(0, (Int(src[i]) - lo) * 255 / span))) }
            return (w, h)
        case .sharpen, .blur:
            for y in 0..<h {
                for x in 0..<w {
                    let c = Int(src[y * w + x])
                    guard x > 0, y > 0, x < w - 1, y < h - 1 else { dst[y * w + x] = UInt8(c); continue }
                    let n = Int(src[(y - 1) * w + x]) + Int(src[(y + 1) * w + x]) + Int(src[y * w + x - 1]) + Int(src[y * w + x + 1])
                    let v = pass == .sharpen ? 2 * c - n / 4 : (c + n + 2) / 5
                    dst[y * w + x] = UInt8(min(255, max(0, v)))
                }
            }
            return (w, h)
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
