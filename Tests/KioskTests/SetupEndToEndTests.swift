// SPDX-License-Identifier: Apache-2.0
import Camera
import Foundation
import Glibc
import Policy
import Scene
import TestSupport
import XCTest

/// Setup by a signed code (interface 0.6) on the built `kiosk` binary: a code made by the peers'
/// `cbor2` and `cryptography` (`SetupPeer`), drawn as a byte-mode QR code in a replayed PNG, shown
/// to the release kiosk put 30 s or 40 minutes after a boot by a time namespace (`unshare --time
/// --boottime`), with a door of the test's own at `/etc/default` (a mount namespace: the kiosk
/// reads its door's files at `/` only); then `kiosk setup --show` and `--apply --root DIR` on the
/// file it wrote. No secret of the code in any output.
final class SetupEndToEndTests: XCTestCase {
    var folder = ""
    var peer: SetupPeer!
    static let psk = "correct horse battery", password = "broker-pw-7f3a"

    override func setUpWithError() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        folder = NSTemporaryDirectory() + "kiosk-setup-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        for d in ["/root/etc/default", "/state", "/run", "/replay", "/card/etc/default"] {
            try FileManager.default.createDirectory(atPath: folder + d, withIntermediateDirectories: true)
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
              (try? Child.run(unshared(["/bin/true"], bootS: 30)).status) == 0 else {
            throw XCTSkip("unshare --time --boottime --mount needs root and a kernel with time namespaces (5.6)")
        }
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        peer = SetupPeer(python: python, folder: folder)
        try peer.keygen("site")
    }
    override func tearDown() { if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) } }

    /// `argv` in a time namespace whose boot clock reads `bootS` seconds, and a mount namespace
    /// (private: nothing reaches the host) whose `/etc/default` is the test door's `root/etc/default`.
    func unshared(_ argv: [String], bootS: Int) -> Process {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = ["--mount", "--propagation", "private", "--time", "--boottime=\(bootS - Int(ts.tv_sec))", "--",
                       "/bin/sh", "-c", "/bin/mount --bind \"$0\" /etc/default && exec \"$@\"", folder + "/root/etc/default"] + argv
        return p
    }

    func code() throws -> [UInt8] {
        let now = Int(Date().timeIntervalSince1970)
        return try peer.code(signer: "site", claims: [
            "iat": now - 60, "exp": now + 3600, "cti": String(format: "%08x", UInt32.random(in: 0...UInt32.max)),
            "wifi": ["ssid": "door-net", "psk": SetupEndToEndTests.psk], "tz": "Europe/Berlin", "ntp": ["ntp.example.org"],
            "mqtt_password": SetupEndToEndTests.password,
            "env": ["KIOSK_MQTT_URL": "mqtt://broker.local", "KIOSK_MQTT_USER": "door-3", "KIOSK_ROI": "0.2,0.2,0.6,0.6"],
        ])
    }

    /// Blank, the code (3 pixels a module, as a phone shows it), blank: PNGs of 640x480.
    func replay(_ code: [UInt8], moduleSize: Int = 3) throws -> String {
        var frames = [GrayImage(width: 640, height: 480, fill: 200)]
        var shown = GrayImage(width: 640, height: 480, fill: 200)
        let qr = try QRCodeImage.render(bytes: code, moduleSize: moduleSize)
        shown.paste(qr, x: (640 - qr.width) / 2, y: (480 - qr.height) / 2)
        frames += [shown, shown, GrayImage(width: 640, height: 480, fill: 200)]
        for (i, f) in frames.enumerated() { try ImageFile.writePNG(f, to: folder + String(format: "/replay/%04d.png", i)) }
        return folder + "/replay"
    }

    func kiosk(bootS: Int, replay: String) throws -> KioskProcess.Run {
        let p = unshared([KioskProcess.binary.path, "run"], bootS: bootS)
        p.environment = KioskProcess.environment([
            "KIOSK_CAMERA": "replay:" + replay, "KIOSK_GPIO_CHIP": "sim", "KIOSK_STATS_S": "0",
            "STATE_DIRECTORY": folder + "/state", "RUNTIME_DIRECTORY": folder + "/run",
        ])
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        return try KioskProcess.finish(p, out: out, err: err, within: 60)
    }

    func assertNoSecret(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in [SetupEndToEndTests.psk, SetupEndToEndTests.password] {
            XCTAssertFalse(text.contains(secret), "\(what) carries a secret", file: file, line: line)
            XCTAssertFalse(text.contains(PayloadBytes.hex(Array(secret.utf8))), "\(what) carries a secret as hex", file: file, line: line)
        }
    }

    func testACodeShownThirtySecondsAfterBootIsTakenAndAppliedToAnSDCardsRoot() throws {
        let shown = try code()
        let run = try kiosk(bootS: 30, replay: try replay(shown))
        XCTAssertEqual(run.status, 0, run.stderr)
        let events = run.of("setup")
        XCTAssertEqual(events.map { $0["result"] }, ["taken"], run.stderr)
        XCTAssertEqual(Set(events.first?["changed"]?.split(separator: ",").map(String.init) ?? []),
                       ["KIOSK_MQTT_URL", "KIOSK_MQTT_USER", "KIOSK_ROI", "KIOSK_MQTT_PASSWORD_FILE", "KIOSK_SITE_KEY", "wifi", "tz", "ntp", "mqtt_password"])
        XCTAssertTrue(run.of("scan").isEmpty, "a setup code is no scan: its data would carry the secrets")
        assertNoSecret(run.stderr + run.stdout, "the kiosk's output")
        let file = folder + "/run/setup/code"
        XCTAssertEqual(FileManager.default.contents(atPath: file).map(Array.init), shown)

        // --show changes nothing and hides the secrets.
        let card = folder + "/card"
        try "# the card's file\nOTHER=kept\n".write(toFile: card + "/etc/default/kiosk", atomically: true, encoding: .utf8)
        let before = try String(contentsOfFile: folder + "/card/etc/default/kiosk", encoding: .utf8)
        let show = try KioskProcess.run(["setup", "--show", file, "--root", card])
        XCTAssertEqual(show.status, 0, show.stdout + show.stderr)
        XCTAssertTrue(show.stdout.contains("wifi: door-net (WPA-PSK, key hidden)"), show.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: card + "/etc"), ["default"], "--show changed nothing")
        XCTAssertEqual(try String(contentsOfFile: folder + "/card/etc/default/kiosk", encoding: .utf8), before)
        assertNoSecret(show.stdout + show.stderr, "--show")

        // --apply --root: the files of an SD card's root, each step said; the hand-over consumed.
        try FileManager.default.copyItem(atPath: file, toPath: folder + "/stranger.ks1")
        let apply = try KioskProcess.run(["setup", "--apply", file, "--root", card])
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "the kiosk's hand-over is consumed: the path unit does not start again")
        XCTAssertEqual(apply.status, 0, apply.stdout + apply.stderr)
        assertNoSecret(apply.stdout + apply.stderr, "--apply")
        XCTAssertEqual(apply.of("setup").first?["result"], "applied")
        XCTAssertTrue(apply.stdout.contains("left for the first boot: NetworkManager joins door-net"), apply.stdout)
        let env = try String(contentsOfFile: card + "/etc/default/kiosk", encoding: .utf8)
        XCTAssertTrue(env.hasPrefix("# the card's file\nOTHER=kept\n"), env)
        XCTAssertTrue(env.contains("KIOSK_ROI=0.2,0.2,0.6,0.6\n") && env.contains("KIOSK_SITE_KEY=/etc/kiosk/site-key.pem\n"), env)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: card + "/etc/localtime"), "/usr/share/zoneinfo/Europe/Berlin")
        let password = card + "/etc/kiosk/mqtt-password"
        XCTAssertEqual(try String(contentsOfFile: password, encoding: .utf8), SetupEndToEndTests.password + "\n")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: password)[.posixPermissions] as? NSNumber)?.intValue, 0o640)
        let connection = try String(contentsOfFile: card + "/etc/NetworkManager/system-connections/kiosk-setup.nmconnection", encoding: .utf8)
        XCTAssertTrue(connection.contains("ssid=door-net\n") && connection.contains("psk=\(SetupEndToEndTests.psk)\n"), "NetworkManager's file has the key")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: card + "/etc/NetworkManager/system-connections/kiosk-setup.nmconnection")[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(SetupSiteKey.der(pem: try String(contentsOfFile: card + "/etc/kiosk/site-key.pem", encoding: .utf8)),
                       SetupSiteKey.der(pem: try String(contentsOfFile: folder + "/site.pem", encoding: .utf8)), "the site's key pinned")

        // The same card again: its site is pinned now; a file not written by root or the kiosk is refused.
        XCTAssertEqual(chown(folder + "/stranger.ks1", 65534, 65534), 0)
        let stranger = try KioskProcess.run(["setup", "--apply", folder + "/stranger.ks1", "--root", card])
        XCTAssertEqual(stranger.status, 1)
        XCTAssertTrue(stranger.stdout.contains("neither root nor the kiosk user"), stranger.stdout)
    }

    /// The kiosk reads its door at `/etc/default/kiosk`: a door set up over SSH (a `KIOSK_`
    /// variable, no site key) is not new, and a first code shown in the window after a power cut
    /// does not decide its site.
    func testADoorSetUpOverSSHIsNotTakenOverByAFirstCode() throws {
        try "# set up over SSH\nKIOSK_DOOR_MS=3000\n".write(toFile: folder + "/root/etc/default/kiosk", atomically: true, encoding: .utf8)
        let run = try kiosk(bootS: 30, replay: try replay(try code()))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.of("setup").map { $0["result"] }, ["refused"], run.stderr)
        XCTAssertEqual(run.of("setup").first?["reason"], "site", run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/run/setup/code"))
        XCTAssertEqual(try String(contentsOfFile: folder + "/root/etc/default/kiosk", encoding: .utf8), "# set up over SSH\nKIOSK_DOOR_MS=3000\n")
        assertNoSecret(run.stderr + run.stdout, "the kiosk's output")
    }

    /// A setup code taller than the default ROI (the middle half of 640x480) at 4 pixels a
    /// module: a new door looks at its whole frame while setup is open and takes it; 40 minutes
    /// after boot it looks at its ROI only and reads nothing of it.
    func testANewDoorLooksAtItsWholeFrameWhileSetupIsOpen() throws {
        let shown = try code()
        XCTAssertGreaterThan(try QRCodeImage.render(bytes: shown, moduleSize: 4).height, 240, "taller than the default ROI")
        let tall = try replay(shown, moduleSize: 4)
        let open = try kiosk(bootS: 30, replay: tall)
        XCTAssertEqual(open.status, 0, open.stderr)
        XCTAssertEqual(open.of("setup").map { $0["result"] }, ["taken"], open.stderr)
        let closed = try kiosk(bootS: 2400, replay: tall)
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(closed.of("setup").count, 0, "the window closed, the ROI holds: the code is not read at all. " + closed.stderr)

        // Only a setup code is taken from beside the ROI: any other code there is not reported,
        // in the window too; one inside it is.
        var beside = GrayImage(width: 640, height: 480, fill: 200)
        beside.paste(try QRCodeImage.render("KIOSK-BESIDE-THE-ROI", moduleSize: 3), x: 8, y: 8)
        beside.paste(try QRCodeImage.render("KIOSK-IN-THE-ROI", moduleSize: 3), x: 280, y: 200)
        let other = folder + "/beside"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        for (i, f) in [GrayImage(width: 640, height: 480, fill: 200), beside, beside].enumerated() {
            try ImageFile.writePNG(f, to: other + String(format: "/%04d.png", i))
        }
        let window = try kiosk(bootS: 30, replay: other)
        XCTAssertEqual(window.status, 0, window.stderr)
        XCTAssertEqual(window.of("scan").map { $0["data"] }, ["KIOSK-IN-THE-ROI"], window.stderr)
    }

    func testFortyMinutesAfterBootTheWindowIsClosed() throws {
        let run = try kiosk(bootS: 2400, replay: try replay(try code()))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.of("setup").map { $0["result"] }, ["refused"], run.stderr)
        XCTAssertEqual(run.of("setup").first?["reason"], "closed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/run/setup/code"))
        assertNoSecret(run.stderr + run.stdout, "the kiosk's output")
    }

    func testAStepThatFailsLeavesTheEarlierOnesAndSaysSo() throws {
        let shown = try code()
        try Data(shown).write(to: URL(fileURLWithPath: folder + "/code.ks1"))
        // NetworkManager's folder is a file: the Wi-Fi step fails after the files before it.
        try FileManager.default.createDirectory(atPath: folder + "/card/etc/NetworkManager", withIntermediateDirectories: true)
        try "".write(toFile: folder + "/card/etc/NetworkManager/system-connections", atomically: true, encoding: .utf8)
        let apply = try KioskProcess.run(["setup", "--apply", folder + "/code.ks1", "--root", folder + "/card"])
        XCTAssertEqual(apply.status, 1, apply.stdout)
        XCTAssertTrue(apply.stdout.contains("FAILED: wifi:"), apply.stdout)
        XCTAssertTrue(apply.stdout.contains("the steps before it stay done: KIOSK_SITE_KEY,mqtt_password,KIOSK_"), apply.stdout)
        XCTAssertEqual(apply.of("setup").first?["failed"], "wifi")
        XCTAssertTrue(try String(contentsOfFile: folder + "/card/etc/default/kiosk", encoding: .utf8).contains("KIOSK_ROI=0.2,0.2,0.6,0.6"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/card/etc/localtime"), "nothing after the failed step")
        assertNoSecret(apply.stdout + apply.stderr, "--apply")
    }
}
