// SPDX-License-Identifier: Apache-2.0
/// What `kiosk aim` tells the installer about the picture in the ROI: how bright, how much is
/// clipped, how sharp, how big the last code's modules are, and a hint in plain words. Pure: a
/// luma plane and a rectangle in, figures out.
public struct AimFigures: Equatable, Sendable {
    /// Mean luma of the ROI, 0-255.
    public var brightness: Double
    /// Share of the ROI's pixels at 250 or above (clipped white: a washed-out screen, glare).
    public var clipped: Double
    /// How steep the ROI's edges are: the mean of its steepest 1% of neighbour differences as a
    /// share of its contrast (the 5th to 95th percentile of its luma), x100. A black-to-white step
    /// within a pixel gives 100 wherever the code lies in the ROI and however bright it is; a lens
    /// out of focus spreads each step over several pixels and the figure falls (a blur of 3 px
    /// radius: about 15). An empty window gives the sensor's noise against little contrast.
    public var sharpness: Double
    /// Neighbour pairs that differ by an edge's worth (the decode gate's threshold).
    public var edges: Int
    /// The 5th to 95th percentile of the ROI's luma: a code, even blurred, spreads it.
    public var contrast = 0

    /// Something is in the ROI: sharp edges, or light and dark a blurred code still shows.
    public var somethingHeld: Bool { holdsEdges || contrast >= 60 }
    /// Edges enough that the decode gate would look at the ROI (its `minEdges`).
    public var holdsEdges: Bool { edges >= Self.gate.minEdges }
    static let gate = DecodeGate.Settings()

    /// Samples every `step`th pixel each way (1: all of them).
    public static func measure(_ luma: LumaPlane, roi: PixelRect, step: Int = 1) -> AimFigures {
        let r = roi.clamped(width: luma.width, height: luma.height)
        guard r.width >= 2, r.height >= 2 else { return AimFigures(brightness: 0, clipped: 0, sharpness: 0, edges: 0) }
        let threshold = gate.edgeThreshold
        var levels = [Int](repeating: 0, count: 256)
        var slopes = [Int](repeating: 0, count: 256)
        var sum = 0, clipped = 0, edges = 0, count = 0
        var y = r.y
        while y < r.y + r.height - 1 {
            let row = luma.base + y * luma.rowStride
            let below = row + luma.rowStride
            var x = r.x
            while x < r.x + r.width - 1 {
                let v = Int(row[x * luma.pixelStride])
                let dx = abs(Int(row[(x + 1) * luma.pixelStride]) - v)
                let dy = abs(Int(below[x * luma.pixelStride]) - v)
                sum += v
                levels[v] += 1
                slopes[max(dx, dy)] += 1
                if v >= 250 { clipped += 1 }
                if dx >= threshold { edges += 1 }
                if dy >= threshold { edges += 1 }
                count += 1
                x += step
            }
            y += step
        }
        let mean = Double(sum) / Double(count)
        // The 5th and 95th percentiles of luma: the contrast.
        func percentile(_ p: Double) -> Int {
            let target = Int(Double(count) * p)
            var seen = 0
            for (level, n) in levels.enumerated() {
                seen += n
                if seen > target { return level }
            }
            return 255
        }
        let range = percentile(0.95) - percentile(0.05)
        let contrast = max(16, range)
        // The mean of the steepest 1% of slopes.
        let wanted = max(1, count / 100)
        var taken = 0, steep = 0
        for slope in stride(from: 255, through: 0, by: -1) where taken < wanted {
            let n = min(slopes[slope], wanted - taken)
            taken += n
            steep += n * slope
        }
        return AimFigures(brightness: mean, clipped: Double(clipped) / Double(count),
                          sharpness: min(100, 100 * Double(steep) / Double(taken) / Double(contrast)), edges: edges,
                          contrast: range)
    }

    /// The size of a module (the narrowest bar or square), in pixels, from the runs of light and
    /// dark along the middle row and column of a code's outline in `luma`: the lower quartile of
    /// the run lengths (a code's runs are whole numbers of modules, most of them one or two).
    /// Nil when the outline is too small or shows no runs.
    public static func modulePixels(_ luma: LumaPlane, outline: [PixelPoint]) -> Double? {
        guard !outline.isEmpty else { return nil }
        let xs = outline.map(\.x), ys = outline.map(\.y)
        let x0 = max(0, xs.min()!), x1 = min(luma.width - 1, xs.max()!)
        let y0 = max(0, ys.min()!), y1 = min(luma.height - 1, ys.max()!)
        guard x1 - x0 >= 4 || y1 - y0 >= 4 else { return nil }
        var runs: [Int] = []
        func collect(_ values: [Int]) {
            guard values.count >= 4, let lo = values.min(), let hi = values.max(), hi - lo >= 40 else { return }
            let threshold = (lo + hi) / 2
            var length = 1
            var dark = values[0] < threshold
            var first = true
            for v in values.dropFirst() {
                if (v < threshold) == dark { length += 1; continue }
                if !first { runs.append(length) }  // the first run is cut by the outline
                first = false
                dark.toggle()
                length = 1
            }
        }
        let my = (y0 + y1) / 2, mx = (x0 + x1) / 2
        if x1 - x0 >= 4 { collect((x0...x1).map { Int(luma[$0, my]) }) }
        if y1 - y0 >= 4 { collect((y0...y1).map { Int(luma[mx, $0]) }) }
        guard runs.count >= 3 else { return nil }
        runs.sort()
        return Double(runs[runs.count / 4])
    }

    /// Below this sharpness something held is called out of focus.
    public static let blurredBelow = 30.0

    /// A hint in plain words, most pressing first. `module`: the last code's module size when one
    /// was read in the last second; `codeFits`: its outline lies inside the ROI.
    public static func hint(_ f: AimFigures, readNow: Bool, module: Double?, codeFits: Bool = true, fixedFocus: Bool = false) -> String {
        if f.brightness < 25 { return "too dark: more light at the window, or let the torch help (KIOSK_TORCH)" }
        if f.clipped > 0.3 { return "overexposed: the picture is washed out (KIOSK_EXPOSURE=screens; less light on the window)" }
        if readNow, let m = module {
            if !codeFits { return "too close: the whole code must fit in the box" }
            if m < 2 { return "too far: modules of \(Format.fixed(m, 1)) px; hold the code closer (3 px or more read best)" }
            return "good: read, modules of \(Format.fixed(m, 1)) px"
        }
        if readNow { return "good: read" }
        if !f.somethingHeld { return "hold a code inside the box" }
        if f.clipped > 0.02 && f.sharpness >= blurredBelow {
            return "glare: a reflection hides part of the code; tilt the code or the window a little"
        }
        if f.sharpness < blurredBelow {
            return fixedFocus ? "out of focus: turn the lens until the sharpness is highest"
                : "out of focus: set KIOSK_FOCUS to where codes are held (e.g. 15cm), or try auto"
        }
        return "not read yet: hold the code still and flat, inside the box"
    }
}

/// The installer's picture in a terminal: two picture rows a character cell (the upper half block
/// with grey foreground and background, xterm's 24-step grey ramp), the ROI drawn in yellow.
public enum AimTerminal {
    /// `columns` x `rows` cells of the upright picture `image`, the ROI `roi` in its pixels.
    public static func render(_ image: GrayImage, roi: PixelRect, columns: Int, rows: Int) -> [String] {
        let cols = max(1, columns), cells = max(1, rows)
        let sx = Double(image.width) / Double(cols), sy = Double(image.height) / Double(2 * cells)
        func grey(_ px: Int, _ py: Int) -> Int {
            // The mean of the block the sample stands for (a plain subsample shows moire on codes).
            let x0 = Int(Double(px) * sx), x1 = max(x0 + 1, Int(Double(px + 1) * sx))
            let y0 = Int(Double(py) * sy), y1 = max(y0 + 1, Int(Double(py + 1) * sy))
            var s = 0, n = 0
            for y in y0..<min(y1, image.height) { for x in x0..<min(x1, image.width) { s += Int(image[x, y]); n += 1 } }
            return n == 0 ? 0 : s / n
        }
        func onROIEdge(_ px: Int, _ py: Int) -> Bool {
            let x = Int((Double(px) + 0.5) * sx), y = Int((Double(py) + 0.5) * sy)
            let inX = x >= roi.x && x < roi.x + roi.width, inY = y >= roi.y && y < roi.y + roi.height
            let nearX = abs(x - roi.x) < Int(sx.rounded(.up)) || abs(x - (roi.x + roi.width - 1)) < Int(sx.rounded(.up))
            let nearY = abs(y - roi.y) < Int(sy.rounded(.up)) || abs(y - (roi.y + roi.height - 1)) < Int(sy.rounded(.up))
            return (inY && nearX) || (inX && nearY)
        }
        func colour(_ px: Int, _ py: Int) -> Int {
            if onROIEdge(px, py) { return 226 }  // yellow
            return 232 + min(23, grey(px, py) * 24 / 256)
        }
        var lines: [String] = []
        lines.reserveCapacity(cells)
        for cy in 0..<cells {
            var line = ""
            var last = (-1, -1)
            for cx in 0..<cols {
                let c = (colour(cx, 2 * cy), colour(cx, 2 * cy + 1))
                if c != last { line += "\u{1B}[38;5;\(c.0);48;5;\(c.1)m" }
                last = c
                line += "\u{2580}"
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines
    }
}

/// `kiosk aim --sweep`: which `focus_absolute` values to try, and which was sharpest.
public enum FocusSweep {
    /// Frames skipped after each step (the lens moves, the camera's exposure settles), and at
    /// least this much of the frames' time: frames queued in the camera and the driver were taken
    /// before the step. The first step, often a long way from where autofocus had the lens, waits
    /// longer.
    public static let settleFrames = 8
    public static let settleNs: UInt64 = 500_000_000
    public static let firstSettleNs: UInt64 = 1_500_000_000
    /// Frames whose sharpness is averaged at each step.
    public static let measuredFrames = 4

    /// About 16 values across the range, each on the control's step, both ends included.
    public static func values(_ range: V4L2ControlOffer) -> [Int] {
        let span = range.maximum - range.minimum
        guard span > 0 else { return [range.minimum] }
        let stride = max(range.step, (span / 15 + range.step - 1) / range.step * range.step)
        var out = Array(Swift.stride(from: range.minimum, through: range.maximum, by: stride))
        if out.last != range.maximum { out.append(range.maximum) }
        return out
    }

    /// The sharpest value; of equally sharp neighbours (within 2%), the middle one: the middle of
    /// the depth of field is the safest place to leave a lens.
    public static func best(_ results: [(focus: Int, sharpness: Double)]) -> Int? {
        guard let top = results.map(\.sharpness).max() else { return nil }
        let near = results.filter { $0.sharpness >= top * 0.98 }.map(\.focus)
        let peak = results.first { $0.sharpness == top }!.focus
        // The run of near-best values around the peak, in the order tried.
        let order = results.map(\.focus)
        guard let i = order.firstIndex(of: peak) else { return peak }
        var lo = i, hi = i
        while lo > 0, near.contains(order[lo - 1]) { lo -= 1 }
        while hi < order.count - 1, near.contains(order[hi + 1]) { hi += 1 }
        return order[(lo + hi) / 2]
    }
}
