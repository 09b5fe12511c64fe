// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class ScreenLookTests: XCTestCase {
    let ms = UInt64(1_000_000)
    let frame = UInt64(33_333_334)  // 30 fps, rounded up so that 12 frames make 400 ms

    /// Runs `frames` frames from `t`, returning the switches with their frame index.
    func run(_ look: inout ScreenLook, from t: inout UInt64, frames: Int, torch: Bool = true, held: Bool = true,
             read: (Int) -> Bool = { _ in false }) -> [(Int, ScreenLook.Switch)] {
        var out: [(Int, ScreenLook.Switch)] = []
        for i in 0..<frames {
            if let s = look.observe(at: t, torchWanted: torch, held: held, read: read(i)) { out.append((i, s)) }
            t += frame
        }
        return out
    }

    func testAScreenUnderTheTorchGetsOneLookAfterTheWaitAndTheTorchComesBack() {
        var look = ScreenLook(settings: .init(afterMs: 400))
        var t: UInt64 = 1_000 * ms
        let switches = run(&look, from: &t, frames: 90)
        // 400 ms at 30 fps: the 13th frame (index 12, 400 ms after the first); back 700 ms later.
        XCTAssertEqual(switches.map(\.1), [.off, .on(read: false)])
        XCTAssertEqual(switches[0].0, 12)
        XCTAssertEqual(switches[1].0, 12 + 21)
        XCTAssertEqual(look.looks, 1)
    }

    func testTheLookEndsAtOnceWhenTheCodeReads() {
        var look = ScreenLook(settings: .init(afterMs: 400))
        var t: UInt64 = 0
        let switches = run(&look, from: &t, frames: 60, read: { $0 >= 15 })
        XCTAssertEqual(switches.map(\.1), [.off, .on(read: true)])
        XCTAssertEqual(switches[1].0, 15)
    }

    func testAPaperCodeThatReadsNeverMovesTheTorch() {
        var look = ScreenLook(settings: .init(afterMs: 400))
        var t: UInt64 = 0
        XCTAssertTrue(run(&look, from: &t, frames: 300, read: { $0 >= 3 }).isEmpty)
        XCTAssertEqual(look.looks, 0)
    }

    func testOneLookAPresentationAndAnotherForTheNext() {
        var look = ScreenLook(settings: .init(afterMs: 400))
        var t: UInt64 = 0
        XCTAssertEqual(run(&look, from: &t, frames: 150).count, 2)  // an unreadable thing held 5 s: one blink
        // Taken away for a moment (less than the end time): the same presentation.
        XCTAssertTrue(run(&look, from: &t, frames: 5, held: false).isEmpty)
        XCTAssertTrue(run(&look, from: &t, frames: 60).isEmpty)
        // Taken away, then a new one: looked at again.
        XCTAssertTrue(run(&look, from: &t, frames: 30, held: false).isEmpty)
        XCTAssertEqual(run(&look, from: &t, frames: 60).map(\.1), [.off, .on(read: false)])
        XCTAssertEqual(look.looks, 2)
    }

    func testNoLookWithoutTheTorchOrWithNothingHeldOrWhenTurnedOff() {
        var t: UInt64 = 0
        var look = ScreenLook(settings: .init(afterMs: 400))
        XCTAssertTrue(run(&look, from: &t, frames: 100, torch: false).isEmpty)
        XCTAssertTrue(run(&look, from: &t, frames: 100, held: false).isEmpty)
        var never = ScreenLook(settings: .init(afterMs: 0))
        XCTAssertTrue(run(&never, from: &t, frames: 100).isEmpty)
    }

    func testTheTorchPolicyIsQuietDuringTheLookAndItsSettleTime() {
        var look = ScreenLook(settings: .init(afterMs: 400))
        var t: UInt64 = 0
        _ = run(&look, from: &t, frames: 13)
        XCTAssertTrue(look.looking)
        XCTAssertTrue(look.quiet(at: t))
        _ = run(&look, from: &t, frames: 21)
        XCTAssertFalse(look.looking)
        XCTAssertTrue(look.quiet(at: t))
        XCTAssertFalse(look.quiet(at: t + 600 * ms))
        // The room lit up meanwhile (the torch no longer wanted): it is not switched back on.
        var lit = ScreenLook(settings: .init(afterMs: 400))
        t = 0
        _ = run(&lit, from: &t, frames: 13)
        XCTAssertNil(lit.observe(at: t, torchWanted: false, held: true, read: false))
        XCTAssertFalse(lit.looking)
    }
}
