// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Foundation
import Glibc
import Kiosk
import Platform
import Policy
import Scene

/// `kiosk-dev count`: the bench's workloads as files of frames, and the kiosk's frame loop over such
/// a file, for counting instructions rather than timing them (harness/bench-arm64/run.sh runs it
/// under qemu-aarch64 with an instruction-count plugin: `make bench-arm64`).
///
///     kiosk-dev count dump WORKLOAD WxH FILE    the workload's frames, luma only (W*H bytes each,
///                                               in order), into FILE; prints `frames N` and one
///                                               `shown PAYLOAD SYMBOLOGY FIRST LAST` a presentation
///     kiosk-dev count kiosk WORKLOAD WxH FILE   each frame of FILE through `ScanService.process`,
///                                               as `kiosk-dev bench` runs it (the worker waited for
///                                               on every frame), on the frames' clock (`FrameClock`);
///                                               prints `read FRAME SYMBOLOGY PAYLOAD` a report, then
///                                               `frames N`
///     kiosk-dev count read WORKLOAD WxH FILE    the same set-up and the same reading of the frames,
///                                               without processing them: the part the count of
///                                               `kiosk` has beside the frames' own cost
public enum CountBench {
    public static func main(_ args: [String]) -> Int32 {
        guard args.count == 4, ["dump", "kiosk", "read"].contains(args[0]) else {
            return usage("want dump|kiosk|read WORKLOAD WxH FILE")
        }
        guard let kind = BenchWorkload.Kind.allCases.first(where: { $0.rawValue == args[1] || $0.letter == args[1] }) else {
            return usage("WORKLOAD is empty, motion, presentations or low-light")
        }
        let parts = args[2].split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 64, parts[1] >= 64 else { return usage("WxH, e.g. 640x480") }
        let (width, height) = (parts[0], parts[1])
        let workload: BenchWorkload
        do { workload = try BenchWorkload(kind, width: width, height: height) } catch {
            DevCommand.printError("kiosk-dev count: \(error)")
            return ExitStatus.failure
        }
        switch args[0] {
        case "dump": return dump(workload, to: args[3])
        default: return replay(workload, from: args[3], process: args[0] == "kiosk")
        }
    }

    static func usage(_ message: String) -> Int32 {
        DevCommand.printError("kiosk-dev count: \(message)")
        return ExitStatus.usage
    }

    static func dump(_ workload: BenchWorkload, to path: String) -> Int32 {
        guard let out = fopen(path, "wb") else {
            DevCommand.printError("kiosk-dev count: cannot write \(path): \(String(cString: strerror(errno)))")
            return ExitStatus.failure
        }
        defer { fclose(out) }
        let scene = workload.scene
        _ = try? scene.open()
        var n = 0
        var row = [UInt8](repeating: 0, count: workload.width)
        while case .frame(let frame)? = try? scene.nextFrame(timeoutMs: 0) {
            let luma = frame.luma
            for y in 0..<luma.height {
                for x in 0..<luma.width { row[x] = luma[x, y] }
                guard fwrite(row, 1, row.count, out) == row.count else {
                    DevCommand.printError("kiosk-dev count: writing \(path) failed")
                    return ExitStatus.failure
                }
            }
            n += 1
        }
        print("frames \(n)")
        for p in workload.presentations {
            print("shown \(p.payload) \(p.symbology.rawValue) \(p.firstFrame) \(p.lastFrame)")
        }
        return ExitStatus.ok
    }

    static func replay(_ workload: BenchWorkload, from path: String, process: Bool) -> Int32 {
        guard let input = fopen(path, "rb") else {
            DevCommand.printError("kiosk-dev count: cannot read \(path): \(String(cString: strerror(errno)))")
            return ExitStatus.failure
        }
        defer { fclose(input) }
        var config = Configuration()
        config.uprightROI = BenchWorkload.roi
        config.fps = workload.fps
        let clock = FrameClock()
        let service = ScanService(configuration: config, source: workload.scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: clock, decodeDensity: DecodePipeline.defaultDensity)
        var reads: [String] = []
        service.observe().onReport = { symbol, frame in
            reads.append("read \(frame.sequence) \(symbol.symbology.rawValue) \(symbol.text ?? "-")")
        }
        let size = workload.width * workload.height
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        defer { buffer.deallocate() }
        let frameNs = UInt64(1e9 / workload.fps)
        var n: UInt64 = 0
        while fread(buffer, 1, size, input) == size {
            let luma = LumaPlane(base: UnsafePointer(buffer), width: workload.width, height: workload.height, rowStride: workload.width)
            if process {
                clock.set(n * frameNs)
                service.process(Frame(luma: luma, sequence: n, timestampNs: n * frameNs, capturedNs: n * frameNs))
            }
            n += 1
        }
        for r in reads { print(r) }
        print("frames \(n)")
        return ExitStatus.ok
    }
}

/// The frames' own time, standing still while a frame is processed. Under emulation a decode takes
/// 10-50 times as long as on a Pi, and the extra passes' wall-clock budget
/// (`BarcodeScanner.defaultExtraBudgetMs`) would cut them where a Pi finishes them, differently
/// from run to run; on this clock the decoder runs every pass it would run on a core fast enough
/// to finish them within the budget, the same ones every run.
final class FrameClock: Clock, @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var ns: UInt64 = 0

    func set(_ value: UInt64) {
        lock.lock()
        ns = value
        lock.unlock()
    }

    func now() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return ns
    }

    func sleep(ns: UInt64, unless stop: StopSignal) -> Bool { stop.requested == nil }

    func schedule(afterNs ns: UInt64, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async(execute: work)
    }
}
