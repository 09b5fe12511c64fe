// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPIO
import Platform

/// Every level driven on a fake chip's outputs, with the clock's time of each: what the door's
/// tests read exact on/off times from. Outputs made through `output(...)` report here (their
/// `onDrive`), including the inactive level they are requested at.
public final class LineTimeline: @unchecked Sendable {  // `recorded` guarded by `lock`
    public struct Edge: Equatable, CustomStringConvertible {
        public let ns: UInt64
        public let offset: Int
        public let level: Int
        public init(ns: UInt64, offset: Int, level: Int) { self.ns = ns; self.offset = offset; self.level = level }
        public var description: String { "line \(offset) -> \(level) at \(ns) ns" }
    }

    private let clock: Clock
    private let lock = NSLock()
    private var recorded: [Edge] = []

    public init(clock: Clock) { self.clock = clock }

    public func output(_ chip: FakeChip, offset: Int, activeLow: Bool) throws -> SwitchedOutput {
        try SwitchedOutput(chip: chip, offset: offset, activeLow: activeLow) { [self] o, level in
            let t = clock.now()
            lock.lock()
            recorded.append(Edge(ns: t, offset: o, level: level))
            lock.unlock()
        }
    }

    public var edges: [Edge] { lock.lock(); defer { lock.unlock() }; return recorded }
    public func edges(offset: Int) -> [Edge] { edges.filter { $0.offset == offset } }
    /// `[ms, level]` pairs of one line, for assertions that read like the pattern.
    public func msLevels(offset: Int) -> [[Int]] { edges(offset: offset).map { [Int($0.ns / 1_000_000), $0.level] } }
}
