// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPIO
@testable import Kiosk
import Platform
import Policy
import TestSupport
import XCTest

/// The simulated inputs' standard input (`KIOSK_GPIO_CHIP=sim`): `INPUT LEVEL [NS]`, each change
/// stamped where it happened when the writer says when (as the kernel stamps a line's event).
final class SimulatedInputFeedTests: XCTestCase {
    func testAChangeCarriesTheWritersTimeAndAnUnreadableTimeIsRefused() throws {
        let chip = SimulatedChip()
        let line = try chip.requestInput(offset: 6, consumer: "kiosk", activeLow: true, bias: .pullUp, debounceMicroseconds: 0)
        let said = DoorWatchTests.Lines()
        let logger = Logger(level: .debug) { said.add($0) }
        let names = ["rex": 6]
        let t = monotonicNanoseconds()
        SimulatedInputFeed.apply(Array("rex 0 \(t - 200_000_000)".utf8), chip: chip, names: names, logger: logger)
        SimulatedInputFeed.apply(Array("rex 1 \(t)".utf8), chip: chip, names: names, logger: logger)
        XCTAssertEqual(try line.readEdges(), [GPIOEdge(offset: 6, level: 0, timestampNs: t - 200_000_000),
                                              GPIOEdge(offset: 6, level: 1, timestampNs: t)])
        XCTAssertEqual(said.events, [])
        // Without a time: stamped when read.
        let before = monotonicNanoseconds()
        SimulatedInputFeed.apply(Array("rex 0".utf8), chip: chip, names: names, logger: logger)
        let edge = try XCTUnwrap(try line.readEdges().first)
        XCTAssertGreaterThanOrEqual(edge.timestampNs, before)
        XCTAssertLessThanOrEqual(edge.timestampNs, monotonicNanoseconds())
        // Later than now, signed, not a number, a fourth word: said and skipped.
        for bad in ["rex 1 \(monotonicNanoseconds() + 60_000_000_000)", "rex 1 +5", "rex 1 -5", "rex 1 soon", "rex 1 5 6"] {
            SimulatedInputFeed.apply(Array(bad.utf8), chip: chip, names: names, logger: logger)
        }
        XCTAssertEqual(try line.readEdges(), [])
        XCTAssertEqual(said.events, Array(repeating: "sim_input_ignored", count: 5))
    }
}
