// SPDX-License-Identifier: Apache-2.0
import Policy

// The picture each attempt makes of a region: drawn by the scanner into its pass buffer, and for
// the bench and the tests as an image of its own.

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
