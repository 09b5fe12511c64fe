// SPDX-License-Identifier: Apache-2.0
import XCTest

/// Bytes written in tests: a string's UTF-8, and hex as RFCs print their vectors.
extension XCTestCase {
    func b(_ s: String) -> [UInt8] { Array(s.utf8) }

    func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }
}
