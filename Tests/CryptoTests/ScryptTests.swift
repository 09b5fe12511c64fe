// SPDX-License-Identifier: Apache-2.0
import Crypto
import XCTest

/// The PINs' hash through the shim: RFC 7914's own test vectors, not our code's output.
final class ScryptTests: XCTestCase {
    func hex(_ s: String) -> [UInt8] {
        let c = Array(s.replacingOccurrences(of: " ", with: "").utf8)
        return stride(from: 0, to: c.count, by: 2).map { UInt8(String(decoding: c[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    func testRFC7914Vectors() throws {
        // RFC 7914 section 12: scrypt (P="password", S="NaCl", N=1024, r=8, p=16, dkLen=64).
        XCTAssertEqual(try Crypto.scrypt(password: Array("password".utf8), salt: Array("NaCl".utf8), logN: 10, r: 8, p: 16, length: 64),
                       hex("fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"))
        // (P="pleaseletmein", S="SodiumChloride", N=16384, r=8, p=1, dkLen=64).
        XCTAssertEqual(try Crypto.scrypt(password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8), logN: 14, r: 8, p: 1, length: 64),
                       hex("7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"))
        XCTAssertThrowsError(try Crypto.scrypt(password: [], salt: [], logN: 0, r: 8, p: 1, length: 32))
    }

    func testConstantTimeComparison() throws {
        XCTAssertTrue(try Crypto.equalInConstantTime([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(try Crypto.equalInConstantTime([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(try Crypto.equalInConstantTime([1, 2, 3], [1, 2]))
    }
}
