import XCTest
final class DecoderTestsPlaceholder: XCTestCase { func testNothing() {} }
