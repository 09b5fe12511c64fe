// SPDX-License-Identifier: Apache-2.0
/// Numbers as the log, the metrics file and the messages show them, without Foundation's
/// `String(format:)` (the core links no Foundation).
public enum Format {
    /// `x` with `digits` digits after the point, as printf's `%.Nf` (round half to even on the
    /// scaled value): `fixed(2.25, 1)` is "2.2", `fixed(-0.04, 1)` is "-0.0".
    public static func fixed(_ x: Double, _ digits: Int) -> String {
        guard x.isFinite else { return x.isNaN ? "nan" : (x < 0 ? "-inf" : "inf") }
        let digits = max(0, min(digits, 17))
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(x) * scale).rounded(.toNearestOrEven)
        guard scaled < 9.0e18 else { return String(x) }  // beyond UInt64: not a figure we print
        let n = UInt64(scaled)
        var whole = String(n)
        if digits > 0 {
            if whole.count <= digits { whole = String(repeating: "0", count: digits - whole.count + 1) + whole }
            whole.insert(".", at: whole.index(whole.endIndex, offsetBy: -digits))
        }
        return (x.sign == .minus ? "-" : "") + whole
    }

    /// `value` in lowercase hex, zero-padded to `width` digits (`hex(0x1b, width: 2)` is "1b").
    public static func hex<T: BinaryInteger>(_ value: T, width: Int) -> String {
        let s = String(value, radix: 16)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// `value` zero-padded to `width` decimal digits.
    public static func padded<T: BinaryInteger>(_ value: T, width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
