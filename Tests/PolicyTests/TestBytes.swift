// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// Bytes written in tests: a string's UTF-8, and hex as RFCs print their vectors.
extension XCTestCase {
    func b(_ s: String) -> [UInt8] { Array(s.utf8) }

    func hex(_ s: String) -> [UInt8] { Hex.bytes(s)! }
}
