// SPDX-License-Identifier: Apache-2.0
import Policy

/// zxing-cpp 1.4's second chances at an Aztec code the zxing pass missed: a square window around
/// the region's edges (where 1.4 looks for the bullseye), its slant, and its reads redrawn from
/// its module grid (`ModuleGrid`) or turned square and enlarged (`TurnedWindow`), the outlines
/// taken back to the region.
extension BarcodeScanner {
    /// The slant of `window`'s edges (a square of the region, sensor pixels; `TurnedWindow`)
    /// when they run along two axes: a matrix code, not a linear code's bars, which the zbar
    /// passes are for.
    func matrixSlant(_ window: PixelRect, region r: PixelRect) -> Double? {
        gathered.withUnsafeBufferPointer { buf in
            let wx = window.x - r.x, wy = window.y - r.y
            guard let slant = TurnedWindow.slant(buf.baseAddress! + wy * r.width + wx, width: window.width, height: window.height, rowStride: r.width),
                  slant.agreement >= 0.1, slant.oneAxis < slant.agreement / 2 else { return nil }
            return slant.degrees
        }
    }

    /// `slant` refined to a tenth of a degree (`TurnedWindow.refined`), for the turned reads.
    func refinedSlant(_ window: PixelRect, region r: PixelRect, around slant: Double) -> Double {
        gathered.withUnsafeBufferPointer { buf in
            TurnedWindow.refined(buf.baseAddress! + (window.y - r.y) * r.width + window.x - r.x, width: window.width, height: window.height,
                                 rowStride: r.width, around: slant)
        }
    }

    /// The Aztec read of `window` redrawn for zxing-cpp 1.4 from its module grid (`ModuleGrid`,
    /// its axes near `slant`): each module read at its centre and drawn 3 pixels square, the
    /// outline mapped back. 1.4 samples a large code's grid from its bullseye alone, and misses
    /// most 300-byte tickets of 2-3 px modules at a slant even turned and enlarged; redrawn, it
    /// reads them (SecondReaderTests).
    func readRedrawn(_ zxing: ZXingReader, window: PixelRect, region r: PixelRect, slant: Double) -> [ZXingReader.Code] {
        gathered.withUnsafeBufferPointer { buf -> [ZXingReader.Code] in
            let wx = window.x - r.x, wy = window.y - r.y
            let base = buf.baseAddress! + wy * r.width + wx
            let k = 3
            guard let grid = ModuleGrid.find(base, width: window.width, height: window.height, rowStride: r.width, near: slant),
                  let drawing = grid.drawn(base, width: window.width, height: window.height, rowStride: r.width, moduleSize: k, quietZone: 3)
            else { return [] }
            let side = drawing.side
            let codes = drawing.pixels.withUnsafeBufferPointer { p in
                zxing.readCentred(LumaPlane(base: p.baseAddress!, width: side, height: side, rowStride: side), in: PixelRect(x: 0, y: 0, width: side, height: side))
            }
            return relocated(codes, region: r) { point in
                let q = grid.point(Double(drawing.first.i) + (Double(point.x) + 0.5) / Double(k),
                                   Double(drawing.first.j) + (Double(point.y) + 0.5) / Double(k))
                return PixelPoint(x: Int(q.x) + wx, y: Int(q.y) + wy)
            }
        }
    }

    /// The Aztec read of `window` resampled for zxing-cpp 1.4: turned square to the
    /// picture by `slant` (`TurnedWindow`) and enlarged `scale` times, the outline mapped back.
    /// 1.4 misses most codes turned 10-45 degrees or with modules of a fractional number of
    /// pixels below about 5 (every photo's): both are read once turned and enlarged twice or
    /// three times (SecondReaderTests). Nothing when the window is square already (within 3
    /// degrees) at scale 1.
    func readResampled(_ zxing: ZXingReader, window: PixelRect, region r: PixelRect, slant: Double, scale: Int) -> [ZXingReader.Code] {
        gathered.withUnsafeBufferPointer { buf -> [ZXingReader.Code] in
            let base = buf.baseAddress!
            let wx = window.x - r.x, wy = window.y - r.y
            let degrees = abs(slant) >= 3 ? slant : 0
            guard degrees != 0 || scale > 1 else { return [] }
            let side = window.width * scale
            let cx = Double(wx) + Double(window.width) / 2, cy = Double(wy) + Double(window.height) / 2
            let pixels = TurnedWindow.turned(base, width: r.width, height: r.height, rowStride: r.width, cx: cx, cy: cy, side: side,
                                             degrees: degrees, scale: Double(scale))
            let codes = pixels.withUnsafeBufferPointer { p in
                zxing.readCentred(LumaPlane(base: p.baseAddress!, width: side, height: side, rowStride: side), in: PixelRect(x: 0, y: 0, width: side, height: side))
            }
            return relocated(codes, region: r) { TurnedWindow.untilted($0, cx: cx, cy: cy, side: side, degrees: degrees, scale: Double(scale)) }
        }
    }

    /// `codes` read in a picture made from the region, their outlines taken back to it by
    /// `back` (a point of that picture to the region's pixels) and kept inside it, in sensor pixels.
    func relocated(_ codes: [ZXingReader.Code], region r: PixelRect, by back: (PixelPoint) -> PixelPoint) -> [ZXingReader.Code] {
        codes.map { code in
            var c = code
            c.symbol.location = code.symbol.location.map { point in
                let q = back(point)
                return PixelPoint(x: min(max(q.x, 0), r.width - 1) + r.x, y: min(max(q.y, 0), r.height - 1) + r.y)
            }
            return c
        }
    }

    /// A square around the region's strong edges (their spread and half as much again for the
    /// quiet zone, at most the region's smaller side), kept inside the region, in sensor pixels;
    /// nil when there are no edges.
    func centredWindow(_ r: PixelRect) -> PixelRect? {
        let centre = gathered.withUnsafeBufferPointer { PassImage.edgeCentre($0.baseAddress!, width: r.width, height: r.height) }
        guard let centre else { return nil }
        let side = min(min(r.width, r.height), max(48, centre.spread * 3 / 2))
        let x = min(max(0, centre.x - side / 2), r.width - side), y = min(max(0, centre.y - side / 2), r.height - side)
        return PixelRect(x: r.x + x, y: r.y + y, width: side, height: side)
    }
}
