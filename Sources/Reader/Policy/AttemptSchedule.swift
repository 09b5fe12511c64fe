// SPDX-License-Identifier: Apache-2.0

/// Which attempt each decode of a presentation gets: a code on a phone screen that does
/// not read on its first decode (dark mode, moiré, a clipped or banded picture, glare) is given a
/// different attempt on each later decoded frame, one a frame, in the list's order (cheapest and
/// likeliest first), round and round while it is held; the attempt that reads it is then given
/// first on every decode until the presentation ends or it reads nothing, so that a code held in
/// a hand stays read.
///
/// A presentation is the frames in which something is held in the ROI (the gate saw edges enough);
/// a flat ROI ends it. The first `firstDecodes` decodes of a presentation get no attempt: most
/// codes read there, and an empty window's safety-net decode is never one (nothing is held), so
/// the idle path does not change.
///
/// A pure value: the frame loop asks it on each decode and tells it what the decode found; the
/// answer may come a frame late (the decode runs on the worker), which only delays the winner.
public struct AttemptSchedule: Equatable, Sendable {
    /// How many attempts the list has (0: never an attempt).
    public let count: Int
    public let firstDecodes: Int
    private var decodes = 0
    private var next = 0
    /// The attempt that read this presentation, if one did.
    public private(set) var winner: Int?

    public init(count: Int, firstDecodes: Int = 1) {
        precondition(count >= 0 && firstDecodes >= 0)
        self.count = count
        self.firstDecodes = firstDecodes
    }

    /// A frame in which nothing is held: the presentation, if any, is over.
    public mutating func nothingHeld() {
        decodes = 0
        next = 0
        winner = nil
    }

    /// The attempt (an index into the list) for a decode of a frame in which something is held,
    /// or nil.
    public mutating func plan() -> Int? {
        decodes += 1
        guard count > 0 else { return nil }
        if let winner { return winner }
        guard decodes > firstDecodes else { return nil }
        defer { next = (next + 1) % count }
        return next
    }

    /// What a decode given `attempt` found: `read`, any code; `attemptRead`, the attempt itself
    /// read one. A winner that reads nothing any more (the hand moved) is a winner no longer: the
    /// round goes on where it was.
    public mutating func decoded(attempt: Int?, read: Bool, attemptRead: Bool) {
        guard let attempt, attempt < count else { return }
        if attemptRead { winner = attempt } else if !read, winner == attempt { winner = nil }
    }
}
