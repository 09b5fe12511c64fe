// SPDX-License-Identifier: Apache-2.0
import Camera
import Policy
import XCTest

final class PixelFormatTests: XCTestCase {
    private func native(_ code: String) -> V4L2FormatDescription {
        V4L2FormatDescription(pixelFormat: fourcc(code), description: code)
    }

    private func converted(_ code: String) -> V4L2FormatDescription {
        V4L2FormatDescription(pixelFormat: fourcc(code), description: code, isEmulated: true)
    }

    private func choose(_ requested: RequestedPixelFormat, _ offered: [V4L2FormatDescription]) throws -> PixelFormatChoice {
        try choosePixelFormat(requested: requested, offered: offered)
    }

    func testFourccMatchesTheV4L2Codes() {
        // v4l2_fourcc('Y','U','Y','V') is little-endian: 'Y' in the low byte.
        XCTAssertEqual(fourcc("YUYV"), 0x5659_5559)
        XCTAssertEqual(fourcc("GREY"), 0x5945_5247)
        XCTAssertEqual(V4L2LumaFormat.nv12.fourcc, 0x3231_564E)
        XCTAssertEqual(fourccString(fourcc("MJPG")), "MJPG")
        XCTAssertEqual(fourccString(0x3231_5559), "YU12")
    }

    func testAutoPrefersGreyFirst() throws {
        let choice = try choose(.auto, [native("MJPG"), converted("YU12"), native("YUYV"), native("NV12"), native("GREY")])
        XCTAssertEqual(choice, PixelFormatChoice(format: .grey, convertedByLibv4l: false))
    }

    func testAutoPrefersYuyvWithoutGrey() throws {
        let choice = try choose(.auto, [native("MJPG"), native("YU12"), native("NV12"), native("YUYV"), converted("RGB3")])
        XCTAssertEqual(choice, PixelFormatChoice(format: .yuyv, convertedByLibv4l: false))
    }

    func testAutoPrefersNv12OverYu12() throws {
        let choice = try choose(.auto, [native("YU12"), native("NV12")])
        XCTAssertEqual(choice, PixelFormatChoice(format: .nv12, convertedByLibv4l: false))
    }

    func testAutoTakesNativeYu12() throws {
        let choice = try choose(.auto, [native("RGB3"), native("YU12")])
        XCTAssertEqual(choice, PixelFormatChoice(format: .yu12, convertedByLibv4l: false))
    }

    func testAutoFallsBackToLibv4lConversionForMjpgOnlyCameras() throws {
        // What libv4l2 lists for a UVC camera that gives only MJPG at the requested size.
        let offered = [native("MJPG"), converted("RGB3"), converted("BGR3"), converted("YU12"), converted("YV12")]
        XCTAssertEqual(try choose(.auto, offered), PixelFormatChoice(format: .yu12, convertedByLibv4l: true))
    }

    func testAutoPrefersAnyNativeFormatOverAConversion() throws {
        // GREY ranks above YU12, but a conversion costs CPU: a native YU12 wins over an emulated GREY.
        let offered = [converted("GREY"), native("YU12")]
        XCTAssertEqual(try choose(.auto, offered), PixelFormatChoice(format: .yu12, convertedByLibv4l: false))
    }

    func testAutoFailsWhenNothingIsUsable() {
        XCTAssertThrowsError(try choose(.auto, [native("MJPG"), native("H264")])) { error in
            let message = (error as? CameraError)?.message ?? ""
            XCTAssertTrue(message.contains("MJPG, H264"), message)
        }
        XCTAssertThrowsError(try choose(.auto, [])) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("nothing"))
        }
    }

    func testExplicitFormatsAreTakenWhenOffered() throws {
        let offered = [native("GREY"), native("YUYV"), native("NV12"), converted("YU12"), native("MJPG")]
        XCTAssertEqual(try choose(.grey, offered), PixelFormatChoice(format: .grey, convertedByLibv4l: false))
        XCTAssertEqual(try choose(.yuyv, offered), PixelFormatChoice(format: .yuyv, convertedByLibv4l: false))
        XCTAssertEqual(try choose(.nv12, offered), PixelFormatChoice(format: .nv12, convertedByLibv4l: false))
        XCTAssertEqual(try choose(.yu12, offered), PixelFormatChoice(format: .yu12, convertedByLibv4l: true))
    }

    func testExplicitMjpgAsksLibv4lForYu12() throws {
        let offered = [native("YUYV"), native("MJPG"), converted("YU12")]
        XCTAssertEqual(try choose(.mjpg, offered), PixelFormatChoice(format: .yu12, convertedByLibv4l: true))
    }

    func testExplicitFormatNotOfferedNamesWhatIs() {
        let offered = [native("YUYV"), native("MJPG"), converted("YU12")]
        XCTAssertThrowsError(try choose(.nv12, offered)) { error in
            let message = (error as? CameraError)?.message ?? ""
            XCTAssertTrue(message.contains("does not offer NV12"), message)
            XCTAssertTrue(message.contains("YUYV, MJPG, YU12 (converted by libv4l)"), message)
        }
        XCTAssertThrowsError(try choose(.grey, offered))
        XCTAssertThrowsError(try choose(.mjpg, [native("YUYV"), converted("YU12")])) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("does not offer MJPG"))
        }
        // MJPG offered but libv4l's conversion is not (conversion disabled): nothing to read luma from.
        XCTAssertThrowsError(try choose(.mjpg, [native("MJPG")])) { error in
            XCTAssertTrue(((error as? CameraError)?.message ?? "").contains("YU12"))
        }
    }

    func testRequestedFormatsParseFromConfigurationNames() {
        XCTAssertEqual(RequestedPixelFormat(rawValue: "auto"), .auto)
        XCTAssertEqual(RequestedPixelFormat(rawValue: "YUYV"), .yuyv)
        XCTAssertEqual(RequestedPixelFormat(rawValue: "MJPG"), .mjpg)
        XCTAssertNil(RequestedPixelFormat(rawValue: "RGB3"))
    }
}
