// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class TorchPolicyTests: XCTestCase {
    let s = UInt64(1_000_000_000)

    func policy(hold: UInt64 = 2_000_000_000) -> TorchPolicy {
        TorchPolicy(settings: .init(mode: .auto, onBelow: 50, offAbove: 80, holdNs: hold))
    }

    func testLearnsTheTorchLightAndDiscountsIt() {
        var p = policy()
        var t: UInt64 = 0
        var changes: [TorchPolicy.Change] = []
        // Dark: 30. The torch adds 100 once on.
        for _ in 0..<40 {
            changes += p.observe(brightness: p.isOn ? 130 : 30, at: t)
            t += s / 10
        }
        XCTAssertEqual(changes.map(\.on), [true])
        XCTAssertEqual(p.torchLight, 100)
        XCTAssertEqual(p.ambient, 30)
    }

    func testFramesDuringTheSwitchAreNotTrusted() {
        var p = policy()
        var t: UInt64 = 0
        while !p.isOn { _ = p.observe(brightness: 30, at: t); t += s / 10 }
        // The LED and the exposure ramp up over the next half second: those frames must not be
        // learned from, nor decide anything.
        for b in [45.0, 60, 90, 110, 125] { XCTAssertEqual(p.observe(brightness: b, at: t), []); t += s / 10 }
        for _ in 0..<10 { _ = p.observe(brightness: 130, at: t); t += s / 10 }
        XCTAssertEqual(p.torchLight, 100)
        XCTAssertEqual(p.ambient, 30)
    }

    func testRelearnsAfterHalfAnHourWithAShortLook() {
        var p = policy()
        var t: UInt64 = 0
        var changes: [TorchPolicy.Change] = []
        for _ in 0..<(31 * 60 * 2) {
            // 2 frames a second for 31 minutes; the room stays at 30, the LED adds 100.
            changes += p.observe(brightness: p.isOn ? 130 : 30, at: t)
            t += s / 2
        }
        XCTAssertEqual(changes.map(\.on), [true, false, true])
        XCTAssertEqual(changes[1].reason, "re-learning the torch's light")
        XCTAssertEqual(p.torchLight, 100)
    }

    func testAFigureTheTorchAloneCannotExplainIsCorrected() {
        var p = policy()
        var t: UInt64 = 0
        for _ in 0..<40 { _ = p.observe(brightness: p.isOn ? 130 : 30, at: t); t += s / 10 }
        XCTAssertEqual(p.torchLight, 100)
        // The LED ages and adds only 60: the figure (90) is below the learned light alone, so the
        // learned figure shrinks to it; the torch stays on.
        for _ in 0..<30 { XCTAssertEqual(p.observe(brightness: 90, at: t), []); t += s / 10 }
        XCTAssertEqual(p.torchLight, 90)
        XCTAssertTrue(p.isOn)
        // Morning: the room brightens; the ambient part passes 80 and the torch goes off.
        var changes: [TorchPolicy.Change] = []
        for _ in 0..<30 { changes += p.observe(brightness: 200, at: t); t += s / 10 }
        XCTAssertEqual(changes.map(\.on), [false])
    }
}
