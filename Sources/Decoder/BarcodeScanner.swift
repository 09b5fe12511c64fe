import Camera
import CZbar

/// One code zbar found in a frame.
public struct DecodedSymbol: Equatable, Sendable {
    public var symbology: Symbology
    /// The payload exactly as zbar returned it. A stranger printed it: treat it as data.
    public var bytes: [UInt8]
    /// The payload as text when it is valid UTF-8, else nil.
    public var text: String? { String(validating: bytes, as: UTF8.self) }
    /// The symbol's outline in sensor pixels (zbar's location polygon).
    public var location: [PixelPoint]
    /// zbar's relative quality figure (higher is better; for 1D codes the number of scan lines that agreed).
    public var quality: Int

    public init(symbology: Symbology, bytes: [UInt8], location: [PixelPoint], quality: Int) {
        self.symbology = symbology
        self.bytes = bytes
        self.location = location
        self.quality = quality
    }
}

public struct PixelPoint: Equatable, Sendable {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) { self.x = x; self.y = y }
}

/// zbar's image scanner, configured once for the kiosk's symbologies and reused frame after frame.
///
/// Not thread-safe: one scanner belongs to one decoding thread.
public final class BarcodeScanner {
    public let symbologies: [Symbology]
    private let scanner: OpaquePointer
    private let image: OpaquePointer
    /// Where the luma of a region is gathered when the frame's luma is not contiguous (YUYV);
    /// kept between frames so that steady state allocates nothing.
    private var gathered: [UInt8] = []

    /// zbar's fourcc for 8-bit greyscale, 'Y800' little-endian.
    private static let y800: UInt = 0x3030_3859

    /// `density`: zbar scans every `density`th row and column (`ZBAR_CFG_X_DENSITY`/`Y_DENSITY`);
    /// 1 is zbar's default and reads the smallest codes, 2 costs about half as much.
    public init(symbologies: [Symbology], density: Int = 1) {
        precondition(!symbologies.isEmpty && density >= 1)
        self.symbologies = symbologies
        scanner = zbar_image_scanner_create()!
        image = zbar_image_create()!
        zbar_image_set_format(image, BarcodeScanner.y800)
        // Everything off, then exactly what was asked for: fewer decoders, less CPU, fewer false reads.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for s in symbologies {
            zbar_image_scanner_set_config(scanner, s.zbarType, ZBAR_CFG_ENABLE, 1)
        }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(density))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(density))
    }

    deinit {
        zbar_image_set_data(image, nil, 0, nil)
        zbar_image_destroy(image)
        zbar_image_scanner_destroy(scanner)
    }

    /// Decodes the codes lying inside `region` (sensor pixels) of the luma plane. Only that region
    /// is scanned: for planar luma zbar is handed a crop of the frame itself, without a copy.
    public func scan(_ luma: LumaPlane, in region: PixelRect) -> [DecodedSymbol] {
        let r = region.clamped(width: luma.width, height: luma.height)
        guard !r.isEmpty else { return [] }
        return confirmed(zbarSymbols(luma, in: r), luma: luma, region: r)
    }

    /// zbar's reading is kept as it is, except for Code 128, whose extended characters zbar gets
    /// wrong: those are read again (`Code128`), and dropped when they cannot be confirmed, since a
    /// missed read is presented again while a wrong one opens the wrong door.
    private func confirmed(_ symbols: [DecodedSymbol], luma: LumaPlane, region: PixelRect) -> [DecodedSymbol] {
        symbols.compactMap { symbol in
            guard symbol.symbology == .code128 else { return symbol }
            guard let bytes = Code128.reread(symbol.bytes, location: symbol.location, in: luma, region: region) else { return nil }
            var reread = symbol
            reread.bytes = bytes
            return reread
        }
    }

    private func zbarSymbols(_ luma: LumaPlane, in r: PixelRect) -> [DecodedSymbol] {
        if luma.pixelStride == 1 {
            // zbar has no row stride: present the padded rows as a wider image and crop them away.
            let length = luma.rowStride * (luma.height - 1) + luma.width
            zbar_image_set_size(image, UInt32(luma.rowStride), UInt32(luma.height))
            zbar_image_set_data(image, luma.base, UInt(length), nil)
            zbar_image_set_crop(image, UInt32(r.x), UInt32(r.y), UInt32(r.width), UInt32(r.height))
            return runScanner(offsetX: 0, offsetY: 0)
        }
        // Packed luma (YUYV): gather just the region's luma bytes.
        let count = r.width * r.height
        if gathered.count < count { gathered = [UInt8](repeating: 0, count: count) }
        gathered.withUnsafeMutableBufferPointer { out in
            var i = 0
            for y in r.y..<(r.y + r.height) {
                var p = luma.base + y * luma.rowStride + r.x * luma.pixelStride
                for _ in 0..<r.width {
                    out[i] = p.pointee
                    i += 1
                    p += luma.pixelStride
                }
            }
        }
        return gathered.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(r.width), UInt32(r.height))
            zbar_image_set_data(image, buf.baseAddress, UInt(count), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            return runScanner(offsetX: r.x, offsetY: r.y)
        }
    }

    /// Decodes a whole still image.
    public func scan(_ picture: GrayImage, in region: PixelRect? = nil) -> [DecodedSymbol] {
        picture.withLumaPlane { luma in
            scan(luma, in: region ?? PixelRect(x: 0, y: 0, width: picture.width, height: picture.height))
        }
    }

    private func runScanner(offsetX: Int, offsetY: Int) -> [DecodedSymbol] {
        let found = zbar_scan_image(scanner, image)
        guard found > 0 else { return [] }
        var symbols: [DecodedSymbol] = []
        var symbol = zbar_image_first_symbol(image)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            guard let symbology = Symbology(zbarType: zbar_symbol_get_type(s)) else { continue }
            let length = Int(zbar_symbol_get_data_length(s))
            let bytes: [UInt8] = zbar_symbol_get_data(s).map { data in
                data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
            } ?? []
            var location: [PixelPoint] = []
            for i in 0..<zbar_symbol_get_loc_size(s) {
                location.append(PixelPoint(x: Int(zbar_symbol_get_loc_x(s, i)) + offsetX,
                                           y: Int(zbar_symbol_get_loc_y(s, i)) + offsetY))
            }
            symbols.append(DecodedSymbol(symbology: symbology, bytes: bytes, location: location,
                                         quality: Int(zbar_symbol_get_quality(s))))
        }
        return symbols
    }
}

extension PixelRect {
    func clamped(width w: Int, height h: Int) -> PixelRect {
        let x0 = min(max(0, x), w), y0 = min(max(0, y), h)
        let x1 = min(max(x0, x + width), w), y1 = min(max(y0, y + height), h)
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
