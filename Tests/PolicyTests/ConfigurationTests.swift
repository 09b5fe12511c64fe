// SPDX-License-Identifier: Apache-2.0
@testable import Policy
import XCTest

final class ConfigurationTests: XCTestCase {
    func read(_ env: [String: String], executable: Set<String> = ["/usr/local/bin/open-door"]) -> ConfigurationReading {
        Configuration.read(environment: env, isExecutableFile: { executable.contains($0) })
    }

    func assertRejected(_ variable: String, _ value: String, file: StaticString = #filePath, line: UInt = #line) {
        let r = read([variable: value])
        XCTAssertEqual(r.errors.map(\.variable), [variable], "\(variable)=\(value)", file: file, line: line)
        XCTAssertEqual(r.errors.first?.value, value, file: file, line: line)
        XCTAssertFalse(r.errors.first?.expected.isEmpty ?? true, file: file, line: line)
    }

    func assertAccepted(_ variable: String, _ value: String, file: StaticString = #filePath, line: UInt = #line,
                        _ check: (Configuration) -> Bool) {
        let r = read([variable: value])
        XCTAssertEqual(r.errors, [], "\(variable)=\(value)", file: file, line: line)
        XCTAssertTrue(check(r.configuration), "\(variable)=\(value)", file: file, line: line)
    }

    func testDefaultsAreInterfaceMd() {
        let r = read([:])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings, [])
        let c = r.configuration
        XCTAssertEqual(c.camera, .device("/dev/video0"))
        XCTAssertEqual([c.width, c.height], [640, 480])
        XCTAssertEqual(c.fps, 30)
        XCTAssertEqual(c.format, .auto)
        XCTAssertEqual(c.mount, Mount())
        XCTAssertEqual(c.uprightROI, NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5))
        // interface.md: "measured" (README "Performance": what a door is shown, and what it costs).
        XCTAssertEqual(c.symbologies, [.qrcode, .ean13, .ean8, .upca, .code128, .aztec, .datamatrix, .pdf417])
        XCTAssertEqual(c.repeatMs, 3000)
        XCTAssertEqual(c.gpioChip, "gpiochip0")
        XCTAssertNil(c.torchLine)
        XCTAssertNil(c.buzzerLine)
        XCTAssertEqual(c.torch, .auto)
        XCTAssertEqual([c.torchOnBelow, c.torchOffAbove], [50, 80])
        XCTAssertEqual(c.torchHoldMs, 2000)
        XCTAssertEqual(c.beepMs, 120)
        XCTAssertNil(c.onScan)
        XCTAssertEqual(c.logLevel, .info)
        XCTAssertEqual(c.logFormat, .logfmt)
        XCTAssertEqual(c.statsSeconds, 60)
        XCTAssertNil(c.metricsFile)
        XCTAssertEqual(r.settings.count, Configuration.variables.count)
        XCTAssertTrue(r.settings.allSatisfy { !$0.fromEnvironment })
    }

    func testCamera() {
        assertAccepted("KIOSK_CAMERA", "/dev/video2") { $0.camera == .device("/dev/video2") }
        assertAccepted("KIOSK_CAMERA", "replay:/tmp/frames") { $0.camera == .replay(folder: "/tmp/frames") }
        assertAccepted("KIOSK_CAMERA", "replay:frames") { $0.camera == .replay(folder: "frames") }
        assertRejected("KIOSK_CAMERA", "video0")
        assertRejected("KIOSK_CAMERA", "replay:")
    }

    func testSize() {
        assertAccepted("KIOSK_SIZE", "1280x720") { $0.width == 1280 && $0.height == 720 }
        assertAccepted("KIOSK_SIZE", "16X16") { $0.width == 16 && $0.height == 16 }
        for bad in ["640", "640x", "x480", "640x480x2", "15x480", "640x8193", "-640x480", "640*480", "abc"] {
            assertRejected("KIOSK_SIZE", bad)
        }
    }

    func testFps() {
        assertAccepted("KIOSK_FPS", "15") { $0.fps == 15 }
        assertAccepted("KIOSK_FPS", "7.5") { $0.fps == 7.5 }
        assertAccepted("KIOSK_FPS", "240") { $0.fps == 240 }
        for bad in ["0", "0.5", "241", "nan", "inf", "thirty", "-30"] { assertRejected("KIOSK_FPS", bad) }
    }

    func testFormat() {
        for f in ["auto", "YUYV", "GREY", "NV12", "YU12", "MJPG", "yuyv"] {
            assertAccepted("KIOSK_FORMAT", f) { $0.format.rawValue.lowercased() == f.lowercased() }
        }
        for bad in ["RGB3", "H264", "jpeg"] { assertRejected("KIOSK_FORMAT", bad) }
    }

    func testMount() {
        for r in [0, 90, 180, 270] {
            assertAccepted("KIOSK_ROTATE", String(r)) { $0.mount.rotation.rawValue == r }
        }
        for bad in ["45", "360", "-90", "90.0", "ninety"] { assertRejected("KIOSK_ROTATE", bad) }
        assertAccepted("KIOSK_MIRROR", "1") { $0.mount.mirrored }
        assertAccepted("KIOSK_MIRROR", "0") { !$0.mount.mirrored }
        for bad in ["yes", "true", "2", "-1"] { assertRejected("KIOSK_MIRROR", bad) }
    }

    func testROI() {
        assertAccepted("KIOSK_ROI", "0,0,1,1") { $0.uprightROI == .whole }
        assertAccepted("KIOSK_ROI", "0.1, 0.2, 0.3, 0.4") { $0.uprightROI == NormalizedRect(x: 0.1, y: 0.2, width: 0.3, height: 0.4) }
        assertAccepted("KIOSK_ROI", "0.5,0.5,0.5,0.5") { $0.uprightROI.width == 0.5 }
        for bad in ["0.5,0.5,0.6,0.2", "0,0,0,0.5", "0,0,0.5,0", "-0.1,0,0.5,0.5", "0,0,1.5,1", "0.25,0.25,0.5",
                    "0.25,0.25,0.5,0.5,0.5", "a,b,c,d", "0,0,1,nan", ""] where !bad.isEmpty {
            assertRejected("KIOSK_ROI", bad)
        }
    }

    func testSymbologies() {
        assertAccepted("KIOSK_SYMBOLOGIES", "qrcode") { $0.symbologies == [.qrcode] }
        assertAccepted("KIOSK_SYMBOLOGIES", "EAN13, code128,ean13") { $0.symbologies == [.ean13, .code128] }
        assertAccepted("KIOSK_SYMBOLOGIES", "databar-exp,i25") { $0.symbologies == [.databarExp, .i25] }
        assertAccepted("KIOSK_SYMBOLOGIES", "qrcode,aztec,datamatrix,pdf417,microqr") {
            $0.symbologies == [.qrcode, .aztec, .datamatrix, .pdf417, .microqr]
        }
        for bad in ["qr", "qrcode,,ean13", "qrcode,maxicode", "data-matrix", ","] { assertRejected("KIOSK_SYMBOLOGIES", bad) }
    }

    func testNumbersWithRanges() {
        assertAccepted("KIOSK_REPEAT_MS", "0") { $0.repeatMs == 0 }
        assertRejected("KIOSK_REPEAT_MS", "3600001")
        assertRejected("KIOSK_REPEAT_MS", "1.5")
        assertAccepted("KIOSK_BEEP_MS", "1") { $0.beepMs == 1 }
        assertRejected("KIOSK_BEEP_MS", "0")
        assertRejected("KIOSK_BEEP_MS", "5001")
        assertAccepted("KIOSK_TORCH_HOLD_MS", "0") { $0.torchHoldMs == 0 }
        assertRejected("KIOSK_TORCH_HOLD_MS", "-1")
        assertAccepted("KIOSK_STATS_S", "0") { $0.statsSeconds == 0 }
        assertRejected("KIOSK_STATS_S", "86401")
        assertAccepted("KIOSK_TORCH_ON_BELOW", "12.5") { $0.torchOnBelow == 12.5 }
        assertRejected("KIOSK_TORCH_OFF_ABOVE", "256")
    }

    func testLinesAndChip() {
        assertAccepted("KIOSK_BUZZER_LINE", "17") { $0.buzzerLine == 17 }
        assertAccepted("KIOSK_TORCH_LINE", "0") { $0.torchLine == 0 }
        for bad in ["-1", "1024", "GPIO17", "17.0"] {
            assertRejected("KIOSK_BUZZER_LINE", bad)
            assertRejected("KIOSK_TORCH_LINE", bad)
        }
        assertAccepted("KIOSK_GPIO_CHIP", "sim") { $0.isSimulatedGPIO }
        assertAccepted("KIOSK_GPIO_CHIP", "/dev/gpiochip4") { $0.gpioChip == "/dev/gpiochip4" }
        assertRejected("KIOSK_GPIO_CHIP", "gpio chip")
        assertAccepted("KIOSK_BUZZER_ACTIVE_LOW", "1") { $0.buzzerActiveLow }
        assertRejected("KIOSK_TORCH_ACTIVE_LOW", "low")
        assertAccepted("KIOSK_TORCH", "OFF") { $0.torch == .off }
        assertRejected("KIOSK_TORCH", "dim")
    }

    func testOnScanMustBeAnAbsoluteExecutable() {
        assertAccepted("KIOSK_ON_SCAN", "/usr/local/bin/open-door") { $0.onScan == "/usr/local/bin/open-door" }
        assertRejected("KIOSK_ON_SCAN", "open-door")
        assertRejected("KIOSK_ON_SCAN", "./open-door")
        assertRejected("KIOSK_ON_SCAN", "/usr/local/bin/missing")
        assertRejected("KIOSK_ON_SCAN", "/usr/local/bin/open-door; rm -rf /")
    }

    func testLogAndMetrics() {
        assertAccepted("KIOSK_LOG_LEVEL", "DEBUG") { $0.logLevel == .debug }
        assertRejected("KIOSK_LOG_LEVEL", "verbose")
        assertAccepted("KIOSK_LOG_FORMAT", "json") { $0.logFormat == .json }
        assertRejected("KIOSK_LOG_FORMAT", "xml")
        assertAccepted("KIOSK_METRICS_FILE", "/var/lib/node_exporter/kiosk.prom") { $0.metricsFile != nil }
        assertRejected("KIOSK_METRICS_FILE", "kiosk.prom")
    }

    func testContradictions() {
        var r = read(["KIOSK_TORCH_ON_BELOW": "80", "KIOSK_TORCH_OFF_ABOVE": "80"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_TORCH_ON_BELOW"])
        XCTAssertTrue(r.errors[0].expected.contains("KIOSK_TORCH_OFF_ABOVE"))
        // Only OFF_ABOVE given, below the default ON_BELOW of 50: the error names what was set.
        r = read(["KIOSK_TORCH_OFF_ABOVE": "40"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_TORCH_OFF_ABOVE"])
        XCTAssertEqual(r.errors.first?.value, "40")
        r = read(["KIOSK_TORCH_LINE": "17", "KIOSK_BUZZER_LINE": "17"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_BUZZER_LINE"])
    }

    func testEveryProblemIsReportedNotJustTheFirst() {
        let r = read(["KIOSK_FPS": "0", "KIOSK_ROI": "2,2,2,2", "KIOSK_ROTATE": "45", "KIOSK_SIZE": "640"])
        XCTAssertEqual(Set(r.errors.map(\.variable)), ["KIOSK_FPS", "KIOSK_ROI", "KIOSK_ROTATE", "KIOSK_SIZE"])
    }

    func testEmptyValueMeansUnset() {
        let r = read(["KIOSK_TORCH_LINE": "", "KIOSK_ROI": "  "])
        XCTAssertEqual(r.errors, [])
        XCTAssertNil(r.configuration.torchLine)
        XCTAssertFalse(r.settings.first { $0.variable == "KIOSK_ROI" }!.fromEnvironment)
    }

    func testUnknownKioskVariablesWarnWithASuggestion() {
        let r = read(["KIOSK_ROTATION": "90", "KIOSK_BUZER_LINE": "4", "KIOSK_CODE": "x", "PATH": "/bin", "KIOSK_FOO_BAR_BAZ": "1"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_BUZER_LINE", "KIOSK_FOO_BAR_BAZ", "KIOSK_ROTATION"])
        XCTAssertEqual(r.warnings.map(\.suggestion), ["KIOSK_BUZZER_LINE", nil, "KIOSK_ROTATE"])
    }

    func testSettingsShowSourceAndEffectiveValue() {
        let r = read(["KIOSK_SIZE": "1280X720", "KIOSK_SYMBOLOGIES": "QRCODE"])
        let size = r.settings.first { $0.variable == "KIOSK_SIZE" }!
        XCTAssertEqual(size.value, "1280x720")
        XCTAssertTrue(size.fromEnvironment)
        XCTAssertEqual(r.settings.first { $0.variable == "KIOSK_SYMBOLOGIES" }!.value, "qrcode")
        XCTAssertEqual(r.settings.first { $0.variable == "KIOSK_ROI" }!.value, "0.25,0.25,0.5,0.5")
        XCTAssertEqual(r.settings.map(\.variable), Configuration.variables)
    }
}
