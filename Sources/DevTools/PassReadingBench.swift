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
        var json = false, seeds = 3
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
                guard !forms.isEmpty, forms.count == wanted.count else { return DevCommand.usageError("--forms takes 1,2") }
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
                        for seed in 0..<seeds {
                            let payload = PassScreens.payload(form, seed: seed * 7919 + Int(m * 100))
                            do {
                                let (code, version) = try PassScreens.modules(payload)
                                cell.version = version
                                let side = Int((Double(code.width - 8) * m).rounded())
                                cell.symbolPixels = side
                                cell.fitsROI = side + 2 <= roi.width && side + 2 <= roi.height
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
            print("\(first.size), form \(first.form) (QR version \(first.version), level L, \(first.form == 2 ? 86 : 284) bytes): presentations read of \(seeds) (median frames to the report)")
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
        let service = ScanService(configuration: configuration, source: scene, door: nil, logger: Logger(level: .error) { _ in },
                                  stop: StopSignal(), clock: clock)
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
