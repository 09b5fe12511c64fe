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
        // interface.md: "measured" (docs/measurements/frame-loop.md: what a door is shown, and what it costs).
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
        assertAccepted("KIOSK_CAMERA", "libcamera") { $0.camera == .libcamera("") }
        assertAccepted("KIOSK_CAMERA", "libcamera:1") { $0.camera == .libcamera("1") }
        assertAccepted("KIOSK_CAMERA", "libcamera:/base/soc/i2c0mux/i2c@1/imx708@1a") {
            $0.camera == .libcamera("/base/soc/i2c0mux/i2c@1/imx708@1a") && $0.camera.description == "libcamera:/base/soc/i2c0mux/i2c@1/imx708@1a"
        }
        assertRejected("KIOSK_CAMERA", "libcamera:")
        assertRejected("KIOSK_CAMERA", "libcam")
    }

    func testZoom() {
        XCTAssertFalse(Configuration().zoom)
        assertAccepted("KIOSK_ZOOM", "1") { $0.zoom }
        assertAccepted("KIOSK_ZOOM", "0") { !$0.zoom }
        assertRejected("KIOSK_ZOOM", "yes please")
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

    func testTheCameraAtTheDoor() {
        XCTAssertEqual(Configuration().cameraSettings, CameraSettings(focus: .distance(centimetres: 15), exposure: .screens, mainsHz: 50))
        XCTAssertEqual(Configuration().torchScreenMs, 400)
        assertAccepted("KIOSK_FOCUS", "30cm") { $0.cameraSettings.focus == .distance(centimetres: 30) }
        assertAccepted("KIOSK_FOCUS", "auto") { $0.cameraSettings.focus == .auto }
        assertAccepted("KIOSK_FOCUS", "v4l2:120") { $0.cameraSettings.focus == .v4l2(120) }
        assertAccepted("KIOSK_FOCUS", "camera") { $0.cameraSettings.focus == .camera }
        for bad in ["15", "3cm", "1m", "v4l2:", "near"] { assertRejected("KIOSK_FOCUS", bad) }
        assertAccepted("KIOSK_EXPOSURE", "camera") { $0.cameraSettings.exposure == .camera }
        assertRejected("KIOSK_EXPOSURE", "short")
        assertAccepted("KIOSK_MAINS_HZ", "60") { $0.cameraSettings.mainsHz == 60 }
        assertAccepted("KIOSK_MAINS_HZ", "0") { $0.cameraSettings.mainsHz == 0 }
        assertRejected("KIOSK_MAINS_HZ", "55")
        assertAccepted("KIOSK_TORCH_SCREEN_MS", "0") { $0.torchScreenMs == 0 }
        assertRejected("KIOSK_TORCH_SCREEN_MS", "60001")
        // A wrong value names the variable, the value and what is accepted.
        let r = Configuration.read(environment: ["KIOSK_FOCUS": "near"], isExecutableFile: { _ in false })
        XCTAssertEqual(r.errors.count, 1)
        XCTAssertTrue("\(r.errors)".contains("KIOSK_FOCUS") && "\(r.errors)".contains("near") && "\(r.errors)".contains("v4l2:N"), "\(r.errors)")
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

    // MARK: the door reader

    func testDoorDefaultsAreInterfaceMd() {
        let c = read([:]).configuration
        XCTAssertEqual(c.verdict, .none)
        XCTAssertEqual(c.verdictMs, 2000)
        XCTAssertNil(c.beepRead)
        XCTAssertEqual(c.readPattern.milliseconds, [120], "today's single beep of KIOSK_BEEP_MS")
        XCTAssertEqual(c.beepGranted.milliseconds, [400])
        XCTAssertEqual(c.beepDenied.milliseconds, [80, 80, 80, 80, 80])
        XCTAssertEqual(c.beepError.milliseconds, [200, 200, 200])
        XCTAssertEqual([c.ledMs, c.doorMs, c.wiegandPulseUs, c.wiegandIntervalUs, c.wiegandFacility], [2000, 3000, 50, 2000, 0])
        XCTAssertEqual(c.wiegandFormat, .h10301)
        XCTAssertTrue(c.lines.isEmpty)
        XCTAssertFalse(c.isWiegand)
        let shown = Dictionary(uniqueKeysWithValues: read([:]).settings.map { ($0.variable, $0.value) })
        XCTAssertEqual(shown["KIOSK_BEEP_READ"], "120")
        XCTAssertEqual(shown["KIOSK_BEEP_DENIED"], "80,80,80,80,80")
        XCTAssertEqual(shown["KIOSK_VERDICT"], "none")
        XCTAssertEqual(shown["KIOSK_WIEGAND_FORMAT"], "26")
        XCTAssertEqual(shown["KIOSK_DOOR_LINE"], "unset")
    }

    func testReadPatternDefaultFollowsTheVerdictModeAndBeepMs() {
        let hook = ["KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": "/usr/local/bin/open-door"]
        var r = read(hook)
        XCTAssertEqual(r.errors, [])
        XCTAssertTrue(r.configuration.readPattern.isSilent, "no sound until the verdict")
        XCTAssertEqual(r.settings.first { $0.variable == "KIOSK_BEEP_READ" }?.value, "")
        r = read(["KIOSK_BEEP_MS": "30"])
        XCTAssertEqual(r.configuration.readPattern.milliseconds, [30])
        XCTAssertEqual(r.settings.first { $0.variable == "KIOSK_BEEP_READ" }?.value, "30")
        r = read(hook.merging(["KIOSK_BEEP_READ": "40"]) { a, _ in a })
        XCTAssertEqual(r.configuration.readPattern.milliseconds, [40])
    }

    func testAnEmptyPatternGivenIsSilenceNotTheDefault() {
        let r = read(["KIOSK_BEEP_GRANTED": "", "KIOSK_BEEP_READ": " ", "KIOSK_BEEP_ERROR": "100,50,100"])
        XCTAssertEqual(r.errors, [])
        XCTAssertTrue(r.configuration.beepGranted.isSilent)
        XCTAssertTrue(r.configuration.readPattern.isSilent)
        XCTAssertEqual(r.configuration.beepError.milliseconds, [100, 50, 100])
        XCTAssertEqual(r.configuration.beepDenied, .denied, "not given: the default")
        let granted = r.settings.first { $0.variable == "KIOSK_BEEP_GRANTED" }!
        XCTAssertTrue(granted.fromEnvironment)
        XCTAssertEqual(granted.value, "")
        // Every other variable keeps "empty means unset".
        XCTAssertFalse(r.settings.first { $0.variable == "KIOSK_DOOR_MS" }!.fromEnvironment)
    }

    func testDoorValuesAndTheirRanges() {
        for name in ["KIOSK_BEEP_READ", "KIOSK_BEEP_GRANTED", "KIOSK_BEEP_DENIED", "KIOSK_BEEP_ERROR"] {
            for bad in ["0", "80,,80", "80,", "-5", "1.5", "10001", String(repeating: "10,", count: 16) + "10", "loud"] {
                assertRejected(name, bad)
            }
        }
        assertAccepted("KIOSK_VERDICT_MS", "100") { $0.verdictMs == 100 }
        for bad in ["99", "60001", "2s"] { assertRejected("KIOSK_VERDICT_MS", bad) }
        assertRejected("KIOSK_VERDICT", "maybe")
        assertAccepted("KIOSK_LED_MS", "60000") { $0.ledMs == 60000 }
        for bad in ["0", "99", "60001"] { assertRejected("KIOSK_LED_MS", bad) }
        for bad in ["99", "60001", "-1"] { assertRejected("KIOSK_DOOR_MS", bad) }
        assertAccepted("KIOSK_WIEGAND_FORMAT", "34") { $0.wiegandFormat == .bits34 }
        for bad in ["32", "H10301", "26 bits"] { assertRejected("KIOSK_WIEGAND_FORMAT", bad) }
        assertAccepted("KIOSK_WIEGAND_PULSE_US", "20") { $0.wiegandPulseUs == 20 }
        assertAccepted("KIOSK_WIEGAND_PULSE_US", "100") { $0.wiegandPulseUs == 100 }
        for bad in ["19", "101", "50us"] { assertRejected("KIOSK_WIEGAND_PULSE_US", bad) }
        assertAccepted("KIOSK_WIEGAND_INTERVAL_US", "200") { $0.wiegandIntervalUs == 200 }
        assertAccepted("KIOSK_WIEGAND_INTERVAL_US", "20000") { $0.wiegandIntervalUs == 20000 }
        for bad in ["199", "20001"] { assertRejected("KIOSK_WIEGAND_INTERVAL_US", bad) }
        assertAccepted("KIOSK_WIEGAND_ACTIVE_LOW", "1") { $0.wiegandActiveLow }
        for bad in ["-1", "1024", "GPIO4"] {
            for name in ["KIOSK_GRANTED_LED_LINE", "KIOSK_DENIED_LED_LINE", "KIOSK_DOOR_LINE", "KIOSK_WIEGAND_D0_LINE", "KIOSK_WIEGAND_D1_LINE"] {
                assertRejected(name, bad)
            }
        }
    }

    func testWiegandFacilityIsCheckedAgainstTheFormat() {
        var r = read(["KIOSK_WIEGAND_FACILITY": "255"])
        XCTAssertEqual(r.errors, [])
        r = read(["KIOSK_WIEGAND_FACILITY": "256"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_WIEGAND_FACILITY"])
        XCTAssertEqual(r.errors.first?.value, "256")
        XCTAssertTrue(r.errors.first?.expected.contains("0 to 255") ?? false, "\(r.errors)")
        r = read(["KIOSK_WIEGAND_FACILITY": "256", "KIOSK_WIEGAND_FORMAT": "34"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.configuration.wiegandFacility, 256)
        r = read(["KIOSK_WIEGAND_FACILITY": "65536", "KIOSK_WIEGAND_FORMAT": "34"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_WIEGAND_FACILITY"])
    }

    func testDoorContradictions() {
        let program = ["KIOSK_ON_SCAN": "/usr/local/bin/open-door"]
        func errors(_ env: [String: String]) -> [String] { read(env).errors.map(\.variable) }
        // The hook decides only with a program.
        XCTAssertEqual(errors(["KIOSK_VERDICT": "hook"]), ["KIOSK_VERDICT"])
        XCTAssertEqual(errors(program.merging(["KIOSK_VERDICT": "hook"]) { a, _ in a }), [])
        XCTAssertEqual(read(["KIOSK_VERDICT": "hook"]).errors.first?.value, "hook")
        // A strike or an LED without a verdict would never move.
        XCTAssertEqual(errors(["KIOSK_DOOR_LINE": "4"]), ["KIOSK_DOOR_LINE"])
        XCTAssertEqual(errors(["KIOSK_GRANTED_LED_LINE": "5", "KIOSK_DENIED_LED_LINE": "6"]),
                       ["KIOSK_GRANTED_LED_LINE", "KIOSK_DENIED_LED_LINE"])
        // Wiegand: both lines, and the controller decides (no hook verdict beside it).
        XCTAssertEqual(errors(["KIOSK_WIEGAND_D0_LINE": "20"]), ["KIOSK_WIEGAND_D0_LINE"])
        XCTAssertEqual(errors(["KIOSK_WIEGAND_D1_LINE": "21"]), ["KIOSK_WIEGAND_D1_LINE"])
        XCTAssertEqual(errors(["KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21"]), [])
        XCTAssertTrue(read(["KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21"]).configuration.isWiegand)
        XCTAssertEqual(errors(program.merging(["KIOSK_VERDICT": "hook", "KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21"]) { a, _ in a }),
                       ["KIOSK_VERDICT"])
    }

    func testOneLineUsedTwiceNamesBothVariables() {
        let door = ["KIOSK_ON_SCAN": "/usr/local/bin/open-door", "KIOSK_VERDICT": "hook"]
        var r = read(door.merging(["KIOSK_BUZZER_LINE": "18", "KIOSK_DOOR_LINE": "18"]) { a, _ in a })
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_DOOR_LINE"])
        XCTAssertEqual(r.errors.first?.value, "18")
        XCTAssertTrue(r.errors.first?.expected.contains("KIOSK_BUZZER_LINE (18)") ?? false, "\(r.errors)")
        r = read(["KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "20"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_WIEGAND_D1_LINE"])
        XCTAssertTrue(r.errors.first?.expected.contains("KIOSK_WIEGAND_D0_LINE (20)") ?? false)
        r = read(door.merging(["KIOSK_TORCH_LINE": "5", "KIOSK_GRANTED_LED_LINE": "5", "KIOSK_DENIED_LED_LINE": "5"]) { a, _ in a })
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_GRANTED_LED_LINE", "KIOSK_DENIED_LED_LINE"])
        XCTAssertTrue(r.errors.allSatisfy { $0.expected.contains("KIOSK_TORCH_LINE (5)") }, "\(r.errors)")
        // The old pair keeps its old message.
        r = read(["KIOSK_TORCH_LINE": "17", "KIOSK_BUZZER_LINE": "17"])
        XCTAssertEqual(r.errors.first?.expected, "a line other than KIOSK_TORCH_LINE (17): one line cannot drive both")
    }

    func testWithoutTheDoorVariablesTheOldSettingsShowAsBefore() {
        // What `kiosk check` printed before verdicts, for the variables it had: unchanged.
        let r = read(["KIOSK_BUZZER_LINE": "18", "KIOSK_BEEP_MS": "90"])
        let old = Array(r.settings.prefix { $0.variable != "KIOSK_VERDICT" })
        XCTAssertEqual(old.count, 25)
        XCTAssertEqual(old.map(\.variable).last, "KIOSK_METRICS_FILE")
        XCTAssertEqual(old.filter(\.fromEnvironment).map(\.variable), ["KIOSK_BUZZER_LINE", "KIOSK_BEEP_MS"])
        XCTAssertEqual(old.first { $0.variable == "KIOSK_BEEP_MS" }?.value, "90")
        XCTAssertEqual(old.first { $0.variable == "KIOSK_TORCH_LINE" }?.value, "unset")
    }

    // MARK: a building of kiosks

    func testMQTTIsOffByDefaultAndItsDefaultsFollowTheHostname() {
        let off = read([:]).configuration
        XCTAssertFalse(off.isMQTT)
        XCTAssertEqual(off.mqttDiscovery, "homeassistant")
        XCTAssertEqual(off.mqttQueue, 1000)
        let r = Configuration.read(environment: ["KIOSK_MQTT_URL": "mqtt://broker.local"], isExecutableFile: { _ in false },
                                   hostname: "Door-3.example.org")
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings, [])
        let c = r.configuration
        XCTAssertEqual(c.mqttURL, BrokerAddress(host: "broker.local", port: 1883, tls: false))
        XCTAssertEqual(c.mqttTopic, "kiosk/door-3")
        XCTAssertEqual(c.mqttClientID, "door-3")
        let shown = Dictionary(uniqueKeysWithValues: r.settings.map { ($0.variable, $0.value) })
        XCTAssertEqual(shown["KIOSK_MQTT_URL"], "mqtt://broker.local:1883")
        XCTAssertEqual(shown["KIOSK_MQTT_TOPIC"], "kiosk/door-3")
        XCTAssertEqual(shown["KIOSK_MQTT_CLIENT_ID"], "door-3")
        XCTAssertEqual(shown["KIOSK_MQTT_DISCOVERY"], "homeassistant")
        XCTAssertEqual(shown["KIOSK_MQTT_PASSWORD_FILE"], "unset")
        // The client id follows a given topic.
        let given = read(["KIOSK_MQTT_URL": "mqtts://b", "KIOSK_MQTT_TOPIC": "site/hall/door-7"]).configuration
        XCTAssertEqual(given.mqttClientID, "door-7")
    }

    func testMQTTValuesAndTheirRejections() {
        let url = ["KIOSK_MQTT_URL": "mqtts://b:8884"]
        func with(_ env: [String: String]) -> ConfigurationReading { read(url.merging(env) { a, _ in a }) }
        XCTAssertEqual(with(["KIOSK_MQTT_DISCOVERY": ""]).configuration.mqttDiscovery, nil, "given empty: no discovery")
        XCTAssertTrue(with(["KIOSK_MQTT_DISCOVERY": ""]).settings.first { $0.variable == "KIOSK_MQTT_DISCOVERY" }!.fromEnvironment)
        XCTAssertEqual(with(["KIOSK_MQTT_DISCOVERY": "ha"]).configuration.mqttDiscovery, "ha")
        XCTAssertEqual(with(["KIOSK_MQTT_QUEUE": "10000"]).configuration.mqttQueue, 10000)
        XCTAssertEqual(with(["KIOSK_MQTT_USER": "door", "KIOSK_MQTT_PASSWORD_FILE": "/etc/kiosk/pw"]).errors, [])
        for (name, bad) in [("KIOSK_MQTT_URL", "tcp://b"), ("KIOSK_MQTT_URL", "mqtt://user:pw@b"), ("KIOSK_MQTT_TOPIC", "kiosk/#"),
                            ("KIOSK_MQTT_TOPIC", "/kiosk"), ("KIOSK_MQTT_TOPIC", "kiosk//a"), ("KIOSK_MQTT_CLIENT_ID", "a b"),
                            ("KIOSK_MQTT_USER", "x\u{7}"), ("KIOSK_MQTT_PASSWORD_FILE", "pw.txt"), ("KIOSK_MQTT_CA_FILE", "ca.pem"),
                            ("KIOSK_MQTT_DISCOVERY", "home assistant"), ("KIOSK_MQTT_DISCOVERY", "ha/+"),
                            ("KIOSK_MQTT_QUEUE", "0"), ("KIOSK_MQTT_QUEUE", "10001"), ("KIOSK_MQTT_QUEUE", "many")] {
            var env = url
            env[name] = bad
            let r = read(env)
            XCTAssertEqual(r.errors.map(\.variable), [name], "\(name)=\(bad)")
            XCTAssertEqual(r.errors.first?.value, bad)
        }
    }

    func testMQTTCrossChecks() {
        // A password with no user to give it for.
        var r = read(["KIOSK_MQTT_URL": "mqtt://b", "KIOSK_MQTT_PASSWORD_FILE": "/etc/kiosk/pw"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_MQTT_PASSWORD_FILE"])
        // A user alone is a login some brokers take (no password).
        XCTAssertEqual(read(["KIOSK_MQTT_URL": "mqtt://b", "KIOSK_MQTT_USER": "door"]).errors, [])
        // The kiosk's topics under Home Assistant's prefix would be read as discovery.
        r = read(["KIOSK_MQTT_URL": "mqtt://b", "KIOSK_MQTT_TOPIC": "homeassistant/door"])
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_MQTT_TOPIC"])
        XCTAssertEqual(read(["KIOSK_MQTT_URL": "mqtt://b", "KIOSK_MQTT_TOPIC": "homeassistant/door", "KIOSK_MQTT_DISCOVERY": ""]).errors, [])
        // A CA file for plain MQTT does nothing: a warning naming why, not a typo.
        r = read(["KIOSK_MQTT_URL": "mqtt://b", "KIOSK_MQTT_CA_FILE": "/etc/kiosk/ca.pem"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_MQTT_CA_FILE"])
        XCTAssertTrue(r.warnings.first?.reason?.contains("mqtts://") ?? false)
        XCTAssertEqual(read(["KIOSK_MQTT_URL": "mqtts://b", "KIOSK_MQTT_CA_FILE": "/etc/kiosk/ca.pem"]).warnings, [])
        // MQTT settings without the URL do nothing: said, not an error (the kiosk starts as before).
        r = read(["KIOSK_MQTT_TOPIC": "kiosk/x", "KIOSK_MQTT_QUEUE": "5"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_MQTT_TOPIC", "KIOSK_MQTT_QUEUE"])
        XCTAssertTrue(r.warnings.allSatisfy { $0.reason?.contains("KIOSK_MQTT_URL is unset") ?? false })
        XCTAssertFalse(r.configuration.isMQTT)
    }

    // OSDP
    func testOSDPValuesDefaultsAndRejections() {
        let off = read([:]).configuration
        XCTAssertFalse(off.isOSDP)
        XCTAssertEqual(off.osdpBaud, 9600)
        XCTAssertEqual(off.osdpAddress, 0)
        XCTAssertTrue(off.osdpRequireSecure)
        XCTAssertFalse(off.osdpInstallMode)
        XCTAssertEqual(off.osdpCardFormat, .wiegand26)
        let port = ["KIOSK_OSDP_PORT": "/dev/serial0"]
        func with(_ env: [String: String]) -> ConfigurationReading { read(port.merging(env) { a, _ in a }) }
        let c = with(["KIOSK_OSDP_BAUD": "115200", "KIOSK_OSDP_ADDRESS": "126", "KIOSK_OSDP_KEY_FILE": "/etc/kiosk/osdp-scbk",
                      "KIOSK_OSDP_INSTALL_MODE": "1", "KIOSK_OSDP_REQUIRE_SECURE": "0", "KIOSK_OSDP_CARD_FORMAT": "raw"])
        XCTAssertEqual(c.errors, [])
        XCTAssertEqual(c.configuration.osdpPort, "/dev/serial0")
        XCTAssertEqual(c.configuration.osdpBaud, 115_200)
        XCTAssertEqual(c.configuration.osdpAddress, 126)
        XCTAssertEqual(c.configuration.osdpKeyFile, "/etc/kiosk/osdp-scbk")
        XCTAssertTrue(c.configuration.osdpInstallMode)
        XCTAssertFalse(c.configuration.osdpRequireSecure)
        XCTAssertEqual(c.configuration.osdpCardFormat, .raw)
        for (name, bad) in [("KIOSK_OSDP_PORT", "ttyUSB0"), ("KIOSK_OSDP_BAUD", "4800"), ("KIOSK_OSDP_BAUD", "fast"),
                            ("KIOSK_OSDP_ADDRESS", "127"), ("KIOSK_OSDP_ADDRESS", "-1"), ("KIOSK_OSDP_KEY_FILE", "scbk.txt"),
                            ("KIOSK_OSDP_INSTALL_MODE", "yes"), ("KIOSK_OSDP_REQUIRE_SECURE", "2"), ("KIOSK_OSDP_CARD_FORMAT", "wiegand37")] {
            var env = port
            env[name] = bad
            let r = read(env)
            XCTAssertEqual(r.errors.map(\.variable), [name], "\(name)=\(bad)")
            XCTAssertEqual(r.errors.first?.value, bad)
        }
    }

    func testOSDPCrossChecks() {
        let port = ["KIOSK_OSDP_PORT": "/dev/ttyUSB0"]
        // OSDP and Wiegand: one link to the controller.
        var r = read(port.merging(["KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21"]) { a, _ in a })
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_OSDP_PORT"])
        XCTAssertTrue(r.errors.first?.expected.contains("exclude each other") ?? false)
        // Hook mode: the controller decides, not a local program.
        r = read(port.merging(["KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": "/usr/local/bin/open-door"]) { a, _ in a })
        XCTAssertEqual(r.errors.map(\.variable), ["KIOSK_VERDICT"])
        // The LEDs and the strike without a local verdict: the controller's osdp_LED and osdp_OUT drive them.
        r = read(port.merging(["KIOSK_GRANTED_LED_LINE": "5", "KIOSK_DENIED_LED_LINE": "6", "KIOSK_DOOR_LINE": "23"]) { a, _ in a })
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(read(["KIOSK_DOOR_LINE": "23"]).errors.map(\.variable), ["KIOSK_DOOR_LINE"], "without OSDP as before")
        // OSDP settings without the port: said, not an error.
        r = read(["KIOSK_OSDP_BAUD": "19200", "KIOSK_OSDP_INSTALL_MODE": "1"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_OSDP_BAUD", "KIOSK_OSDP_INSTALL_MODE"])
        XCTAssertTrue(r.warnings.allSatisfy { $0.reason?.contains("KIOSK_OSDP_PORT is unset") ?? false })
    }

    // The door's inputs and alarms, commands from the building.
    func testDoorInputDefaultsAreInterfaceMd() {
        let c = read([:]).configuration
        XCTAssertNil(c.doorContactLine)
        XCTAssertNil(c.rexLine)
        XCTAssertNil(c.tamperLine)
        XCTAssertEqual([c.doorContactActiveLow, c.rexActiveLow, c.tamperActiveLow], [false, false, false])
        XCTAssertEqual(c.inputBias, .pullUp)
        XCTAssertEqual(c.inputDebounceMs, 20)
        XCTAssertEqual(c.doorHeldS, 30)
        XCTAssertTrue(c.rexOpens)
        XCTAssertEqual(c.doorRelock, .time)
        XCTAssertEqual(c.beepAlarm.description, "1000,500,1000,500,1000")
        XCTAssertFalse(c.mqttCommands)
        XCTAssertEqual(c.commandMaxAgeS, 30)
        XCTAssertFalse(c.watchesDoor)
        let names = Configuration.variables
        let block = ["KIOSK_DOOR_CONTACT_LINE", "KIOSK_DOOR_CONTACT_ACTIVE_LOW", "KIOSK_REX_LINE", "KIOSK_REX_ACTIVE_LOW",
                     "KIOSK_TAMPER_LINE", "KIOSK_TAMPER_ACTIVE_LOW", "KIOSK_INPUT_BIAS", "KIOSK_INPUT_DEBOUNCE_MS",
                     "KIOSK_DOOR_HELD_S", "KIOSK_REX_OPENS", "KIOSK_DOOR_RELOCK", "KIOSK_BEEP_ALARM", "KIOSK_MQTT_COMMANDS",
                     "KIOSK_COMMAND_MAX_AGE_S"]
        XCTAssertEqual(block.filter { !names.contains($0) }, [])
    }

    func testDoorInputValuesAndTheirRanges() {
        assertAccepted("KIOSK_DOOR_CONTACT_LINE", "5") { $0.doorContactLine == 5 && $0.watchesDoor }
        assertAccepted("KIOSK_TAMPER_LINE", "7") { $0.tamperLine == 7 }
        assertAccepted("KIOSK_TAMPER_ACTIVE_LOW", "1") { $0.tamperActiveLow }
        for bias in ["pull-up", "pull-down", "disabled", "as-is", "PULL-DOWN"] {
            assertAccepted("KIOSK_INPUT_BIAS", bias) { $0.inputBias.rawValue == bias.lowercased() }
        }
        assertRejected("KIOSK_INPUT_BIAS", "pullup")
        assertAccepted("KIOSK_INPUT_DEBOUNCE_MS", "0") { $0.inputDebounceMs == 0 }
        assertAccepted("KIOSK_INPUT_DEBOUNCE_MS", "1000") { $0.inputDebounceMs == 1000 }
        assertRejected("KIOSK_INPUT_DEBOUNCE_MS", "1001")
        assertRejected("KIOSK_INPUT_DEBOUNCE_MS", "-1")
        assertAccepted("KIOSK_DOOR_HELD_S", "3600") { $0.doorHeldS == 3600 }
        assertRejected("KIOSK_DOOR_HELD_S", "0")
        assertRejected("KIOSK_DOOR_HELD_S", "3601")
        assertAccepted("KIOSK_REX_OPENS", "0") { !$0.rexOpens }
        assertRejected("KIOSK_REX_OPENS", "yes")
        assertRejected("KIOSK_DOOR_RELOCK", "never")
        assertAccepted("KIOSK_BEEP_ALARM", "") { $0.beepAlarm.isSilent }
        assertRejected("KIOSK_BEEP_ALARM", "1000,x")
        assertAccepted("KIOSK_COMMAND_MAX_AGE_S", "1") { $0.commandMaxAgeS == 1 }
        assertRejected("KIOSK_COMMAND_MAX_AGE_S", "0")
        assertRejected("KIOSK_DOOR_CONTACT_LINE", "1024")
    }

    func testDoorInputCrossChecks() {
        func errors(_ env: [String: String]) -> [String] { read(env).errors.map { "\($0.variable): \($0.expected)" } }
        let hook = ["KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": "/usr/local/bin/open-door"]
        // An input on an output's line, and two inputs on one line: both variables named.
        XCTAssertEqual(errors(["KIOSK_BUZZER_LINE": "18", "KIOSK_DOOR_CONTACT_LINE": "18"]),
                       ["KIOSK_DOOR_CONTACT_LINE: a line other than KIOSK_BUZZER_LINE (18): one line cannot be both"])
        XCTAssertEqual(errors(["KIOSK_DOOR_CONTACT_LINE": "5", "KIOSK_TAMPER_LINE": "5"]),
                       ["KIOSK_TAMPER_LINE: a line other than KIOSK_DOOR_CONTACT_LINE (5): one line cannot be both"])
        // The exit button opens a strike: without one it must be told not to.
        XCTAssertEqual(errors(["KIOSK_REX_LINE": "6"]),
                       ["KIOSK_REX_LINE: set with KIOSK_DOOR_LINE, the strike the exit button opens (or KIOSK_REX_OPENS=0 for a door with a handle inside)"])
        XCTAssertEqual(errors(["KIOSK_REX_LINE": "6", "KIOSK_REX_OPENS": "0"]), [])
        // A strike with only the exit button to open it needs no verdict.
        XCTAssertEqual(errors(["KIOSK_REX_LINE": "6", "KIOSK_DOOR_LINE": "22"]), [])
        XCTAssertEqual(errors(["KIOSK_DOOR_LINE": "22"]).count, 1, "a strike nothing opens is still refused")
        // Relock on contact needs the contact and the strike.
        XCTAssertEqual(errors(hook.merging(["KIOSK_DOOR_RELOCK": "contact", "KIOSK_DOOR_LINE": "22"]) { a, _ in a }),
                       ["KIOSK_DOOR_RELOCK: time unless KIOSK_DOOR_CONTACT_LINE is set: relocking on contact needs the door's position switch"])
        XCTAssertEqual(errors(["KIOSK_DOOR_RELOCK": "contact", "KIOSK_DOOR_CONTACT_LINE": "5"]),
                       ["KIOSK_DOOR_RELOCK: time unless KIOSK_DOOR_LINE is set: there is no strike to relock"])
        XCTAssertEqual(errors(hook.merging(["KIOSK_DOOR_RELOCK": "contact", "KIOSK_DOOR_LINE": "22", "KIOSK_DOOR_CONTACT_LINE": "5"]) { a, _ in a }), [])
        // Commands without a broker: said, and ignored.
        let r = read(["KIOSK_MQTT_COMMANDS": "1"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_MQTT_COMMANDS"])
        XCTAssertEqual(errors(["KIOSK_MQTT_URL": "mqtt://broker", "KIOSK_MQTT_COMMANDS": "1", "KIOSK_DOOR_LINE": "22"]), [],
                       "the building's open command is a use for a strike")
    }
}
