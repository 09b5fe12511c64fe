// SPDX-License-Identifier: Apache-2.0

/// The reader that made a reading.
public enum Reader: String, Sendable {
    case zbar, zxing
}

/// One reading of one pass, before it is believed.
public struct Reading: Sendable, Equatable {
    public var symbol: DecodedSymbol
    public var reader: Reader
    /// False for a linear code read on a single scan line and not seen in the previous frame: it
    /// stands only when another reader reads the same payload at the same place in this scan.
    public var confirmed: Bool
    /// Whether this reading may confirm the other reader's: false for a reading of an enlarged
    /// picture, whose rows blend the region's own (a single line there shows on several).
    public var confirmsOthers: Bool

    public init(_ symbol: DecodedSymbol, reader: Reader, confirmed: Bool, confirmsOthers: Bool = true) {
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
/// - the same payload read twice at one place is reported once.
///
/// Payloads are compared as text when both have one (zbar converts an ECI segment to UTF-8,
/// zxing gives the bytes as encoded), else as bytes; UPC-A, ISBN-13 and EAN-13 are one family
/// (a UPC-A is an EAN-13 with a leading 0).
public struct ReadingAgreement {
    public private(set) var contested: [Box] = []
    public private(set) var unconfirmed: [Reading] = []

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
        let all = earlier + readings
        let boxes = all.map { Box($0.symbol.location) }
        var disputed = [Bool](repeating: false, count: all.count)
        for i in earlier.count..<all.count {
            guard let bi = boxes[i] else { continue }
            for j in all.indices where j != i {
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
        for i in earlier.count..<all.count {
            guard let bi = boxes[i], !disputed[i], !contested.contains(where: { $0.overlaps(bi) }) else { continue }
            let twin = { (j: Int) -> Bool in
                guard j != i, let bj = boxes[j], bj.overlaps(bi) else { return false }
                return ReadingAgreement.samePayload(all[i].symbol, all[j].symbol)
            }
            if standing.contains(where: twin) { continue }  // already reported at this place
            let confirmedByOtherReader = all.indices.contains { j in
                twin(j) && all[j].reader != all[i].reader && all[j].confirmsOthers && all[i].confirmsOthers
            }
            if all[i].confirmed || confirmedByOtherReader {
                standing.append(i)
            } else {
                unconfirmed.append(all[i])
            }
        }
        return standing.map { all[$0].symbol }
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
