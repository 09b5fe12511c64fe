// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy

/// Draws EAN-13 and Code 128 (code set B) symbols for the simulated scene and the bench, in the
/// product itself (zint is only for the tests, which check these drawings against zbar).
public enum Barcode1DImage {
    /// EAN-13 of 12 digits (the check digit is added) or 13 (the check digit must be right).
    /// `moduleWidth` pixels a module, bars `height` pixels tall, `quietZone` modules each side.
    public static func ean13(_ digits: String, moduleWidth: Int = 2, height: Int = 80, quietZone: Int = 10) throws -> GrayImage {
        var d = digits.compactMap { $0.wholeNumberValue }
        guard d.count == digits.count, d.count == 12 || d.count == 13 else {
            throw CodeRenderError(description: "EAN-13 needs 12 or 13 digits, not \"\(digits)\"")
        }
        let check = ean13CheckDigit(Array(d.prefix(12)))
        if d.count == 13, d[12] != check {
            throw CodeRenderError(description: "EAN-13 \"\(digits)\": the check digit should be \(check)")
        }
        if d.count == 12 { d.append(check) }
        var modules: [Bool] = [true, false, true]
        let parity = parities[d[0]]
        for (i, digit) in d[1...6].enumerated() {
            let l = lCodes[digit]
            // G is the reverse of R, which is L inverted.
            let bits = parity[parity.index(parity.startIndex, offsetBy: i)] == "L" ? l : String(l.reversed()).map { $0 == "1" ? "0" : "1" }.joined()
            modules += bits.map { $0 == "1" }
        }
        modules += [false, true, false, true, false]
        for digit in d[7...12] {
            modules += lCodes[digit].map { $0 == "0" }  // R: L inverted
        }
        modules += [true, false, true]
        return draw(modules, moduleWidth: moduleWidth, height: height, quietZone: quietZone)
    }

    public static func ean13CheckDigit(_ twelve: [Int]) -> Int {
        var sum = 0
        for (i, v) in twelve.enumerated() { sum += i % 2 == 0 ? v : 3 * v }
        return (10 - sum % 10) % 10
    }

    /// Code 128 in code set B: printable ASCII (space to DEL-1).
    public static func code128(_ text: String, moduleWidth: Int = 2, height: Int = 80, quietZone: Int = 10) throws -> GrayImage {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 32 && $0 < 127 }) else {
            throw CodeRenderError(description: "Code 128 set B draws printable ASCII only, not \"\(text)\"")
        }
        let startB = 104
        var values = [startB] + bytes.map { Int($0) - 32 }
        var sum = startB
        for (i, v) in values.dropFirst().enumerated() { sum += (i + 1) * v }
        values.append(sum % 103)
        var modules: [Bool] = []
        for v in values {
            for (j, w) in Code128.patterns[v].enumerated() { modules += Array(repeating: j % 2 == 0, count: w) }
        }
        for (j, w) in Code128.stop.enumerated() { modules += Array(repeating: j % 2 == 0, count: w) }
        return draw(modules, moduleWidth: moduleWidth, height: height, quietZone: quietZone)
    }

    static func draw(_ modules: [Bool], moduleWidth: Int, height: Int, quietZone: Int) -> GrayImage {
        precondition(moduleWidth >= 1 && height >= 1 && quietZone >= 0)
        let width = (modules.count + 2 * quietZone) * moduleWidth
        var image = GrayImage(width: width, height: height, fill: 255)
        for (m, dark) in modules.enumerated() where dark {
            let x0 = (m + quietZone) * moduleWidth
            for y in 0..<height {
                for x in x0..<(x0 + moduleWidth) { image.pixels[y * width + x] = 0 }
            }
        }
        return image
    }

    static let lCodes = ["0001101", "0011001", "0010011", "0111101", "0100011",
                         "0110001", "0101111", "0111011", "0110111", "0001011"]
    static let parities = ["LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG",
                           "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL"]
}
