// SPDX-License-Identifier: Apache-2.0

/// The reader that made a reading.
public enum ReaderLibrary: String, Sendable {
    case zbar, zxing
}

/// One reading of one pass, before it is believed.
public struct Reading: Sendable, Equatable {
    public var symbol: DecodedSymbol
    public var reader: ReaderLibrary
    /// False for a linear code read on a single scan line and not seen in the previous frame: it
    /// stands only when another reader reads the same payload at the same place in this scan.
    public var confirmed: Bool
    /// Whether this reading may confirm the other reader's: false for a reading of an enlarged
    /// picture, whose rows blend the region's own (a single line there shows on several).
    public var confirmsOthers: Bool

    public init(_ symbol: DecodedSymbol, reader: ReaderLibrary, confirmed: Bool, confirmsOthers: Bool = true) {
        self.symbol = symbol
        self.reader = reader
        self.confirmed = confirmed
        self.confirmsOthers = confirmsOthers
    }
}

/// The rule that trades no misread for a read, within the passes of one scan of one region:
///
/// - readings whose outlines overlap and whose payloads differ (two readers, two passes, or one
///   reader twice: zbar can report a second EAN-13 with a valid check digit over the right one)
///   are all dropped, and their place is **contested**: nothing is reported there for the rest of
///   the scan, whatever a later pass reads;
/// - an unconfirmed reading (see `Reading.confirmed`) stands when a different reader reads the
///   same payload at the same place, both from the region's own pixels (`confirmsOthers`);
///   otherwise it is held (`unconfirmed`) for a later pass;
/// - the same payload read twice at one place is reported once;
/// - an EAN-13 that shares exactly one half (the first 7 digits, or the last 6) with another
///   EAN-13 of the same scan is **spliced** until another reader confirms it: zbar joins the half
///   of one code to the half of a neighbour's partly in view (a photo of one product with another
///   product's barcode cut by the edge: "5901234" of the neighbour and "333931" of the product,
///   with a valid check digit one time in ten), and places the result at the product's code. Such
///   a reading stands only when a different reader reads the same 13 digits in the region, both
///   from the region's own pixels; a second frame does not confirm it. A spliced reading held back
///   disputes no other reading (it is suspect already): the other reader's reading of the real
///   code there stands. (Two real codes of one maker side by side share their first half too:
///   they stand when the other reader reads them, and wait otherwise.)
///
/// Payloads are compared as text when both have one (zbar converts an ECI segment to UTF-8,
/// zxing gives the bytes as encoded), else as bytes; UPC-A, ISBN-13 and EAN-13 are one family
/// (a UPC-A is an EAN-13 with a leading 0).
public struct ReadingAgreement {
    public private(set) var contested: [Box] = []
    public private(set) var unconfirmed: [Reading] = []
    /// EAN-13 readings held back as possibly spliced (see the type's comment): not carried to the
    /// next frame, never confirmed by it.
    public private(set) var spliced: [Reading] = []

    public init() {}

    /// An outline's bounding box, edges included.
    public struct Box: Equatable, Sendable {
        public var minX, minY, maxX, maxY: Int

        public init?(_ outline: [PixelPoint]) {
            guard let first = outline.first else { return nil }
            minX = first.x; maxX = first.x; minY = first.y; maxY = first.y
            for p in outline.dropFirst() {
                minX = min(minX, p.x); maxX = max(maxX, p.x)
                minY = min(minY, p.y); maxY = max(maxY, p.y)
            }
        }

        public func overlaps(_ o: Box) -> Bool {
            minX <= o.maxX && o.minX <= maxX && minY <= o.maxY && o.minY <= maxY
        }
    }

    /// The readings of one pass that stand, in their order. Readings without an outline cannot
    /// be placed and never stand.
    public mutating func admit(_ readings: [Reading]) -> [DecodedSymbol] {
        let earlier = unconfirmed
        let heldSpliced = spliced
        let all = earlier + heldSpliced + readings
        let firstNew = earlier.count + heldSpliced.count
        let isHeldSpliced = { (k: Int) -> Bool in k >= earlier.count && k < firstNew }
        let boxes = all.map { Box($0.symbol.location) }
        var disputed = [Bool](repeating: false, count: all.count)
        for i in firstNew..<all.count {
            guard let bi = boxes[i] else { continue }
            for j in all.indices where j != i && !isHeldSpliced(j) {
                guard let bj = boxes[j], bi.overlaps(bj), !ReadingAgreement.samePayload(all[i].symbol, all[j].symbol) else { continue }
                disputed[i] = true
                disputed[j] = true
            }
        }
        for k in all.indices where disputed[k] {
            if let b = boxes[k], !contested.contains(b) { contested.append(b) }
        }
        // Held readings that were disputed now are gone for good.
        unconfirmed = earlier.indices.filter { !disputed[$0] }.map { earlier[$0] }

        var standing: [Int] = []
        for i in firstNew..<all.count {
            guard let bi = boxes[i], !disputed[i], !contested.contains(where: { $0.overlaps(bi) }) else { continue }
            let twin = { (j: Int) -> Bool in
                guard j != i, let bj = boxes[j], bj.overlaps(bi) else { return false }
                return ReadingAgreement.samePayload(all[i].symbol, all[j].symbol)
            }
            if standing.contains(where: twin) { continue }  // already reported at this place
            let confirmedByOtherReader = all.indices.contains { j in
                twin(j) && all[j].reader != all[i].reader && all[j].confirmsOthers && all[i].confirmsOthers
            }
            let splice = all.indices.contains { j in j != i && ReadingAgreement.sharesOneHalf(all[i].symbol, all[j].symbol) }
            if splice {
                // The other reader's same 13 digits anywhere in the region: zbar places a linear
                // code at the end of its last scan line's decode, zxing outlines the bars, and the
                // two need not touch; the question is whether the number is printed.
                let readByOtherReader = all.indices.contains { j in
                    j != i && all[j].reader != all[i].reader && all[j].confirmsOthers && all[i].confirmsOthers
                        && ReadingAgreement.samePayload(all[i].symbol, all[j].symbol)
                }
                if standing.contains(where: { ReadingAgreement.samePayload(all[$0].symbol, all[i].symbol) }) { continue }
                if readByOtherReader { standing.append(i) } else { spliced.append(all[i]) }
            } else if all[i].confirmed || confirmedByOtherReader {
                standing.append(i)
            } else {
                unconfirmed.append(all[i])
            }
        }
        return standing.map { all[$0].symbol }
    }

    /// Two EAN-13s (UPC-A as the EAN-13 it is) with the same first 7 digits and other last 6, or
    /// the other way round: what one code's half joined to another's gives.
    public static func sharesOneHalf(_ a: DecodedSymbol, _ b: DecodedSymbol) -> Bool {
        guard family(a.symbology) == .ean13, family(b.symbology) == .ean13 else { return false }
        let da = ean13Digits(a.bytes), db = ean13Digits(b.bytes)
        guard da.count == 13, db.count == 13 else { return false }
        return (da[0..<7] == db[0..<7]) != (da[7..<13] == db[7..<13])
    }

    /// One symbol's payload the same as another's (see the type's comment).
    public static func samePayload(_ a: DecodedSymbol, _ b: DecodedSymbol) -> Bool {
        guard family(a.symbology) == family(b.symbology) else { return false }
        if family(a.symbology) == .ean13 { return ean13Digits(a.bytes) == ean13Digits(b.bytes) }
        if let ta = a.text, let tb = b.text { return ta == tb }
        return a.bytes == b.bytes
    }

    static func family(_ s: Symbology) -> Symbology {
        switch s {
        case .upca, .isbn13: return .ean13
        default: return s
        }
    }

    /// A UPC-A's 12 digits as the EAN-13 it is (a leading 0).
    static func ean13Digits(_ bytes: [UInt8]) -> [UInt8] {
        bytes.count == 12 ? [0x30] + bytes : bytes
    }
}

extension PixelRect {
    /// Whether every point of `outline` lies in this rectangle (its edges included); false for an
    /// empty outline.
    public func encloses(_ outline: [PixelPoint]) -> Bool {
        !outline.isEmpty && outline.allSatisfy { $0.x >= x && $0.x <= x + width && $0.y >= y && $0.y <= y + height }
    }
}
