// SPDX-License-Identifier: Apache-2.0
import CZXing
import Policy

/// zxing-cpp, through the C shim (`Sources/CZXing`), on a region of a luma plane: the second
/// reader. It reads the region upright (the mount's mirror and turn applied through the strides,
/// no copy), for the symbologies zxing reads of those asked for, and gives each code's payload,
/// its text and its outline in sensor pixels.
///
/// zxing's options: `tryHarder` and `tryRotate` (1D codes across the frame), and a linear code
/// read on a single scan line is returned too (`minLineCount` 1; zxing's default, 2, would drop
/// it): the scanner decides what confirms it (`confirmingLines`, the other reader, the next
/// frame). Not thread-safe: one reader belongs to one decoding thread.
public final class ZXingReader {
    public let symbologies: [Symbology]
    public let mount: Mount
    private let reader: OpaquePointer
    /// Aztec alone, for the read centred on the code (`readCentred`); nil without Aztec.
    private let aztecReader: OpaquePointer?
    /// Scan lines that confirm a linear code by themselves.
    public static let confirmingLines = 2

    /// nil when zxing reads none of `symbologies`.
    /// `minLineCount`: zxing's own rule for linear codes; the kiosk takes every line (1) and
    /// decides itself (`confirmingLines`); zxing used as anyone would (the accuracy bench's
    /// "zxing alone") keeps zxing's default, 2.
    public init?(symbologies: [Symbology], mount: Mount = Mount(), minLineCount: Int = 1) {
        let mine = symbologies.filter { $0.zxingFormat != nil }
        guard !mine.isEmpty else { return nil }
        let formats = mine.reduce(UInt32(0)) { $0 | $1.zxingFormat! }
        guard let r = kiosk_zxing_create(formats, 1, 1, Int32(minLineCount)) else { return nil }
        reader = r
        aztecReader = mine.contains(.aztec) ? kiosk_zxing_create(KIOSK_ZX_AZTEC, 1, 1, 1) : nil
        self.symbologies = mine
        self.mount = mount
    }

    deinit {
        kiosk_zxing_destroy(reader)
        if let aztecReader { kiosk_zxing_destroy(aztecReader) }
    }

    /// Whether a second read centred on the code can find more (`readCentred`): zxing-cpp 1.4's
    /// Aztec detector starts from the middle of the picture and misses a code held off-centre
    /// (measured: a 108-pixel code 60 pixels off the middle of a 320x240 region is not found).
    public var readsCentred: Bool { aztecReader != nil }

    /// Aztec codes in `window` (sensor pixels), a part of the region centred on the code.
    public func readCentred(_ luma: LumaPlane, in window: PixelRect) -> [Code] {
        guard let aztecReader else { return [] }
        return read(luma, in: window, with: aztecReader)
    }

    /// zxing-cpp's version ("1.4.0", "2.3.0").
    public static var version: String { name(0) }

    /// zxing's own name of a format.
    public static func name(_ format: UInt32) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        kiosk_zxing_name(format, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// One code zxing read, with the scan lines that agreed (linear codes; 0 for matrix codes).
    public struct Code {
        public var symbol: DecodedSymbol
        public var lineCount: Int
        /// zxing's own text (its ECI or its guess), as a program using zxing alone would show it.
        public var zxingText: String
    }

    /// The codes in `region` (sensor pixels) of `luma`. A failure inside zxing reads nothing.
    public func read(_ luma: LumaPlane, in region: PixelRect) -> [Code] {
        read(luma, in: region, with: reader)
    }

    private func read(_ luma: LumaPlane, in region: PixelRect, with reader: OpaquePointer) -> [Code] {
        let r = region.clamped(width: luma.width, height: luma.height)
        guard !r.isEmpty else { return [] }
        let view = UprightView(mount: mount, sensorRegion: r)
        let s = view.strides(rowStride: luma.rowStride, pixelStride: luma.pixelStride)
        let found = kiosk_zxing_read(reader, luma.base + s.offset, Int32(view.width), Int32(view.height), Int32(s.row), Int32(s.pixel))
        guard found > 0 else { return [] }
        var codes: [Code] = []
        var c = kiosk_zxing_code()
        for i in 0..<found where kiosk_zxing_code_at(reader, i, &c) == 1 {
            guard let symbology = Symbology(zxingFormat: c.format), symbologies.contains(symbology) else { continue }
            let raw = c.bytes.map { Array(UnsafeBufferPointer(start: $0, count: c.length)) } ?? []
            let xs = [c.x.0, c.x.1, c.x.2, c.x.3], ys = [c.y.0, c.y.1, c.y.2, c.y.3]
            let outline = (0..<4).map { view.sensorPixel(Int(xs[$0]), Int(ys[$0])) }
            let symbol: DecodedSymbol
            if symbology.isLinear {
                // zxing gives a linear code's characters as ISO-8859-1 (Code 128's extended
                // characters), the kiosk keeps them as UTF-8, as it keeps zbar's re-read Code 128.
                var text = ""
                text.unicodeScalars.append(contentsOf: raw.map { Unicode.Scalar($0) })
                symbol = DecodedSymbol(symbology: symbology, bytes: Array(text.utf8), location: outline, quality: Int(c.line_count))
            } else if c.has_eci != 0 {
                // The symbol says its character set: zxing's text by the ECI, the bytes as encoded.
                symbol = DecodedSymbol(symbology: symbology, bytes: raw, text: String(cString: c.text), location: outline, quality: 1)
            } else {
                symbol = DecodedSymbol(symbology: symbology, bytes: raw, location: outline, quality: 1)
            }
            codes.append(Code(symbol: symbol, lineCount: Int(c.line_count), zxingText: String(cString: c.text)))
        }
        return codes
    }
}
