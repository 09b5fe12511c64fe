// SPDX-License-Identifier: Apache-2.0

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
