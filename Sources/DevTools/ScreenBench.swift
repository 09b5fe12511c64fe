// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Foundation
import Kiosk
import Platform
import Policy
import Scene

/// `kiosk-dev screens [--json] [--frames N]`: what each attempt wins and costs on the
/// drawn phone screens (`ScreenScenes`): for each look and variant, `--frames` frames of its
/// presentation (held in a hand: each a little different) through the decoder as a frame with no
/// attempt (plain zbar and the extra passes), and with each attempt in turn; a fresh scanner each
/// time, the budget unbounded (what an attempt can win, not what a slow core leaves it). Its cost
/// is the scan's extra time with it on the frames it does not win (wall clock, median), and the
/// replay's: the frames each variant takes to be reported by the kiosk's frame loop, with the
/// attempts and without.
public enum ScreenBench {
    public struct Row: Codable {
        public var look: String
        public var frames: Int
        /// Frames read with no attempt, and with each attempt (by its name).
        public var plain: Int
        public var with: [String: Int]
        /// Variants the frame loop reports, with the kept attempts and with none.
        public var replayRead: Int
        public var replayReadWithout: Int
        public var variants: Int
        /// Median frames from the screen's first frame to its report (read variants only).
        public var replayFrames: Double
    }

    public static func main(_ args: [String]) -> Int32 {
        var json = false, frames = 3
        var dump: String?
        var needs = false
        var symbologies = Configuration().symbologies
        var looks = ScreenScenes.Look.allCases
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--json": json = true
            case "--frames":
                i += 1
                guard i < args.count, let n = Int(args[i]), n >= 1, n <= 20 else { return DevCommand.usageError("--frames takes 1-20") }
                frames = n
            case "--needs": needs = true
            case "--symbologies":
                i += 1
                guard let chosen = DevCommand.symbologies(args, at: i) else { return DevCommand.usageError("--symbologies takes a KIOSK_SYMBOLOGIES list") }
                symbologies = chosen
            case "--dump":
                i += 1
                guard i < args.count else { return DevCommand.usageError("--dump takes a folder") }
                dump = args[i]
            case "--looks":
                i += 1
                let wanted = i < args.count ? args[i].split(separator: ",").map(String.init) : []
                looks = ScreenScenes.Look.allCases.filter { wanted.contains($0.rawValue) }
                guard !looks.isEmpty, looks.count == wanted.count else { return DevCommand.usageError("--looks takes \(ScreenScenes.Look.allCases.map(\.rawValue).joined(separator: ","))") }
            default:
                return DevCommand.usageError("screens: unexpected \(args[i])")
            }
            i += 1
        }
        if needs { return neededAttempts(looks, symbologies: symbologies) }
        var rows: [Row] = []
        var extraNs: [Attempt: [UInt64]] = [:]
        var plainNs: [UInt64] = []
        // Per frame (all looks): read with no attempt, and the attempts that read it.
        var frameReads: [(plain: Bool, by: Set<Attempt>)] = []
        for look in looks {
            var row = Row(look: look.rawValue, frames: 0, plain: 0, with: [:], replayRead: 0, replayReadWithout: 0,
                          variants: ScreenScenes.variants(look), replayFrames: 0)
            var delays: [Int] = []
            for v in 0..<ScreenScenes.variants(look) {
                do {
                    let scene = try ScreenScenes.scene(look, variant: v, before: 0, hold: frames, after: 0)
                    _ = try scene.open()
                    while case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
                        row.frames += 1
                        let roi = PixelRect(x: 160, y: 120, width: 320, height: 240)
                        if let dump, row.frames % frames == 1 || frames == 1 {
                            var picture = GrayImage(width: roi.width, height: roi.height)
                            for y in 0..<roi.height { for x in 0..<roi.width { picture[x, y] = frame.luma[roi.x + x, roi.y + y] } }
                            try ImageFile.writePNG(picture, to: "\(dump)/\(look.rawValue)-\(v).png")
                            for a in Attempt.allCases {
                                try ImageFile.writePNG(a.picture(of: picture), to: "\(dump)/\(look.rawValue)-\(v)-\(a.rawValue).png")
                            }
                        }
                        let (plain, ns) = read(frame.luma, roi: roi, symbologies: symbologies, attempt: nil)
                        plainNs.append(ns)
                        if plain { row.plain += 1 }
                        var by = Set<Attempt>()
                        for a in Attempt.allCases {
                            let (ok, t) = read(frame.luma, roi: roi, symbologies: symbologies, attempt: a)
                            if ok { row.with[a.rawValue, default: 0] += 1; by.insert(a) } else { extraNs[a, default: []].append(t &- min(t, ns)) }
                        }
                        frameReads.append((plain, by))
                    }
                    if let d = try replay(look, variant: v, attempts: Attempt.kept, symbologies: symbologies) { row.replayRead += 1; delays.append(d) }
                    if try replay(look, variant: v, attempts: [], symbologies: symbologies) != nil { row.replayReadWithout += 1 }
                } catch {
                    DevCommand.printError("kiosk-dev screens: \(error)")
                    return ExitStatus.failure
                }
            }
            delays.sort()
            row.replayFrames = delays.isEmpty ? 0 : Double(delays[delays.count / 2])
            rows.append(row)
            if !json { FileHandle.standardError.write("screens: \(look.rawValue) done\n".data(using: .utf8)!) }
        }
        func median(_ v: [UInt64]) -> Double { v.isEmpty ? 0 : Double(v.sorted()[v.count / 2]) / 1e6 }
        if json {
            let data = try! JSONEncoder().encode(rows)
            print(String(decoding: data, as: UTF8.self))
            return ExitStatus.ok
        }
        let names = Attempt.allCases.map(\.rawValue)
        print("| look | frames | no attempt | " + names.map { "+\($0)" }.joined(separator: " | ") + " | replay: read (without attempts) | frames to the report |")
        print("|---|---|---|" + String(repeating: "---|", count: names.count) + "---|---|")
        for r in rows {
            print("| \(r.look) | \(r.frames) | \(r.plain) | " + names.map { "\(r.with[$0] ?? 0)" }.joined(separator: " | ")
                  + " | \(r.replayRead)/\(r.variants) (\(r.replayReadWithout)) | \(r.replayFrames) |")
        }
        print("")
        print("scan with no attempt: median \(String(format: "%.2f", median(plainNs))) ms; what each attempt adds where it reads nothing, median ms:")
        for a in Attempt.allCases { print("  \(a.rawValue): \(String(format: "%.2f", median(extraNs[a] ?? [])))") }
        // Greedy: the attempt that reads most of the frames still unread, per millisecond it costs.
        var unread = frameReads.filter { !$0.plain }
        var order: [String] = []
        var left = Set(Attempt.allCases)
        while !left.isEmpty {
            let gains = left.map { a in (a, unread.filter { $0.by.contains(a) }.count) }
            guard let best = gains.max(by: { Double($0.1) / max(0.05, median(extraNs[$0.0] ?? [])) < Double($1.1) / max(0.05, median(extraNs[$1.0] ?? [])) }),
                  best.1 > 0 else { break }
            order.append("\(best.0.rawValue) +\(best.1)")
            unread.removeAll { $0.by.contains(best.0) }
            left.remove(best.0)
        }
        print("frames no attempt reads: \(frameReads.filter { !$0.plain }.count) of \(frameReads.count); greedy by reads a millisecond: \(order.joined(separator: ", ")); unread after: \(unread.count); never the first to win: \(left.map(\.rawValue).sorted().joined(separator: ", "))")
        return ExitStatus.ok
    }

    /// `--needs`: each variant replayed with the kept attempts, without each of them, and with
    /// none, held in a hand and held still: the frame of the report, or "-" for none. What the
    /// screen tests are chosen from (a variant that one attempt alone makes read).
    static func neededAttempts(_ looks: [ScreenScenes.Look], symbologies: [Symbology]) -> Int32 {
        let lists: [(String, [Attempt])] = [("kept", Attempt.kept)] + Attempt.kept.map { a in ("-\(a.rawValue)", Attempt.kept.filter { $0 != a }) } + [("none", [])]
        print("| look | variant | hand | " + lists.map(\.0).joined(separator: " | ") + " |")
        print("|---|---|---|" + String(repeating: "---|", count: lists.count))
        for look in looks {
            for v in 0..<ScreenScenes.variants(look) {
                for tremor in [true, false] {
                    var cells: [String] = []
                    for (_, list) in lists {
                        let f = (try? replay(look, variant: v, attempts: list, symbologies: symbologies, tremor: tremor)) ?? nil
                        cells.append(f.map(String.init) ?? "-")
                    }
                    print("| \(look.rawValue) | \(v) | \(tremor ? "yes" : "still") | " + cells.joined(separator: " | ") + " |")
                }
            }
        }
        return ExitStatus.ok
    }

    /// Whether the frame reads the screens' payload, and the scan's wall-clock time.
    static func read(_ luma: LumaPlane, roi: PixelRect, symbologies: [Symbology], attempt: Attempt?) -> (Bool, UInt64) {
        let scanner = BarcodeScanner(symbologies: symbologies, extraBudgetMs: 10_000)
        let t0 = monotonicNanoseconds()
        let found = scanner.scan(luma, in: roi, attempt: attempt)
        let ns = monotonicNanoseconds() - t0
        return (found.contains { $0.text == ScreenScenes.payload }, ns)
    }

    /// The frames from the screen's first frame to its report through the kiosk's frame loop
    /// (`ScanService.process`, the default ROI, the frames' own clock), nil when never reported.
    static func replay(_ look: ScreenScenes.Look, variant: Int, attempts: [Attempt], symbologies: [Symbology], tremor: Bool = true) throws -> Int? {
        let before = 10
        let scene = try ScreenScenes.scene(look, variant: variant, before: before, hold: 24, after: 6, tremor: tremor)
        var config = Configuration()
        config.fps = 30
        config.symbologies = symbologies
        let clock = FrameClock()
        let service = ScanService(configuration: config, source: scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: clock, attempts: attempts)
        var first: Int?
        service.observe().onReport = { symbol, frame in
            if first == nil, symbol.text == ScreenScenes.payload { first = Int(frame.sequence) }
        }
        _ = try scene.open()
        while case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            clock.set(frame.timestampNs)
            service.process(frame)
        }
        service.decoding.finish { _, _ in }
        service.decoding.shutDown()
        return first.map { $0 - before }
    }
}
