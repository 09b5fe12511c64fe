// SPDX-License-Identifier: Apache-2.0
import Camera
import CZbar
import Platform
import Policy

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
    public internal(set) var counters = DecodeCounters()
    /// Whether the last scan's codes were read by an attempt (`Attempt`), and whether it ran one.
    public internal(set) var lastReadByAttempt = false
    public internal(set) var lastRanAttempt = false

    /// The default extra budget: see docs/measurements/accuracy.md, for what it buys on the corpus.
    public static let defaultExtraBudgetMs = 60.0

    var scanner: OpaquePointer
    let image: OpaquePointer
    /// The region's luma, gathered when the frame's luma is not contiguous (YUYV) or when extra
    /// passes need a copy; kept between frames so that steady state allocates nothing.
    var gathered: [UInt8] = []
    var passBuffer: [UInt8] = []
    var secondBuffer: [UInt8] = []
    /// 1D codes zbar read on one scan line only in the previous scan: confirmed if read again now.
    var pending: [(Symbology, [UInt8])] = []
    private var unconfirmedNow: [(Symbology, [UInt8])] = []
    /// What the zxing pass cost on its last region, per pixel: its estimate for the next one.
    var zxingNsPerPixel = 0.0
    /// What the module-grid read (`readRedrawn`) cost last time per pixel of its window.
    private var gridNsPerPixel = 0.0
    /// zbar's density (`init`), for the fresh scanners (`runScanner`).
    let density: Int
    /// Whether `gathered` holds this scan's region.
    private var gatheredValid = false
    /// The attempts' reusable buffers (`Attempt.draw`).
    var stretchLevels: [Int32] = []
    var rowScratch: [UInt8] = []
    /// Whether the zbar scanner has scanned since it was made (`runScanner` gives every scan a
    /// fresh one).
    var dirty = false

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

    // MARK: - the region's buffers

    func preparePassBuffer(count: Int) {
        if passBuffer.count < count { passBuffer = [UInt8](repeating: 0, count: count) }
    }

    /// The region's luma into `gathered`, row after row.
    func gather(_ luma: LumaPlane, _ r: PixelRect) {
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
}
