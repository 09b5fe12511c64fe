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

    /// D0 and D1 are two queues the keypad's thread reads one after the other. Here the rest of
    /// each key's bits arrive on both lines just before D1 is read (as a busy machine lets the
    /// kiosk's standard input feed the simulated lines, stamped before): D1's later bits are read
    /// in this look, D0's earlier ones in the next, and must still come first. Given on in the
    /// order they were read, keys 5, * and 2 were refused (a CI run typed 8 digits and the kiosk
    /// took 7, its first key refused as 8 bits).
    func testBitsThatArriveBeforeD1IsReadWaitForD0sEarlierOnes() throws {
        /// D1, whose next read is preceded at once by what `arrive` holds.
        final class BeforeRead: GPIOInputLine, @unchecked Sendable {  // `arrive` guarded by `lock`
            let line: SoftwareInputLine
            private let lock = NSLock()
            private var arrive: (() -> Void)?
            init(_ line: SoftwareInputLine) { self.line = line }
            var offset: Int { line.offset }
            var kernelDebounced: Bool { false }
            var descriptor: Int32 { line.descriptor }
            func level() throws -> Int { try line.level() }
            func beforeNextRead(_ f: @escaping () -> Void) { lock.lock(); arrive = f; lock.unlock() }
            func readEdges() throws -> [GPIOEdge] {
                lock.lock()
                let f = arrive
                arrive = nil
                lock.unlock()
                f?()
                return try line.readEdges()
            }
            func release() { line.release() }
        }
        final class Chip: GPIOInputChip {
            let name = "two-queues"
            let d0 = SoftwareInputLine(offset: 5, level: 1, edges: .falls)
            let d1 = BeforeRead(SoftwareInputLine(offset: 6, level: 1, edges: .falls))
            func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine { fatalError("no outputs") }
            func requestInput(offset: Int, consumer: String, activeLow: Bool, bias: GPIOBias, debounceMicroseconds: Int,
                              edges: GPIOEdges) throws -> GPIOInputLine { offset == 5 ? d0 : d1 }
        }
        let chip = Chip()
        let keypad = try WiegandKeypad(chip: chip, d0: 5, d1: 6)
        defer { keypad.shutDown() }
        let keys = Keys()
        keypad.start(keys)
        let typed: [KeypadKey] = [.digit(5), .star, .digit(2), .digit(0)]
        for key in typed {
            // The key's pulses, stamped 16 ms before now: up to its first 1 bit now, the rest just before D1's read.
            let bits = WiegandKeypadPolicy.bits(of: key, width: 8)
            var t = monotonicNanoseconds() - 16_000_000
            var pulses: [(one: Bool, at: UInt64)] = []
            for bit in bits {
                pulses.append((bit, t))
                t += 2_000_000
            }
            func raise(_ some: ArraySlice<(one: Bool, at: UInt64)>) {
                for p in some { (p.one ? chip.d1.line : chip.d0).raise([(0, p.at), (1, p.at + 100_000)]) }
            }
            let cut = bits.firstIndex(of: true)! + 1
            chip.d1.beforeNextRead { raise(pulses[cut...]) }
            raise(pulses[..<cut])
            usleep(100_000)
        }
        let deadline = Date().addingTimeInterval(5)
        while keys.pressed.count < typed.count, Date() < deadline { usleep(20_000) }
        XCTAssertEqual(keys.pressed, typed)
    }
}
