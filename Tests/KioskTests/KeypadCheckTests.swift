// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Foundation
import Glibc
@testable import Kiosk
import Keypad
import Policy
import TestSupport
import XCTest

/// `kiosk check` and `kiosk doctor` name the keypad (its kind, its path or lines, whether the
/// device is there and opens, what it is for) and the pins file in force (its subjects, its mode
/// and owner), and never a hash; a pins file that does not read fails check (78) as it fails start.
final class KeypadCheckTests: XCTestCase {
    var folder = ""
    let hash = "scrypt$11$8$1$" + Base64URL.encode(Array(repeating: 1, count: 16)) + "$" + Base64URL.encode(Array(repeating: 2, count: 32))

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-keypad-check-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/trust", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
        // An issuer's public key (any: check wants one to say a credential could be granted).
        try """
            -----BEGIN PUBLIC KEY-----
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJAFfwV6lsXTgDgiBCKG7kJ/+1wQN
            R6ZQksFvNPynpVGAlhEqUesCNM80mdMLQA9E+5C3und48bJgbd4Pahb/rg==
            -----END PUBLIC KEY-----

            """.write(toFile: folder + "/trust/issuer-1.pem", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func env(_ more: [String: String]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: folder + "/trust", state: folder + "/state")
            .merging(["KIOSK_CAMERA": "/dev/null", "KIOSK_PINS_FILE": folder + "/pins"]) { _, b in b }.merging(more) { _, b in b }
    }

    func pins(_ text: String, mode: Int) throws {
        try text.write(toFile: folder + "/pins", atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(folder + "/pins", mode_t(mode)), 0)
    }

    func doctor(_ e: [String: String], probe: ((String) -> KeypadCheck.Probe)? = nil) -> [KeypadCheck.Finding] {
        let c = Configuration.read(environment: e).configuration
        return probe.map { KeypadCheck.doctor(c, e, probe: $0) } ?? KeypadCheck.doctor(c, e)
    }

    func testDoctorNamesAnInputEventKeypadAndWhatOpeningItFound() throws {
        let missing = doctor(env(["KIOSK_KEYPAD": "evdev:/dev/input/by-id/usb-nowhere-event-kbd"]))
        XCTAssertEqual(missing.first?.subject, "keypad")
        XCTAssertEqual(missing.first?.verdict, .fail)
        let why = missing.first?.detail ?? ""
        XCTAssertTrue(why.contains("is not there") || why.contains("libevdev"), why)
        // A device that is there (a stand-in file; the probe is told what opening it found).
        let device = folder + "/event-kbd"
        FileManager.default.createFile(atPath: device, contents: nil)
        let e = env(["KIOSK_KEYPAD": "evdev:" + device])
        guard !why.contains("libevdev") else { throw XCTSkip("libevdev2 is not installed here: \(why)") }
        let opened = doctor(e) { _ in .opened(name: "USB Keypad", digits: true) }.filter { $0.subject == "keypad" }
        XCTAssertEqual(opened.map(\.verdict), [.pass])
        XCTAssertTrue(opened[0].detail.contains("\"USB Keypad\" opened and grabbed") || opened[0].detail.contains("\"USB Keypad\") opened and grabbed"), opened[0].detail)
        XCTAssertTrue(opened[0].detail.contains("PINs are checked here: a window of 10 s, duress code plus1"), opened[0].detail)
        XCTAssertEqual(doctor(e) { _ in .opened(name: "Mouse", digits: false) }.first?.verdict, .fail)
        XCTAssertEqual(doctor(e) { _ in .failed("\(device): cannot grab it (Device or resource busy): another program holds it", errno: EBUSY) }.first?.verdict, .warn)
        let denied = doctor(e) { _ in .failed("\(device): Permission denied (the kiosk's user must be in the input group)", errno: EACCES) }
        XCTAssertEqual(denied.first?.verdict, .fail)
        XCTAssertTrue(denied.first?.detail.contains("input group") ?? false)
        // The real probe on a file that is no input device: refused, and said.
        let real = doctor(e)
        XCTAssertEqual(real.first?.verdict, .fail, "\(real)")
        XCTAssertTrue(real.first?.detail.contains("not an input-event device") ?? false, "\(real)")
    }

    /// A node refused by its mode names what would mend it: a node still root's (a keypad plugged
    /// in a moment ago, before udev gives it to `input`) is not a missing group membership.
    func testANodesAccessIsExplainedByItsGroupAndMode() throws {
        let device = folder + "/event-kbd"
        FileManager.default.createFile(atPath: device, contents: nil)
        let group = getgrnam("input") ?? getgrnam("daemon")
        let gid = try XCTUnwrap(group).pointee.gr_gid, name = String(cString: try XCTUnwrap(group).pointee.gr_name)
        XCTAssertEqual(chown(device, 0, gid), 0)
        XCTAssertEqual(chmod(device, 0o660), 0)
        XCTAssertEqual(EvdevKeypad.accessAdvice(device), "the kiosk's user must be in the \(name) group, which owns its node")
        XCTAssertEqual(chown(device, 0, 0), 0)
        XCTAssertEqual(chmod(device, 0o600), 0)
        XCTAssertTrue(EvdevKeypad.accessAdvice(device).hasPrefix("its node is not given to a group yet"), EvdevKeypad.accessAdvice(device))
    }

    func testDoctorNamesAWiegandKeypadsLinesAndThePinsFileAndHowItIsKept() throws {
        try pins("alice \(hash)\nbob \(hash) duress=\(hash)\n", mode: 0o644)
        let chip = FakeChip()
        var d = Doctor(configuration: Configuration.read(environment: env(["KIOSK_KEYPAD": "wiegand:12,13", "KIOSK_GPIO_CHIP": "gpiochip0"])).configuration)
        d.environment = env([:])
        d.openChip = { _ in chip }
        d.groups = { (0, [0]) }
        d.systemdState = { nil }
        let checks = d.run()
        let lines = checks.map(\.line).joined(separator: "\n")
        XCTAssertTrue(lines.contains("PASS keypad: wiegand:12,13: a Wiegand keypad, D0 on input line 12 and D1 on input line 13 of chip gpiochip0"), lines)
        XCTAssertTrue(checks.contains { $0.subject == "gpio keypad D0" && $0.detail.contains("line 12") }, lines)
        XCTAssertTrue(checks.contains { $0.subject == "gpio keypad D1" && $0.detail.contains("line 13") }, lines)
        let pinsLine = try XCTUnwrap(checks.first { $0.subject == "pins" })
        XCTAssertEqual(pinsLine.verdict, .warn)
        XCTAssertTrue(pinsLine.detail.contains("2 subject(s), 1 with a duress= hash; mode 0644, root:"), pinsLine.detail)
        XCTAssertTrue(pinsLine.detail.contains("others may read it (mode 0644): chmod o-rwx"), pinsLine.detail)
        XCTAssertFalse(lines.contains("scrypt$"), "no hash in doctor's output")
        try pins("alice \(hash)\n", mode: 0o600)
        XCTAssertEqual(doctor(env(["KIOSK_KEYPAD": "wiegand:12,13"])).first { $0.subject == "pins" }?.verdict, .pass)
        // No keypad: the subjects listed cannot enter a PIN.
        XCTAssertTrue(doctor(env([:])).contains { $0.verdict == .warn && $0.detail.contains("no KIOSK_KEYPAD: the 1 subject(s) listed are denied `pin required`") })
        // A file that does not read: FAIL, its line, never its hash.
        try pins("alice \(hash)\nbob scrypt$99\n", mode: 0o600)
        let bad = try XCTUnwrap(doctor(env(["KIOSK_KEYPAD": "wiegand:12,13"])).first { $0.subject == "pins" })
        XCTAssertEqual(bad.verdict, .fail)
        XCTAssertTrue(bad.detail.contains("line 2"), bad.detail)
        XCTAssertFalse(bad.detail.contains(hash) || bad.detail.contains("scrypt$99"), bad.detail)
        // Not credentials mode: the keypad is unused, said as a warning.
        XCTAssertTrue(doctor(["KIOSK_CAMERA": "/dev/null", "KIOSK_KEYPAD": "wiegand:12,13", "KIOSK_GPIO_CHIP": "sim"])
            .contains { $0.verdict == .warn && $0.detail.contains("unused: a PIN is checked only with KIOSK_VERDICT=credentials") })
    }

    func testCheckNamesTheKeypadAndThePinsFileAndRefusesOneThatDoesNotRead() throws {
        try pins("# the door\nalice \(hash)\nbob \(hash) duress=\(hash)\n", mode: 0o640)
        let ok = try KioskProcess.run(["check"], env: env(["KIOSK_KEYPAD": "evdev:/dev/input/by-id/usb-nowhere-event-kbd", "KIOSK_PIN_WINDOW_S": "7",
                                                          "KIOSK_DURESS_CODE": "listed"]))
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.contains("# keypad: evdev:/dev/input/by-id/usb-nowhere-event-kbd: an input-event keypad, not there now ("), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("the kiosk looks for it again every second; PINs are checked here: a window of 7 s, duress code listed\n"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("# pins: \(folder)/pins: 2 subject(s), 1 with a duress= hash; mode 0640, root:"), ok.stdout)
        XCTAssertFalse(ok.stdout.contains("WARNING"), "0640 root: kept as a key is")
        XCTAssertFalse(ok.stdout.contains("scrypt$"), "no hash in check's output")
        let wiegand = try KioskProcess.run(["check"], env: env(["KIOSK_KEYPAD": "wiegand:12,13"]))
        XCTAssertTrue(wiegand.stdout.contains("# keypad: wiegand:12,13: a Wiegand keypad, D0 on input line 12 and D1 on input line 13 of the simulated chip"), wiegand.stdout)
        try pins("alice \(hash)\nalice \(hash)\n", mode: 0o600)
        let bad = try KioskProcess.run(["check"], env: env(["KIOSK_KEYPAD": "wiegand:12,13"]))
        XCTAssertEqual(bad.status, 78, bad.stdout + bad.stderr)
        XCTAssertTrue(bad.stderr.contains("KIOSK_PINS_FILE") && bad.stderr.contains("line 2: the subject of line 1 again"), bad.stderr)
        XCTAssertFalse((bad.stdout + bad.stderr).contains("scrypt$"), "no hash in check's output")
    }
}
