// SPDX-License-Identifier: Apache-2.0
/// A key of the door's keypad: a digit, `*` (clears) or `#` (ends the PIN). Never shown: a key's
/// description says only that it is a key, so that no digit reaches a log line by accident.
public enum KeypadKey: Equatable, Sendable, CustomStringConvertible {
    case digit(UInt8)
    case star
    case hash

    /// A Wiegand keypad's value: 0-9, 10 `*`, 11 `#` (interface.md 0.6).
    public init?(wiegandValue v: Int) {
        switch v {
        case 0...9: self = .digit(UInt8(v))
        case 10: self = .star
        case 11: self = .hash
        default: return nil
        }
    }

    /// A Linux input event's key code (linux/input-event-codes.h): the number row, the numeric
    /// pad and the telephone keypad's codes; Enter (either) is `#`, Esc, Backspace or the pad's `*` `*`.
    public init?(evdevCode c: Int) {
        switch c {
        case 2...10: self = .digit(UInt8(c - 1))  // KEY_1 .. KEY_9
        case 11: self = .digit(0)  // KEY_0
        case 82: self = .digit(0)  // KEY_KP0
        case 79, 80, 81: self = .digit(UInt8(c - 78))  // KEY_KP1-3
        case 75, 76, 77: self = .digit(UInt8(c - 71))  // KEY_KP4-6
        case 71, 72, 73: self = .digit(UInt8(c - 64))  // KEY_KP7-9
        case 0x200...0x209: self = .digit(UInt8(c - 0x200))  // KEY_NUMERIC_0-9
        case 28, 96, 0x20b: self = .hash  // KEY_ENTER, KEY_KPENTER, KEY_NUMERIC_POUND
        // And KEY_KPASTERISK: the key a USB number pad labels `*` (the contract names Esc and
        // Backspace; a number pad has neither, and its `*` sends this).
        case 1, 14, 55, 0x20a: self = .star  // KEY_ESC, KEY_BACKSPACE, KEY_KPASTERISK, KEY_NUMERIC_STAR
        default: return nil
        }
    }

    /// The Wiegand keypad's value of the key (OSDP's osdp_KEYPAD carries digits as ASCII).
    public var wiegandValue: Int {
        switch self {
        case .digit(let d): return Int(d)
        case .star: return 10
        case .hash: return 11
        }
    }

    /// osdp_KEYPAD's byte for the key (SIA OSDP 2.2 7.12: ASCII `0`-`9`, `*` 0x7F, `#` 0x0D).
    public var osdpByte: UInt8 {
        switch self {
        case .digit(let d): return 0x30 + d
        case .star: return 0x7F
        case .hash: return 0x0D
        }
    }

    public var description: String { "(a key)" }
}

/// A keypad's key bursts on a Wiegand pair (D0, D1), assembled from the lines' edges as the kernel
/// stamped them: a pulse on D0 (the line pulled low) is a 0 bit, on D1 a 1 bit; a burst ends when no
/// pulse has come for `gapNs`. A 4-bit burst is the key's value (MSB first); an 8-bit burst is the
/// value in its low nibble and that nibble's complement in its high one, and is refused when the
/// two disagree (a bit lost or added by noise). Anything else is refused: a card's 26 bits, a
/// glitch.
public struct WiegandKeypadPolicy: Equatable, Sendable {
    /// A real keypad sends a bit every 1-2 ms (pulse 50-100 us); between two key presses lie a
    /// human's 100 ms or more.
    public static let defaultGapNs: UInt64 = 25_000_000
    /// More bits than any key burst (a card's frame, noise): kept no further.
    public static let maxBits = 64

    public enum Burst: Equatable, Sendable, CustomStringConvertible {
        case key(KeypadKey)
        /// A burst that is no key: how many bits it had (the 8-bit form's complement failed when 8).
        case refused(bits: Int)
        public var description: String {
            switch self {
            case .key: return "key"
            case .refused(let n): return "refused \(n) bits"
            }
        }
    }

    public let gapNs: UInt64
    private var bits: [Bool] = []
    private var lastBitNs: UInt64 = 0

    public init(gapNs: UInt64 = WiegandKeypadPolicy.defaultGapNs) { self.gapNs = gapNs }

    /// Whether a burst is being received.
    public var receiving: Bool { !bits.isEmpty }
    /// When the burst under way ends if no pulse comes (nil: none under way).
    public var burstEndsNs: UInt64? { bits.isEmpty ? nil : lastBitNs &+ gapNs }

    /// An edge on D0 (`one` false) or D1: `level` the physical level it went to (a pulse pulls the
    /// line low), at the kernel's `timestampNs`. Returns the burst before it when this edge comes
    /// after that burst's gap.
    public mutating func edge(one: Bool, level: Int, atNs t: UInt64) -> Burst? {
        guard level == 0 else { return nil }
        let ended = check(atNs: t)
        if bits.count < WiegandKeypadPolicy.maxBits { bits.append(one) } else { bits.append(one); bits.removeFirst() }
        lastBitNs = t
        return ended
    }

    /// The burst under way, once `gapNs` has passed since its last pulse.
    public mutating func check(atNs t: UInt64) -> Burst? {
        guard let end = burstEndsNs, t >= end else { return nil }
        defer { bits = [] }
        return WiegandKeypadPolicy.decode(bits)
    }

    /// A burst's bits as a key, or why not.
    public static func decode(_ bits: [Bool]) -> Burst {
        func value(_ b: ArraySlice<Bool>) -> Int { b.reduce(0) { $0 << 1 | ($1 ? 1 : 0) } }
        switch bits.count {
        case 4:
            return KeypadKey(wiegandValue: value(bits[0..<4])).map { .key($0) } ?? .refused(bits: 4)
        case 8:
            let high = value(bits[0..<4]), low = value(bits[4..<8])
            guard high == (~low & 0xF), let key = KeypadKey(wiegandValue: low) else { return .refused(bits: 8) }
            return .key(key)
        default:
            return .refused(bits: bits.count)
        }
    }

    /// The pulses of a key (`bits` 4 or 8): what a keypad sends, for the tests and the simulated lines.
    public static func bits(of key: KeypadKey, width: Int) -> [Bool] {
        let v = key.wiegandValue
        let word = width == 8 ? ((~v & 0xF) << 4 | v) : v
        return (0..<width).map { word >> (width - 1 - $0) & 1 == 1 }
    }
}
