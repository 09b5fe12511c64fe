// SPDX-License-Identifier: Apache-2.0
/// Base45 (RFC 9285), the text a QR code's alphanumeric mode carries compactly: the decoder only,
/// strict (every character from the alphabet, no group over its range, no dangling character) and
/// bounded: a text longer than `maxOutput` allows is refused before anything is decoded.
public enum Base45 {
    /// RFC 9285 section 4: "0"-"9", "A"-"Z", space, "$%*+-./:".
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)
    static let values: [Int8] = {
        var t = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = Int8(i) }
        return t
    }()

    /// The bytes, or nil for a text that is not Base45 or decodes to more than `maxOutput` bytes.
    public static func decode<C: Collection>(_ text: C, maxOutput: Int) -> [UInt8]? where C.Element == UInt8 {
        let n = text.count
        // Three characters make two bytes, two the last one (section 4.2); one alone is invalid.
        guard n % 3 != 1, (n / 3) * 2 + (n % 3 == 2 ? 1 : 0) <= maxOutput else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity((n / 3) * 2 + 1)
        var digits: [Int] = []
        digits.reserveCapacity(3)
        for c in text {
            let v = values[Int(c)]
            guard v >= 0 else { return nil }
            digits.append(Int(v))
            if digits.count == 3 {
                let value = digits[0] + digits[1] * 45 + digits[2] * 45 * 45
                guard value <= 0xFFFF else { return nil }
                out.append(UInt8(value >> 8))
                out.append(UInt8(value & 0xFF))
                digits.removeAll(keepingCapacity: true)
            }
        }
        if digits.count == 2 {
            let value = digits[0] + digits[1] * 45
            guard value <= 0xFF else { return nil }
            out.append(UInt8(value))
        }
        return out
    }

    /// For the tests and the example issuer: RFC 9285's encoding.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i + 1 < bytes.count {
            var v = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            for _ in 0..<3 { out.append(alphabet[v % 45]); v /= 45 }
            i += 2
        }
        if i < bytes.count {
            let v = Int(bytes[i])
            out.append(alphabet[v % 45])
            out.append(alphabet[v / 45])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
