// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import GPIO
import Policy
import Scene
import TestSupport
import XCTest

/// The built `kiosk` binary, run as a child process, the way systemd or an installer runs it.
final class EndToEndTests: XCTestCase {
    typealias Run = KioskProcess.Run

    /// The demo runs in real time; under a sanitizer's slowdown on a shared machine its timing
    /// cannot hold, so the tests that follow the demo's clock skip there (the logic they cover
    /// is also tested with an injected clock).
    static var underSanitizer: Bool {
        ProcessInfo.processInfo.environment.keys.contains { $0.hasSuffix("SAN_OPTIONS") }
    }

    /// The contract's one second to stop; a sanitizer's runtime adds its own teardown at exit.
    static var stopBound: Double { underSanitizer ? 3.0 : 1.0 }

    func kiosk(_ args: [String] = [], env: [String: String] = [:]) throws -> Run { try KioskProcess.run(args, env: env) }

    var folder: URL!

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first: \(KioskProcess.binary.path)")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Writes frame files: `codes[i]` is the text shown inside the ROI on frame i (nil for none).
    func writeReplay(_ codes: [String?], png: Set<Int> = []) throws {
        var cache: [String: GrayImage] = [:]
        for (i, text) in codes.enumerated() {
            var frame = GrayImage(width: 320, height: 240, fill: 190)
            if let text {
                let qr = try cache[text] ?? QRCodeImage.render(text, moduleSize: 3)
                cache[text] = qr
                frame.paste(qr, x: 160 - qr.width / 2, y: 120 - qr.height / 2)
            }
            let name = String(format: "%04d", i)
            if png.contains(i) {
                try ImageFile.writePNG(frame, to: folder.appendingPathComponent(name + ".png").path)
            } else {
                try ImageFile.writePGM(frame, to: folder.appendingPathComponent(name + ".pgm").path)
            }
        }
    }

    func testReplayRunReportsEachPresentationOnceAndExitsZero() throws {
        // 10 fps: frames 0-4 empty, 5-14 code A (1 s held), 15-19 empty (0.5 s: within the window),
        // 20-24 A again (not reported), 25-59 empty (3.5 s), 60-64 A (reported again), 65-69 "B\n=x" (hostile).
        var codes: [String?] = Array(repeating: nil, count: 70)
        for i in 5..<15 { codes[i] = "A-CODE" }
        for i in 20..<25 { codes[i] = "A-CODE" }
        for i in 60..<65 { codes[i] = "A-CODE" }
        for i in 65..<70 { codes[i] = "B\nlevel=error event=forged" }
        try writeReplay(codes, png: [5, 66])
        let run = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_FPS": "10", "KIOSK_GPIO_CHIP": "sim",
                                  "KIOSK_BUZZER_LINE": "5", "KIOSK_BEEP_MS": "1", "KIOSK_LOG_LEVEL": "debug"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let main = run.events.filter { ["start", "camera_open", "ready", "scan", "stop"].contains($0) }
        XCTAssertEqual(main, ["start", "camera_open", "ready", "scan", "scan", "scan", "stop"], run.stderr)
        let scans = run.of("scan")
        XCTAssertEqual(scans.map { $0["frame"] }, ["5", "60", "65"])
        XCTAssertEqual(scans.map { $0["data"] }, ["A-CODE", "A-CODE", #"B\nlevel=error event=forged"#])
        XCTAssertEqual(run.lines.filter { $0.contains("event=forged") }.count, 1, "the payload stays inside its field")
        XCTAssertEqual(run.of("stop").first?["reason"], "end of frames")
        XCTAssertEqual(run.of("stop").first?["frames"], "70")
        XCTAssertEqual(run.of("stop").first?["decoded"], "3")
        XCTAssertEqual(run.of("camera_open").first?["format"], "PGM/PNG")
        let start = try XCTUnwrap(run.of("start").first)
        XCTAssertEqual(start["camera"], "replay:\(folder.path)")
        XCTAssertEqual(start["roi"], "0.25,0.25,0.5,0.5")
        // The buzzer line: requested inactive, then on/off for each report, inactive at the end.
        // The replay runs as fast as it decodes (about 1 ms a frame): the reports of frames 60 and
        // 65 come a few milliseconds apart, and when the first 1 ms beep's off step is late (a
        // loaded machine) the second pattern finds the line still on and drives no new edge
        // (PatternPlayer; its exact timing is in GPIOTests).
        let gpio = run.of("gpio").map { $0["value"] ?? "?" }
        XCTAssertEqual(gpio.first, "0")
        XCTAssertEqual(gpio.last, "0")
        // Each report beeps, on then off; a beep that starts while the one before still holds the
        // line drives no new edge.
        XCTAssertEqual(Array(gpio.dropFirst()), Array(repeating: ["1", "0"], count: gpio.count / 2).flatMap { $0 },
                       "on, then off, for each sound: \(gpio)")
        XCTAssertEqual(run.of("beep").map { $0["ms"] }, ["1", "1", "1"])
        // Even frame 5's beep, about 55 ms before frame 60's at the replay's pace, has had its off
        // step come later than that on a loaded machine: all three beeps, one edge.
        XCTAssertTrue((1...3).contains(gpio.filter { $0 == "1" }.count), "\(gpio)")
    }

    func testRotatedMountReadsOnlyTheUprightROI() throws {
        // A camera turned 90 degrees: the frame files are sensor frames (portrait). The code sits in
        // the upright ROI, which on the sensor is a different place than the default would be.
        var upright = GrayImage(width: 320, height: 240, fill: 200)
        let qr = try QRCodeImage.render("TURNED", moduleSize: 2)
        upright.paste(qr, x: 40, y: 30)  // upright top-left area
        let sensor = SensorView(mount: .init(rotation: .quarter, mirrored: false), uprightWidth: 320, uprightHeight: 240).sensorImage(of: upright)
        try ImageFile.writePGM(sensor, to: folder.appendingPathComponent("0.pgm").path)
        let inROI = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_ROTATE": "90", "KIOSK_ROI": "0,0,0.5,0.5"])
        XCTAssertEqual(inROI.of("scan").map { $0["data"] }, ["TURNED"], inROI.stderr)
        let wrongMount = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_ROTATE": "270", "KIOSK_ROI": "0,0,0.5,0.5"])
        XCTAssertEqual(wrongMount.of("scan").count, 0, wrongMount.stderr)
    }

    func testBadConfigurationExits78WithOneLinePerProblemBeforeTouchingDevices() throws {
        let run = try kiosk(env: ["KIOSK_FPS": "fast", "KIOSK_ROI": "0.9,0.9,0.5,0.5", "KIOSK_CAMERA": "/dev/video-none",
                                  "KIOSK_ROTATON": "90"])
        XCTAssertEqual(run.status, 78)
        let errors = run.of("config_error")
        XCTAssertEqual(errors.map { $0["var"] }, ["KIOSK_FPS", "KIOSK_ROI"])
        XCTAssertEqual(errors.map { $0["value"] }, ["fast", "0.9,0.9,0.5,0.5"])
        XCTAssertTrue(errors.allSatisfy { ($0["expected"] ?? "").count > 5 })
        XCTAssertEqual(run.of("config_warning").first?["var"], "KIOSK_ROTATON")
        XCTAssertEqual(run.of("config_warning").first?["did_you_mean"], "KIOSK_ROTATE")
        XCTAssertFalse(run.events.contains("camera_open"))
        XCTAssertFalse(run.events.contains("start"))
    }

    func testMissingCameraExits69() throws {
        let run = try kiosk(env: ["KIOSK_CAMERA": "/dev/video-that-does-not-exist"])
        XCTAssertEqual(run.status, 69, run.stderr)
        XCTAssertTrue(run.of("camera_unavailable").first?["error"]?.contains("No such file") ?? false, run.stderr)
        XCTAssertEqual(run.events.last, "stop")
    }

    func testMissingGPIOChipExits69NamingIt() throws {
        let run = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_GPIO_CHIP": "gpiochip977", "KIOSK_BUZZER_LINE": "4"])
        XCTAssertEqual(run.status, 69, run.stderr)
        XCTAssertEqual(run.of("gpio_unavailable").first?["chip"], "gpiochip977")
    }

    func testCheckPrintsEverySettingAndItsSource() throws {
        let run = try kiosk(["check"], env: ["KIOSK_SIZE": "1280x720"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("KIOSK_SIZE=1280x720"))
        XCTAssertTrue(run.stdout.split(separator: "\n").first { $0.hasPrefix("KIOSK_SIZE=") }!.hasSuffix("# from the environment"))
        XCTAssertTrue(run.stdout.split(separator: "\n").first { $0.hasPrefix("KIOSK_FPS=") }!.hasSuffix("# default"))
        XCTAssertEqual(run.stdout.split(separator: "\n").filter { $0.hasPrefix("KIOSK_") }.count, Configuration.table.count, "one line per variable")
        XCTAssertEqual(try kiosk(["check"], env: ["KIOSK_MIRROR": "yes"]).status, 78)
    }

    func testDecodeCommand() throws {
        try writeReplay(["FILE-ONE", nil])
        let one = folder.appendingPathComponent("0000.pgm").path, empty = folder.appendingPathComponent("0001.pgm").path
        var run = try kiosk(["decode", one, empty])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, "\(one): QR-Code: FILE-ONE\n")
        run = try kiosk(["decode", "--json", one])
        XCTAssertEqual(run.stdout, "{\"file\":\"\(one)\",\"symbology\":\"QR-Code\",\"data\":\"FILE-ONE\"}\n")
        run = try kiosk(["decode", "--roi", "0,0,0.2,0.2", one])
        XCTAssertEqual(run.stdout, "")
        // The extra passes' budget: a number of milliseconds, or a usage error naming the option.
        XCTAssertTrue(try kiosk(["decode", "--budget-ms", "100000", one]).stdout.contains("FILE-ONE"))
        let badBudget = try kiosk(["decode", "--budget-ms", "soon", one])
        XCTAssertEqual(badBudget.status, 64)
        XCTAssertTrue(badBudget.stderr.contains("--budget-ms"), badBudget.stderr)
        run = try kiosk(["decode", one, "/nonexistent.png"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stdout.contains("FILE-ONE"))
        XCTAssertTrue(run.stderr.contains("/nonexistent.png"))
    }

    func testHelpVersionAndUsage() throws {
        let version = try kiosk(["--version"]).stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(version.first, "kiosk 0.1.0")
        XCTAssertEqual(version.dropFirst().first, LibgpiodChip.libraryVersion, "the libgpiod line")
        XCTAssertTrue(version.dropFirst(2).first?.hasPrefix("libmosquitto 2.") ?? false, "the libmosquitto line: \(version)")
        XCTAssertTrue(try kiosk(["--help"]).stdout.contains("kiosk demo"))
        XCTAssertEqual(try kiosk(["frobnicate"]).status, 64)
        // The benches are not on the door: the shipped binary says where they went.
        let bench = try kiosk(["bench"])
        XCTAssertEqual(bench.status, 64)
        XCTAssertTrue(bench.stderr.contains("kiosk-dev"), bench.stderr)
        XCTAssertFalse(try kiosk(["--help"]).stdout.contains("bench"))
    }

    /// Issue 16's "done when": a replay of two codes, a real verdict program (a script written
    /// here; the kiosk runs the file, never a shell) granting one and refusing the other, with the
    /// patterns, the LEDs and the strike on simulated lines; then a card number sent by Wiegand.
    func testADoorReaderGrantsOneCodeRefusesAnotherAndSendsWiegand() throws {
        var codes: [String?] = Array(repeating: nil, count: 60)
        for i in 5..<10 { codes[i] = "ALLOW-1" }
        for i in 30..<35 { codes[i] = "DENY-2 $(touch /tmp/kiosk-pwned)" }
        try writeReplay(codes)
        let verdictProgram = folder.appendingPathComponent("verdict").path
        // Allow ALLOW-1 at once; refuse anything else 0.6 s later (so the grant's 400 ms beep is over).
        try "#!/bin/sh\nread code\n[ \"$code\" = ALLOW-1 ] && exit 0\nsleep 0.6\nexit 1\n".write(toFile: verdictProgram, atomically: true, encoding: .utf8)
        chmod(verdictProgram, 0o755)
        let run = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_FPS": "10", "KIOSK_GPIO_CHIP": "sim",
                                  "KIOSK_VERDICT": "hook", "KIOSK_ON_SCAN": verdictProgram, "KIOSK_BUZZER_LINE": "18",
                                  "KIOSK_GRANTED_LED_LINE": "5", "KIOSK_DENIED_LED_LINE": "6", "KIOSK_DOOR_LINE": "23",
                                  "KIOSK_DOOR_MS": "150", "KIOSK_LED_MS": "150", "KIOSK_LOG_LEVEL": "debug"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/kiosk-pwned"), "a payload went through a shell")
        XCTAssertEqual(run.of("scan").map { $0["data"] }, ["ALLOW-1", "DENY-2 $(touch /tmp/kiosk-pwned)"])
        let verdicts = run.of("verdict")
        XCTAssertEqual(verdicts.map { $0["result"] }, ["granted", "denied"], run.stderr)
        XCTAssertEqual(verdicts.map { $0["frame"] }, ["5", "30"])
        XCTAssertEqual(verdicts.map { $0["symbology"] }, ["QR-Code", "QR-Code"])
        XCTAssertLessThan(Double(verdicts[0]["ms"] ?? "") ?? 1e9, 2000)
        XCTAssertGreaterThanOrEqual(Double(verdicts[1]["ms"] ?? "") ?? 0, 600, "the refusal took its program's 0.6 s")
        // What happened, in the order it happened (each event one line of the log).
        let story: [String] = run.lines.map(Logfmt.fields).compactMap { f in
            switch f["event"] {
            case "verdict": return "verdict \(f["result"]!)"
            case "door": return "door \(f["state"]!)" + (f["reason"].map { " \($0)" } ?? "")
            case "gpio": return "line \(f["line"]!)=\(f["value"]!)"
            case "stop": return "stop"
            default: return nil
            }
        }
        func on(_ line: Int) -> [String] { story.filter { $0.hasPrefix("line \(line)=") }.map { String($0.split(separator: "=")[1]) } }
        // Buzzer: silent on the reads (hook mode), one 400 ms beep for the grant, three short for the refusal.
        XCTAssertEqual(on(18), ["0", "1", "0", "1", "0", "1", "0", "1", "0"], "\(story)")
        XCTAssertEqual(run.of("beep").map { [$0["for"]!, $0["pattern"]!] }, [["granted", "400"], ["denied", "80,80,80,80,80"]])
        XCTAssertEqual(on(5), ["0", "1", "0"], "green LED: the grant")
        XCTAssertEqual(on(6), ["0", "1", "0"], "red LED: the refusal")
        XCTAssertEqual(on(23), ["0", "1", "0"], "the strike: once, for the grant")
        XCTAssertEqual(run.of("door").map { [$0["state"]!, $0["reason"] ?? "-"] }, [["open", "-"], ["closed", "time"]])
        // Timing from the order: the strike (150 ms) shuts before the grant's beep (400 ms) ends,
        // and that beep is over before the refusal (0.6 s later) starts its pattern.
        let granted = story.firstIndex(of: "verdict granted")!, denied = story.firstIndex(of: "verdict denied")!
        let doorClosed = story.firstIndex(of: "door closed time")!
        let buzzerEdges = story.indices.filter { story[$0].hasPrefix("line 18=") }
        XCTAssertTrue(granted < doorClosed && doorClosed < buzzerEdges[2] && buzzerEdges[2] < denied, "\(story)")
        XCTAssertEqual(story.last, "stop", "every line inactive before the stop")

        // Wiegand: the controller decides; the kiosk only beeps the read. A card number and a
        // payload that is none.
        try FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        codes = Array(repeating: nil, count: 40)
        for i in 5..<10 { codes[i] = "36963" }
        for i in 20..<25 { codes[i] = "NOT-A-CARD" }
        try writeReplay(codes)
        let wiegand = try kiosk(env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_GPIO_CHIP": "sim",
                                      "KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21", "KIOSK_WIEGAND_FACILITY": "18",
                                      "KIOSK_BUZZER_LINE": "18", "KIOSK_BEEP_MS": "30", "KIOSK_LOG_LEVEL": "debug"])
        XCTAssertEqual(wiegand.status, 0, wiegand.stderr)
        XCTAssertEqual(wiegand.of("wiegand").map { [$0["bits"]!, $0["facility"]!, $0["card"]!] }, [["26", "18", "36963"]], wiegand.stderr)
        XCTAssertEqual(wiegand.of("wiegand_skipped").count, 1)
        XCTAssertTrue(wiegand.of("wiegand_skipped").first?["reason"]?.contains("not a decimal card number") ?? false)
        XCTAssertTrue(wiegand.of("verdict").isEmpty)
        let pulses = wiegand.of("gpio").filter { ["20", "21"].contains($0["line"]) && $0["value"] == "1" }
        XCTAssertEqual(pulses.map { $0["line"] == "21" ? "1" : "0" }.joined(), "00001001010010000011000111", "facility 18, card 36963")
        // A read beep for each code (two in quick succession sound as one longer beep).
        XCTAssertEqual(wiegand.of("beep").map { $0["for"] }, ["read", "read"], wiegand.stderr)
        let buzzer = wiegand.of("gpio").filter { $0["line"] == "18" }.map { $0["value"]! }
        XCTAssertTrue(buzzer.first == "0" && buzzer.contains("1") && buzzer.last == "0", "\(buzzer)")
        XCTAssertEqual(wiegand.of("gpio").filter { $0["line"] == "20" }.last?["value"], "0", "idle after stop")

        // kiosk check: every setting, then the frame a sample card makes; a bad door setting exits 78.
        let check = try kiosk(["check"], env: ["KIOSK_WIEGAND_D0_LINE": "20", "KIOSK_WIEGAND_D1_LINE": "21", "KIOSK_WIEGAND_FACILITY": "18"])
        XCTAssertEqual(check.status, 0, check.stderr)
        let out = check.stdout.split(separator: "\n")
        XCTAssertEqual(out.filter { $0.hasPrefix("KIOSK_") }.count, Configuration.table.count)
        XCTAssertTrue(out.last?.hasSuffix("the code 18:36963 is sent as 0 00010010 1001000001100011 1") ?? false, check.stdout)
        XCTAssertTrue(out.contains { $0.hasPrefix("KIOSK_BEEP_DENIED=80,80,80,80,80 ") && $0.hasSuffix("# default") }, check.stdout)
        let bad = try kiosk(["check"], env: ["KIOSK_BEEP_DENIED": "80,,80", "KIOSK_BUZZER_LINE": "18", "KIOSK_DOOR_LINE": "18"])
        XCTAssertEqual(bad.status, 78)
        XCTAssertEqual(bad.of("config_error").map { $0["var"]! }, ["KIOSK_BEEP_DENIED", "KIOSK_DOOR_LINE", "KIOSK_DOOR_LINE"], bad.stderr)
        XCTAssertEqual(bad.of("config_error").first?["value"], "80,,80")
    }

    func testSignalsStopTheServiceWithinASecond() throws {
        for (signal, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            let (p, _, err) = try KioskProcess.start(["demo"], env: ["KIOSK_BEEP_MS": "5000"])
            // Wait for the first scan, so the buzzer is sounding (a 5 s beep) when the signal comes.
            var seen = Child.read(err, within: 20) { String(decoding: $0, as: UTF8.self).contains("event=scan") }
            XCTAssertTrue(String(decoding: seen, as: UTF8.self).contains("event=scan"))
            let sent = Date()
            kill(p.processIdentifier, signal)
            let end = try Child.finish(p, out: nil, err: err, within: 30)
            seen.append(end.stderr)
            let took = Date().timeIntervalSince(sent)
            XCTAssertLessThan(took, EndToEndTests.stopBound, "\(name) took \(took) s")
            XCTAssertEqual(end.status, 0)
            let run = Run(status: 0, stdout: "", stderr: String(decoding: seen, as: UTF8.self))
            XCTAssertEqual(run.of("stop").first?["reason"], name)
            XCTAssertEqual(run.of("gpio").last?["value"], "0", "buzzer silenced on the way out: \(run.stderr)")
        }
    }
}

/// SIGTERM in each state the service can be in, on the built binary.
final class SignalTests: XCTestCase {
    /// Starts `kiosk` and returns once `marker` shows in its log; then signals and measures.
    func stopWhen(_ marker: String, args: [String] = ["demo"], env: [String: String] = [:],
                  signals: [Int32] = [SIGTERM], file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, seconds: Double, log: String) {
        let (p, _, err) = try KioskProcess.start(args, env: env, stdout: false)
        // The demo lasts 27 s (interface: under 30).
        var seen = Child.read(err, within: 35) { String(decoding: $0, as: UTF8.self).contains(marker) }
        XCTAssertTrue(String(decoding: seen, as: UTF8.self).contains(marker), "never saw \(marker)", file: file, line: line)
        let sent = Date()
        for s in signals { kill(p.processIdentifier, s) }
        let end = try Child.finish(p, out: nil, err: err, within: 30)
        seen.append(end.stderr)
        return (end.status, Date().timeIntervalSince(sent), String(decoding: seen, as: UTF8.self))
    }

    func events(_ log: String, _ name: String) -> [[String: String]] {
        log.split(separator: "\n").map { Logfmt.fields(String($0)) }.filter { $0["event"] == name }
    }

    func testWhileTheCameraCannotBeOpened() throws {
        // /dev/null is no camera: the service is in its start-up retry, backing off.
        let r = try stopWhen("event=camera_open_failed", args: ["run"],
                             env: ["KIOSK_CAMERA": "/dev/null", "KIOSK_GPIO_CHIP": "sim", "KIOSK_BUZZER_LINE": "7"])
        XCTAssertEqual(r.status, 0, r.log)
        XCTAssertLessThan(r.seconds, EndToEndTests.stopBound)
        XCTAssertEqual(events(r.log, "stop").first?["reason"], "SIGTERM")
        XCTAssertEqual(events(r.log, "gpio").last?["value"], "0")
    }

    func testWhileBackingOffAfterTheCameraWasLost() throws {
        try XCTSkipIf(EndToEndTests.underSanitizer, "real-time demo under a sanitizer")
        let r = try stopWhen("event=camera_lost")
        XCTAssertEqual(r.status, 0, r.log)
        XCTAssertLessThan(r.seconds, EndToEndTests.stopBound)
        XCTAssertEqual(events(r.log, "stop").first?["reason"], "SIGTERM")
    }

    func testMidDecodeWithSIGINT() throws {
        let r = try stopWhen("event=ready", signals: [SIGINT])
        XCTAssertEqual(r.status, 0, r.log)
        XCTAssertLessThan(r.seconds, EndToEndTests.stopBound)
        XCTAssertEqual(events(r.log, "stop").first?["reason"], "SIGINT")
    }

    func testSIGHUPIsLoggedAndIgnored() throws {
        let r = try stopWhen("event=ready", signals: [SIGHUP, SIGTERM])
        XCTAssertEqual(events(r.log, "signal_ignored").first?["signal"], "SIGHUP", r.log)
        XCTAssertEqual(events(r.log, "stop").first?["reason"], "SIGTERM")
        XCTAssertEqual(r.status, 0)
    }

    func testTorchIsLeftOffAfterSIGTERM() throws {
        try XCTSkipIf(EndToEndTests.underSanitizer, "real-time demo under a sanitizer")
        let r = try stopWhen("event=torch state=on")
        XCTAssertEqual(r.status, 0, r.log)
        XCTAssertLessThan(r.seconds, EndToEndTests.stopBound)
        let torchLine = events(r.log, "gpio").filter { $0["line"] == "17" }
        XCTAssertEqual(torchLine.map { $0["value"] }, ["0", "1", "0"], r.log)
    }

    func testTheWholeDemoGoesAsNarrated() throws {
        try XCTSkipIf(EndToEndTests.underSanitizer, "real-time demo under a sanitizer")
        let r = try stopWhen("event=demo_result", signals: [])
        XCTAssertEqual(r.status, 0, r.log)
        let result = try XCTUnwrap(events(r.log, "demo_result").first)
        XCTAssertEqual(result["result"], "pass", r.log)
        XCTAssertEqual(events(r.log, "scan").map { $0["data"] }, ["KIOSK-DEMO-0001", "KIOSK-DEMO-0001", "KIOSK-DEMO-PHONE", "KIOSK-DEMO-0002"])
        // On at dusk; off and on again for the phone (the screen look, which read it); off in the light.
        XCTAssertEqual(events(r.log, "torch").map { [$0["state"]!, $0["reason"]!] },
                       [["on", "ambient below 50 for 1.5 s"], ["off", "screen"], ["on", "screen"], ["off", "ambient above 80 for 1.5 s"]])
        XCTAssertEqual(events(r.log, "torch")[2]["read"], "true")
        XCTAssertEqual(events(r.log, "camera_reopen").count, 1)
    }

    func testASecondSignalEndsAtOnceWithTheBuzzerSilent() throws {
        // A 5 s beep is sounding; two signals: the second one ends the process without waiting.
        let r = try stopWhen("event=scan", env: ["KIOSK_BEEP_MS": "5000"], signals: [SIGTERM, SIGTERM])
        XCTAssertLessThan(r.seconds, EndToEndTests.stopBound)
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(events(r.log, "gpio").last?["value"], "0", r.log)
    }
}
