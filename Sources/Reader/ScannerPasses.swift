// SPDX-License-Identifier: Apache-2.0
import Policy

/// The pictures the scanner makes of a region plain zbar did not read: an extra pass's
/// (`ExtraPass`: sharpened, enlarged) and an attempt's (`Attempt`: stretched, inverted), drawn
/// from the gathered region into the pass buffer and read by zbar (an inverted one by zxing too).
extension BarcodeScanner {
    // MARK: - passes

    func run(_ pass: ExtraPass, region r: PixelRect, agreement: inout ReadingAgreement) -> [DecodedSymbol] {
        let w = r.width, h = r.height, k = pass.scale
        let ow = w * k, oh = h * k
        if passBuffer.count < ow * oh { passBuffer = [UInt8](repeating: 0, count: ow * oh) }
        if k > 1, secondBuffer.count < ow * oh { secondBuffer = [UInt8](repeating: 0, count: ow * oh) }
        gathered.withUnsafeBufferPointer { src in
            passBuffer.withUnsafeMutableBufferPointer { dst in
                secondBuffer.withUnsafeMutableBufferPointer { tmp in
                    let s = src.baseAddress!, d = dst.baseAddress!
                    switch pass {
                    case .sharpen: PassImage.sharpen(s, width: w, height: h, into: d)
                    case .upscaleSharpen:
                        PassImage.upscale2x(s, width: w, height: h, into: tmp.baseAddress!)
                        PassImage.sharpen(tmp.baseAddress!, width: ow, height: oh, into: d)
                    case .zxing: preconditionFailure("the zxing pass reads the frame itself")
                    }
                }
            }
        }
        return agreement.admit(zbarReadingsOfPassBuffer(width: ow, height: oh, scale: (k, 1), region: r))
    }

    // MARK: - attempts

    /// Runs attempt `a` on region `r` (`gathered` holds it) if the budget allows it (nil when it
    /// does not: counted as the budget spent). Returns what stands.
    func attempt(_ a: Attempt, region r: PixelRect, agreement: inout ReadingAgreement,
                 plainNs: UInt64, start: UInt64, budgetNs: UInt64) -> [DecodedSymbol]? {
        let w = r.width, h = r.height
        // Each costs about what plain zbar cost (the picture is the region's size); the inversion
        // adds zxing's read when zbar finds nothing.
        let estimateNs = plainNs + (a == .invert && zxing != nil ? UInt64(zxingNsPerPixel * Double(w * h)) : 0)
        if clock.now() - start + estimateNs > budgetNs {
            counters.budgetExhausted += 1
            return nil
        }
        counters.attemptRuns[a, default: 0] += 1
        lastRanAttempt = true
        preparePassBuffer(count: w * h)
        if secondBuffer.count < w * h { secondBuffer = [UInt8](repeating: 0, count: w * h) }
        gathered.withUnsafeBufferPointer { src in
            passBuffer.withUnsafeMutableBufferPointer { dst in
                secondBuffer.withUnsafeMutableBufferPointer { tmp in
                    a.draw(src.baseAddress!, width: w, height: h, tmp: tmp.baseAddress!, levels: &stretchLevels, scratch: &rowScratch,
                           into: dst.baseAddress!)
                }
            }
        }
        var found = agreement.admit(zbarReadingsOfPassBuffer(width: w, height: h, scale: (1, 1), region: r))
        if found.isEmpty, a == .invert, let zxing {
            // zxing reads the inverted picture upright (the mount through the strides), as it
            // reads the region; its outline is the region's.
            let codes = passBuffer.withUnsafeBufferPointer { buf in
                zxing.read(LumaPlane(base: buf.baseAddress!, width: w, height: h, rowStride: w), in: PixelRect(x: 0, y: 0, width: w, height: h))
            }
            found = agreement.admit(relocated(codes, region: r) { $0 }.compactMap { zxingReading($0, within: r) })
        }
        if !found.isEmpty {
            counters.attemptWins[a, default: 0] += 1
            lastReadByAttempt = true
        }
        return found
    }
}
