// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Foundation
import Kiosk
import Platform
import Policy
import Scene

/// `kiosk-dev passes`: how small a phone pass (`KH1:`) the kiosk reads, for the reading
/// distance (docs/measurements/passes.md). For each resolution, form (form 2: 86 bytes, form 1:
/// 284), screen look and module size at the sensor, `--seeds` presentations (each its own random
/// payload and a turn of 0, 3 or -5 degrees) are replayed through the kiosk's frame loop
/// (`ScanService.process`, the kiosk's configuration at that size, the ROI of `--roi` or the
/// default, the kept attempts, the frames' own clock, every decode waited for): read when a
/// report's bytes are exactly the payload's, a misread when a report is anything else. Also the
/// median wall-clock time of a frame the code is on.
public enum PassReadingBench {
    public struct Cell: Codable {
        public var size: String
        public var form: Int
        public var version: Int
        public var look: String
        public var moduleSize: Double
        /// The symbol's side (no quiet zone) in sensor pixels, and whether it lies inside the ROI.
        public var symbolPixels: Int
        public var fitsROI: Bool
        public var presented: Int
        public var read: Int
        public var misread: Int
        /// Median frames from the phone's first frame to the report, over the read presentations.
        public var framesToReport: Double
        /// Of the first presentation's first 8 frames, those one decode reads alone (the scanner
        /// with no attempt, exact bytes), and its median wall-clock milliseconds.
        public var framesRead: Int
        public var frameMs: Double
    }

    public static func main(_ args: [String]) -> Int32 {
        var json = false, stages = false, seeds = 3
        var sizes: [(Int, Int)] = [(640, 480), (1280, 720)]
        var moduleSizes: [Double] = [1.5, 2, 2.5, 3, 3.5, 4, 5]
        var looks = PassScreens.Look.allCases
        var forms: [PassScreens.Form] = [.holder, .selfContained]
        var roiText: String?
        var i = 0
        func value() -> String? { i += 1; return i < args.count ? args[i] : nil }
        while i < args.count {
            switch args[i] {
            case "--json": json = true
            case "--stages": stages = true
            case "--seeds":
                guard let n = value().flatMap({ Int($0) }), n >= 1, n <= 12 else { return DevCommand.usageError("--seeds takes 1-12") }
                seeds = n
            case "--sizes":
                let parsed = (value() ?? "").split(separator: ",").map { part -> (Int, Int)? in
                    let wh = part.split(separator: "x").compactMap { Int($0) }
                    return wh.count == 2 && wh[0] >= 160 && wh[1] >= 120 && wh[0] <= 4096 && wh[1] <= 4096 ? (wh[0], wh[1]) : nil
                }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil }) else { return DevCommand.usageError("--sizes takes WxH,WxH") }
                sizes = parsed.map { $0! }
            case "--modules":
                let parsed = (value() ?? "").split(separator: ",").map { Double($0) }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil && $0! >= 1 && $0! <= 12 }) else {
                    return DevCommand.usageError("--modules takes module sizes in pixels, 1-12, comma-separated")
                }
                moduleSizes = parsed.map { $0! }
            case "--looks":
                let wanted = (value() ?? "").split(separator: ",").map(String.init)
                looks = PassScreens.Look.allCases.filter { wanted.contains($0.rawValue) }
                guard !looks.isEmpty, looks.count == wanted.count else {
                    return DevCommand.usageError("--looks takes \(PassScreens.Look.allCases.map(\.rawValue).joined(separator: ","))")
                }
            case "--forms":
                let wanted = (value() ?? "").split(separator: ",").map(String.init)
                forms = PassScreens.Form.allCases.filter { wanted.contains(String($0.rawValue)) }.sorted { $0.rawValue > $1.rawValue }
                guard !forms.isEmpty, forms.count == wanted.count else { return DevCommand.usageError("--forms takes 1,2,3 (3: a setup code)") }
            case "--roi":
                guard let text = value(), Configuration.read(environment: ["KIOSK_ROI": text]).errors.isEmpty else {
                    return DevCommand.usageError("--roi takes a KIOSK_ROI value")
                }
                roiText = text
            default:
                return DevCommand.usageError("passes: unexpected \(args[i])")
            }
            i += 1
        }
        var cells: [Cell] = []
        for (width, height) in sizes {
            var environment = ["KIOSK_SIZE": "\(width)x\(height)"]
            if let roiText { environment["KIOSK_ROI"] = roiText }
            let reading = Configuration.read(environment: environment)
            guard reading.errors.isEmpty else {
                DevCommand.printError("kiosk-dev passes: \(width)x\(height): \(reading.errors)")
                return ExitStatus.usage
            }
            var config = reading.configuration
            config.fps = 30
            let roi = config.mount.sensorROI(fromUpright: config.uprightROI, sensorWidth: width, sensorHeight: height, view: .whole)
            for form in forms {
                for look in looks {
                    for m in moduleSizes {
                        var cell = Cell(size: "\(width)x\(height)", form: form.rawValue, version: 0, look: look.rawValue, moduleSize: m,
                                        symbolPixels: 0, fitsROI: false, presented: 0, read: 0, misread: 0, framesToReport: 0,
                                        framesRead: 0, frameMs: 0)
                        var delays: [Int] = []
                        var tally = StageReads()
                        for seed in 0..<seeds {
                            let payload = PassScreens.payload(form, seed: seed * 7919 + Int(m * 100))
                            do {
                                let (code, version) = try PassScreens.modules(payload)
                                cell.version = version
                                let side = Int((Double(code.width - 8) * m).rounded())
                                cell.symbolPixels = side
                                cell.fitsROI = side + 2 <= roi.width && side + 2 <= roi.height
                                if stages {
                                    let scene = try PassScreens.scene(look, bytes: payload, moduleSize: m, variant: seed, width: width, height: height)
                                    tally.add(stageReads(scene, payload: payload, roi: roi, symbologies: config.symbologies))
                                    continue
                                }
                                let scene = try PassScreens.scene(look, bytes: payload, moduleSize: m, variant: seed, width: width, height: height)
                                let (first, wrong) = replay(scene, payload: payload, configuration: config)
                                cell.presented += 1
                                if let first { cell.read += 1; delays.append(first) }
                                cell.misread += wrong
                                if seed == 0 {
                                    let again = try PassScreens.scene(look, bytes: payload, moduleSize: m, variant: seed, width: width, height: height)
                                    (cell.framesRead, cell.frameMs) = frames(again, payload: payload, roi: roi, symbologies: config.symbologies)
                                }
                            } catch {
                                DevCommand.printError("kiosk-dev passes: \(error)")
                                return ExitStatus.failure
                            }
                        }
                        if stages {
                            print("\(cell.size) ROI \(roi.width)x\(roi.height), form \(form.rawValue), \(look.rawValue), \(m) px: \(tally)")
                            continue
                        }
                        delays.sort()
                        cell.framesToReport = delays.isEmpty ? 0 : Double(delays[delays.count / 2])
                        cells.append(cell)
                        if !json {
                            FileHandle.standardError.write("passes: \(cell.size) form \(form.rawValue) \(look.rawValue) \(m) px: \(cell.read)/\(cell.presented)\n".data(using: .utf8)!)
                        }
                    }
                }
            }
        }
        if json {
            let data = try! JSONEncoder().encode(cells)
            print(String(decoding: data, as: UTF8.self))
            return ExitStatus.ok
        }
        printTables(cells, moduleSizes: moduleSizes, seeds: seeds)
        return cells.contains { $0.misread > 0 } ? ExitStatus.failure : ExitStatus.ok
    }

    /// One table per resolution and form: a row a look, a column a module size, a cell the
    /// presentations read (and the median frames to the report); `roi` where the symbol does
    /// not lie inside the ROI, `!` after a cell with a misread.
    static func printTables(_ cells: [Cell], moduleSizes: [Double], seeds: Int) {
        var seen: [String] = []
        for c in cells where !seen.contains("\(c.size) \(c.form)") { seen.append("\(c.size) \(c.form)") }
        func px(_ m: Double) -> String { m == m.rounded() ? String(Int(m)) : String(m) }
        for key in seen {
            let group = cells.filter { "\($0.size) \($0.form)" == key }
            guard let first = group.first else { continue }
            print("\(first.size), form \(first.form) (QR version \(first.version), level L, \(PassScreens.Form(rawValue: first.form)?.bytes ?? 0) bytes): presentations read of \(seeds) (median frames to the report)")
            print("")
            print("| look | " + moduleSizes.map { "\(px($0)) px" }.joined(separator: " | ") + " |")
            print("|---|" + String(repeating: "---|", count: moduleSizes.count))
            var lookOrder: [String] = []
            for c in group where !lookOrder.contains(c.look) { lookOrder.append(c.look) }
            for look in lookOrder {
                let row = moduleSizes.map { m -> String in
                    guard let c = group.first(where: { $0.look == look && $0.moduleSize == m }) else { return "" }
                    var text = "\(c.read)" + (c.read > 0 ? " (\(px(c.framesToReport)))" : "")
                    if !c.fitsROI { text += " roi" }
                    if c.misread > 0 { text += " !\(c.misread)" }
                    return text
                }
                print("| \(look) | " + row.joined(separator: " | ") + " |")
            }
            let sides = moduleSizes.compactMap { m in group.first { $0.moduleSize == m }.map { "\(px(m)) px: \($0.symbolPixels)" } }
            let ms = group.map(\.frameMs).sorted()
            print("")
            print("symbol side in pixels: \(sides.joined(separator: ", "))")
            print("one decode alone (no attempt), of 8 frames of the first presentation, read: "
                  + moduleSizes.map { m in "\(px(m)) px \(group.filter { $0.moduleSize == m }.map { String($0.framesRead) }.joined(separator: "/"))" }.joined(separator: ", ")
                  + " (looks in the table's order); a decode's median \(String(format: "%.1f", ms[ms.count / 2])) ms (the cells' medians: \(String(format: "%.1f", ms.first ?? 0))-\(String(format: "%.1f", ms.last ?? 0)))")
            print("")
        }
    }

    /// `--stages` (docs/measurements/passes.md, "Why a larger ROI reads small modules less"): what
    /// reads the first 8 frames showing the code of each presentation, each frame decoded alone
    /// by fresh scanners with an unbounded budget (as on the bench's frame clock, where no pass is
    /// cut for time): the stage of the decode that read it with no attempt (plain zbar, then the
    /// extra passes in order), each kept attempt tried first; then plain zbar alone on the frame
    /// cropped to the ROI (as the kiosk hands it: zbar_image_set_crop), on a copy of the ROI, on
    /// the ROI's middle 320x240 (640x480's ROI in pixels) and on that middle centred on a canvas
    /// of the ROI's size filled with its mean (the same pixels around the code in a larger
    /// picture); zxing on the ROI, the middle and the middle on the ROI's size.
    struct StageReads: CustomStringConvertible {
        var frames = 0
        var firstReader: [String: Int] = [:]
        var attempts: [Attempt: Int] = [:]
        var plainRegion = 0, plainCopy = 0, plainCrop = 0, plainPadded = 0
        var zxingRegion = 0, zxingCrop = 0, zxingPadded = 0

        mutating func add(_ o: StageReads) {
            frames += o.frames
            firstReader.merge(o.firstReader, uniquingKeysWith: +)
            attempts.merge(o.attempts, uniquingKeysWith: +)
            plainRegion += o.plainRegion
            plainCopy += o.plainCopy
            plainCrop += o.plainCrop
            plainPadded += o.plainPadded
            zxingRegion += o.zxingRegion
            zxingCrop += o.zxingCrop
            zxingPadded += o.zxingPadded
        }

        var description: String {
            // In parts: Swift 6.0.3 (the trixie tier's) gave up type-checking it as one expression.
            let order: [String] = ["plain"] + ExtraPass.kept.map(\.rawValue) + ["none"]
            let decode: String = order.map { "\($0) \(firstReader[$0] ?? 0)" }.joined(separator: ", ")
            let attempted: String = Attempt.kept.map { "\($0.rawValue) \(attempts[$0] ?? 0)" }.joined(separator: ", ")
            let zbar = "plain zbar on the frame cropped to the ROI \(plainRegion), on a copy of the ROI \(plainCopy), "
                + "its middle 320x240 \(plainCrop), that on the ROI's size \(plainPadded)"
            let zxing = "zxing on the ROI \(zxingRegion), the middle \(zxingCrop), that on the ROI's size \(zxingPadded)"
            return "\(frames) frames; the decode read first by \(decode); an attempt first: \(attempted); \(zbar); \(zxing)"
        }
    }

    static func stageReads(_ scene: ScriptedScene, payload: [UInt8], roi: PixelRect, symbologies: [Symbology], before: Int = 10, count: Int = 8) -> StageReads {
        var out = StageReads()
        _ = try? scene.open()
        let cw = min(320, roi.width), ch = min(240, roi.height)
        while out.frames < count, case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            guard Int(frame.sequence) >= before else { continue }
            out.frames += 1
            func reads(_ found: [DecodedSymbol]) -> Bool { found.contains { $0.bytes == payload } }
            let whole = BarcodeScanner(symbologies: symbologies, extraBudgetMs: 10_000)
            let read = reads(whole.scan(frame.luma, in: roi, attempt: nil))
            let c = whole.counters
            let first = !read ? "none" : c.plainWins > 0 ? "plain" : ExtraPass.kept.first { (c.wins[$0] ?? 0) > 0 }?.rawValue ?? "none"
            out.firstReader[first, default: 0] += 1
            for a in Attempt.kept {
                let scanner = BarcodeScanner(symbologies: symbologies, extraBudgetMs: 10_000)
                _ = scanner.scan(frame.luma, in: roi, attempt: a)
                if (scanner.counters.attemptWins[a] ?? 0) > 0 { out.attempts[a, default: 0] += 1 }
            }
            // Plain zbar only (no extra pass): the ROI, its middle, the middle in a larger picture.
            let plain = BarcodeScanner(symbologies: symbologies, extraPasses: [], extraBudgetMs: 10_000)
            if reads(plain.scan(frame.luma, in: roi, attempt: nil)) { out.plainRegion += 1 }
            let l = frame.luma
            var copy = GrayImage(width: roi.width, height: roi.height)
            for y in 0..<roi.height {
                for x in 0..<roi.width { copy.pixels[y * roi.width + x] = l.base[(roi.y + y) * l.rowStride + (roi.x + x) * l.pixelStride] }
            }
            if reads(plain.scan(copy, attempts: [])) { out.plainCopy += 1 }
            let x0 = roi.x + (roi.width - cw) / 2, y0 = roi.y + (roi.height - ch) / 2
            var crop = [UInt8](repeating: 0, count: cw * ch)
            for y in 0..<ch {
                for x in 0..<cw { crop[y * cw + x] = l.base[(y0 + y) * l.rowStride + (x0 + x) * l.pixelStride] }
            }
            if reads(plain.scan(GrayImage(width: cw, height: ch, pixels: crop), attempts: [])) { out.plainCrop += 1 }
            let mean = UInt8(crop.reduce(0) { $0 + Int($1) } / crop.count)
            var padded = GrayImage(width: roi.width, height: roi.height, fill: mean)
            let px = (roi.width - cw) / 2, py = (roi.height - ch) / 2
            for y in 0..<ch { padded.pixels.replaceSubrange(((py + y) * roi.width + px)..<((py + y) * roi.width + px + cw), with: crop[(y * cw)..<(y * cw + cw)]) }
            if reads(plain.scan(padded, attempts: [])) { out.plainPadded += 1 }
            if let zxing = ZXingReader(symbologies: symbologies) {
                func zx(_ luma: LumaPlane, _ r: PixelRect) -> Bool { zxing.read(luma, in: r).contains { $0.symbol.bytes == payload } }
                if zx(l, roi) { out.zxingRegion += 1 }
                if GrayImage(width: cw, height: ch, pixels: crop).withLumaPlane({ zx($0, PixelRect(x: 0, y: 0, width: cw, height: ch)) }) { out.zxingCrop += 1 }
                if padded.withLumaPlane({ zx($0, PixelRect(x: 0, y: 0, width: roi.width, height: roi.height)) }) { out.zxingPadded += 1 }
            }
        }
        return out
    }

    /// The first `count` frames showing the code, each decoded alone by a fresh scanner with no
    /// attempt (the budget unbounded): how many read exactly `payload`, and the median time.
    static func frames(_ scene: ScriptedScene, payload: [UInt8], roi: PixelRect, symbologies: [Symbology], before: Int = 10, count: Int = 8) -> (Int, Double) {
        var read = 0
        var ns: [UInt64] = []
        _ = try? scene.open()
        while ns.count < count, case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            guard Int(frame.sequence) >= before else { continue }
            let scanner = BarcodeScanner(symbologies: symbologies, extraBudgetMs: 10_000)
            let t0 = monotonicNanoseconds()
            let found = scanner.scan(frame.luma, in: roi, attempt: nil)
            ns.append(monotonicNanoseconds() - t0)
            if found.contains(where: { $0.bytes == payload }) { read += 1 }
        }
        ns.sort()
        return (read, ns.isEmpty ? 0 : Double(ns[ns.count / 2]) / 1e6)
    }

    /// The scene through the kiosk's frame loop: the frame (counted from the phone's first) of the
    /// first report of exactly `payload`, and the QR reports of anything else. Stops once read.
    static func replay(_ scene: ScriptedScene, payload: [UInt8], configuration: Configuration, before: Int = 10) -> (Int?, Int) {
        let clock = FrameClock()
        let service = ScanService(configuration: configuration, source: scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: clock)
        var first: Int?
        var wrong = 0
        service.observe().onReport = { symbol, frame in
            if symbol.bytes == payload {
                if first == nil { first = Int(frame.sequence) - before }
            } else if symbol.symbology == .qrcode {
                wrong += 1
            }
        }
        _ = try? scene.open()
        while first == nil, case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            clock.set(frame.timestampNs)
            service.process(frame)
        }
        service.decoding.finish { _, _ in }
        service.decoding.shutDown()
        return (first, wrong)
    }
}
