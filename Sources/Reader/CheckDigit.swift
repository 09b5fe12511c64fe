// SPDX-License-Identifier: Apache-2.0
import Policy

/// EAN/UPC check digits (zbar checks them too; a wrong read must not slip through a config change).
enum CheckDigit {
    static func valid(_ bytes: [UInt8], symbology: Symbology) -> Bool {
        switch symbology {
        case .ean13, .ean8, .upca, .isbn13:
            guard bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            let expectedCount = symbology == .ean8 ? 8 : symbology == .upca ? 12 : 13
            // zbar may give UPC-A as 13 digits with a leading 0 when EAN-13 reports it.
            guard bytes.count == expectedCount || (symbology == .upca && bytes.count == 13) else { return false }
            let digits = bytes.map { Int($0 - 0x30) }
            var sum = 0
            for (i, d) in digits.dropLast().reversed().enumerated() { sum += i % 2 == 0 ? 3 * d : d }
            return (10 - sum % 10) % 10 == digits.last!
        default:
            return true
        }
    }
}
