// SPDX-License-Identifier: Apache-2.0
import Policy

/// What the scanner believes of a reader's symbols: each reading checked and confirmed (or held
/// back) before `ReadingAgreement` weighs it against the others.
extension BarcodeScanner {
    /// zbar's readings of one pass, their outlines mapped to sensor pixels, for `ReadingAgreement`.
    /// Code 128, whose extended characters zbar gets wrong, is read again (`Code128`) and dropped
    /// when it cannot be confirmed; EAN/UPC check digits are verified; a 1D code is confirmed when
    /// zbar read it on at least two scan lines of the region's own pixels (`quality`), or in the
    /// scan before. An enlarged picture's lines are not the region's: its bilinear rows blend two
    /// of them, so a code one pixel row tall is read there on several (measured: quality 7 for a
    /// 1-row EAN-13), and a 1D code read only in an enlarged picture waits for the other reader or
    /// the next frame, and cannot confirm zxing's. A reading whose
    /// outline leaves the region `within` is dropped. A missed read is presented again; a wrong
    /// one opens the wrong door.
    func readings(_ symbols: [DecodedSymbol], luma: LumaPlane, region: PixelRect,
                  scale: (Int, Int), origin: (Int, Int), within r: PixelRect) -> [Reading] {
        symbols.compactMap { symbol in
            var s = symbol
            if s.symbology == .code128 {
                guard let bytes = Code128.reread(s.bytes, location: s.location, in: luma, region: region) else { return nil }
                s = DecodedSymbol(symbology: s.symbology, bytes: bytes, location: s.location, quality: s.quality)
            }
            guard CheckDigit.valid(s.bytes, symbology: s.symbology) else { return nil }
            var confirmed = true
            if s.symbology.isLinear && (s.quality < 2 || scale.0 != scale.1) {
                confirmed = pending.contains(where: { $0.0 == s.symbology && $0.1 == s.bytes })
                if !confirmed { counters.unconfirmed1D += 1 }
            }
            s.location = s.location.map { p in
                PixelPoint(x: origin.0 + p.x * scale.1 / scale.0, y: origin.1 + p.y * scale.1 / scale.0)
            }
            guard r.encloses(s.location) else { return nil }
            return Reading(s, reader: .zbar, confirmed: confirmed, confirmsOthers: scale.0 == scale.1)
        }
    }

    /// A zxing reading for `ReadingAgreement`: check digits verified, a linear code confirmed by
    /// zxing's own scan lines (at least `ZXingReader.confirmingLines`) or by the scan before, the
    /// outline inside the region.
    func zxingReading(_ code: ZXingReader.Code, within r: PixelRect) -> Reading? {
        let s = code.symbol
        guard CheckDigit.valid(s.bytes, symbology: s.symbology), r.encloses(s.location) else { return nil }
        var confirmed = true
        if s.symbology.isLinear && code.lineCount < ZXingReader.confirmingLines {
            confirmed = pending.contains(where: { $0.0 == s.symbology && $0.1 == s.bytes })
            if !confirmed { counters.unconfirmed1D += 1 }
        }
        return Reading(s, reader: .zxing, confirmed: confirmed)
    }
}
