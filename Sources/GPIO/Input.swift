// SPDX-License-Identifier: Apache-2.0
import CGPIO
import Glibc
import Platform

/// How an input line is biased in the chip (`KIOSK_INPUT_BIAS`).
public enum GPIOBias: String, Sendable, CaseIterable {
    case pullUp = "pull-up", pullDown = "pull-down", disabled, asIs = "as-is"

    var shimValue: Int32 {
        switch self {
        case .asIs: return Int32(KIOSK_GPIO_BIAS_AS_IS)
        case .pullUp: return Int32(KIOSK_GPIO_BIAS_PULL_UP)
        case .pullDown: return Int32(KIOSK_GPIO_BIAS_PULL_DOWN)
        case .disabled: return Int32(KIOSK_GPIO_BIAS_DISABLED)
        }
    }
}

/// Which edges of an input are events.
public enum GPIOEdges: Sendable {
    /// Both: a door contact's or a button's changes. The kernel reads each edge's type from the
    /// line's level when its interrupt thread runs, after the edge.
    case both
    /// Only the line's physical falls (to 0), each one event whose type the request fixes: a
    /// Wiegand line's 50-100 us pulses, which may be over before that thread runs, so that a
    /// both-edges request reports a pulse's fall as a rise and the bit is lost.
    case falls
}

/// One edge on an input: the physical level the line went to, and when (the kernel's timestamp,
/// CLOCK_MONOTONIC nanoseconds: the clock of `monotonicNanoseconds()`).
public struct GPIOEdge: Equatable, Sendable {
    public var offset: Int
    public var level: Int
    public var timestampNs: UInt64
    public init(offset: Int, level: Int, timestampNs: UInt64) {
        self.offset = offset
        self.level = level
        self.timestampNs = timestampNs
    }
}

/// A chip that can also watch inputs (the door contact, the exit button, the tamper loop).
public protocol GPIOInputChip: GPIOChip {
    /// Requests line `offset` as an input under `consumer`, both edges reported with timestamps,
    /// biased as asked; `debounceMicroseconds` is asked of the kernel where the library can
    /// (`GPIOInputLine.kernelDebounced` says whether it was).
    func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int,
                      edges: GPIOEdges) throws -> GPIOInputLine
}

public extension GPIOInputChip {
    /// Both edges (a door contact, a button, the tamper loop).
    func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int) throws -> GPIOInputLine {
        try requestInput(offset: offset, consumer: consumer, activeLow: activeLow, bias: bias, debounceMicroseconds: debounceMicroseconds,
                         edges: .both)
    }
}

/// A requested input line. Levels are physical: 0 low, 1 high.
public protocol GPIOInputLine: AnyObject {
    var offset: Int { get }
    /// The kernel debounces this line (libgpiod v2 with a debounce period): edges come filtered.
    var kernelDebounced: Bool { get }
    /// Readable (poll(2)) when edges wait.
    var descriptor: Int32 { get }
    /// The level now.
    func level() throws -> Int
    /// The edges waiting, oldest first; call when `descriptor` is readable.
    func readEdges() throws -> [GPIOEdge]
    /// Gives the line back to the kernel. Safe to call twice.
    func release()
}

extension LibgpiodChip: GPIOInputChip {
    public func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int,
                             edges: GPIOEdges) throws -> GPIOInputLine {
        let info = try lineInfo(offset: offset)
        if info.used {
            throw GPIOError(chip: name, line: offset, message: "line is busy", errno: EBUSY, heldBy: info.consumer ?? "the kernel")
        }
        guard let h = rawHandle else { throw GPIOError(chip: name, line: offset, message: "chip is closed") }
        var debounced: Int32 = 0
        guard let input = kiosk_gpio_line_request_input(h, UInt32(offset), consumer, activeLow ? 1 : 0, bias.shimValue,
                                                         UInt32(max(0, debounceMicroseconds)), edges == .falls ? 1 : 0, &debounced) else {
            let e = Glibc.errno
            let holder = e == EBUSY ? ((try? lineInfo(offset: offset))?.consumer ?? "unknown") : nil
            throw GPIOError(chip: name, line: offset, message: "cannot request the line as an input with edge events (bias \(bias.rawValue))",
                            errno: e, heldBy: holder)
        }
        return LibgpiodInput(chip: self, offset: offset, input: input, kernelDebounced: debounced != 0)
    }
}

final class LibgpiodInput: GPIOInputLine {
    let offset: Int
    let kernelDebounced: Bool
    // Holds the chip open for as long as the line is requested.
    private let chip: LibgpiodChip
    private var input: OpaquePointer?

    init(chip: LibgpiodChip, offset: Int, input: OpaquePointer, kernelDebounced: Bool) {
        self.chip = chip
        self.offset = offset
        self.input = input
        self.kernelDebounced = kernelDebounced
    }

    deinit { release() }

    var descriptor: Int32 { input.map { kiosk_gpio_input_fd($0) } ?? -1 }

    func level() throws -> Int {
        guard let input else { throw GPIOError(chip: chip.name, line: offset, message: "line was released") }
        let v = kiosk_gpio_input_level(input)
        guard v >= 0 else { throw GPIOError(chip: chip.name, line: offset, message: "cannot read the line", errno: Glibc.errno) }
        return Int(v)
    }

    func readEdges() throws -> [GPIOEdge] {
        guard let input else { throw GPIOError(chip: chip.name, line: offset, message: "line was released") }
        var stamps = [UInt64](repeating: 0, count: 16)
        var levels = [Int32](repeating: 0, count: 16)
        let n = stamps.withUnsafeMutableBufferPointer { s in
            levels.withUnsafeMutableBufferPointer { l in
                kiosk_gpio_input_read_edges(input, s.baseAddress!.withMemoryRebound(to: CUnsignedLongLong.self, capacity: 16) { $0 },
                                            l.baseAddress, 16)
            }
        }
        guard n >= 0 else { throw GPIOError(chip: chip.name, line: offset, message: "cannot read the line's edges", errno: Glibc.errno) }
        return (0..<Int(n)).map { GPIOEdge(offset: offset, level: Int(levels[$0]), timestampNs: stamps[$0]) }
    }

    func release() {
        if let input { kiosk_gpio_input_release(input) }
        input = nil
    }
}

/// An input whose edges are raised by software (the simulated chip's lines, the tests' fakes):
/// a pipe makes it pollable like a kernel line; `raise` queues an edge and wakes the watcher.
public final class SoftwareInputLine: GPIOInputLine, @unchecked Sendable {  // `current`, `queue`, `released` guarded by `lock`
    public let offset: Int
    public let kernelDebounced = false
    private let lock = Lock()
    private var current: Int
    private var queue: [GPIOEdge] = []
    private var released = false
    private let readEnd: Int32
    private let writeEnd: Int32
    private let onRelease: (Int) -> Void

    /// `.falls`: a change to 1 moves the level but is no event, as on a kernel line so requested.
    public let edges: GPIOEdges

    public init(offset: Int, level: Int, edges: GPIOEdges = .both, onRelease: @escaping (Int) -> Void = { _ in }) {
        self.offset = offset
        self.edges = edges
        current = level
        self.onRelease = onRelease
        (readEnd, writeEnd) = nonBlockingPipe()
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    public var descriptor: Int32 { readEnd }
    public var isReleased: Bool { lock.withLock { released } }

    public func level() throws -> Int { lock.withLock { current } }

    /// The line goes to `level` at `timestampNs` (now when nil); the same level again is no edge.
    public func raise(level: Int, timestampNs: UInt64? = nil) {
        raise([(level, timestampNs ?? monotonicNanoseconds())])
    }

    /// Several changes, each stamped where it happened, queued together: the watcher reads them in
    /// one `readEdges`, as it reads a kernel line's events that came while it was busy (a press and
    /// its release in one read: the debounce judges by these stamps, not by when they were read).
    public func raise(_ changes: [(level: Int, timestampNs: UInt64)]) {
        let queued = lock.withLock { () -> Bool in
            guard !released else { return false }
            var any = false
            for change in changes where change.level != current {
                current = change.level
                if edges == .falls && change.level != 0 { continue }
                queue.append(GPIOEdge(offset: offset, level: change.level, timestampNs: change.timestampNs))
                any = true
            }
            return any
        }
        if queued {
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
    }

    public func readEdges() throws -> [GPIOEdge] {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &sink, sink.count) > 0 {}
        return lock.withLock {
            defer { queue.removeAll() }
            return queue
        }
    }

    public func release() {
        let first = lock.withLock { () -> Bool in
            defer { released = true }
            return !released
        }
        if first { onRelease(offset) }
    }
}

extension SimulatedChip: GPIOInputChip {
    /// A simulated input, at rest at its inactive level (the door shut, the button released, the
    /// tamper loop whole), driven by `raise` (the `kiosk` binary's standard input, docs/door.md,
    /// "Try the door without wiring").
    public func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int,
                             edges: GPIOEdges) throws -> GPIOInputLine {
        let line = SoftwareInputLine(offset: offset, level: activeLow ? 1 : 0, edges: edges)
        inputs.append(line)
        return line
    }
}
