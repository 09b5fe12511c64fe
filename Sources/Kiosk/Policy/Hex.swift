// SPDX-License-Identifier: Apache-2.0

/// Hex digits read, the one parser of them: key files, a trusted key's file name, /etc/machine-id,
/// JSON's `\u` escapes, test vectors. Either case; nothing else (no sign, no space, no `0x`).
/// (Writing hex is `PayloadBytes.hex`.)
public enum Hex {
    /// The value of one hex digit, nil for any other byte.
    public static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// The bytes `text` spells, two digits a byte; nil for an odd count or a byte that is no hex
    /// digit. An empty text is no bytes.
    public static func bytes<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for c in text {
            guard let d = digit(c) else { return nil }
            if let h = high { out.append(h << 4 | d); high = nil } else { high = d }
        }
        return out
    }

    /// `bytes(_:)` of a string's UTF-8.
    public static func bytes(_ text: String) -> [UInt8]? { bytes(Array(text.utf8)) }

    /// The number `text` spells (big-endian, 1 to 16 digits), nil for no digit, too many, or a
    /// byte that is no hex digit.
    public static func value<Text: Collection<UInt8>>(_ text: Text) -> UInt64? {
        guard !text.isEmpty, text.count <= 16 else { return nil }
        var v: UInt64 = 0
        for c in text {
            guard let d = digit(c) else { return nil }
            v = v << 4 | UInt64(d)
        }
        return v
    }

    /// `value(_:)` of a string's UTF-8.
    public static func value(_ text: some StringProtocol) -> UInt64? { value(Array(text.utf8)) }
}
