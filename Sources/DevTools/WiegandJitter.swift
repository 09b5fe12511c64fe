// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import GPIO
import Platform
import Policy

/// `kiosk-dev wiegand-jitter`: how exactly `WiegandSender` keeps its pulse width and bit interval
/// on this machine, on the real clock (`MonotonicClock`: absolute deadlines, the last 150 us
/// spun), as the kiosk sends a frame.
///
/// A frame of random bits goes out on two lines of a chip that only stamps each level with the
/// monotonic clock (no GPIO driver's own time is in the figures: on a Pi, libgpiod's ioctl adds a
/// few microseconds to each edge). Printed per timing: the deviation of each pulse's width from
/// `--pulse-us`, of each interval between bit starts from `--interval-us`, and of each bit's
/// start from its deadline; median, 99th percentile and maximum of the absolute deviations.
enum WiegandJitter {
    /// Stamps every level driven; written by the sender's thread only, read after its frame.
    final class StampChip: GPIOChip, @unchecked Sendable {
        let name = "stamps"
        var stamps: [(ns: UInt64, offset: Int, level: Int)] = []
        init(capacity: Int) { stamps.reserveCapacity(capacity) }
        final class Line: GPIOOutputLine {
            let chip: StampChip, offset: Int
            init(_ chip: StampChip, _ offset: Int) { self.chip = chip; self.offset = offset }
            func setLevel(_ level: Int) throws { chip.stamps.append((monotonicNanoseconds(), offset, level)) }
            func release() {}
        }
        func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine { Line(self, offset) }
    }

    struct Figures {
        var pulse: [Double] = [], interval: [Double] = [], late: [Double] = []
    }

    static func main(_ args: [String]) -> Int32 {
        var timings: [(pulse: Int, interval: Int)] = []
        var pulse: Int?, bits = 1000
        var i = 0
        while i < args.count {
            let value = i + 1 < args.count ? Int(args[i + 1]) : nil
            switch args[i] {
            case "--pulse-us" where value.map { (1...1000).contains($0) } == true: pulse = value
            case "--interval-us" where value != nil && pulse != nil && value! > pulse!:
                timings.append((pulse!, value!)); pulse = nil
            case "--bits" where value.map { (10...100_000).contains($0) } == true: bits = value!
            default:
                return DevCommand.usageError("wiegand-jitter: [--pulse-us N --interval-us M]... [--bits N] (got \(args[i]))")
            }
            i += 2
        }
        guard pulse == nil else { return DevCommand.usageError("wiegand-jitter: --pulse-us needs its --interval-us after it") }
        if timings.isEmpty { timings = [(50, 2000), (20, 200), (100, 20_000)] }
        print("WiegandSender on MonotonicClock, \(bits) random bits a run (kiosk-dev wiegand-jitter)")
        for t in timings {
            guard let f = measure(pulseUs: t.pulse, intervalUs: t.interval, bits: t.interval >= 10_000 ? min(bits, 200) : bits) else {
                printError("wiegand-jitter: the frame did not finish within a minute")
                return 1
            }
            print("pulse \(t.pulse) us, interval \(t.interval) us (\(f.late.count) bits):")
            print("  " + line("pulse width - \(t.pulse) us", f.pulse))
            print("  " + line("interval - \(t.interval) us", f.interval))
            print("  " + line("bit start - deadline", f.late))
        }
        return 0
    }

    static func measure(pulseUs: Int, intervalUs: Int, bits count: Int) -> Figures? {
        let chip = StampChip(capacity: 2 * count + 4)
        guard let d0 = try? SwitchedOutput(chip: chip, offset: 0, activeLow: true),
              let d1 = try? SwitchedOutput(chip: chip, offset: 1, activeLow: true) else { return nil }
        let sender = WiegandSender(d0: d0, d1: d1, pulseMicroseconds: pulseUs, intervalMicroseconds: intervalUs, clock: MonotonicClock())
        let done = DispatchSemaphore(value: 0)
        let started = StartBox()
        sender.onSent = { _, t in started.ns = t; done.signal() }
        var rng = SystemRandomNumberGenerator()
        sender.send((0..<count).map { _ in Bool.random(using: &rng) })
        guard done.wait(timeout: .now() + 60) == .success else { sender.shutDown(); return nil }
        sender.shutDown()
        // Active-low lines: a pulse is the fall to 0 and the rise back to 1 (a request is not a write).
        let edges = chip.stamps
        let falls = edges.filter { $0.level == 0 }.map(\.ns), rises = edges.filter { $0.level == 1 }.map(\.ns)
        guard falls.count == count, rises.count == count else { return nil }
        var f = Figures()
        f.pulse = zip(falls, rises).map { Double(Int64($1) - Int64($0)) / 1000 - Double(pulseUs) }
        f.interval = zip(falls.dropFirst(), falls).map { Double(Int64($0) - Int64($1)) / 1000 - Double(intervalUs) }
        f.late = falls.enumerated().map { Double(Int64($1) - Int64(started.ns) - Int64($0 * intervalUs * 1000)) / 1000 }
        return f
    }

    final class StartBox: @unchecked Sendable { var ns: UInt64 = 0 }  // written before `done` is signalled

    static func line(_ name: String, _ values: [Double]) -> String {
        let a = values.map(abs).sorted(), s = values.sorted()
        func f(_ x: Double) -> String { Format.fixed(x, 1) }
        return "\(name): median |dev| \(f(a[a.count / 2])) us, p99 \(f(a[min(a.count - 1, a.count * 99 / 100)])) us, max \(f(a.last!)) us (from \(f(s.first!)) to \(f(s.last!)))"
    }

    static func printError(_ message: String) { DevCommand.printError(message) }
}
