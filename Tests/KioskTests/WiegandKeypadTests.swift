// SPDX-License-Identifier: Apache-2.0
import Foundation
import GPIO
import Keypad
import Platform
import Policy
import TestSupport
import XCTest

/// The Wiegand keypad asks the kernel for its lines' falls only: with both edges the kernel reads
/// each edge's type from the line's level when its interrupt thread runs, and a 50-100 us pulse
/// can be over by then (a fall reported as a rise: the arm64 VM tier's keypad lost 63 bits of 64).
final class WiegandKeypadTests: XCTestCase {
    final class Keys: KeypadListener, @unchecked Sendable {  // `keys` guarded by `lock`
        private let lock = NSLock()
        private var keys: [KeypadKey] = []
        func keyPressed(_ key: KeypadKey) { lock.lock(); keys.append(key); lock.unlock() }
        func keypadReady(_ what: String) {}
        func keypadLost(_ why: String) {}
        var pressed: [KeypadKey] { lock.lock(); defer { lock.unlock() }; return keys }
    }

    func testItRequestsTheLinesFallsOnly() throws {
        let chip = FakeChip()
        let keypad = try WiegandKeypad(chip: chip, d0: 5, d1: 6)
        defer { keypad.shutDown() }
        XCTAssertEqual(chip.inputEdges[5], .falls)
        XCTAssertEqual(chip.inputEdges[6], .falls)
        XCTAssertEqual(chip.inputBias[5], .pullUp)
    }

    /// A line requested for falls gives a pulse as one event, its fall, however late it is read.
    func testALineOfFallsGivesEachPulseOnce() throws {
        let line = SoftwareInputLine(offset: 5, level: 1, edges: .falls)
        line.raise([(0, 1_000), (1, 1_100), (0, 3_000), (1, 3_100)])
        XCTAssertEqual(try line.readEdges(), [GPIOEdge(offset: 5, level: 0, timestampNs: 1_000), GPIOEdge(offset: 5, level: 0, timestampNs: 3_000)])
        let both = SoftwareInputLine(offset: 5, level: 1)
        both.raise([(0, 1_000), (1, 1_100)])
        XCTAssertEqual(try both.readEdges().map(\.level), [0, 1])
    }

    /// Keys' 8-bit bursts as falls alone (100 us pulses every 2 ms, as the kernel stamps them) are the keys.
    func testBurstsOfFallsAreKeys() throws {
        let chip = FakeChip()
        chip.initialInputLevels = [5: 1, 6: 1]
        let keypad = try WiegandKeypad(chip: chip, d0: 5, d1: 6)
        defer { keypad.shutDown() }
        let keys = Keys()
        keypad.start(keys)
        let typed: [KeypadKey] = [.digit(7), .digit(0), .hash]
        var t = monotonicNanoseconds()
        for key in typed {
            var d0: [(level: Int, timestampNs: UInt64)] = [], d1: [(level: Int, timestampNs: UInt64)] = []
            for bit in WiegandKeypadPolicy.bits(of: key, width: 8) {
                if bit { d1 += [(0, t), (1, t + 100_000)] } else { d0 += [(0, t), (1, t + 100_000)] }
                t += 2_000_000
            }
            chip.input(5)!.raise(d0)
            chip.input(6)!.raise(d1)
            t += 60_000_000
        }
        let deadline = Date().addingTimeInterval(5)
        while keys.pressed.count < typed.count, Date() < deadline { usleep(20_000) }
        XCTAssertEqual(keys.pressed, typed)
    }
}
