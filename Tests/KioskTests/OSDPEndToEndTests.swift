// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import Platform
import Policy
import Scene
import TestSupport
import XCTest

/// The kiosk as an OSDP reader, judged by an independent implementation: libosdp's
/// ControlPanel (PyPI `libosdp`, `make peers`) drives the real kiosk binary over a pseudo-terminal
/// pair (harness/osdp/controller.py, run with KIOSK_PEERS_PYTHON). Each scenario returns what it saw.
final class OSDPEndToEndTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-osdp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    static var python: String? { ProcessInfo.processInfo.environment["KIOSK_PEERS_PYTHON"] }

    static var script: URL {
        Checkout.root.appendingPathComponent("harness/osdp/controller.py")
    }

    /// Runs one scenario; the frames it may show are drawn here (our QR renderer, as the other
    /// end-to-end tests draw theirs).
    func scenario(_ name: String, codes: [String] = [], randomSeconds: Double = 3) throws -> [String: Any] {
        guard let python = OSDPEndToEndTests.python, FileManager.default.isExecutableFile(atPath: python) else {
            XCTFail("KIOSK_PEERS_PYTHON does not name the peers' python: run `make peers` and the tests through `make test`")
            return [:]
        }
        let qr = folder.appendingPathComponent("qr")
        try FileManager.default.createDirectory(at: qr, withIntermediateDirectories: true)
        try ImageFile.writePGM(GrayImage(width: 320, height: 240, fill: 190), to: qr.appendingPathComponent("blank.pgm").path)
        for code in codes {
            var frame = GrayImage(width: 320, height: 240, fill: 190)
            let image = try QRCodeImage.render(code, moduleSize: 3)
            frame.paste(image, x: 160 - image.width / 2, y: 120 - image.height / 2)
            let name = code.utf8.map { String(format: "%02x", $0) }.joined()
            try ImageFile.writePGM(frame, to: qr.appendingPathComponent(name + ".pgm").path)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [OSDPEndToEndTests.script.path, "--kiosk", KioskProcess.binary.path, "--work", folder.path,
                       "--scenario", name, "--qr", qr.path, "--random-seconds", String(randomSeconds)]
        // A scenario takes seconds (tens under qemu); one that hangs is killed and fails.
        let run = try Child.run(p, within: 300)
        let data = run.stdout
        let log = (try? String(contentsOf: folder.appendingPathComponent("kiosk.log"), encoding: .utf8)) ?? ""
        XCTAssertEqual(run.status, 0, run.errors.suffix(3000) + "\n" + log)
        let object = try JSONSerialization.jsonObject(with: data.isEmpty ? Data("{}".utf8) : data) as? [String: Any] ?? [:]
        return object.merging(["log": log]) { a, _ in a }
    }

    /// The (seconds, line, value) changes a scenario recorded, for one line.
    func changes(_ r: [String: Any], _ key: String, line: Int) -> [(t: Double, value: Int)] {
        ((r[key] as? [[Any]]) ?? []).compactMap { e in
            guard e.count == 3, let t = e[0] as? Double, let l = e[1] as? Int, let v = e[2] as? Int, l == line else { return nil }
            return (t, v)
        }
    }

    func testPlaintextLinkIdentifiesItselfAndSendsACodeAsAWiegandCard() throws {
        let r = try scenario("plain", codes: ["18:36963"])
        XCTAssertEqual(r["online"] as? Bool, true, "\(r)")
        let id = r["pd_id"] as? [String: Int] ?? [:]
        XCTAssertEqual(id["model"], 1)
        XCTAssertEqual(id["firmware"], 0x000100, "0.1.0")
        XCTAssertNotEqual(id["serial"], 0)
        let caps = r["caps"] as? [String: [Int]] ?? [:]
        XCTAssertEqual(caps["CommunicationSecurity"], [1, 0], "AES-128 Secure Channel")
        XCTAssertEqual(caps["CheckCharacter"], [1, 0], "CRC-16")
        XCTAssertEqual(caps["LEDControl"], [3, 1])
        XCTAssertEqual(caps["AudibleControl"], [2, 1])
        XCTAssertEqual(caps["OutputControl"], [4, 1])
        XCTAssertEqual(caps["TextOutput"], [0, 0], "no display")
        XCTAssertEqual(caps["ReceiveBufferSize"], [0, 1], "256 bytes")
        XCTAssertEqual(r["sc_active"] as? Bool, false)
        // Facility 18, card 36963: 0 00010010 1001000001100011 1, packed MSB first.
        let card = r["card"] as? [String: Any]
        XCTAssertEqual(card?["format"] as? Int, 1, "Wiegand: \(r)")
        XCTAssertEqual(card?["length"] as? Int, 26)
        XCTAssertEqual(card?["data"] as? String, "094831c0")
        XCTAssertEqual(r["exit"] as? Int, 0, "the replay ended after the controller polled its read")
        XCTAssertEqual((r["osdp_card"] as? [[String: String]])?.first?["bits"], "26")
    }

    func testSecureChannelCarriesTheControllersCommandsToTheLinesAndARawCardBack() throws {
        let r = try scenario("secure", codes: ["VISITOR-7"])
        XCTAssertEqual(r["online"] as? Bool, true, "\(r)")
        XCTAssertEqual(r["sc_active"] as? Bool, true, "Secure Channel with the installer's key")
        // Green for 500 ms (a temporary state), then the permanent one (off).
        let green = changes(r, "led", line: 5)
        XCTAssertEqual(green.map(\.value), [1, 0], "\(r["led"] ?? "")")
        if green.count == 2 { XCTAssertEqual(green[1].t - green[0].t, 0.5, accuracy: 0.15) }
        XCTAssertEqual(changes(r, "led_red", line: 6).map(\.value), [1], "red, permanently")
        // Two 200 ms beeps 100 ms apart.
        let buzz = changes(r, "buzzer", line: 18)
        XCTAssertEqual(buzz.map(\.value), [1, 0, 1, 0], "\(r["buzzer"] ?? "")")
        if buzz.count == 4 {
            XCTAssertEqual(buzz[1].t - buzz[0].t, 0.2, accuracy: 0.1)
            XCTAssertEqual(buzz[2].t - buzz[1].t, 0.1, accuracy: 0.1)
        }
        // The strike: on for its timer, 700 ms.
        let strike = changes(r, "output", line: 23)
        XCTAssertEqual(strike.map(\.value), [1, 0], "\(r["output"] ?? "")")
        if strike.count == 2 { XCTAssertEqual(strike[1].t - strike[0].t, 0.7, accuracy: 0.15) }
        XCTAssertEqual(r["lstat"] as? String, "0000", "tamper and power normal (no tamper line set)")
        XCTAssertEqual(r["ostat_before"] as? String, "00")
        XCTAssertEqual(r["ostat_on"] as? String, "01", "the strike, on")
        XCTAssertEqual(r["sc_still_active"] as? Bool, true)
        let card = r["card"] as? [String: Any]
        XCTAssertEqual(card?["format"] as? Int, 0, "raw: \(r)")
        XCTAssertEqual(card?["data"] as? String, Array("VISITOR-7".utf8).map { String(format: "%02x", $0) }.joined())
        XCTAssertEqual(r["key_in_log"] as? Bool, false, "the key is never logged")
    }

    /// The tamper loop (a simulated input, from the kiosk's stdin) in osdp_LSTATR: tamper byte 0
    /// normal, 1 tamper (SIA OSDP 2.2), power 0 normal; read by the controller at each LSTAT.
    func testLSTATRCarriesTheTamperLoopsState() throws {
        let r = try scenario("tamper")
        XCTAssertEqual(r["online"] as? Bool, true, "\(r)")
        XCTAssertEqual(r["door_inputs"] as? Bool, true)
        XCTAssertEqual(r["tamper_alarm"] as? Bool, true, r["log"] as? String ?? "")
        XCTAssertEqual(r["tamper_ok"] as? Bool, true)
        XCTAssertEqual(r["lstat"] as? [String], ["0000", "0100", "0000"], "tamper, power: whole, cut, whole again")
        XCTAssertEqual(r["exit"] as? Int, 0)
    }

    func testInstallModeTakesTheControllersKeyAndARestartUsesIt() throws {
        let r = try scenario("install")
        XCTAssertEqual(r["keyset_logged"] as? Bool, true, "\(r)")
        XCTAssertEqual(r["secure_keys"] as? [String], ["SCBK-D (install mode)", "SCBK"])
        XCTAssertEqual(r["sc_active_after_keyset"] as? Bool, true)
        XCTAssertEqual(r["kept_mode"] as? String, "0o600")
        XCTAssertEqual(r["kept_is_key"] as? Bool, true)
        XCTAssertEqual(r["restart_key_source"] as? String, "kept from the controller's KEYSET in \(folder.path)/state/osdp-scbk")
        XCTAssertEqual(r["restart_install_mode"] as? String, "false", "a kept key ends install mode: SCBK-D is refused")
        XCTAssertEqual(r["restart_sc_active"] as? Bool, true)
        XCTAssertEqual(r["key_in_log"] as? Bool, false)
    }

    func testAWrongKeyNeverGetsASessionNorACommandCarriedOut() throws {
        let r = try scenario("wrongkey")
        XCTAssertEqual(r["sc_active"] as? Bool, false, "\(r)")
        XCTAssertEqual((r["secure_on"] as? [Any])?.count, 0)
        XCTAssertEqual((r["gpio_after_command"] as? [Any])?.count, 0, "the strike stayed shut")
        XCTAssertTrue((r["errors"] as? [String] ?? []).contains("mac"))
    }

    func testTheControllerSeesAKilledKioskOfflineAndOnlineAgainAfterARestart() throws {
        let r = try scenario("restart")
        XCTAssertEqual(r["online"] as? Bool, true, "\(r)")
        XCTAssertEqual(r["offline"] as? Bool, true)
        XCTAssertEqual(r["online_again"] as? Bool, true)
    }

    func testComsetMovesTheReaderAndARestartKeepsIt() throws {
        let r = try scenario("comset")
        XCTAssertEqual(r["online"] as? Bool, true, "\(r)")
        XCTAssertEqual((r["comset"] as? [[String]])?.first, ["5", "115200"])
        XCTAssertEqual(r["baud_switched"] as? [String], ["115200"])
        XCTAssertEqual(r["still_online"] as? Bool, true, "libosdp's control panel follows the reader to its new address")
        XCTAssertEqual(r["kept"] as? String, "5 115200\n")
        XCTAssertEqual(r["restart"] as? [String: String], ["address": "5", "baud": "115200"])
        XCTAssertEqual(r["old_address_answer"] as? String, "", "address 0 is not the reader's any more")
        XCTAssertEqual((r["new_address_answer"] as? String)?.prefix(12), "538514000445", "PDID (0x45) from address 5 (0x85)")
    }

    func testAHostileBusGetsNakOrSilenceAndNeverMovesTheStrike() throws {
        let r = try scenario("hostile", randomSeconds: 3)
        let replies = r["replies"] as? [String: Any] ?? [:]
        func reply(_ key: String) -> [UInt8] {
            let hex = replies[key] as? String ?? ""
            return Hex.bytes(hex) ?? []
        }
        XCTAssertEqual(reply("id_plain").dropFirst(5).first, 0x45, "PDID: \(replies)")
        XCTAssertEqual(reply("bad_crc"), [], "a bad CRC: silence")
        XCTAssertEqual(Array(reply("out_plain").dropFirst(5).prefix(2)), [0x41, 0x06], "plaintext osdp_OUT refused: NAK 6")
        XCTAssertEqual(reply("too_long"), [], "a length past the buffer: silence")
        XCTAssertEqual(Array(reply("bad_mac").dropFirst(5).prefix(2)), [0x41, 0x06], "a made-up MAC: NAK 6")
        XCTAssertEqual(Array(reply("sequence").dropFirst(5).prefix(2)), [0x41, 0x04], "a stale sequence number: NAK 4")
        XCTAssertGreaterThan(replies["random_bytes"] as? Int ?? 0, 1000)
        XCTAssertEqual(reply("id_after").dropFirst(5).first, 0x45, "still answering after the noise")
        XCTAssertEqual(r["alive"] as? Bool, true)
        XCTAssertEqual((r["gpio"] as? [Any])?.count, 0, "the strike never moved")
        XCTAssertEqual(r["exit"] as? Int, 0)
    }

    func kiosk(_ args: [String], env: [String: String]) throws -> KioskProcess.Run { try KioskProcess.run(args, env: env) }

    func testCheckAndDoctorSayWhereTheKeyComesFromNeverTheKey() throws {
        let key = "00112233445566778899aabbccddeeff"
        let keyFile = folder.appendingPathComponent("scbk").path
        try (key + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let bad = folder.appendingPathComponent("bad").path
        try "not a key\n".write(toFile: bad, atomically: true, encoding: .utf8)
        // A pseudo-terminal for the port, held open here (so doctor names this process as its holder).
        let (master, slave) = try PseudoTerminal.open()
        defer { close(master) }
        let held = open(slave, O_RDWR | O_NOCTTY)
        defer { close(held) }
        let run = folder.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        try "online=1\nsecure=1\nlast_command_ms_ago=40\nwritten_unix=\(Int(Date().timeIntervalSince1970))\nbaud=9600\naddress=0\n"
            .write(to: run.appendingPathComponent("osdp-status"), atomically: true, encoding: .utf8)
        let env = ["KIOSK_OSDP_PORT": slave, "KIOSK_OSDP_KEY_FILE": keyFile, "STATE_DIRECTORY": folder.appendingPathComponent("state").path,
                   "RUNTIME_DIRECTORY": run.path, "KIOSK_CAMERA": "/dev/null"]
        let check = try kiosk(["check"], env: env)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("KIOSK_OSDP_KEY_FILE=\(keyFile)"))
        XCTAssertEqual(check.stdout.split(separator: "\n").last.map(String.init),
                       "# osdp: the code 18:36963 is sent as osdp_RAW, Wiegand, 26 bits: 094831c0; the Secure Channel key comes from KIOSK_OSDP_KEY_FILE \(keyFile)")
        XCTAssertFalse((check.stdout + check.stderr).contains(key))
        let refused = try kiosk(["check"], env: env.merging(["KIOSK_OSDP_KEY_FILE": bad]) { _, b in b })
        XCTAssertEqual(refused.status, 78)
        XCTAssertTrue(refused.stderr.contains("var=KIOSK_OSDP_KEY_FILE"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("not a key\\n"), "the file's content is not echoed")
        let none = try kiosk(["check"], env: ["KIOSK_OSDP_PORT": slave, "STATE_DIRECTORY": folder.path])
        XCTAssertEqual(none.status, 78, "no key, no install mode, secure required: nothing could be answered")
        XCTAssertEqual(try kiosk(["check"], env: ["KIOSK_OSDP_PORT": slave, "KIOSK_OSDP_INSTALL_MODE": "1", "STATE_DIRECTORY": folder.path]).status, 0)

        let doctor = try kiosk(["doctor"], env: env)
        let lines = doctor.stdout.split(separator: "\n").map(String.init).filter { $0.contains(" osdp ") }
        XCTAssertTrue(lines.contains { $0.hasPrefix("FAIL osdp port: \(slave) is open in") }, doctor.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("PASS osdp port: a serial device") }, doctor.stdout)
        XCTAssertTrue(lines.contains { $0 == "PASS osdp key: the Secure Channel key comes from KIOSK_OSDP_KEY_FILE \(keyFile)" }, doctor.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("PASS osdp link: online, Secure Channel, last command from the controller 40 ms ago") }, doctor.stdout)
        XCTAssertFalse(doctor.stdout.contains(key))
        let gone = try kiosk(["doctor"], env: env.merging(["KIOSK_OSDP_PORT": "/dev/ttyNOPE9"]) { _, b in b })
        XCTAssertTrue(gone.stdout.contains("FAIL osdp port: /dev/ttyNOPE9 does not exist"), gone.stdout)
    }
}
