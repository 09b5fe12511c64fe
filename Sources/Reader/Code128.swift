// SPDX-License-Identifier: Apache-2.0
import Camera
import Policy

/// A second reading of Code 128 symbols that zbar found, from the same pixels.
///
/// zbar 0.23 drops Code 128's FNC4 (extended characters, ISO-8859-1 128-255) and returns the
/// base character instead: "ó" comes back as "s" - a wrong text, which a door must never act on
/// (zbar's code128.c: "FIXME FNC4 - extended ASCII"). So each Code 128 symbol zbar reports is
/// read again here along a few of the scan lines zbar decoded it on, with the full character
/// set, the check character verified, and the result cross-checked against zbar's own text.
public enum Code128 {
    /// Bar and space widths in modules of the 106 symbol characters (values 0-105).
    public static let patterns: [[Int]] = [
        "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
        "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
        "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
        "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
        "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
        "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
        "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
        "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
        "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
        "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
        "114131", "311141", "411131", "211412", "211214", "211232",
    ].map { $0.map { Int(String($0))! } }
    public static let stop = [2, 3, 3, 1, 1, 1, 2]

    static let startA = 103, startB = 104, startC = 105
    static let fnc1 = 102, fnc2 = 97, fnc3 = 96, shift = 98, codeC = 99

    /// Reads the symbol again. Returns its payload as UTF-8 text bytes (extended characters are
    /// ISO-8859-1, as the Code 128 standard defines them), or nil when no scan line gives a
    /// checked reading that agrees with zbar's.
    public static func reread(_ zbarBytes: [UInt8], location: [PixelPoint], in luma: LumaPlane, region: PixelRect) -> [UInt8]? {
        guard !location.isEmpty else { return nil }
        let xs = location.map(\.x), ys = location.map(\.y)
        let horizontal = (xs.max()! - xs.min()!) >= (ys.max()! - ys.min()!)
        // Lines across the bars: rows for a horizontal symbol, columns for a vertical one.
        let across = horizontal ? ys : xs
        let along = horizontal ? xs : ys
        let length = along.max()! - along.min()!
        let margin = length / 5 + 8
        let lo = horizontal ? region.x : region.y
        let hi = horizontal ? region.x + region.width : region.y + region.height
        let from = max(lo, along.min()! - margin), to = min(hi, along.max()! + margin + 1)
        guard to - from >= 24 else { return nil }
        let lines = Array(Set(across)).sorted()
        let picks = lines.count <= 5 ? lines : (0..<5).map { lines[$0 * (lines.count - 1) / 4] }
        let expected = comparable(zbarBytes)
        var samples = [UInt8](repeating: 0, count: to - from)
        for line in picks {
            for i in 0..<samples.count {
                samples[i] = horizontal ? luma[from + i, line] : luma[line, from + i]
            }
            // The threshold window must be wider than the widest bar (4 modules of at least 35).
            let window = max(24, length / 8)
            for candidate in decode(samples: samples, window: window) + decode(samples: samples.reversed(), window: window)
            where comparable(candidate) == expected {
                return latin1ToUTF8(candidate)
            }
        }
        return nil
    }

    /// zbar's text and ours agree when ours loses its high bits (zbar drops FNC4) and both drop
    /// the FNC1 separators, which zbar places by its own rules.
    static func comparable(_ bytes: [UInt8]) -> [UInt8] {
        bytes.filter { $0 != 0x1D }.map { $0 & 0x7F }
    }

    static func latin1ToUTF8(_ bytes: [UInt8]) -> [UInt8] {
        var s = ""
        s.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return Array(s.utf8)
    }

    /// Every checked Code 128 reading found on one line of luma samples, as ISO-8859-1 bytes.
    static func decode(samples: [UInt8], window: Int = 24) -> [[UInt8]] {
        let runs = barsAndSpaces(samples, window: window)
        var results: [[UInt8]] = []
        // runs.widths[i] is a bar when i is even and `firstIsBar`, or odd and not.
        let firstBar = runs.firstIsBar ? 0 : 1
        var k = firstBar
        while k + 6 <= runs.widths.count {
            defer { k += 2 }
            // No quiet zone is demanded before the start character (printed labels are often
            // cut close, and zbar does not demand one either): the check character and the
            // agreement with zbar's reading are what rule out a false start.
            guard let s = match(runs.widths[k..<(k + 6)]), s >= startA else { continue }
            if let values = readSymbol(runs.widths, from: k + 6, start: s), let bytes = interpret(values) {
                results.append(bytes)
            }
        }
        return results
    }

    /// The values after the start character, up to the stop pattern, with the check verified.
    /// Returns [start, data..., check] or nil.
    static func readSymbol(_ widths: [Int], from: Int, start: Int) -> [Int]? {
        var values = [start]
        var i = from
        while i + 6 <= widths.count {
            if i + 7 <= widths.count, isStop(widths[i..<(i + 7)]) {
                guard values.count >= 3 else { return nil }
                var sum = values[0]
                for (position, v) in values.dropFirst().dropLast().enumerated() { sum += (position + 1) * v }
                return sum % 103 == values.last! ? values : nil
            }
            guard let v = match(widths[i..<(i + 6)]), v < startA else { return nil }
            values.append(v)
            i += 6
        }
        return nil
    }

    /// The character whose pattern is nearest, measured as zbar does on edge-to-edge distances
    /// (bar plus next space), which ink spread and blur do not change, with the plain widths to
    /// break ties. Nil when nothing is near enough.
    static func match(_ w: ArraySlice<Int>) -> Int? {
        let widths = Array(w)
        let total = Double(widths.reduce(0, +))
        guard total > 0 else { return nil }
        let scale = 11 / total
        var best = (value: -1, error: Double.infinity)
        for (value, p) in patterns.enumerated() {
            var error = 0.0
            for j in 0..<5 {
                let e = Double(widths[j] + widths[j + 1]) * scale - Double(p[j] + p[j + 1])
                error += e * e
            }
            for j in 0..<6 {
                let e = Double(widths[j]) * scale - Double(p[j])
                error += 0.25 * e * e
            }
            if error < best.error { best = (value, error) }
        }
        return best.error < 1.0 ? best.value : nil
    }

    static func isStop(_ w: ArraySlice<Int>) -> Bool {
        let widths = Array(w)
        let scale = 13 / Double(widths.reduce(0, +))
        var error = 0.0
        for j in 0..<6 {
            let e = Double(widths[j] + widths[j + 1]) * scale - Double(stop[j] + stop[j + 1])
            error += e * e
        }
        return error < 1.0
    }

    /// The symbol's values as bytes: code sets A, B and C, SHIFT, FNC1 (a group separator, as zbar
    /// gives it, except in first place where it marks GS1) and FNC4 (the next character, or after
    /// two in a row every character, is taken from 128-255).
    static func interpret(_ values: [Int]) -> [UInt8]? {
        enum CodeSet { case a, b, c }
        var set: CodeSet = values[0] == startA ? .a : values[0] == startB ? .b : .c
        var out: [UInt8] = []
        var shifted = false
        var fnc4Pending = false, fnc4Latched = false
        let data = values.dropFirst().dropLast()
        for (index, v) in data.enumerated() {
            if set == .c {
                switch v {
                case 0..<100:
                    out.append(UInt8(ascii: "0") + UInt8(v / 10))
                    out.append(UInt8(ascii: "0") + UInt8(v % 10))
                case 100: set = .b
                case 101: set = .a
                case fnc1: if index > 0 { out.append(0x1D) }
                default: return nil
                }
                continue
            }
            let current: CodeSet = shifted ? (set == .a ? .b : .a) : set
            switch v {
            case 0..<96:
                var ch = current == .a ? (v < 64 ? v + 32 : v - 64) : v + 32
                if fnc4Pending != fnc4Latched { ch += 128 }
                out.append(UInt8(ch))
                fnc4Pending = false
                shifted = false
            case fnc3, fnc2: break
            case shift: shifted = true
            case codeC: set = .c
            case 100, 101:
                // 100 is FNC4 in set B and CODE B in set A; 101 is FNC4 in set A and CODE A in set B.
                let isFNC4 = (v == 100 && current == .b) || (v == 101 && current == .a)
                if isFNC4 {
                    if fnc4Pending { fnc4Latched.toggle(); fnc4Pending = false } else { fnc4Pending = true }
                } else {
                    set = v == 100 ? .b : .a
                }
            case fnc1: if index > 0 { out.append(0x1D) }
            default: return nil
            }
        }
        return out.isEmpty ? nil : out
    }

    /// Dark and light runs along the line, split at a threshold that follows the local contrast,
    /// so that a shadow across the symbol does not swallow its bars.
    static func barsAndSpaces(_ samples: [UInt8], window: Int) -> (widths: [Int], firstIsBar: Bool) {
        let n = samples.count
        var widths: [Int] = []
        var firstIsBar = false
        var currentDark: Bool?
        var run = 0
        for i in 0..<n {
            var lo = 255, hi = 0
            for j in max(0, i - window)..<min(n, i + window + 1) {
                let v = Int(samples[j])
                lo = min(lo, v)
                hi = max(hi, v)
            }
            // Where there is no contrast nearby it is paper (a quiet zone), not a bar.
            let dark = hi - lo >= 24 && Int(samples[i]) * 2 < lo + hi
            if dark == currentDark {
                run += 1
            } else {
                if let _ = currentDark { widths.append(run) } else { firstIsBar = dark }
                currentDark = dark
                run = 1
            }
        }
        if currentDark != nil { widths.append(run) }
        return (widths, firstIsBar)
    }
}
