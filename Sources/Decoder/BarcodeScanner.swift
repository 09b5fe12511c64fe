// SPDX-License-Identifier: Apache-2.0
import Camera
import CZbar
import Platform
import Policy

extension DecodedSymbol {
    /// A symbol from its bytes, with their text as `PayloadText` reads them.
    public init(symbology: Symbology, bytes: [UInt8], location: [PixelPoint], quality: Int) {
        self.init(symbology: symbology, bytes: bytes, text: PayloadText.text(bytes), location: location, quality: quality)
    }
}

/// zbar's image scanner, configured once for the kiosk's symbologies and reused frame after frame,
/// with a decoding strategy around it:
///
/// 1. plain zbar on the region (a crop of the frame, no copy): cheap, and it reads most codes;
/// 2. when that finds nothing but the region looks like it holds a code (`PassImage.looksLikeCode`),
///    the extra passes (`extraPasses`) are tried in order on a copy of the region until one reads
///    a code or `extraBudgetMs` is spent (no pass starts after that);
/// 3. nothing is reported that is not confirmed: Code 128 is read again (`Code128`), EAN/UPC
///    check digits are verified, and a 1D code must agree on at least two scan lines of the frame,
///    or be seen in this scan and the one before (two consecutive frames). zbar's decoder state is
///    reset before every scan, so half a code from one frame never completes a code in the next.
///
/// Buffers are kept between frames: steady state allocates nothing of its own.
/// Not thread-safe: one scanner belongs to one decoding thread.
public final class BarcodeScanner {
    public let symbologies: [Symbology]
    /// The passes tried, in order, when plain zbar finds nothing in a region that looks like a code.
    public var extraPasses: [ExtraPass]
    /// Wall-clock budget for the extra passes of one region, in milliseconds.
    public var extraBudgetMs: Double
    /// What the budget is measured on (the service's one clock; a manual one in tests).
    public let clock: Clock
    /// What the strategy did so far (the bench prints it).
    public private(set) var counters = DecodeCounters()

    /// The default extra budget: see README "Accuracy" for what it buys on the corpus.
    public static let defaultExtraBudgetMs = 60.0

    private var scanner: OpaquePointer
    private let image: OpaquePointer
    /// The region's luma, gathered when the frame's luma is not contiguous (YUYV) or when extra
    /// passes need a copy; kept between frames so that steady state allocates nothing.
    private var gathered: [UInt8] = []
    private var passBuffer: [UInt8] = []
    private var secondBuffer: [UInt8] = []
    /// 1D codes zbar read on one scan line only in the previous scan: confirmed if read again now.
    private var pending: [(Symbology, [UInt8])] = []
    private var unconfirmedNow: [(Symbology, [UInt8])] = []

    /// zbar's fourcc for 8-bit greyscale, from zbar.h.
    private static let y800: UInt = KIOSK_ZBAR_Y800

    /// `density`: zbar scans every `density`th row and column (`ZBAR_CFG_X_DENSITY`/`Y_DENSITY`);
    /// 1 is zbar's default and reads the smallest codes, 2 costs about half as much.
    public init(symbologies: [Symbology], extraPasses: [ExtraPass] = ExtraPass.kept,
                extraBudgetMs: Double = BarcodeScanner.defaultExtraBudgetMs, density: Int = 1,
                clock: Clock = MonotonicClock()) {
        self.clock = clock
        precondition(!symbologies.isEmpty && density >= 1)
        self.symbologies = symbologies
        self.extraPasses = extraPasses
        self.extraBudgetMs = extraBudgetMs
        self.density = density
        scanner = BarcodeScanner.makeZbarScanner(symbologies, density: density)
        image = zbar_image_create()!
        zbar_image_set_format(image, BarcodeScanner.y800)
    }

    private let density: Int

    private static func makeZbarScanner(_ symbologies: [Symbology], density: Int) -> OpaquePointer {
        let scanner = zbar_image_scanner_create()!
        // Everything off, then exactly what was asked for: fewer decoders, less CPU, fewer false reads.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for s in symbologies {
            zbar_image_scanner_set_config(scanner, s.zbarType, ZBAR_CFG_ENABLE, 1)
        }
        // QR payloads as the symbol's bytes: the text is made by `PayloadText`, not by zbar's guess.
        if symbologies.contains(.qrcode) {
            zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(density))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(density))
        return scanner
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
        counters.regions += 1
        unconfirmedNow.removeAll(keepingCapacity: true)
        defer { swap(&pending, &unconfirmedNow) }
        guard !r.isEmpty else { return [] }
        let plainStart = clock.now()
        let plain = accepted(zbarSymbols(luma, in: r), luma: luma, region: r, scale: (1, 1), origin: (0, 0))
        let plainNs = clock.now() - plainStart
        if !plain.isEmpty {
            counters.plainWins += 1
            return plain
        }
        guard !extraPasses.isEmpty else { return [] }
        let start = clock.now()
        if luma.pixelStride == 1 { gather(luma, r) }
        let w = r.width, h = r.height
        let looks = gathered.withUnsafeBufferPointer { PassImage.looksLikeCode($0.baseAddress!, width: w, height: h) }
        guard looks else {
            counters.skippedByStructureTest += 1
            return []
        }
        counters.extraRegions += 1
        let budgetNs = UInt64(max(0, extraBudgetMs) * 1e6)
        for pass in extraPasses {
            // A pass costs about what plain zbar cost, times its picture's area: none is started
            // that would not end within the budget by that estimate.
            let estimateNs = plainNs * UInt64(pass.scale * pass.scale)
            if clock.now() - start + estimateNs > budgetNs {
                counters.budgetExhausted += 1
                break
            }
            counters.runs[pass, default: 0] += 1
            let found = run(pass, region: r)
            if !found.isEmpty {
                counters.wins[pass, default: 0] += 1
                return found
            }
        }
        return []
    }

    /// Decodes a whole still image.
    public func scan(_ picture: GrayImage, in region: PixelRect? = nil) -> [DecodedSymbol] {
        picture.withLumaPlane { luma in
            scan(luma, in: region ?? PixelRect(x: 0, y: 0, width: picture.width, height: picture.height))
        }
    }

    /// Forgets the 1D codes waiting for confirmation (a new, unrelated sequence of pictures).
    public func forgetPending() { pending.removeAll(keepingCapacity: true) }

    // MARK: - passes

    private func run(_ pass: ExtraPass, region r: PixelRect) -> [DecodedSymbol] {
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
                    case .invert: PassImage.invert(s, width: w, height: h, into: d)
                    case .upscaleSharpen:
                        PassImage.upscale2x(s, width: w, height: h, into: tmp.baseAddress!)
                        PassImage.sharpen(tmp.baseAddress!, width: ow, height: oh, into: d)
                    }
                }
            }
        }
        return passBuffer.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(ow), UInt32(oh))
            zbar_image_set_crop(image, 0, 0, UInt32(ow), UInt32(oh))
            zbar_image_set_data(image, buf.baseAddress, UInt(ow * oh), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            let symbols = runScanner()
            let plane = LumaPlane(base: buf.baseAddress!, width: ow, height: oh, rowStride: ow)
            return accepted(symbols, luma: plane, region: PixelRect(x: 0, y: 0, width: ow, height: oh),
                            scale: (k, 1), origin: (r.x, r.y))
        }
    }

    /// The region's luma into `gathered`, row after row.
    private func gather(_ luma: LumaPlane, _ r: PixelRect) {
        let count = r.width * r.height
        if gathered.count < count { gathered = [UInt8](repeating: 0, count: count) }
        gathered.withUnsafeMutableBufferPointer { out in
            var i = 0
            for y in r.y..<(r.y + r.height) {
                var p = luma.base + y * luma.rowStride + r.x * luma.pixelStride
                if luma.pixelStride == 1 {
                    (out.baseAddress! + i).update(from: p, count: r.width)
                    i += r.width
                    continue
                }
                for _ in 0..<r.width {
                    out[i] = p.pointee
                    i += 1
                    p += luma.pixelStride
                }
            }
        }
    }

    // MARK: - confirmation

    /// zbar's readings that can be reported, their outlines mapped to sensor pixels. Code 128,
    /// whose extended characters zbar gets wrong, is read again (`Code128`) and dropped when it
    /// cannot be confirmed; EAN/UPC check digits are verified; a 1D code read on one scan line
    /// only waits for the next scan to confirm it. A missed read is presented again; a wrong one
    /// opens the wrong door.
    private func accepted(_ symbols: [DecodedSymbol], luma: LumaPlane, region: PixelRect,
                          scale: (Int, Int), origin: (Int, Int)) -> [DecodedSymbol] {
        symbols.compactMap { symbol in
            var s = symbol
            if s.symbology == .code128 {
                guard let bytes = Code128.reread(s.bytes, location: s.location, in: luma, region: region) else { return nil }
                s = DecodedSymbol(symbology: s.symbology, bytes: bytes, location: s.location, quality: s.quality)
            }
            if s.symbology != .qrcode {
                guard CheckDigit.valid(s.bytes, symbology: s.symbology) else { return nil }
                if s.quality < 2 && !pending.contains(where: { $0.0 == s.symbology && $0.1 == s.bytes }) {
                    counters.unconfirmed1D += 1
                    unconfirmedNow.append((s.symbology, s.bytes))
                    return nil
                }
            }
            s.location = s.location.map { p in
                PixelPoint(x: origin.0 + p.x * scale.1 / scale.0, y: origin.1 + p.y * scale.1 / scale.0)
            }
            return s
        }
    }

    // MARK: - zbar

    private func zbarSymbols(_ luma: LumaPlane, in r: PixelRect) -> [DecodedSymbol] {
        if luma.pixelStride == 1 {
            // zbar has no row stride: present the padded rows as a wider image and crop them away.
            let length = luma.rowStride * (luma.height - 1) + luma.width
            zbar_image_set_size(image, UInt32(luma.rowStride), UInt32(luma.height))
            zbar_image_set_data(image, luma.base, UInt(length), nil)
            zbar_image_set_crop(image, UInt32(r.x), UInt32(r.y), UInt32(r.width), UInt32(r.height))
            defer { zbar_image_set_data(image, nil, 0, nil) }
            return runScanner()
        }
        // Packed luma (YUYV): gather just the region's luma bytes.
        gather(luma, r)
        return gathered.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(r.width), UInt32(r.height))
            zbar_image_set_crop(image, 0, 0, UInt32(r.width), UInt32(r.height))
            zbar_image_set_data(image, buf.baseAddress, UInt(r.width * r.height), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            return runScanner().map { s in
                var moved = s
                moved.location = s.location.map { PixelPoint(x: $0.x + r.x, y: $0.y + r.y) }
                return moved
            }
        }
    }

    /// zbar's symbols in the image's own pixel coordinates. zbar's decoder keeps half-read EAN
    /// codes from one image to the next, and the public API has no way to reset the decoder of
    /// an image scanner (setting a configuration again does not clear them: measured, see
    /// AccuracyCorpusTests), and half-codes are kept without any symbol being reported, so every
    /// scan after the first gets a fresh zbar scanner: each starts clean. That costs zbar's own
    /// few allocations (decoder, line scanner, QR reader), about 10 microseconds a scan.
    private var dirty = false

    private func runScanner() -> [DecodedSymbol] {
        if dirty {
            zbar_image_scanner_destroy(scanner)
            scanner = BarcodeScanner.makeZbarScanner(symbologies, density: density)
            dirty = false
        }
        dirty = true
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
                location.append(PixelPoint(x: Int(zbar_symbol_get_loc_x(s, i)), y: Int(zbar_symbol_get_loc_y(s, i))))
            }
            symbols.append(DecodedSymbol(symbology: symbology, bytes: bytes, location: location,
                                         quality: Int(zbar_symbol_get_quality(s))))
        }
        return symbols
    }
}
