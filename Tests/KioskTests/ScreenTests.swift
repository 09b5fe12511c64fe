// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
@testable import Kiosk
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// Phone screens held up to the kiosk, replayed end to end through the frame loop
/// (`ScanService`: gate, worker, attempts, repeat filter) on the frames' clock: each look's
/// variant is reported with the kept attempts, and never when the attempt that reads it is taken
/// out of the list. (`kiosk-dev screens --needs` is the table these variants were chosen from.)
final class ScreenTests: XCTestCase {
    struct Replay {
        /// The frame of the presentation the payload was reported at (0: the screen's first), or nil.
        var reportedAt: Int?
        var reports: Int
        var stats: DecodePipeline.Stats
    }

    let before = 10

    func replay(_ look: ScreenScenes.Look, variant: Int, attempts: [Attempt], tremor: Bool = true) throws -> Replay {
        let scene = try ScreenScenes.scene(look, variant: variant, before: before, hold: 24, after: 6, tremor: tremor)
        var config = Configuration()
        config.fps = 30
        config.symbologies = [.qrcode]
        let svc = ScanService(configuration: config, source: scene, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: ManualClock(), attempts: attempts)
        var first: Int?, reports = 0
        let before = self.before
        svc.observe().onReport = { symbol, frame in
            guard symbol.text == ScreenScenes.payload else { return }
            reports += 1
            if first == nil { first = Int(frame.sequence) - before }
        }
        _ = try svc.run()
        return Replay(reportedAt: first, reports: reports, stats: svc.decoding.stats)
    }

    /// With the kept attempts the screen is reported once, within `frames` frames; without
    /// `attempt` it is never reported.
    func assertNeeds(_ attempt: Attempt, _ look: ScreenScenes.Look, variant: Int, tremor: Bool = true, within frames: Int,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        let with = try replay(look, variant: variant, attempts: Attempt.kept, tremor: tremor)
        XCTAssertNotNil(with.reportedAt, "\(look) \(variant): not read with the attempts", file: file, line: line)
        XCTAssertLessThanOrEqual(with.reportedAt ?? .max, frames, "\(look) \(variant): read late", file: file, line: line)
        XCTAssertEqual(with.reports, 1, "reported once while held", file: file, line: line)
        let without = try replay(look, variant: variant, attempts: Attempt.kept.filter { $0 != attempt }, tremor: tremor)
        XCTAssertNil(without.reportedAt, "\(look) \(variant) reads without \(attempt): the test shows nothing", file: file, line: line)
    }

    func testADarkModeScreenIsReadByTheInversion() throws {
        try assertNeeds(.invert, .darkMode, variant: 0, within: 4)
        try assertNeeds(.invert, .darkMode, variant: 1, tremor: false, within: 4)
    }

    func testAnOverexposedScreenWithBloomIsReadByTheStretchAndMinimum() throws {
        try assertNeeds(.bloom, .overexposed, variant: 2, within: 2)
    }

    func testAScreensMoireAndPixelGridAreReadByTheStretchAndMinimum() throws {
        try assertNeeds(.bloom, .moire, variant: 9, within: 2)
        try assertNeeds(.bloom, .grid, variant: 2, within: 2)
    }

    func testADimmedScreensPWMBandsAreReadByTheRowStretch() throws {
        try assertNeeds(.rows, .dimmed, variant: 0, within: 3)
    }

    func testAGlareSpotIsReadByTheRowStretch() throws {
        try assertNeeds(.rows, .glare, variant: 1, within: 3)
    }

    func testAnEmptyWindowGetsNoAttemptAndAPaperCodeReadsAtOnce() throws {
        // The idle path: nothing held, no attempt; the safety net glances.
        let empty = try ScreenScenes.scene(.darkMode, variant: 0, before: 40, hold: 1, after: 40)
        var config = Configuration()
        config.fps = 30
        let svc = ScanService(configuration: config, source: empty, logger: Logger(level: .error) { _ in }, stop: StopSignal(), clock: ManualClock())
        _ = try svc.run()
        XCTAssertEqual(svc.decoding.stats.attempts, 0)
        // A screen that reads on its first decode gets no attempt either.
        let plain = try replay(.moire, variant: 2, attempts: Attempt.kept)
        XCTAssertEqual(plain.reportedAt, 0)
        XCTAssertEqual(plain.stats.attempts, 0, "\(plain.stats)")
    }
}
