// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import GPIO
@testable import Kiosk
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// The door reader wired into the service: verdicts from real programs' exit statuses,
/// the patterns, LEDs and strike timed on a fake chip with the manual clock, Wiegand from a code.
final class DoorReaderTests: XCTestCase {
    let buzzerLine = 18, grantedLine = 5, deniedLine = 6, doorLine = 23, d0Line = 20, d1Line = 21

    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ l: String) { lock.lock(); list.append(l); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
        func of(_ event: String) -> [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    struct Rig {
        let reader: DoorReader
        let clock: ManualClock
        let timeline: LineTimeline
        let chip: FakeChip
        let lines: Lines
        let logger: Logger
    }

    var folder: URL!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)  // as `kiosk run` does: a program that exits before reading its stdin
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-door-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func hookConfiguration() -> Configuration {
        var c = Configuration()
        c.verdict = .hook
        c.onScan = "/test/program"
        return c
    }

    /// A reader with the buzzer, both LEDs and the strike on a fake chip, timed on a manual clock
    /// standing at 0.
    func rig(_ config: Configuration? = nil) throws -> Rig {
        let c = config ?? hookConfiguration()
        let chip = FakeChip(), clock = ManualClock(startNs: 0), timeline = LineTimeline(clock: clock), lines = Lines()
        let logger = Logger(level: .debug) { lines.add($0) }
        let reader = DoorReader(configuration: c, lines: .init(
            buzzer: try timeline.output(chip, offset: buzzerLine, activeLow: false),
            grantedLED: try timeline.output(chip, offset: grantedLine, activeLow: false),
            deniedLED: try timeline.output(chip, offset: deniedLine, activeLow: true),
            door: try timeline.output(chip, offset: doorLine, activeLow: false)), logger: logger, clock: clock)
        return Rig(reader: reader, clock: clock, timeline: timeline, chip: chip, lines: lines, logger: logger)
    }

    /// A program written by the test (the kiosk itself never uses a shell: it runs the file).
    func program(_ name: String, _ body: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// One code through the reader and a real scan program, as `ScanService.report` does it.
    func scan(_ rig: Rig, hook: ScanHook, payload: String = "VISITOR-1", frame: UInt64 = 42) -> VerdictWait {
        let wait = rig.reader.reported(symbology: "QR-Code", payload: Array(payload.utf8), frame: frame)!
        hook.submit(symbology: "QR-Code", payload: Array(payload.utf8)) { end, at in wait.programEnded(end, at: at) }
        return wait
    }

    // MARK: verdicts from real programs

    func testEachExitStatusGivesItsVerdictPatternLEDAndEvent() throws {
        let cases: [(body: String, result: String, reason: String, buzzer: [[Int]], granted: [[Int]], denied: [[Int]], door: [[Int]])] = [
            ("cat >/dev/null; exit 0", "granted", "exit status 0",
             [[0, 0], [0, 1], [400, 0]], [[0, 0], [0, 1], [2000, 0]], [[0, 1]], [[0, 0], [0, 1], [3000, 0]]),
            ("cat >/dev/null; exit 1", "denied", "exit status 1",
             [[0, 0], [0, 1], [80, 0], [160, 1], [240, 0], [320, 1], [400, 0]], [[0, 0]], [[0, 1], [0, 0], [2000, 1]], [[0, 0]]),
            ("exit 7", "error", "exit status 7",
             [[0, 0], [0, 1], [200, 0], [400, 1], [600, 0]], [[0, 0]], [[0, 1], [0, 0], [2000, 1]], [[0, 0]]),
            ("kill -KILL $$", "error", "killed by signal 9 (SIGKILL)",
             [[0, 0], [0, 1], [200, 0], [400, 1], [600, 0]], [[0, 0]], [[0, 1], [0, 0], [2000, 1]], [[0, 0]]),
        ]
        for (i, c) in cases.enumerated() {
            let r = try rig()
            let hook = ScanHook(program: try program("verdict\(i)", c.body), environment: [:], logger: r.logger,
                                timeoutNs: 2_000_000_000, clock: r.clock)
            let wait = scan(r, hook: hook)
            // The wait is decided (under its lock) before the verdict's sound and lights are switched,
            // on the program's thread: the clock moves once what is switched at once is switched.
            XCTAssertEventually("a verdict from `\(c.body)`", within: 20) {
                wait.isDecided && [(buzzerLine, c.buzzer), (grantedLine, c.granted), (deniedLine, c.denied), (doorLine, c.door)]
                    .allSatisfy { line, want in r.timeline.msLevels(offset: line).count >= want.filter { $0[0] == 0 }.count }
            }
            r.clock.advance(toMs: 5000)
            let verdict = try XCTUnwrap(r.lines.of("verdict").first, c.body)
            XCTAssertEqual(verdict["result"], c.result, c.body)
            XCTAssertEqual(verdict["reason"], c.reason, c.body)
            XCTAssertEqual(verdict["ms"], "0.0", "the clock stood still: \(c.body)")
            XCTAssertEqual(verdict["symbology"], "QR-Code")
            XCTAssertEqual(verdict["frame"], "42")
            XCTAssertTrue(r.lines.all.first { $0.contains("event=verdict") }!.hasPrefix(c.result == "error" ? "level=warning" : "level=info"))
            XCTAssertEqual(r.timeline.msLevels(offset: buzzerLine), c.buzzer, "buzzer, \(c.body)")
            XCTAssertEqual(r.timeline.msLevels(offset: grantedLine), c.granted, "green LED, \(c.body)")
            XCTAssertEqual(r.timeline.msLevels(offset: deniedLine), c.denied, "red LED (active-low), \(c.body)")
            XCTAssertEqual(r.timeline.msLevels(offset: doorLine), c.door, "strike, \(c.body)")
            XCTAssertEqual(r.lines.of("door").map { $0["state"] }, c.result == "granted" ? ["open", "closed"] : [], c.body)
            // No read sound in hook mode (KIOSK_BEEP_READ's default): the only beep is the verdict's.
            XCTAssertEqual(r.lines.of("beep").map { $0["for"] }, [c.result], c.body)
            XCTAssertEqual(r.reader.verdicts(Verdict.Result(rawValue: c.result)!), 1)
            hook.shutDown()
            r.reader.shutDown()
        }
    }

    /// With an OSDP controller the LEDs and the strike are its own; a local verdict (the
    /// credentials mode's; hook mode itself is refused with OSDP by the configuration) only sounds.
    func testWithAnOSDPControllerAVerdictLeavesTheLEDsAndTheStrikeAlone() throws {
        var c = hookConfiguration()
        c.osdpPort = "/dev/ttyUSB0"
        let r = try rig(c)
        r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 1)!.programEnded(.exited(status: 0), at: r.clock.now())
        r.clock.advance(toMs: 1000)
        r.reader.reported(symbology: "QR-Code", payload: [0x32], frame: 2)!.programEnded(.exited(status: 1), at: r.clock.now())
        r.clock.advance(toMs: 5000)
        XCTAssertEqual(r.lines.of("verdict").map { $0["result"] }, ["granted", "denied"])
        XCTAssertEqual(r.lines.of("beep").map { $0["for"] }, ["granted", "denied"])
        XCTAssertEqual(r.timeline.msLevels(offset: grantedLine), [[0, 0]], "green LED untouched")
        XCTAssertEqual(r.timeline.msLevels(offset: deniedLine), [[0, 1]], "red LED untouched (active-low: 1 is off)")
        XCTAssertEqual(r.timeline.msLevels(offset: doorLine), [[0, 0]], "the strike untouched")
        XCTAssertEqual(r.lines.of("door").count, 0)
        r.reader.shutDown()
    }

    func testAProgramThatDoesNotAnswerInTimeIsAnErrorAtTheDeadline() throws {
        let r = try rig()
        // It never answers (and ignores SIGTERM): the deadline decides; the hook then ends it.
        let hook = ScanHook(program: try program("hang", "trap '' TERM\nwhile true; do sleep 1; done"), environment: [:],
                            logger: r.logger, timeoutNs: 2_000_000_000, killGraceNs: 100_000_000, clock: r.clock)
        let wait = scan(r, hook: hook)
        XCTAssertEventually("the program is running", within: 20) { !hook.isIdle }
        r.clock.advance(toMs: 1999)
        XCTAssertFalse(wait.isDecided)
        XCTAssertEqual(r.timeline.msLevels(offset: buzzerLine), [[0, 0]], "silent until the verdict")
        r.clock.advance(toMs: 2000)
        XCTAssertTrue(wait.isDecided)
        let verdict = try XCTUnwrap(r.lines.of("verdict").first)
        XCTAssertEqual(verdict["result"], "error")
        XCTAssertEqual(verdict["reason"], "no answer within 2000 ms")
        XCTAssertEqual(verdict["ms"], "2000.0")
        r.clock.advance(toMs: 3000)
        XCTAssertEqual(r.timeline.msLevels(offset: buzzerLine), [[0, 0], [2000, 1], [2200, 0], [2400, 1], [2600, 0]])
        XCTAssertEqual(r.timeline.msLevels(offset: doorLine), [[0, 0]])
        // The hook's timeout (KIOSK_VERDICT_MS in hook mode) ends the program; its late end changes nothing.
        XCTAssertEventually("the program is ended", within: 20) {
            r.clock.advance(byMs: 50)  // the hook's SIGTERM, then its SIGKILL a grace later
            return hook.isIdle
        }
        XCTAssertEqual(r.lines.of("verdict").count, 1)
        XCTAssertEqual(r.lines.of("hook").first?["timeout"], "true")
        hook.shutDown()
        r.reader.shutDown()
    }

    func testAVerdictNeverHoldsUpTheFrames() throws {
        // A program that hangs; the scene goes on for 300 frames after the code and every one is
        // processed while the verdict is still pending.
        let code = try QRCodeImage.render("VISITOR-2", moduleSize: 4)
        let scene = ScriptedScene(steps: [.init(start: 0, narration: "empty"),
                                          .init(start: 0.5, narration: "held", codes: [.init(picture: code, centre: NormalizedPoint(x: 0.5, y: 0.5))]),
                                          .init(start: 1.0, narration: "away")],
                                  duration: 11, fps: 30, uprightWidth: 640, uprightHeight: 480, mount: Mount(), realTime: false)
        let r = try rig()
        let hook = ScanHook(program: try program("hang", "exec sleep 30"), environment: [:], logger: r.logger,
                            timeoutNs: 2_000_000_000, clock: r.clock)
        let svc = ScanService(configuration: hookConfiguration(), source: scene, features: ScanFeatures(door: r.reader, hook: hook), logger: r.logger, stop: StopSignal(), clock: ManualClock())
        var reportedAt: Int?
        var framesWhilePending = 0
        svc.observe().onReport = { _, _ in reportedAt = svc.frames }
        svc.observe().onFrame = { n in
            guard let at = reportedAt, n > at else { return }
            if r.reader.verdicts(.error) == 0 && r.lines.of("verdict").isEmpty { framesWhilePending += 1 }
        }
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(svc.frames, 330)
        XCTAssertEqual(svc.decoded, 1)
        let at = try XCTUnwrap(reportedAt)
        XCTAssertEqual(framesWhilePending, 330 - at, "every frame after the report was processed with the verdict pending")
        // The replay's end waited for the verdict (on the reader's clock): the deadline's error.
        XCTAssertEqual(r.lines.of("verdict").map { $0["result"] }, ["error"])
        XCTAssertEqual(r.lines.of("verdict").first?["reason"], "no answer within 2000 ms")
        hook.shutDown()
    }

    func testASecondCodeWhileAVerdictIsPendingIsQueuedAndAnsweredInTurn() throws {
        let r = try rig()
        // Each run waits for a file, so the first is still running when the second code comes.
        let gate = folder.appendingPathComponent("go").path
        let hook = ScanHook(program: try program("slow", "read code\nwhile [ ! -e \(gate) ]; do sleep 0.01; done\n[ \"$code\" = OPEN ]"),
                            environment: [:], logger: r.logger, timeoutNs: 2_000_000_000, clock: r.clock)
        let first = scan(r, hook: hook, payload: "OPEN\n", frame: 10)
        let second = scan(r, hook: hook, payload: "SHUT\n", frame: 20)
        XCTAssertEventually("the first program is running", within: 20) { !hook.isIdle }
        XCTAssertFalse(first.isDecided)
        XCTAssertFalse(second.isDecided)
        FileManager.default.createFile(atPath: gate, contents: nil)
        XCTAssertEventually("both verdicts", within: 20) { first.isDecided && second.isDecided }
        XCTAssertEqual(r.lines.of("verdict").map { [$0["result"]!, $0["frame"]!] }, [["granted", "10"], ["denied", "20"]])
        hook.shutDown()
        r.reader.shutDown()
    }

    // MARK: the strike and the patterns on the manual clock

    func testAGrantDuringAnOpenDoorExtendsItAndANewPatternCutsTheOld() throws {
        let r = try rig()
        r.clock.advance(toMs: 1000)
        r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 1)!.programEnded(.exited(status: 0), at: r.clock.now())
        r.clock.advance(toMs: 1200)
        // A refusal 200 ms into the grant's 400 ms beep: the denied pattern starts at once
        // (the buzzer stays on: no edge) and the grant's end no longer applies.
        r.reader.reported(symbology: "QR-Code", payload: [0x32], frame: 2)!.programEnded(.exited(status: 1), at: r.clock.now())
        r.clock.advance(toMs: 3000)
        r.reader.reported(symbology: "QR-Code", payload: [0x33], frame: 3)!.programEnded(.exited(status: 0), at: r.clock.now())
        r.clock.advance(toMs: 10_000)
        XCTAssertEqual(r.timeline.msLevels(offset: buzzerLine),
                       [[0, 0], [1000, 1], [1280, 0], [1360, 1], [1440, 0], [1520, 1], [1600, 0], [3000, 1], [3400, 0]])
        // Opened at 1 s, extended by the grant at 3 s to 6 s: one open, one close, no click between.
        XCTAssertEqual(r.timeline.msLevels(offset: doorLine), [[0, 0], [1000, 1], [6000, 0]])
        XCTAssertEqual(r.lines.of("door").map { [$0["state"]!, $0["reason"] ?? "-"] }, [["open", "-"], ["closed", "time"]])
        XCTAssertEqual(r.lines.of("door").first?["ms"], "3000")
        // Green on at 1 s, off when the refusal lights red at 1.2 s, on again at 3 s for 2 s.
        XCTAssertEqual(r.timeline.msLevels(offset: grantedLine), [[0, 0], [1000, 1], [1200, 0], [3000, 1], [5000, 0]])
        XCTAssertEqual(r.timeline.msLevels(offset: deniedLine), [[0, 1], [1200, 0], [3000, 1]])
        r.reader.shutDown()
    }

    func testEverythingIsInactiveAfterAStopMidPatternWithTheDoorOpen() throws {
        // SIGTERM: the loop ends, and on its way out (ScanService.finishing) the reader shuts.
        let r = try rig()
        let stop = StopSignal()
        let source = FaultySource(script: [.frames(5), .frames(100)])
        source.afterFrame = { n in
            if n == 3 {
                r.clock.advance(toMs: 500)
                r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 3)!.programEnded(.exited(status: 0), at: r.clock.now())
                r.clock.advance(toMs: 600)  // mid-beep, door open, green LED lit
            }
            if n == 5 { stop.request("SIGTERM") }
        }
        let svc = ScanService(configuration: hookConfiguration(), source: source, features: ScanFeatures(door: r.reader), logger: r.logger, stop: stop, clock: ManualClock())
        XCTAssertEqual(try svc.run(), .signal("SIGTERM"))
        for line in [buzzerLine, grantedLine, doorLine] {
            XCTAssertEqual(r.timeline.msLevels(offset: line), [[0, 0], [500, 1], [600, 0]], "line \(line)")
        }
        XCTAssertEqual(r.timeline.msLevels(offset: deniedLine), [[0, 1]], "never lit (active-low: 1 is off)")
        XCTAssertEqual(Set(r.chip.released), [buzzerLine, grantedLine, deniedLine, doorLine])
        XCTAssertEqual(r.lines.of("door").map { [$0["state"]!, $0["reason"] ?? "-"] }, [["open", "-"], ["closed", "stop"]])
        r.clock.advance(toMs: 10_000)  // the pending ends find released lines
        XCTAssertEqual(r.timeline.edges.count, 10)
        // Later codes do nothing.
        XCTAssertNil(r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 9))
    }

    func testTheStrikeShutsWhenTheCameraIsLost() throws {
        let r = try rig()
        let serviceClock = ManualClock()
        let source = FaultySource(script: [.frames(3), .fail(CameraError("unplugged")), .frames(3)],
                                  clock: serviceClock)
        source.afterFrame = { n in
            if n == 2 {
                r.clock.advance(toMs: 100)
                r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 2)!.programEnded(.exited(status: 0), at: r.clock.now())
                r.clock.advance(toMs: 250)
            }
        }
        let svc = ScanService(configuration: hookConfiguration(), source: source, features: ScanFeatures(door: r.reader), logger: r.logger, stop: StopSignal(), clock: serviceClock)
        var doorWhenLost: [[Int]] = []
        svc.observe().onCameraLost = { doorWhenLost = r.timeline.msLevels(offset: self.doorLine) }
        XCTAssertEqual(try svc.run(), .sourceEnded)
        XCTAssertEqual(doorWhenLost, [[0, 0], [100, 1], [250, 0]], "shut at once, before the camera is closed")
        XCTAssertEqual(r.lines.of("door").map { [$0["state"]!, $0["reason"] ?? "-"] }, [["open", "-"], ["closed", "camera_lost"]])
        XCTAssertEqual(svc.reopenings, 1)
    }

    func testNoneModeBeepsTheReadPatternAndGivesNoVerdict() throws {
        var c = Configuration()
        c.beepMs = 90
        let r = try rig(c)
        XCTAssertNil(r.reader.reported(symbology: "QR-Code", payload: [0x31], frame: 1), "no verdict to wait for")
        r.clock.advance(toMs: 1000)
        XCTAssertEqual(r.timeline.msLevels(offset: buzzerLine), [[0, 0], [0, 1], [90, 0]])
        XCTAssertEqual(r.lines.of("beep").map { [$0["ms"]!, $0["for"]!] }, [["90", "read"]])
        XCTAssertTrue(r.lines.of("verdict").isEmpty)
        r.reader.shutDown()
    }

    // MARK: Wiegand from a scanned code

    func testACardNumberCodeGoesOutOnD0AndD1AndMalformedOnesAreSkipped() throws {
        var c = Configuration()
        c.wiegandD0Line = d0Line
        c.wiegandD1Line = d1Line
        c.wiegandFacility = 18
        c.wiegandPulseUs = 20
        c.wiegandIntervalUs = 200
        let chip = FakeChip(), clock = MonotonicClock(), timeline = LineTimeline(clock: clock), lines = Lines()
        let logger = Logger(level: .debug) { lines.add($0) }
        let reader = DoorReader(configuration: c, lines: .init(wiegand: (try timeline.output(chip, offset: d0Line, activeLow: false),
                                                                           try timeline.output(chip, offset: d1Line, activeLow: false))),
                                logger: logger, clock: clock)
        let texts = ["36963", "hello; rm -rf /", "18:99999", "7:12"]
        let pictures = try texts.map { try QRCodeImage.render($0, moduleSize: 4) }
        var steps: [ScriptedScene.Step] = []
        for (i, p) in pictures.enumerated() {
            steps.append(.init(start: Double(i), narration: texts[i], codes: [.init(picture: p, centre: NormalizedPoint(x: 0.5, y: 0.5))]))
            steps.append(.init(start: Double(i) + 0.5, narration: "away"))
        }
        let scene = ScriptedScene(steps: steps, duration: Double(texts.count), fps: 30, uprightWidth: 640, uprightHeight: 480,
                                  mount: Mount(), realTime: false)
        let svc = ScanService(configuration: c, source: scene, features: ScanFeatures(door: reader), logger: logger, stop: StopSignal(), clock: ManualClock())
        XCTAssertEqual(try svc.run(), .sourceEnded)  // its end waits until the frames are out
        XCTAssertEqual(lines.of("scan").map { $0["data"] }, texts)
        XCTAssertEqual(lines.of("wiegand").map { [$0["bits"]!, $0["facility"]!, $0["card"]!] }, [["26", "18", "36963"], ["26", "7", "12"]])
        let skipped = lines.of("wiegand_skipped")
        XCTAssertEqual(skipped.count, 2)
        XCTAssertTrue(skipped[0]["reason"]!.contains("not a decimal card number"), "\(skipped)")
        XCTAssertTrue(skipped[1]["reason"]!.contains("card 99999 does not fit the 26-bit format"), "\(skipped)")
        XCTAssertTrue(lines.all.filter { $0.contains("event=wiegand_skipped") }.allSatisfy { $0.hasPrefix("level=warning") })
        // The lines: idle (0 on the pin, the NPN stage's wire high), then one pulse per bit, in
        // order; the bits read back are the two frames.
        let pulses = timeline.edges.filter { $0.level == 1 }.sorted { $0.ns < $1.ns }
        let bits = pulses.map { $0.offset == d1Line ? "1" : "0" }.joined()
        let expected = [WiegandCredential(facility: 18, card: 36963), WiegandCredential(facility: 7, card: 12)]
            .map { WiegandFrame($0, format: .h10301)!.description }.joined()
        XCTAssertEqual(bits, expected)
        XCTAssertEqual(String(bits.prefix(26)), "00001001010010000011000111", "facility 18, card 36963 (H10301)")
        XCTAssertEqual(timeline.edges.filter { $0.level == 0 }.count, 52 + 2, "each pulse ends; both requested idle")
        XCTAssertEqual(chip.levels[d0Line]?.last, 0)
        XCTAssertEqual(chip.levels[d1Line]?.last, 0)
        XCTAssertEqual(Set(chip.released), [d0Line, d1Line])
    }
}
