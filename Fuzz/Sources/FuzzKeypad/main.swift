// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// A Wiegand keypad's lines (D0, D1) and the keys they make: any edges at any times are assembled
/// into bursts without a crash, and the bursts are what a second, plain reading of the same edges
/// says they are: 4 bits a key of value 0-11, 8 bits a key whose high nibble is its low one's
/// complement, anything else refused with its count of bits (at most 64 kept). The keys go on
/// into a PIN's entry (its window, `*`, `#`, eight digits), which never holds more than 8 digits
/// nor gives a PIN of none; no key, burst or PIN says a digit in its description. The first bytes
/// are a KIOSK_KEYPAD value, read and read back.
///
/// Each byte after the first newline is an edge: bit 0 the line (D1 when set), bit 1 the level the
/// line went to (a pulse pulls it low), bits 2-7 the time since the edge before, in steps of
/// 0.5 ms up to 31.5 ms (a keypad's bit comes every 1-2 ms, a burst ends after 25 ms without one).
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0x0A) ?? bytes.count
    let setting = String(decoding: bytes[..<split], as: UTF8.self)
    if let s = KeypadSetting(setting) {
        precondition(KeypadSetting(s.description) == s, "a keypad setting read back differently")
        precondition(s.lines.allSatisfy { (0...511).contains($0) } && Set(s.lines).count == s.lines.count)
    }
    var wiegand = WiegandKeypadPolicy()
    var plain = PlainBursts(gapNs: wiegand.gapNs)
    var entry = PINEntryPolicy(askedNs: 1_000_000_000, windowS: 3)
    var t: UInt64 = 1_000_000_000
    func take(_ burst: WiegandKeypadPolicy.Burst?, _ expected: WiegandKeypadPolicy.Burst?, at now: UInt64) {
        precondition(burst == expected, "burst \(String(describing: burst)), a plain reading says \(String(describing: expected))")
        guard let burst else { return }
        precondition(!burst.description.contains { $0.isNumber } || burst.description.hasPrefix("refused"))
        guard case .key(let k) = burst else { return }
        precondition(k.description == "(a key)")
        switch entry.key(k, at: now) {
        case .entered(let pin)?:
            precondition((1...PINEntryPolicy.maxDigits).contains(pin.digits.count) && pin.digits.allSatisfy { $0 <= 9 })
            precondition(pin.description == "(a PIN of \(pin.digits.count) digits)")
            precondition(pin.lastDigitLessOne.digits.count == pin.digits.count)
        case .timedOut?: precondition(now >= entry.deadlineNs)
        case nil: break
        }
        precondition(entry.typedCount < PINEntryPolicy.maxDigits)
        if entry.isOver { entry = PINEntryPolicy(askedNs: now, windowS: 3) }
    }
    for b in bytes.dropFirst(split + 1) {
        t += UInt64(b >> 2) * 500_000
        let one = b & 1 == 1, level = Int(b >> 1 & 1)
        let expected = plain.edge(one: one, level: level, at: t)
        take(wiegand.edge(one: one, level: level, atNs: t), expected, at: t)
        precondition(wiegand.receiving == plain.receiving)
    }
    let end = t + wiegand.gapNs
    take(wiegand.check(atNs: end), plain.end(at: end), at: end)
    precondition(!wiegand.receiving && wiegand.burstEndsNs == nil)
    return 0
}

/// The bursts read the plain way, for comparison: every falling edge a bit, a burst ended by a
/// gap of `gapNs`, its value read from the bits' text.
struct PlainBursts {
    let gapNs: UInt64
    var bits = ""
    var lastNs: UInt64 = 0
    var receiving: Bool { !bits.isEmpty }

    mutating func edge(one: Bool, level: Int, at t: UInt64) -> WiegandKeypadPolicy.Burst? {
        guard level == 0 else { return nil }
        let ended = end(at: t)
        bits += one ? "1" : "0"
        lastNs = t
        return ended
    }

    mutating func end(at t: UInt64) -> WiegandKeypadPolicy.Burst? {
        guard !bits.isEmpty, t - lastNs >= gapNs else { return nil }
        defer { bits = "" }
        let keys: [Int: KeypadKey] = [10: .star, 11: .hash].merging((0...9).map { ($0, .digit(UInt8($0))) }) { a, _ in a }
        if bits.count == 4, let v = Int(bits, radix: 2), let k = keys[v] { return .key(k) }
        if bits.count == 8, let high = Int(bits.prefix(4), radix: 2), let low = Int(bits.suffix(4), radix: 2),
           high + low == 15, let k = keys[low] { return .key(k) }
        return .refused(bits: min(bits.count, WiegandKeypadPolicy.maxBits))
    }
}

@_cdecl("FuzzKeypad_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
