// SPDX-License-Identifier: Apache-2.0
import XCTest
@testable import Policy

final class KeypadPolicyTests: XCTestCase {
    let s: UInt64 = 1_000_000_000

    // MARK: the bursts

    func testFourBitBurstsAreTheKeysValues() {
        for v in 0...11 {
            let bits = WiegandKeypadPolicy.bits(of: KeypadKey(wiegandValue: v)!, width: 4)
            XCTAssertEqual(WiegandKeypadPolicy.decode(bits), .key(KeypadKey(wiegandValue: v)!))
        }
        XCTAssertEqual(WiegandKeypadPolicy.decode([true, true, false, false]), .refused(bits: 4))  // 12: no key
        XCTAssertEqual(WiegandKeypadPolicy.decode([true, true, true, true]), .refused(bits: 4))
    }

    func testEightBitBurstsAreCheckedByTheirComplement() {
        // Key 5: 1010 0101; * (10): 0101 1010; # (11): 0100 1011.
        XCTAssertEqual(WiegandKeypadPolicy.bits(of: .digit(5), width: 8), [true, false, true, false, false, true, false, true])
        XCTAssertEqual(WiegandKeypadPolicy.decode([false, true, false, true, true, false, true, false]), .key(.star))
        XCTAssertEqual(WiegandKeypadPolicy.decode([false, true, false, false, true, false, true, true]), .key(.hash))
        // One bit flipped in either half: refused, never another key.
        var bad = WiegandKeypadPolicy.bits(of: .digit(5), width: 8)
        for i in 0..<8 {
            bad[i].toggle()
            XCTAssertEqual(WiegandKeypadPolicy.decode(bad), .refused(bits: 8), "bit \(i)")
            bad[i].toggle()
        }
        XCTAssertEqual(WiegandKeypadPolicy.decode(Array(repeating: true, count: 26)), .refused(bits: 26))
    }

    /// Pulses 2 ms apart make one burst; it ends when 25 ms pass with no pulse, on the edges' own stamps.
    func testEdgesBecomeABurstAfterTheGap() {
        var p = WiegandKeypadPolicy()
        var t: UInt64 = 5 * s
        var out: [WiegandKeypadPolicy.Burst] = []
        for key in [KeypadKey.digit(7), .hash] {
            for bit in WiegandKeypadPolicy.bits(of: key, width: 8) {
                if let b = p.edge(one: bit, level: 0, atNs: t) { out.append(b) }
                XCTAssertNil(p.edge(one: bit, level: 1, atNs: t + 50_000))  // the line back up is no bit
                t += 2_000_000
            }
            XCTAssertNil(p.check(atNs: t + 20_000_000))
            t += 300_000_000  // a person's next press
        }
        XCTAssertEqual(out, [.key(.digit(7))])  // the first ended when the second began
        XCTAssertEqual(p.check(atNs: t), .key(.hash))
        XCTAssertNil(p.check(atNs: t + s))
        XCTAssertFalse(p.receiving)
    }

    /// Hostile lines (as FuzzKeypad drives them): a burst of noise longer than any key is refused
    /// with the bits kept (64), edges back up or repeated at one instant are no bits, and the
    /// key after the noise reads as itself.
    func testNoiseIsRefusedAndTheNextKeyStillReads() {
        var p = WiegandKeypadPolicy()
        var t: UInt64 = 7 * s
        var out: [WiegandKeypadPolicy.Burst] = []
        for i in 0..<100 {
            if let b = p.edge(one: i % 3 == 0, level: 0, atNs: t) { out.append(b) }
            XCTAssertNil(p.edge(one: i % 3 == 0, level: 1, atNs: t))  // back up at the same instant
            t += 1_000_000
        }
        t += 30_000_000
        for bit in WiegandKeypadPolicy.bits(of: .digit(9), width: 8) {
            if let b = p.edge(one: bit, level: 0, atNs: t) { out.append(b) }
            t += 2_000_000
        }
        if let b = p.check(atNs: t + WiegandKeypadPolicy.defaultGapNs) { out.append(b) }
        XCTAssertEqual(out, [.refused(bits: WiegandKeypadPolicy.maxBits), .key(.digit(9))])
        XCTAssertEqual("\(out[0])", "refused 64 bits")
        XCTAssertEqual("\(out[1])", "key", "a key's burst says no digit")
    }

    /// D0 and D1 are read one after the other: edges that come between the two reads (stamped
    /// well before, as the simulated lines' writer stamps them, or on a busy machine) must not pass
    /// an earlier edge of D0 not yet read. Key 5 is 1010 0101 (bits 0, 2, 5, 7 on D1): the first
    /// look reads D0's bit 1, then D1's bits 0, 2 and 5, bits 3 and 4 of D0 having come after
    /// D0 was read (the CI run that typed a PIN of 7 digits: its first key refused, 8 bits).
    func testAnEdgeWaitsForALaterLookAtBothLines() {
        let t0: UInt64 = 9 * s, now = t0 + 40_000_000
        func edges(_ bits: [Int], one: Bool) -> [WiegandEdgeOrder.Edge] {
            bits.map { .init(one: one, level: 0, timestampNs: t0 + UInt64($0) * 2_000_000) }
        }
        var order = WiegandEdgeOrder()
        var given: [WiegandEdgeOrder.Edge] = []
        order.beginLook()
        order.read(edges([1], one: false))
        order.read(edges([0, 2, 5], one: true))
        XCTAssertEqual(order.settled(nowNs: now), [], "nothing read in this look is given: D0 may hold earlier edges")
        XCTAssertEqual(order.nextLookNs, 0, "look again at once")
        order.beginLook()
        order.read(edges([3, 4], one: false))
        given += order.settled(nowNs: now)
        XCTAssertEqual(given.map(\.timestampNs), [t0, t0 + 2_000_000, t0 + 4_000_000], "up to the first edge of this look")
        order.beginLook()
        order.read(edges([6], one: false))
        order.read(edges([7], one: true))
        given += order.settled(nowNs: now)
        order.beginLook()
        given += order.settled(nowNs: now)
        XCTAssertTrue(order.isEmpty)
        XCTAssertNil(order.nextLookNs)
        XCTAssertEqual(given.map(\.timestampNs), (0..<8).map { t0 + UInt64($0) * 2_000_000 })
        var p = WiegandKeypadPolicy()
        for e in given { XCTAssertNil(p.edge(one: e.one, level: e.level, atNs: e.timestampNs)) }
        XCTAssertEqual(p.check(atNs: now + WiegandKeypadPolicy.defaultGapNs), .key(.digit(5)))
    }

    /// An edge read in an earlier look still waits until it is `settleNs` old by its stamp: the
    /// kernel may queue it a little after a later edge of the other line.
    func testAnEdgeWaitsUntilItIsSettleOld() {
        let t: UInt64 = 3 * s
        var order = WiegandEdgeOrder()
        order.beginLook()
        order.read([.init(one: true, level: 0, timestampNs: t)])
        order.beginLook()
        XCTAssertEqual(order.nextLookNs, t + WiegandEdgeOrder.settleNs)
        XCTAssertEqual(order.settled(nowNs: t + 1_000_000), [])
        XCTAssertEqual(order.settled(nowNs: t + WiegandEdgeOrder.settleNs).count, 1)
        XCTAssertTrue(order.isEmpty)
    }

    func testEvdevCodes() {
        XCTAssertEqual(KeypadKey(evdevCode: 2), .digit(1))
        XCTAssertEqual(KeypadKey(evdevCode: 11), .digit(0))
        XCTAssertEqual(KeypadKey(evdevCode: 82), .digit(0))
        XCTAssertEqual(KeypadKey(evdevCode: 79), .digit(1))
        XCTAssertEqual(KeypadKey(evdevCode: 75), .digit(4))
        XCTAssertEqual(KeypadKey(evdevCode: 55), .star, "a USB number pad's * key (KEY_KPASTERISK) clears")
        XCTAssertEqual(KeypadKey(evdevCode: 73), .digit(9))
        XCTAssertEqual(KeypadKey(evdevCode: 96), .hash)
        XCTAssertEqual(KeypadKey(evdevCode: 28), .hash)
        XCTAssertEqual(KeypadKey(evdevCode: 1), .star)
        XCTAssertEqual(KeypadKey(evdevCode: 14), .star)
        XCTAssertNil(KeypadKey(evdevCode: 30))  // KEY_A
        XCTAssertEqual("\(KeypadKey.digit(3))", "(a key)")
        XCTAssertEqual(KeypadKey.digit(3).osdpByte, 0x33)
    }

    // MARK: the entry

    func testHashEndsAndStarClears() {
        var e = PINEntryPolicy(askedNs: 10 * s, windowS: 10)
        XCTAssertNil(e.key(.hash, at: 10 * s))  // nothing typed: ignored
        for d: UInt8 in [9, 9] { XCTAssertNil(e.key(.digit(d), at: 11 * s)) }
        XCTAssertNil(e.key(.star, at: 12 * s))
        XCTAssertEqual(e.typedCount, 0)
        for d: UInt8 in [1, 2, 3, 4] { XCTAssertNil(e.key(.digit(d), at: 13 * s)) }
        XCTAssertEqual(e.key(.hash, at: 14 * s), .entered(PINDigits([1, 2, 3, 4])))
        XCTAssertNil(e.key(.digit(5), at: 14 * s))  // over
        XCTAssertNil(e.check(at: 30 * s))
    }

    func testTheEighthDigitEnds() {
        var e = PINEntryPolicy(askedNs: 0, windowS: 10)
        for d: UInt8 in 1...7 { XCTAssertNil(e.key(.digit(d), at: s)) }
        XCTAssertEqual(e.key(.digit(8), at: s), .entered(PINDigits([1, 2, 3, 4, 5, 6, 7, 8])))
    }

    /// The window on the injected clock: open a nanosecond before it ends, over at its end.
    func testTheWindow() {
        var e = PINEntryPolicy(askedNs: 3 * s, windowS: 10)
        XCTAssertNil(e.key(.digit(1), at: 3 * s))
        XCTAssertNil(e.check(at: 13 * s - 1))
        XCTAssertEqual(e.check(at: 13 * s), .timedOut)
        XCTAssertNil(e.check(at: 14 * s))
        var late = PINEntryPolicy(askedNs: 0, windowS: 3)
        XCTAssertEqual(late.key(.hash, at: 3 * s), .timedOut)  // a key after the window ends it
    }

    func testAPINNeverShowsItsDigits() {
        let pin = PINDigits([4, 7, 1, 1])
        XCTAssertEqual("\(pin)", "(a PIN of 4 digits)")
        XCTAssertEqual("\(PINEntryPolicy.Step.entered(pin))".contains("4"), true)  // the count only
        XCTAssertFalse("\(PINEntryPolicy.Step.entered(pin))".contains("7"))
        XCTAssertEqual(pin.ascii, Array("4711".utf8))
        XCTAssertEqual(PINDigits([1, 2, 3, 0]).lastDigitLessOne, PINDigits([1, 2, 3, 9]))
    }

    // MARK: duress

    func testDuressCodes() {
        let hash = PINHash(logN: 10, r: 1, p: 1, salt: Array(repeating: 1, count: 8), key: Array(repeating: 2, count: 16))
        let other = PINHash(logN: 10, r: 1, p: 1, salt: Array(repeating: 3, count: 8), key: Array(repeating: 4, count: 16))
        // A fake hash: the PIN 1239 is `hash`'s, 5555 is `other`'s.
        var calls = 0
        let matches = { (d: PINDigits, h: PINHash) -> Bool in
            calls += 1
            return (d == PINDigits([1, 2, 3, 9]) && h == hash) || (d == PINDigits([5, 5, 5, 5]) && h == other)
        }
        let plain = PinsEntry(subject: "a", hash: hash, line: 1)
        let listed = PinsEntry(subject: "a", hash: hash, duress: other, line: 1)
        XCTAssertEqual(PINJudgement.judge(PINDigits([1, 2, 3, 9]), plain, duress: .plus1, matches: matches), .ok)
        XCTAssertEqual(PINJudgement.judge(PINDigits([1, 2, 3, 0]), plain, duress: .plus1, matches: matches), .duress)  // 9 + 1 = 0
        XCTAssertEqual(PINJudgement.judge(PINDigits([1, 2, 3, 8]), plain, duress: .plus1, matches: matches), .wrong)
        XCTAssertEqual(PINJudgement.judge(PINDigits([1, 2, 3, 0]), plain, duress: .off, matches: matches), .wrong)
        XCTAssertEqual(PINJudgement.judge(PINDigits([1, 2, 3, 0]), listed, duress: .listed, matches: matches), .wrong)
        XCTAssertEqual(PINJudgement.judge(PINDigits([5, 5, 5, 5]), listed, duress: .listed, matches: matches), .duress)
        XCTAssertEqual(PINJudgement.judge(PINDigits([5, 5, 5, 5]), plain, duress: .listed, matches: matches), .wrong)
        // Two hashes a check whether or not the first matched, whether or not a duress hash is listed.
        calls = 0
        _ = PINJudgement.judge(PINDigits([1, 2, 3, 9]), plain, duress: .listed, matches: matches)
        XCTAssertEqual(calls, 2)
    }

    // MARK: the lockout

    func testFiveWrongInTenMinutesLockForTenMinutes() {
        var t = UsedTokens()
        let now: Int64 = 1_800_000_000
        for i in 0..<4 {
            XCTAssertEqual(PINLockout.wrong(&t, id: "ab", now: now + Int64(i) * 100).locked, false)
            XCTAssertFalse(PINLockout.isLocked(t, id: "ab", now: now + Int64(i) * 100))
        }
        XCTAssertEqual(PINLockout.wrong(&t, id: "ab", now: now + 599).locked, true)
        XCTAssertTrue(PINLockout.isLocked(t, id: "ab", now: now + 599))
        XCTAssertTrue(PINLockout.isLocked(t, id: "ab", now: now + 599 + 599))
        XCTAssertFalse(PINLockout.isLocked(t, id: "ab", now: now + 599 + 600))
        XCTAssertFalse(PINLockout.isLocked(t, id: "cd", now: now + 599))  // another subject
        // The store's file keeps it (a restart reads it back).
        guard case .success(let back) = UsedTokens.parse(t.fileText) else { return XCTFail("the store's text does not read") }
        XCTAssertTrue(PINLockout.isLocked(back, id: "ab", now: now + 700))
    }

    func testWrongPINsSpreadOverMoreThanTenMinutesDoNotLock() {
        var t = UsedTokens()
        let now: Int64 = 1_800_000_000
        for i in 0..<4 { _ = PINLockout.wrong(&t, id: "ab", now: now + Int64(i)) }
        // The window began with the first: 600 s later it is over, and the count begins again.
        XCTAssertEqual(PINLockout.wrong(&t, id: "ab", now: now + 601).locked, false)
        XCTAssertEqual(t.uses(of: PINLockout.wrongKey("ab")), 1)
    }

    // MARK: the pins file

    func testPinsFile() throws {
        let h = "scrypt$13$8$1$" + Base64URL.encode(Array(repeating: 7, count: 16)) + "$" + Base64URL.encode(Array(repeating: 9, count: 32))
        let file = try PinsFile.parse("# the door's PINs\n\nalice \(h)\nbob \(h) duress=\(h)\n")
        XCTAssertEqual(file.count, 2)
        XCTAssertEqual(file.entry(for: "alice")?.hash.logN, 13)
        XCTAssertEqual(file.entry(for: "alice")?.hash.key, Array(repeating: 9, count: 32))
        XCTAssertNotNil(file.entry(for: "bob")?.duress)
        XCTAssertEqual(file.entry(for: "bob")?.line, 4)
        XCTAssertEqual(PINHash(h)?.text, h)
        func fails(_ text: String, line: Int, _ what: String) {
            XCTAssertThrowsError(try PinsFile.parse(text), what) { e in
                XCTAssertEqual((e as? PinsFileError)?.line, line, what)
                XCTAssertFalse("\(e)".contains("scrypt$13"), "the error shows no hash")
            }
        }
        fails("alice \(h)\nbob\n", line: 2, "no hash")
        fails("alice \(h) \(h)\n", line: 1, "a third word that is not duress=")
        fails("alice \(h)\nalice \(h)\n", line: 2, "a subject twice")
        fails("a scrypt$9$8$1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "LOGN 9")
        fails("a scrypt$21$8$1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "LOGN 21: minutes of a Pi")
        fails("a scrypt$13$8$1$AAAA$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "a salt of 3 bytes")
        fails("a scrypt$13$8$1$AAAAAAAAAAA=$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "padding")
        fails("a bcrypt$13$8$1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "another hash")
        fails("a scrypt$013$8$1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA\n", line: 1, "a leading zero")
    }

    /// Hostile and foreign files (found reading the pins file as FuzzPins does): a file saved
    /// on Windows (CRLF; Swift's "\r\n" is one character, and the file was one line that did not
    /// read), and a subject ending in a scalar that joins the space after it into one character
    /// (U+0600 and a space: the line's words did not part, a file written back from its entries
    /// did not read). Lines and words are cut on scalars; each line's number is still right.
    func testPinsFileOnScalarsNotCharacters() throws {
        let h = "scrypt$11$8$1$" + Base64URL.encode(Array(repeating: 3, count: 16)) + "$" + Base64URL.encode(Array(repeating: 4, count: 32))
        let windows = try PinsFile.parse("# saved on Windows\r\nalice \(h)\r\nbob\t\(h) duress=\(h)\r\n")
        XCTAssertEqual(windows.count, 2)
        XCTAssertEqual(windows.entry(for: "bob")?.line, 3)
        XCTAssertNotNil(windows.entry(for: "bob")?.duress)
        XCTAssertThrowsError(try PinsFile.parse("alice \(h)\r\nbob\r\n")) { XCTAssertEqual(($0 as? PinsFileError)?.line, 2) }
        // U+0600 is a prefix scalar: with the space after it, one character.
        let joined = try PinsFile.parse("x\u{600}\t\(h)\n")
        XCTAssertEqual(joined.entry(for: "x\u{600}")?.hash.logN, 11)
        XCTAssertEqual(try PinsFile.parse("x\u{600} \(h)\n"), joined, "the same file with a space")
        // A comment is a line whose first scalar is `#`, a combining mark after it or not.
        XCTAssertEqual(try PinsFile.parse("#\u{301} not a subject \(h)\n").count, 0)
        // A `$` with a combining mark after it is still a `$` to the hash's reader: refused all the same.
        XCTAssertNil(PINHash("scrypt$11$\u{301}8$1$" + Base64URL.encode(Array(repeating: 3, count: 16)) + "$" + Base64URL.encode(Array(repeating: 4, count: 32))))
        XCTAssertEqual(PINHash(h)?.text, h)
    }

    /// The pins file is kept like a key: others read nothing, the group writes nothing, root or
    /// the kiosk's user owns it.
    func testPinsFileKeeping() {
        XCTAssertNil(PinsFileKeeping.problem(mode: 0o600, owner: "root"))
        XCTAssertNil(PinsFileKeeping.problem(mode: 0o640, owner: "kiosk"))
        XCTAssertEqual(PinsFileKeeping.problem(mode: 0o644, owner: "root"), "others may read it (mode 0644): chmod o-rwx")
        XCTAssertEqual(PinsFileKeeping.problem(mode: 0o660, owner: "root"), "its group may write it (mode 0660): chmod g-w")
        XCTAssertEqual(PinsFileKeeping.problem(mode: 0o600, owner: "pi"), "it belongs to pi: chown root:kiosk")
        XCTAssertEqual(PinsFileKeeping.problem(mode: 0o666, owner: "pi")?.split(separator: ";").count, 3)
    }

    func testKeypadSetting() {
        XCTAssertEqual(KeypadSetting("evdev:/dev/input/by-id/usb-x-event-kbd"), .evdev(path: "/dev/input/by-id/usb-x-event-kbd"))
        XCTAssertEqual(KeypadSetting("wiegand:5,6"), .wiegand(d0: 5, d1: 6))
        for bad in ["evdev:", "evdev:dev/input", "wiegand:5", "wiegand:5,5", "wiegand:5,06", "wiegand:-1,2", "usb", "wiegand:5,600"] {
            XCTAssertNil(KeypadSetting(bad), bad)
        }
    }

    /// A node the kiosk's user may not read: a node its group cannot read (a keypad plugged in
    /// just now, before udev gives it to `input`) is not a missing group membership.
    func testKeypadAccessAdvice() {
        XCTAssertEqual(KeypadAccess.advice(group: "input", groupReads: true), "the kiosk's user must be in the input group, which owns its node")
        for (group, reads) in [("root", true), ("input", false), (nil, true), (nil, false)] as [(String?, Bool)] {
            XCTAssertTrue(KeypadAccess.advice(group: group, groupReads: reads).hasPrefix("its node is not given to a group yet"), "\(group ?? "nil") \(reads)")
        }
    }
}
