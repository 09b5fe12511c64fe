// SPDX-License-Identifier: Apache-2.0
import Camera
@testable import Commands
import Foundation
import Glibc
import Policy
import Scene
import TestSupport
import XCTest

/// `kiosk aim`, the built binary on replayed frames: the JSON figures, and the live view
/// as a terminal shows it (tmux).
final class AimTests: XCTestCase {
    var folders: [URL] = []
    override func tearDown() { folders.forEach { try? FileManager.default.removeItem(at: $0) } }

    /// 45 frames (1.5 s at 30 fps) of a QR code with 4 px modules in the middle of a 640x480
    /// window, blurred by `blur` pixels of radius.
    func frames(blur: Int, text: String = "AIM-AT-ME") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-aim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        folders.append(folder)
        var picture = GrayImage(width: 640, height: 480, fill: 180)
        let code = try QRCodeImage.render(text, moduleSize: 4)
        picture.paste(code, x: 320 - code.width / 2, y: 240 - code.height / 2)
        picture = picture.blurred(radius: blur)
        for i in 0..<45 { try ImageFile.writePGM(picture, to: folder.appendingPathComponent(String(format: "%03d.pgm", i)).path) }
        return folder
    }

    func aimJSON(_ folder: URL) throws -> [[String: Any]] {
        let r = try KioskProcess.run(["aim", "--json"], env: ["KIOSK_CAMERA": "replay:\(folder.path)", "KIOSK_FPS": "30"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return try r.stdout.split(separator: "\n").map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
    }

    func testTheJSONGivesTheModuleSizeAndASharpnessThatFallsWhenThePictureBlurs() throws {
        let sharp = try aimJSON(try frames(blur: 0))
        // One object for the first second of frames' time, and a last one at the replay's end.
        XCTAssertEqual(sharp.count, 2)
        for key in ["brightness", "clipped", "sharpness", "code", "module_px", "hint"] {
            XCTAssertNotNil(sharp[0][key], key)
        }
        let last = try XCTUnwrap(sharp.last)
        XCTAssertEqual(last["final"] as? Bool, true)
        XCTAssertEqual(last["code"] as? String, "AIM-AT-ME")
        let module = try XCTUnwrap(last["module_px"] as? Double)
        XCTAssertEqual(module, 4, accuracy: 0.6)
        XCTAssertTrue((last["hint"] as? String ?? "").hasPrefix("good"), "\(last)")
        XCTAssertEqual(last["sharpness_source"] as? String, "gradient")

        let blurred = try XCTUnwrap(try aimJSON(try frames(blur: 3)).last)
        XCTAssertTrue(blurred["code"] is NSNull, "\(blurred)")
        let s0 = try XCTUnwrap(last["sharpness"] as? Double), s1 = try XCTUnwrap(blurred["sharpness"] as? Double)
        XCTAssertLessThan(s1, s0 / 2, "sharp \(s0), blurred \(s1)")
        XCTAssertTrue((blurred["hint"] as? String ?? "").hasPrefix("out of focus"), "\(blurred)")
    }

    func testACredentialIsNeverPrinted() throws {
        // A rotating code held up while aiming: aim says it read, and its size, not the token.
        let token = "KT1:alice:1796300000:492039"
        let r = try KioskProcess.run(["aim", "--json"], env: ["KIOSK_CAMERA": "replay:\(try frames(blur: 0, text: token).path)", "KIOSK_FPS": "30"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("alice") || r.stdout.contains("492039") || r.stderr.contains("alice"), r.stdout)
        let last = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.split(separator: "\n").last!.utf8)) as? [String: Any])
        XCTAssertEqual(last["code"] as? String, Aim.credentialNotShown)
        XCTAssertEqual(last["credential"] as? Bool, true)
        XCTAssertNotNil(last["module_px"] as? Double)
        // In credentials mode every code is a token; outside it a plain code is shown.
        let symbol = DecodedSymbol(symbology: .qrcode, bytes: Array("HELLO".utf8), text: "HELLO", location: [], quality: 1)
        var config = Configuration()
        XCTAssertEqual(Aim.shownPayload(symbol, config: config), Array("HELLO".utf8))
        config.verdict = .credentials
        XCTAssertNil(Aim.shownPayload(symbol, config: config))
    }

    /// An event ticket (a secret pretix 2026.8.0 minted: PretixTicketTests.dated) held up
    /// while aiming, outside credentials mode: read, sized, never printed.
    func testAnEventTicketIsNeverPrinted() throws {
        let secret = "=ww8fh3kANufT1XYgd0eSTIyNVL1Z/Z/5yR8GEN1wCht2JhxB55rpMfa4bJzW0HWUB3b3nBeEwiC5axZZlbtCowB5aNqACjBq+s4AiyAgcAGqABT6ZmTxdlYklTCKAEAdAQA"
        let r = try KioskProcess.run(["aim", "--json"], env: ["KIOSK_CAMERA": "replay:\(try frames(blur: 0, text: secret).path)", "KIOSK_FPS": "30"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for piece in [secret, String(secret.prefix(16)), String(secret.suffix(16))] {
            XCTAssertFalse(r.stdout.contains(piece) || r.stderr.contains(piece), r.stdout)
        }
        let last = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.split(separator: "\n").last!.utf8)) as? [String: Any])
        XCTAssertEqual(last["code"] as? String, Aim.credentialNotShown)
        XCTAssertEqual(last["credential"] as? Bool, true)
        XCTAssertNotNil(last["module_px"] as? Double)
        let symbol = DecodedSymbol(symbology: .qrcode, bytes: Array(secret.utf8), text: secret, location: [], quality: 1)
        XCTAssertNil(Aim.shownPayload(symbol, config: Configuration()))
    }

    func testBadArgumentsAndABusyCameraAreSaidPlainly() throws {
        XCTAssertEqual(try KioskProcess.run(["aim", "--seconds", "0"]).status, 64)
        XCTAssertEqual(try KioskProcess.run(["aim", "--frobnicate"]).status, 64)
        let busy = Aim.openFailure(.device("/dev/video0"), CameraError("VIDIOC_REQBUFS", errno: EBUSY))
        XCTAssertTrue(busy.contains("in use") && busy.contains("systemctl stop kiosk"), busy)
        let missing = try KioskProcess.run(["aim"], env: ["KIOSK_CAMERA": "/dev/video-none"])
        XCTAssertEqual(missing.status, 1, "as kiosk snapshot: 1 for a camera that cannot be opened")
        XCTAssertTrue(missing.stderr.contains("cannot open the camera /dev/video-none"), missing.stderr)
        // --sweep needs a focus_absolute: a replay has none.
        let sweep = try KioskProcess.run(["aim", "--sweep"], env: ["KIOSK_CAMERA": "replay:\(try frames(blur: 0).path)"])
        XCTAssertEqual(sweep.status, 1)
        XCTAssertTrue(sweep.stderr.contains("no focus_absolute"), sweep.stderr)
    }

    func testTheLiveViewInATerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (make deps installs it)")
        }
        let folder = try frames(blur: 0, text: "LIVE-VIEW")
        let session = "kiosk-aim-\(getpid())"
        func tmux(_ args: [String]) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
            p.arguments = ["-L", session] + args
            return try Child.run(p, within: 30).output
        }
        defer { _ = try? tmux(["kill-server"]) }
        let command = "env KIOSK_CAMERA=replay:\(folder.path) KIOSK_FPS=30 \(KioskProcess.binary.path) aim; sleep 30"
        // Through the C library's system(): a server started by Foundation's Process did not stay
        // up (its pane was gone at once), started from a shell it does.
        XCTAssertEqual(system("env -i PATH=/usr/bin:/bin TERM=xterm-256color HOME=/tmp /usr/bin/tmux -L \(session) new-session -d -x 100 -y 45 -s aim '\(command)'"), 0)
        var screen = ""
        for _ in 0..<100 {
            usleep(100_000)
            screen = try tmux(["capture-pane", "-p", "-t", "aim"])
            if screen.contains("hint:") && screen.contains("LIVE-VIEW") { break }
        }
        XCTAssertTrue(screen.contains("\u{2580}"), "the picture in half blocks:\n\(screen)")
        XCTAssertTrue(screen.contains("brightness"), screen)
        XCTAssertTrue(screen.contains("last code: QR-Code LIVE-VIEW"), screen)
        XCTAssertTrue(screen.contains("hint: good"), screen)
        // The picture fills the terminal's width (100 columns).
        let pictureLine = try XCTUnwrap(screen.split(separator: "\n").first { $0.contains("\u{2580}") })
        XCTAssertEqual(pictureLine.filter { $0 == "\u{2580}" }.count, 100)
        // The ROI drawn in yellow (colour 226) around the middle of the picture.
        let coloured = try tmux(["capture-pane", "-p", "-e", "-t", "aim"])
        XCTAssertTrue(coloured.contains("226"), "the ROI's colour")
    }
}
