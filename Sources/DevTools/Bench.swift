// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Foundation
import Kiosk
import Glibc
import Platform
import Policy
import Scene

/// `kiosk-dev bench`: the kiosk's frame loop against the naive baseline (zbar on every full frame,
/// as zbarcam does), on the generated workloads of `BenchWorkload`, in one run.
///
/// Each frame is rendered by the scene (not counted), then given to the baseline's scanner and
/// to the real `ScanService.process` (brightness, torch policy, gate, ROI copy, zbar on the
/// worker, repeat filter, log). The worker is waited for on every frame (`waitNs` nil), so the
/// end-to-end figures are single-threaded in effect and every decode is counted on its frame.
/// CPU is getrusage(RUSAGE_SELF) user + system around the two paths; the stage figures are wall
/// clock. The stage breakdown (brightness is timed again, outside the CPU accounting).
public enum Bench {
    public struct Side: Codable {
        /// Per frame, microseconds of wall clock.
        public var copyUs = 0.0
        public var brightnessUs = 0.0
        public var gateUs = 0.0
        public var decodeUs = 0.0
        public var totalUs = 0.0
        /// Per frame, milliseconds of CPU (getrusage, user + system, all threads).
        public var cpuMs = 0.0
        public var fps = 0.0
        public var longestFrameMs = 0.0
    }

    public struct Code: Codable {
        public var payload: String
        public var symbology: String
        /// The frame the code is first fully in view (near) and the frames each side reports it on.
        public var shownFrame: Int
        public var kioskFrame: Int?
        public var baselineFrame: Int?
        /// kioskFrame - baselineFrame, when both read it.
        public var lag: Int?
    }

    public struct Result: Codable {
        public var workload: String
        public var width: Int
        public var height: Int
        public var roi: String
        public var frames: Int
        public var density: Int
        public var kiosk: Side
        public var baseline: Side
        /// kiosk CPU / baseline CPU.
        public var cpuRatio: Double
        /// One pass over the ROI's bytes (the kiosk's floor) and over the frame (the baseline's), µs.
        public var floorROIUs: Double
        public var floorFrameUs: Double
        /// The gate's decisions over the run, by reason.
        public var gate: [String: Int]
        public var decodes: Int
        public var codes: [Code]
        /// getrusage's ru_maxrss after the workload (the whole bench process), and /proc RSS now.
        public var peakRSSMB: Double
        public var rssMB: Double
        /// Resident bytes at the end minus after the first 30 frames (growth of a steady state).
        public var rssGrowthBytes: Int
        /// Frame interval at the camera's rate, for comparison with longestFrameMs.
        public var frameIntervalMs: Double
    }

    // MARK: - command line

    public static func main(_ args: [String]) -> Int32 {
        var json = false, quick = false
        var density = DecodePipeline.defaultDensity
        var sizes = [(640, 480), (1280, 720)]
        var kinds = BenchWorkload.Kind.allCases
        var symbologies = Configuration().symbologies
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--json": json = true
            case "--quick": quick = true
            case "--density":
                i += 1
                guard i < args.count, let d = Int(args[i]), (1...8).contains(d) else { return usage("--density takes 1-8") }
                density = d
            case "--symbologies":
                i += 1
                guard let chosen = DevCommand.symbologies(args, at: i) else { return usage("--symbologies takes a KIOSK_SYMBOLOGIES list") }
                symbologies = chosen
            case "--size":
                i += 1
                let parts = i < args.count ? args[i].split(separator: "x").compactMap { Int($0) } : []
                guard parts.count == 2, parts[0] >= 64, parts[1] >= 64 else { return usage("--size takes WxH") }
                sizes = [(parts[0], parts[1])]
            case "--workload":
                i += 1
                let wanted = i < args.count ? args[i].split(separator: ",").map(String.init) : []
                let chosen = BenchWorkload.Kind.allCases.filter { wanted.contains($0.rawValue) || wanted.contains($0.letter) }
                guard !chosen.isEmpty, chosen.count == wanted.count else { return usage("--workload takes empty,motion,presentations,low-light (or a,b,c,d)") }
                kinds = chosen
            default:
                return usage("unknown bench option '\(args[i])'")
            }
            i += 1
        }
        if quick { sizes = [sizes[0]] }
        var results: [Result] = []
        for (w, h) in sizes {
            for kind in kinds {
                do {
                    let workload = try BenchWorkload(kind, width: w, height: h)
                    results.append(run(workload, density: density, symbologies: symbologies))
                    if !json { FileHandle.standardError.write("bench: \(kind.rawValue) \(w)x\(h) done\n".data(using: .utf8)!) }
                } catch {
                    DevCommand.printError("kiosk-dev bench: \(error)")
                    return ExitStatus.failure
                }
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try! encoder.encode(results), as: UTF8.self))
        } else {
            print(table(results))
        }
        return ExitStatus.ok
    }

    static func usage(_ message: String) -> Int32 {
        DevCommand.printError("kiosk-dev bench: \(message)\nUsage: kiosk-dev bench [--json] [--quick] [--density N] [--size WxH] [--workload a,b,c,d] [--symbologies LIST]")
        return ExitStatus.usage
    }

    // MARK: - one workload

    public static func run(_ workload: BenchWorkload, density: Int = DecodePipeline.defaultDensity,
                           symbologies: [Symbology] = Configuration().symbologies) -> Result {
        let scene = workload.scene
        var config = Configuration()
        config.symbologies = symbologies
        config.uprightROI = BenchWorkload.roi
        config.fps = workload.fps
        let service = ScanService(configuration: config, source: scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: MonotonicClock(), decodeDensity: density)
        // The baseline is zbar as zbarcam runs it: zbar's symbologies only, no zxing.
        let baseline = BarcodeScanner(symbologies: config.symbologies.filter { $0.zbarType != nil },
                                      extraPasses: ExtraPass.kept.filter { $0 != .zxing }, density: 1)
        let estimator = BrightnessEstimator()
        var kioskFirst: [String: Int] = [:], baselineFirst: [String: Int] = [:]
        service.observe().onReport = { symbol, frame in
            let key = symbol.text ?? ""
            if kioskFirst[key] == nil { kioskFirst[key] = Int(frame.sequence) }
        }
        var kiosk = Side(), base = Side()
        var kioskCPU = 0.0, baseCPU = 0.0, brightnessNs: UInt64 = 0, kioskNs: UInt64 = 0, baseNs: UInt64 = 0
        var floorROI = Double.infinity, floorFrame = Double.infinity
        var heapAfterWarmup = 0
        var roiText = ""
        _ = try? scene.open()
        var n = 0
        while case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            let full = PixelRect(x: 0, y: 0, width: frame.luma.width, height: frame.luma.height)
            let roi = service.sensorROI(width: frame.luma.width, height: frame.luma.height)
            roiText = roi.description
            if n < 20 {
                floorROI = min(floorROI, onePass(frame.luma, roi))
                floorFrame = min(floorFrame, onePass(frame.luma, full))
            }
            // The baseline: zbar on the whole frame, every frame.
            var c0 = cpuSeconds(), t0 = monotonicNanoseconds()
            let seen = baseline.scan(frame.luma, in: full)
            var t1 = monotonicNanoseconds(), c1 = cpuSeconds()
            baseCPU += c1 - c0
            baseNs += t1 - t0
            base.longestFrameMs = max(base.longestFrameMs, Double(t1 - t0) / 1e6)
            for s in seen where baselineFirst[s.text ?? ""] == nil { baselineFirst[s.text ?? ""] = n }
            // The kiosk: the real frame loop's work for this frame.
            c0 = cpuSeconds(); t0 = monotonicNanoseconds()
            service.process(frame)
            t1 = monotonicNanoseconds(); c1 = cpuSeconds()
            kioskCPU += c1 - c0
            kioskNs += t1 - t0
            kiosk.longestFrameMs = max(kiosk.longestFrameMs, Double(t1 - t0) / 1e6)
            // The brightness stage alone, timed outside the accounting above.
            let b0 = monotonicNanoseconds()
            _ = estimator.meanLuma(frame.luma)
            brightnessNs += monotonicNanoseconds() - b0
            n += 1
            if n == 30 { heapAfterWarmup = heapInUse() }
        }
        let heapGrowth = heapInUse() - heapAfterWarmup
        let frames = Double(max(1, n))
        let stats = service.decoding.stats
        kiosk.copyUs = Double(stats.copyNs) / 1e3 / frames
        kiosk.gateUs = Double(stats.gateNs) / 1e3 / frames
        kiosk.decodeUs = Double(stats.decodeNs) / 1e3 / frames
        kiosk.brightnessUs = Double(brightnessNs) / 1e3 / frames
        kiosk.totalUs = Double(kioskNs) / 1e3 / frames
        kiosk.cpuMs = kioskCPU * 1e3 / frames
        kiosk.fps = 1e9 / max(1, Double(kioskNs) / frames)
        base.decodeUs = Double(baseNs) / 1e3 / frames
        base.totalUs = base.decodeUs
        base.cpuMs = baseCPU * 1e3 / frames
        base.fps = 1e9 / max(1, Double(baseNs) / frames)
        let codes = workload.presentations.map { p -> Code in
            let k = kioskFirst[p.payload], b = baselineFirst[p.payload]
            return Code(payload: p.payload, symbology: p.symbology.rawValue, shownFrame: p.firstFrame + 2,
                        kioskFrame: k, baselineFrame: b, lag: k.flatMap { k in b.map { k - $0 } })
        }
        var gate: [String: Int] = [:]
        for (reason, count) in stats.reasons { gate[reason.rawValue] = count }
        return Result(workload: "\(workload.kind.letter) \(workload.kind.rawValue)", width: workload.width, height: workload.height,
                      roi: roiText, frames: n, density: density, kiosk: kiosk, baseline: base,
                      cpuRatio: base.cpuMs > 0 ? kiosk.cpuMs / base.cpuMs : 0,
                      floorROIUs: floorROI * 1e6, floorFrameUs: floorFrame * 1e6, gate: gate, decodes: stats.decodes,
                      codes: codes, peakRSSMB: peakRSSMB(), rssMB: currentRSSMB(), rssGrowthBytes: heapGrowth,
                      frameIntervalMs: 1e3 / workload.fps)
    }

    // MARK: - measuring

    /// Seconds of CPU (user + system) the process has used, all threads.
    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }

    static func peakRSSMB() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_maxrss) / 1024
    }

    static func currentRSSMB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// Resident bytes now (a stand-in for the heap: Glibc's module does not offer mallinfo2).
    static func heapInUse() -> Int {
        Int(currentRSSMB() * 1_048_576)
    }

    /// The memory-bandwidth floor: one read of every byte of `r` (best of 5), in seconds.
    static func onePass(_ luma: LumaPlane, _ r: PixelRect) -> Double {
        var best = Double.infinity
        var sink: UInt64 = 0
        for _ in 0..<5 {
            let t0 = monotonicNanoseconds()
            var sum: UInt64 = 0
            for y in r.y..<(r.y + r.height) {
                let row = UnsafeBufferPointer(start: luma.base + y * luma.rowStride + r.x * luma.pixelStride, count: r.width * luma.pixelStride)
                var s: UInt32 = 0
                for v in row { s &+= UInt32(v) }
                sum &+= UInt64(s)
            }
            sink &+= sum
            best = min(best, Double(monotonicNanoseconds() - t0) / 1e9)
        }
        if sink == 1 { print("", terminator: "") }  // keep the sum alive
        return best
    }

    // MARK: - the table

    static func table(_ results: [Result]) -> String {
        func f(_ v: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", v) }
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        func left(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        var out = "kiosk-dev bench (\(results.first.map { "zbar density \($0.density)" } ?? "")); per frame: stages in µs of wall clock, CPU in ms (getrusage); floor = one pass over the bytes\n\n"
        let head = [left("workload", 18), pad("size", 9), pad("frames", 6), pad("copy", 6), pad("bright", 6), pad("gate", 6),
                    pad("decode", 8), pad("floor", 6), pad("cpu ms", 8), pad("fps", 7), pad("base dec", 9), pad("floor", 6),
                    pad("base cpu", 9), pad("base fps", 8), pad("ratio", 7), pad("decodes", 8), pad("RSS MB", 7)]
        out += head.joined(separator: " ") + "\n"
        for r in results {
            let row = [left(r.workload, 18), pad("\(r.width)x\(r.height)", 9), pad("\(r.frames)", 6), pad(f(r.kiosk.copyUs), 6),
                       pad(f(r.kiosk.brightnessUs), 6), pad(f(r.kiosk.gateUs), 6), pad(f(r.kiosk.decodeUs), 8), pad(f(r.floorROIUs), 6),
                       pad(f(r.kiosk.cpuMs, 3), 8), pad(f(r.kiosk.fps, 0), 7), pad(f(r.baseline.decodeUs, 0), 9), pad(f(r.floorFrameUs), 6),
                       pad(f(r.baseline.cpuMs, 2), 9), pad(f(r.baseline.fps, 0), 8), pad(f(100 * r.cpuRatio, 1) + "%", 7),
                       pad("\(r.decodes)", 8), pad(f(r.peakRSSMB), 7)]
            out += row.joined(separator: " ") + "\n"
        }
        out += "\ngate decisions, longest frame, RSS growth after the first 30 frames:\n"
        for r in results {
            let gate = DecodeGate.Reason.allCases.compactMap { reason in r.gate[reason.rawValue].map { "\(reason.rawValue)=\($0)" } }.joined(separator: " ")
            out += "  \(left(r.workload, 18)) \(pad("\(r.width)x\(r.height)", 9))  \(gate); longest kiosk frame \(f(r.kiosk.longestFrameMs)) ms, baseline \(f(r.baseline.longestFrameMs)) ms (interval \(f(r.frameIntervalMs)) ms); RSS +\(r.rssGrowthBytes / 1024) kB\n"
        }
        let withCodes = results.filter { !$0.codes.isEmpty }
        if !withCodes.isEmpty {
            out += "\nfirst report (frame index): kiosk against baseline; lag = kiosk - baseline\n"
            for r in withCodes {
                for c in r.codes {
                    let k = c.kioskFrame.map(String.init) ?? "-", b = c.baselineFrame.map(String.init) ?? "-"
                    let lag = c.lag.map { $0 >= 0 ? "+\($0)" : "\($0)" } ?? (c.baselineFrame == nil ? "(baseline never)" : "MISSED")
                    out += "  \(left(r.workload, 18)) \(pad("\(r.width)x\(r.height)", 9))  \(left(c.symbology, 8)) \(left(c.payload, 14)) near at \(pad("\(c.shownFrame)", 4))  kiosk \(pad(k, 4))  baseline \(pad(b, 4))  \(lag)\n"
                }
            }
        }
        return out
    }
}
