// SPDX-License-Identifier: Apache-2.0
/// A Wiegand keypad's falls on D0 and D1 in the order they happened, for `WiegandKeypadPolicy`.
/// The two lines are two queues, read one after the other: an edge read from D1 may be later than
/// one of D0 not yet read, which came between the two reads (a busy machine, or a writer that
/// stamps edges it gives late, as the simulated lines' standard input does). So an edge is given
/// on only when a later look at both lines has found nothing earlier: it was read before the last
/// look began, and it is `settleNs` old by its stamp (the kernel's interrupt thread may queue an
/// edge a little after a later one of the other line).
public struct WiegandEdgeOrder: Sendable {
    /// How long an edge waits for the other line's earlier ones (a bit takes 1-2 ms).
    public static let settleNs: UInt64 = 5_000_000

    public struct Edge: Equatable, Sendable {
        /// D1 (a 1 bit) when true, D0 when false.
        public let one: Bool
        public let level: Int
        public let timestampNs: UInt64
        public init(one: Bool, level: Int, timestampNs: UInt64) {
            self.one = one
            self.level = level
            self.timestampNs = timestampNs
        }
    }

    /// The edges not yet given on, oldest first, each with the look it was read in.
    private var waiting: [(edge: Edge, look: UInt64)] = []
    private var look: UInt64 = 0

    public init() {}

    public var isEmpty: Bool { waiting.isEmpty }

    /// A look at both lines begins (the poll has returned): what was read before it may settle.
    public mutating func beginLook() { look &+= 1 }

    /// Edges read from a line in this look.
    public mutating func read(_ edges: [Edge]) {
        waiting += edges.map { ($0, look) }
        waiting.sort { ($0.edge.timestampNs, $0.look) < ($1.edge.timestampNs, $1.look) }
    }

    /// The edges that may be given on at `nowNs`, oldest first: the waiting ones up to the first
    /// that was read in this look or is younger than `settleNs`.
    public mutating func settled(nowNs: UInt64) -> [Edge] {
        let n = waiting.prefix { $0.look < look && $0.edge.timestampNs &+ WiegandEdgeOrder.settleNs <= nowNs }.count
        defer { waiting.removeFirst(n) }
        return waiting.prefix(n).map(\.edge)
    }

    /// When to look at the lines again, at the latest, for the waiting edges: at once when one was
    /// read in this look, else when the first is `settleNs` old; nil when none waits.
    public var nextLookNs: UInt64? {
        guard let first = waiting.first else { return nil }
        return waiting.contains { $0.look == look } ? 0 : first.edge.timestampNs &+ WiegandEdgeOrder.settleNs
    }
}
