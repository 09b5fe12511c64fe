// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import GPIO

/// A chip in memory: records every level driven, can refuse a request as busy.
public final class FakeChip: GPIOChip, GPIOChipInspector, @unchecked Sendable {
    public let name = "fake"
    public init() {}
    /// Every level driven, per line. Lines are driven from the buzzer's timer thread too, so the
    /// record is kept under a lock.
    public var levels: [Int: [Int]] {
        get { lock.lock(); defer { lock.unlock() }; return recorded }
        set { lock.lock(); recorded = newValue; lock.unlock() }
    }
    private var recorded: [Int: [Int]] = [:]
    let lock = NSLock()
    // Inputs: the lines requested, the bias asked, and the level a line is at when requested.
    var inputLines: [Int: SoftwareInputLine] = [:]
    public var inputBias: [Int: GPIOBias] = [:]
    /// The edges each input was requested for.
    public var inputEdges: [Int: GPIOEdges] = [:]
    public var initialInputLevels: [Int: Int] = [:]

    func record(_ level: Int, on offset: Int) {
        lock.lock()
        recorded[offset, default: []].append(level)
        lock.unlock()
    }
    public var requested: [Int: String] = [:]
    public var released: [Int] = []
    public var busy: [Int: String] = [:]
    public var failWrites = false
    public var kernelName = "gpiochip9"
    public var label = "fake-gpio"
    public var lineCount = 32

    public func lineInfo(offset: Int) throws -> (name: String?, consumer: String?, used: Bool) {
        guard offset < lineCount else { throw GPIOError(chip: name, line: offset, message: "no such line: the chip has \(lineCount) lines") }
        if let holder = busy[offset] { return ("GPIO\(offset)", holder, true) }
        return ("GPIO\(offset)", requested[offset], requested[offset] != nil)
    }

    /// The active-low flag each line was requested with.
    public var activeLow: [Int: Bool] = [:]

    public func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine {
        if let holder = busy[offset] { throw GPIOError(chip: name, line: offset, message: "line is busy", errno: EBUSY, heldBy: holder) }
        requested[offset] = consumer
        self.activeLow[offset] = activeLow
        record(level, on: offset)
        return Line(chip: self, offset: offset)
    }

    final class Line: GPIOOutputLine {
        let chip: FakeChip
        let offset: Int
        var isReleased = false
        init(chip: FakeChip, offset: Int) { self.chip = chip; self.offset = offset }
        func setLevel(_ level: Int) throws {
            precondition(!isReleased, "write after release")
            if chip.failWrites { throw GPIOError(chip: chip.name, line: offset, message: "write failed", errno: EIO) }
            chip.record(level, on: offset)
        }
        func release() {
            if !isReleased { chip.released.append(offset) }
            isReleased = true
        }
    }
}

// Inputs: a test raises edges on the lines the code under test requested.
extension FakeChip: GPIOInputChip {
    public func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int,
                             edges: GPIOEdges) throws -> GPIOInputLine {
        if let holder = busy[offset] { throw GPIOError(chip: name, line: offset, message: "line is busy", errno: EBUSY, heldBy: holder) }
        lock.lock()
        defer { lock.unlock() }
        requested[offset] = consumer
        self.activeLow[offset] = activeLow
        inputBias[offset] = bias
        inputEdges[offset] = edges
        let line = SoftwareInputLine(offset: offset, level: initialInputLevels[offset] ?? (activeLow ? 1 : 0), edges: edges) { [weak self] in
            self?.released.append($0)
        }
        inputLines[offset] = line
        return line
    }

    /// The input requested at `offset`.
    public func input(_ offset: Int) -> SoftwareInputLine? {
        lock.lock()
        defer { lock.unlock() }
        return inputLines[offset]
    }

    /// Line `offset` goes to the physical `level` (at `timestampNs`, else now).
    public func raise(_ offset: Int, level: Int, at timestampNs: UInt64? = nil) {
        guard let line = input(offset) else { preconditionFailure("line \(offset) is not requested as an input") }
        line.raise(level: level, timestampNs: timestampNs)
    }
}
