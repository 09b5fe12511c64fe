// SPDX-License-Identifier: Apache-2.0
/// A Wiegand keypad's falls on D0 and D1 in the order they happened, for `WiegandKeypadPolicy`.
/// The two lines are two queues, read one after the other: an edge read from D1 may be later than
/// one of D0 not yet read, which came between the two reads (a busy machine, or a writer that
/// stamps edges it gives late, as the simulated lines' standard input does). So an edge is given
/// on only when a later look at both lines has found nothing earlier: it was read before the last
/// look began, and it is `settleNs` old by its stamp (the kernel's interrupt thread may queue an
/// edge a little after a later one of the other line).
public struct WiegandEdgeOrder: Equatable, Sendable {
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

    private var waiting: [Edge] = []
    private var looks: [UInt64] = []  // the look each waiting edge was read in
    private var look: UInt64 = 0

    public init() {}

    public var isEmpty: Bool { waiting.isEmpty }

    /// A look at both lines begins (the poll has returned): what was read before it may settle.
    public mutating func beginLook() { look &+= 1 }

    /// Edges read from a line in this look.
    public mutating func read(_ edges: [Edge]) {
        guard !edges.isEmpty else { return }
        let all = zip(waiting, looks).map { ($0, $1) } + edges.map { ($0, look) }
        let sorted = all.sorted { ($0.0.timestampNs, $0.1) < ($1.0.timestampNs, $1.1) }
        waiting = sorted.map(\.0)
        looks = sorted.map(\.1)
    }

    /// The edges that may be given on at `nowNs`, oldest first: the waiting ones up to the first
    /// that was read in this look or is younger than `settleNs`.
    public mutating func settled(nowNs: UInt64) -> [Edge] {
        var n = 0
        while n < waiting.count, looks[n] < look, waiting[n].timestampNs &+ WiegandEdgeOrder.settleNs <= nowNs { n += 1 }
        defer {
            waiting.removeFirst(n)
            looks.removeFirst(n)
        }
        return Array(waiting.prefix(n))
    }

    /// When to look at the lines again, at the latest, for the waiting edges: at once when one was
    /// read in this look, else when the first is `settleNs` old; nil when none waits.
    public var nextLookNs: UInt64? {
        guard let first = waiting.first else { return nil }
        return looks.contains(look) ? 0 : first.timestampNs &+ WiegandEdgeOrder.settleNs
    }
}
