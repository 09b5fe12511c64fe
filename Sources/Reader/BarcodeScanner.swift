// SPDX-License-Identifier: Apache-2.0
import Camera
import CZbar
import Platform
import Policy

extension DecodedSymbol {
    /// A symbol from its bytes, with their text as `PayloadText` reads them; a pass (`KH1:` + CBOR,
    /// a pass) is binary: its bytes as encoded, no text guessed.
    public init(symbology: Symbology, bytes: [UInt8], location: [PixelPoint], quality: Int) {
        self.init(symbology: symbology, bytes: bytes, text: Pass.isPass(bytes) ? nil : PayloadText.text(bytes), location: location, quality: quality)
    }
}

/// zbar's image scanner, configured once for the kiosk's symbologies and reused frame after frame,
/// and zxing-cpp beside it (`ZXingReader`), with a decoding strategy around them:
///
/// 1. plain zbar on the region (a crop of the frame, no copy) for the symbologies zbar reads:
///    cheap, and it reads most QR and 1D codes;
/// 2. when that finds nothing but the region looks like it holds a code (`PassImage.looksLikeCode`),
///    the extra passes (`extraPasses`) are tried in order until one reads a code or `extraBudgetMs`
///    is spent (no pass starts that would not end within it; a region whose structure is coarse,
///    a code held close, gets the zxing pass only): `zxing` (zxing-cpp on the region,
///    upright, for what zbar cannot read, Aztec, Data Matrix, PDF417, Micro QR, and as a second
///    opinion for QR and 1D), then zbar on sharpened, enlarged and inverted copies of the region;
/// 3. nothing is reported that is not confirmed: Code 128 is read again (`Code128`), EAN/UPC
///    check digits are verified, a 1D code must agree on at least two scan lines of the frame, or
///    be read alike by both readers, or be seen in this scan and the one before (two consecutive
///    frames); readings that disagree about one place report nothing there for the whole scan
///    (`ReadingAgreement`); a reading's outline must lie in the region. zbar's decoder state is
///    reset before every scan, so half a code from one frame never completes a code in the next.
///
/// Buffers are kept between frames: steady state allocates nothing of its own.
/// Not thread-safe: one scanner belongs to one decoding thread.
public final class BarcodeScanner {
    public let symbologies: [Symbology]
    /// The symbologies zbar reads of those asked for (the others go to zxing only).
    public let zbarSymbologies: [Symbology]
    /// The second reader; nil when zxing reads none of the symbologies.
    public let zxing: ZXingReader?
    /// The passes tried, in order, when plain zbar finds nothing in a region that looks like a code.
    public var extraPasses: [ExtraPass]
    /// Wall-clock budget for the extra passes of one region, in milliseconds.
    public var extraBudgetMs: Double
    /// What the budget is measured on (the service's one clock; a manual one in tests).
    public let clock: Clock
    /// What the strategy did so far (the bench prints it).
    public private(set) var counters = DecodeCounters()
    /// Whether the last scan's codes were read by an attempt (`Attempt`), and whether it ran one.
    public private(set) var lastReadByAttempt = false
    public private(set) var lastRanAttempt = false

    /// The default extra budget: see docs/measurements/accuracy.md, for what it buys on the corpus.
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
    /// What the zxing pass cost on its last region, per pixel: its estimate for the next one.
    private var zxingNsPerPixel = 0.0
    /// What the module-grid read (`readRedrawn`) cost last time per pixel of its window.
    private var gridNsPerPixel = 0.0

    /// zbar's fourcc for 8-bit greyscale, from zbar.h.
    private static let y800: UInt = KIOSK_ZBAR_Y800

    /// `density`: zbar scans every `density`th row and column (`ZBAR_CFG_X_DENSITY`/`Y_DENSITY`);
    /// 1 is zbar's default and reads the smallest codes, 2 costs about half as much. `mount`: how
    /// the camera is mounted, so that zxing reads the region upright (zbar reads codes mirrored
    /// and turned as they come).
    public init(symbologies: [Symbology], extraPasses: [ExtraPass] = ExtraPass.kept,
                extraBudgetMs: Double = BarcodeScanner.defaultExtraBudgetMs, density: Int = 1,
                mount: Mount = Mount(), clock: Clock = MonotonicClock()) {
        self.clock = clock
        precondition(!symbologies.isEmpty && density >= 1)
        self.symbologies = symbologies
        zbarSymbologies = symbologies.filter { $0.zbarType != nil }
        zxing = ZXingReader(symbologies: symbologies, mount: mount)
        self.extraPasses = extraPasses
        self.extraBudgetMs = extraBudgetMs
        self.density = density
        scanner = BarcodeScanner.makeZbarScanner(zbarSymbologies, density: density)
        image = zbar_image_create()!
        zbar_image_set_format(image, BarcodeScanner.y800)
    }

    private let density: Int

    private static func makeZbarScanner(_ symbologies: [Symbology], density: Int) -> OpaquePointer {
        let scanner = zbar_image_scanner_create()!
        // Everything off, then exactly what was asked for: fewer decoders, less CPU, fewer false reads.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for s in symbologies {
            if let type = s.zbarType { zbar_image_scanner_set_config(scanner, type, ZBAR_CFG_ENABLE, 1) }
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
    /// is scanned: for planar luma zbar is handed a crop of the frame itself, without a copy, and
    /// zxing a view of it.
    public func scan(_ luma: LumaPlane, in region: PixelRect) -> [DecodedSymbol] {
        scan(luma, in: region, before: [], after: [])
    }

    /// A frame's scan with `attempt`: the frame of a presentation that did not read
    /// on an earlier frame. After plain zbar, when the region looks like a code, the attempt is
    /// tried first (the extra passes failed on that presentation already), then the extra
    /// passes with what the budget has left.
    public func scan(_ luma: LumaPlane, in region: PixelRect, attempt: Attempt?) -> [DecodedSymbol] {
        scan(luma, in: region, before: attempt.map { [$0] } ?? [], after: [])
    }

    /// A still's scan: there is no later frame, so every attempt of `attempts` is tried after the
    /// extra passes, within the budget.
    public func scan(_ luma: LumaPlane, in region: PixelRect, attempts: [Attempt]) -> [DecodedSymbol] {
        scan(luma, in: region, before: [], after: attempts)
    }

    private func scan(_ luma: LumaPlane, in region: PixelRect, before: [Attempt], after: [Attempt]) -> [DecodedSymbol] {
        let r = region.clamped(width: luma.width, height: luma.height)
        counters.regions += 1
        var agreement = beginScan()
        defer { endScan(agreement) }
        guard !r.isEmpty else { return [] }
        gatheredValid = false
        var plainNs: UInt64 = 0
        if !zbarSymbologies.isEmpty {
            let plainStart = clock.now()
            let plain = agreement.admit(readings(zbarSymbols(luma, in: r), luma: luma, region: r, scale: (1, 1), origin: (0, 0), within: r))
            plainNs = clock.now() - plainStart
            if !plain.isEmpty {
                counters.plainWins += 1
                return plain
            }
        }
        var passes = extraPasses.filter { $0 == .zxing ? zxing != nil : !zbarSymbologies.isEmpty }
        guard !passes.isEmpty else { return [] }
        if !gatheredValid { gather(luma, r) }
        let w = r.width, h = r.height
        let looks = gathered.withUnsafeBufferPointer { PassImage.looksLikeCode($0.baseAddress!, width: w, height: h) }
        if !looks {
            // Large modules (a code held close) get zxing only.
            let large = passes.contains(.zxing)
                && gathered.withUnsafeBufferPointer { PassImage.looksLikeLargeCode($0.baseAddress!, width: w, height: h) }
            guard large else {
                counters.skippedByStructureTest += 1
                return []
            }
            passes = [.zxing]
        }
        counters.extraRegions += 1
        // The budget is the passes' own: the copy and the structure test (microseconds for a
        // ROI, tens of milliseconds for a multi-megapixel still in a debug build) are not in it.
        let start = clock.now()
        let budgetNs = UInt64(max(0, extraBudgetMs) * 1e6)
        // The attempts are for codes of small modules, as the zbar passes are: not for a region
        // whose structure is coarse only.
        let attempting = looks && !zbarSymbologies.isEmpty
        // The budget is counted as spent once a scan, where the first pass or attempt is cut.
        var cut = false
        if attempting {
            for a in before {
                guard let found = attempt(a, region: r, agreement: &agreement, plainNs: plainNs, start: start, budgetNs: budgetNs) else {
                    cut = true
                    break
                }
                if !found.isEmpty { return found }
            }
        }
        var resampleWindow: PixelRect?
        for pass in passes {
            // A zbar pass costs about what plain zbar cost, times its picture's area; the zxing
            // pass what it cost last time per pixel. None is started that would not end within
            // the budget by that estimate.
            let estimateNs = pass == .zxing ? UInt64(zxingNsPerPixel * Double(w * h)) : plainNs * UInt64(pass.scale * pass.scale)
            if clock.now() - start + estimateNs > budgetNs {
                if !cut { counters.budgetExhausted += 1 }
                cut = true
                break
            }
            counters.runs[pass, default: 0] += 1
            let found: [DecodedSymbol]
            if pass == .zxing, let zxing {
                let t0 = clock.now()
                var codes = zxing.read(luma, in: r)
                // The pass's estimate is its whole-region read's cost; the retries below are
                // budgeted one by one from it.
                zxingNsPerPixel = Double(clock.now() - t0) / Double(max(1, w * h))
                if codes.isEmpty, zxing.readsCentred, let window = centredWindow(r) {
                    // zxing-cpp 1.4 looks for an Aztec code's bullseye near the middle of the
                    // picture: once more, on a square around the region's edges.
                    codes = zxing.readCentred(luma, in: window)
                    if codes.isEmpty { resampleWindow = window }
                }
                found = agreement.admit(codes.compactMap { zxingReading($0, within: r) })
            } else {
                found = run(pass, region: r, agreement: &agreement)
            }
            if !found.isEmpty {
                counters.wins[pass, default: 0] += 1
                return found
            }
        }
        // Last, with what the budget has left after the zbar passes: zxing-cpp 1.4 reads an Aztec
        // code at a slant, or of small modules, only redrawn from its module grid, or turned
        // square and enlarged.
        if let window = resampleWindow, let zxing, let slant = matrixSlant(window, region: r) {
            var codes: [ZXingReader.Code] = []
            // The grid's search and its drawing's read cost about what they cost last time per
            // window pixel; the turned reads what zxing costs per pixel.
            let gridCost = UInt64(gridNsPerPixel * Double(window.width * window.height))
            if clock.now() - start + gridCost <= budgetNs {
                let t0 = clock.now()
                codes = readRedrawn(zxing, window: window, region: r, slant: slant)
                gridNsPerPixel = Double(clock.now() - t0) / Double(window.width * window.height)
            } else {
                counters.budgetExhausted += 1
            }
            if codes.isEmpty {
                let degrees = refinedSlant(window, region: r, around: slant)
                for scale in [1, 2, 3] where codes.isEmpty {
                    let cost = UInt64(zxingNsPerPixel * Double(window.width * window.height * scale * scale))
                    if clock.now() - start + cost > budgetNs { counters.budgetExhausted += 1; break }
                    codes = readResampled(zxing, window: window, region: r, slant: degrees, scale: scale)
                }
            }
            let found = agreement.admit(codes.compactMap { zxingReading($0, within: r) })
            if !found.isEmpty {
                counters.wins[.zxing, default: 0] += 1
                return found
            }
        }
        if attempting && !cut {
            for a in after {
                guard let found = attempt(a, region: r, agreement: &agreement, plainNs: plainNs, start: start, budgetNs: budgetNs) else { break }
                if !found.isEmpty { return found }
            }
        }
        return []
    }

    /// What a scan (a decode or a glance) starts from: nothing read by an attempt yet, and an
    /// agreement that holds 1D readings back until a second frame confirms them.
    private func beginScan() -> ReadingAgreement {
        lastReadByAttempt = false
        lastRanAttempt = false
        unconfirmedNow.removeAll(keepingCapacity: true)
        return ReadingAgreement()
    }

    /// The end of a scan: the 1D readings it held back wait for the next one (a second frame).
    private func endScan(_ agreement: ReadingAgreement) {
        for held in agreement.unconfirmed where !unconfirmedNow.contains(where: { $0.0 == held.symbol.symbology && $0.1 == held.symbol.bytes }) {
            unconfirmedNow.append((held.symbol.symbology, held.symbol.bytes))
        }
        counters.contested += agreement.contested.count
        swap(&pending, &unconfirmedNow)
    }

    /// The safety net's glance at an ROI the gate judged flat (`DecodeGate`): zbar on
    /// the region at half its size each way (`PassImage.downscale2x`, the 2x2 area average), and
    /// nothing else: about a quarter of plain zbar's cost. A QR code of 3 px modules or more
    /// still reads there, and the average halves the sensor noise, so a code of too little
    /// contrast for the gate's edges reads too. A 1D code read there is held for confirmation
    /// (the half-size rows blend the region's). `lookAgain`: nothing was reported, but a 1D code
    /// was held back or the region has structure like a code's (`PassImage.looksLikeCode`): a
    /// full decode should follow (small modules, a code zbar does not read, one scan line).
    public func glance(_ luma: LumaPlane, in region: PixelRect) -> (symbols: [DecodedSymbol], lookAgain: Bool) {
        let r = region.clamped(width: luma.width, height: luma.height)
        counters.glances += 1
        var agreement = beginScan()
        defer { endScan(agreement) }
        guard r.width >= 32, r.height >= 32 else { return ([], false) }
        gather(luma, r)
        let w = r.width, h = r.height, ow = w / 2, oh = h / 2
        preparePassBuffer(count: w * h)
        gathered.withUnsafeBufferPointer { src in
            passBuffer.withUnsafeMutableBufferPointer { PassImage.downscale2x(src.baseAddress!, width: w, height: h, into: $0.baseAddress!) }
        }
        var found: [DecodedSymbol] = []
        if !zbarSymbologies.isEmpty {
            found = agreement.admit(zbarReadingsOfPassBuffer(width: ow, height: oh, scale: (1, 2), region: r))
        }
        if !found.isEmpty {
            counters.glanceReads += 1
            return (found, false)
        }
        // The structure test at full size: at half size the bars of a 2 px module are one pixel
        // wide, and its steps over two pixels see none of them.
        let looks = !agreement.unconfirmed.isEmpty
            || gathered.withUnsafeBufferPointer { PassImage.looksLikeCode($0.baseAddress!, width: w, height: h) }
        if looks { counters.glanceLookAgain += 1 }
        return ([], looks)
    }

    /// Decodes a whole still image: the extra passes, then every attempt (`Attempt.kept`; a still
    /// has no later frame to try them on), within the budget.
    public func scan(_ picture: GrayImage, in region: PixelRect? = nil, attempts: [Attempt] = Attempt.kept) -> [DecodedSymbol] {
        picture.withLumaPlane { luma in
            scan(luma, in: region ?? PixelRect(x: 0, y: 0, width: picture.width, height: picture.height), attempts: attempts)
        }
    }

    /// Forgets the 1D codes waiting for confirmation (a new, unrelated sequence of pictures).
    public func forgetPending() { pending.removeAll(keepingCapacity: true) }

    // MARK: - passes

    private func run(_ pass: ExtraPass, region r: PixelRect, agreement: inout ReadingAgreement) -> [DecodedSymbol] {
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

    /// zbar on the first `ow` x `oh` bytes of `passBuffer`, a picture made from region `r` at
    /// `scale` (its pixels : the region's), as readings in sensor pixels.
    private func zbarReadingsOfPassBuffer(width ow: Int, height oh: Int, scale: (Int, Int), region r: PixelRect) -> [Reading] {
        passBuffer.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(ow), UInt32(oh))
            zbar_image_set_crop(image, 0, 0, UInt32(ow), UInt32(oh))
            zbar_image_set_data(image, buf.baseAddress, UInt(ow * oh), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            let symbols = runScanner()
            let plane = LumaPlane(base: buf.baseAddress!, width: ow, height: oh, rowStride: ow)
            return readings(symbols, luma: plane, region: PixelRect(x: 0, y: 0, width: ow, height: oh),
                            scale: scale, origin: (r.x, r.y), within: r)
        }
    }

    // MARK: - attempts

    private var stretchLevels: [Int32] = []
    private var rowScratch: [UInt8] = []

    /// Runs attempt `a` on region `r` (`gathered` holds it) if the budget allows it (nil when it
    /// does not: counted as the budget spent). Returns what stands.
    private func attempt(_ a: Attempt, region r: PixelRect, agreement: inout ReadingAgreement,
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

    private func preparePassBuffer(count: Int) {
        if passBuffer.count < count { passBuffer = [UInt8](repeating: 0, count: count) }
    }

    /// The slant of `window`'s edges (a square of the region, sensor pixels; `TurnedWindow`)
    /// when they run along two axes: a matrix code, not a linear code's bars, which the zbar
    /// passes are for.
    private func matrixSlant(_ window: PixelRect, region r: PixelRect) -> Double? {
        gathered.withUnsafeBufferPointer { buf in
            let wx = window.x - r.x, wy = window.y - r.y
            guard let slant = TurnedWindow.slant(buf.baseAddress! + wy * r.width + wx, width: window.width, height: window.height, rowStride: r.width),
                  slant.agreement >= 0.1, slant.oneAxis < slant.agreement / 2 else { return nil }
            return slant.degrees
        }
    }

    /// `slant` refined to a tenth of a degree (`TurnedWindow.refined`), for the turned reads.
    private func refinedSlant(_ window: PixelRect, region r: PixelRect, around slant: Double) -> Double {
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
    private func readRedrawn(_ zxing: ZXingReader, window: PixelRect, region r: PixelRect, slant: Double) -> [ZXingReader.Code] {
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
    private func readResampled(_ zxing: ZXingReader, window: PixelRect, region r: PixelRect, slant: Double, scale: Int) -> [ZXingReader.Code] {
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
    private func relocated(_ codes: [ZXingReader.Code], region r: PixelRect, by back: (PixelPoint) -> PixelPoint) -> [ZXingReader.Code] {
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
    private func centredWindow(_ r: PixelRect) -> PixelRect? {
        let centre = gathered.withUnsafeBufferPointer { PassImage.edgeCentre($0.baseAddress!, width: r.width, height: r.height) }
        guard let centre else { return nil }
        let side = min(min(r.width, r.height), max(48, centre.spread * 3 / 2))
        let x = min(max(0, centre.x - side / 2), r.width - side), y = min(max(0, centre.y - side / 2), r.height - side)
        return PixelRect(x: r.x + x, y: r.y + y, width: side, height: side)
    }

    /// Whether `gathered` holds this scan's region.
    private var gatheredValid = false

    /// The region's luma into `gathered`, row after row.
    private func gather(_ luma: LumaPlane, _ r: PixelRect) {
        gatheredValid = true
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
    private func readings(_ symbols: [DecodedSymbol], luma: LumaPlane, region: PixelRect,
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
    private func zxingReading(_ code: ZXingReader.Code, within r: PixelRect) -> Reading? {
        let s = code.symbol
        guard CheckDigit.valid(s.bytes, symbology: s.symbology), r.encloses(s.location) else { return nil }
        var confirmed = true
        if s.symbology.isLinear && code.lineCount < ZXingReader.confirmingLines {
            confirmed = pending.contains(where: { $0.0 == s.symbology && $0.1 == s.bytes })
            if !confirmed { counters.unconfirmed1D += 1 }
        }
        return Reading(s, reader: .zxing, confirmed: confirmed)
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
