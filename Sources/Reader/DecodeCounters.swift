// SPDX-License-Identifier: Apache-2.0

/// How often each part of the strategy ran and won. The bench prints them.
public struct DecodeCounters: Sendable, Equatable {
    /// Regions scanned.
    public var regions = 0
    /// Regions where plain zbar's pass gave a confirmed code.
    public var plainWins = 0
    /// Regions where plain zbar found nothing and the structure test said there was nothing to look for.
    public var skippedByStructureTest = 0
    /// Regions that spent extra budget.
    public var extraRegions = 0
    /// Regions where the budget ran out before every pass was tried.
    public var budgetExhausted = 0
    /// 1D symbols found that were not reported: one scan line only, not read alike by the other
    /// reader, not seen in the previous frame.
    public var unconfirmed1D = 0
    /// Places where readings disagreed (nothing was reported there).
    public var contested = 0
    public var runs: [ExtraPass: Int] = [:]
    public var wins: [ExtraPass: Int] = [:]
    public var attemptRuns: [Attempt: Int] = [:]
    public var attemptWins: [Attempt: Int] = [:]
    /// The safety net's glances at a flat ROI, those that read a code, and those that asked for a
    /// full look (`BarcodeScanner.glance`).
    public var glances = 0
    public var glanceReads = 0
    public var glanceLookAgain = 0

    public init() {}

    public static func + (a: DecodeCounters, b: DecodeCounters) -> DecodeCounters {
        var c = a
        c.regions += b.regions
        c.plainWins += b.plainWins
        c.skippedByStructureTest += b.skippedByStructureTest
        c.extraRegions += b.extraRegions
        c.budgetExhausted += b.budgetExhausted
        c.unconfirmed1D += b.unconfirmed1D
        c.contested += b.contested
        c.runs.merge(b.runs, uniquingKeysWith: +)
        c.wins.merge(b.wins, uniquingKeysWith: +)
        c.glances += b.glances
        c.glanceReads += b.glanceReads
        c.glanceLookAgain += b.glanceLookAgain
        c.attemptRuns.merge(b.attemptRuns, uniquingKeysWith: +)
        c.attemptWins.merge(b.attemptWins, uniquingKeysWith: +)
        return c
    }
}
