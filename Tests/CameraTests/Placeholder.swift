import XCTest
final class CameraTestsPlaceholder: XCTestCase { func testNothing() {} }
