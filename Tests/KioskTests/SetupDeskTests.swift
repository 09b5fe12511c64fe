// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Glibc
@testable import Kiosk
import Platform
import Policy
import Reader
import Camera
import TestSupport
import XCTest

/// The kiosk's side of setup by a signed code (interface 0.6) with codes made by the peers'
/// `cbor2` and `cryptography` (`SetupPeer`), the boot clock moved by hand (`ManualClock`): taken
/// once, each refusal, the window and the exit button, and no secret in any event.
final class SetupDeskTests: XCTestCase {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ l: String) { lock.lock(); list.append(l); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
        var setup: [[String: String]] { all.map(Logfmt.fields).filter { $0["event"] == "setup" } }
    }

    var folder = ""
    var peer: SetupPeer!
    let second: UInt64 = 1_000_000_000
    static let psk = "correct horse battery", password = "broker-pw-7f3a"

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-setup-desk-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder + "/root/etc/default", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/run", withIntermediateDirectories: true)
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        peer = SetupPeer(python: python, folder: folder)
        try peer.keygen("site")
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    var now: Int { Int(Date().timeIntervalSince1970) }

    func claims(_ more: [String: Any] = [:], cti: String = String(format: "%08x", UInt32.random(in: 0...UInt32.max))) -> [String: Any] {
        var c: [String: Any] = ["iat": now - 60, "exp": now + 3600, "cti": cti,
                                "wifi": ["ssid": "door-net", "psk": SetupDeskTests.psk], "tz": "Europe/Berlin",
                                "ntp": ["ntp.example.org"], "mqtt_password": SetupDeskTests.password,
                                "env": ["KIOSK_MQTT_URL": "mqtt://broker.local", "KIOSK_MQTT_USER": "door-3", "KIOSK_ROI": "0.2,0.2,0.6,0.6"]]
        for (k, v) in more { c[k] = v }
        return c
    }

    /// A desk whose boot clock reads `bootS` now, on a manual clock.
    func desk(_ clock: ManualClock, bootS: UInt64, mode: SetupMode = .boot, lines: Lines, hostname: String = "door-3") -> SetupDesk {
        SetupDesk(window: SetupWindow(mode: mode, windowS: 600), folder: folder + "/run/setup", root: folder + "/root", siteKeyOverride: nil,
                  hostname: hostname, store: UsedTokenStore(directory: folder + "/state"), buzzer: nil,
                  logger: Logger(level: .debug) { lines.add($0) }, clock: clock, bootNsNow: bootS * second)
    }

    func reason(_ r: Result<SetupPlan, SetupRefusal>) -> String? {
        if case .failure(let f) = r { return f.reason.text }
        return nil
    }

    func assertNoSecret(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(text.contains(SetupDeskTests.psk), "the Wi-Fi key", file: file, line: line)
        XCTAssertFalse(text.contains(SetupDeskTests.password), "the broker's password", file: file, line: line)
        XCTAssertFalse(text.contains(PayloadBytes.hex(Array(SetupDeskTests.psk.utf8))), "the Wi-Fi key as hex", file: file, line: line)
    }

    func testANewDoorTakesACodeOnceAndHandsItOver() throws {
        let clock = ManualClock(), lines = Lines()
        let d = desk(clock, bootS: 30, lines: lines)
        let code = try peer.code(signer: "site", claims: claims())
        XCTAssertNil(reason(d.take(code)), lines.all.joined(separator: "\n"))
        let written = try XCTUnwrap(FileManager.default.contents(atPath: folder + "/run/setup/code"))
        XCTAssertEqual(Array(written), code, "the verified code, whole, for kiosk setup --apply")
        let attrs = try FileManager.default.attributesOfItem(atPath: folder + "/run/setup/code")
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o640)
        XCTAssertEqual(reason(d.take(code)), "used", "a code taken once is never taken again")
        // Nor after a restart: the used-token store keeps it.
        XCTAssertEqual(reason(desk(clock, bootS: 40, lines: lines).take(code)), "used")
        let events = lines.setup
        XCTAssertEqual(events.map { $0["result"] }, ["taken", "refused", "refused"])
        // The code's env in its order (JSON's, here), then what its own fields set.
        XCTAssertEqual(Set(events[0]["changed"]?.split(separator: ",").map(String.init) ?? []),
                       ["KIOSK_MQTT_URL", "KIOSK_MQTT_USER", "KIOSK_ROI", "KIOSK_MQTT_PASSWORD_FILE", "KIOSK_SITE_KEY", "wifi", "tz", "ntp", "mqtt_password"])
        XCTAssertEqual(events[1]["reason"], "used")
        assertNoSecret(lines.all.joined(separator: "\n"))
    }

    func testEachRefusalChangesNothing() throws {
        let clock = ManualClock(), lines = Lines()
        try peer.keygen("other")
        try peer.keygen("ed", alg: "EdDSA")
        let d = desk(clock, bootS: 30, lines: lines)
        let cases: [([UInt8], String)] = [
            (try peer.code(signer: "other", named: "site", claims: claims()), "signature"),   // forged: another key signed it
            (try peer.code(signer: "site", claims: claims(["exp": now - 1, "iat": now - 3600])), "expired"),
            (try peer.code(signer: "site", claims: claims(["door": "door-9"])), "wrong door"),
            (try peer.code(signer: "site", claims: claims(["env": ["KIOSK_ON_SCAN": "/bin/sh"]])), "refused KIOSK_ON_SCAN"),
            (try peer.code(signer: "site", claims: claims(["env": ["KIOSK_ROI": "2,2,1,1"]])), "refused KIOSK_ROI"),
            (try peer.code(signer: "site", claims: claims(["tz": "../../etc/shadow"])), "malformed"),
            (try peer.code(signer: "site", claims: claims(["exp": now + 90_000])), "malformed"),
        ]
        for (code, why) in cases {
            XCTAssertEqual(reason(d.take(code)), why)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/run/setup/code"), "no refused code handed over")
        // An Ed25519 site's code is taken; then the door is pinned to it and another site's refused.
        XCTAssertNil(reason(d.take(try peer.code(signer: "ed", claims: claims()))))
        let pem = SetupSiteKey.der(pem: try String(contentsOfFile: folder + "/ed.pem", encoding: .utf8))!
        XCTAssertFalse(pem.isEmpty)
        try "KIOSK_SITE_KEY=/etc/kiosk/site-key.pem\n".write(toFile: folder + "/root/etc/default/kiosk", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/root/etc/kiosk", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder + "/ed.pem", toPath: folder + "/root/etc/kiosk/site-key.pem")
        XCTAssertEqual(reason(d.take(try peer.code(signer: "site", claims: claims()))), "site", "another site's code")
        XCTAssertNil(reason(d.take(try peer.code(signer: "ed", claims: claims()))), "the pinned site's")
        assertNoSecret(lines.all.joined(separator: "\n"))
    }

    func testTheWindowClosesAndTheExitButtonOpensIt() throws {
        let clock = ManualClock(), lines = Lines()
        // 40 minutes after boot: past the window.
        let d = desk(clock, bootS: 2400, lines: lines)
        XCTAssertEqual(reason(d.take(try peer.code(signer: "site", claims: claims()))), "closed")
        // Held 5 s and let go: 60 s of setup.
        d.button(pressed: true, atNs: clock.now())
        clock.advance(byNs: 5 * second)
        d.button(pressed: false, atNs: clock.now())
        XCTAssertTrue(lines.all.contains { $0.contains("event=setup_open") })
        clock.advance(byNs: 59 * second)
        XCTAssertNil(reason(d.take(try peer.code(signer: "site", claims: claims()))))
        clock.advance(byNs: 1 * second)
        XCTAssertEqual(reason(d.take(try peer.code(signer: "site", claims: claims()))), "closed", "60 s after the button's release")

        // Within the window after boot, then past it: the clock moved, no sleep.
        let early = desk(clock, bootS: 30, lines: lines)
        clock.advance(byNs: 569 * second)
        XCTAssertNil(reason(early.take(try peer.code(signer: "site", claims: claims()))))
        clock.advance(byNs: 1 * second)
        XCTAssertEqual(reason(early.take(try peer.code(signer: "site", claims: claims()))), "closed")
        // KIOSK_SETUP=0: never, not even by the button.
        let never = desk(clock, bootS: 30, mode: .off, lines: lines)
        never.button(pressed: true, atNs: clock.now())
        clock.advance(byNs: 6 * second)
        never.button(pressed: false, atNs: clock.now())
        XCTAssertEqual(reason(never.take(try peer.code(signer: "site", claims: claims()))), "closed")
    }

    func testADoorSetUpOverSSHIsNotTakenOverAfterAPowerCut() throws {
        let clock = ManualClock(), lines = Lines()
        try "KIOSK_CAMERA=/dev/video2\n".write(toFile: folder + "/root/etc/default/kiosk", atomically: true, encoding: .utf8)
        let d = desk(clock, bootS: 30, lines: lines)
        XCTAssertEqual(reason(d.take(try peer.code(signer: "site", claims: claims()))), "site", "in the window after boot, but not new")
        d.button(pressed: true, atNs: clock.now())
        clock.advance(byNs: 5 * second)
        d.button(pressed: false, atNs: clock.now())
        XCTAssertNil(reason(d.take(try peer.code(signer: "site", claims: claims()))), "a hand on the inside decides the site")
    }

    func testTheFrameLoopHandsACodeToTheDeskOffTheLoopInEveryMode() throws {
        let lines = Lines()
        let d = desk(ManualClock(), bootS: 30, lines: lines)
        d.start()
        defer { d.shutDown() }
        let code = try peer.code(signer: "site", claims: claims())
        for verdict in [VerdictMode.none, .hook, .credentials] {
            let reporter = CodeReporter(credentials: nil, setup: d, programJudges: verdict == .hook, signedPrefix: "KC1:",
                                        logger: Logger { lines.add($0) }, clock: ManualClock())
            XCTAssertEqual(reporter.judge(CodeKind.of(code, signedPrefix: "KC1:")), .setup)
        }
        let reporter = CodeReporter(credentials: nil, setup: d, programJudges: true, signedPrefix: "KC1:", logger: Logger { lines.add($0) }, clock: ManualClock())
        let heard = ScanObserver()
        var reports = 0
        heard.onReport = { _, _ in reports += 1 }
        reporter.listeners = [heard]
        GrayImage(width: 8, height: 8, fill: 255).withLumaPlane { luma in
            reporter.report(DecodedSymbol(symbology: .qrcode, bytes: code, text: nil, location: [], quality: 1),
                            frame: Frame(luma: luma, sequence: 1, timestampNs: 0, capturedNs: 0), latencyMs: 1)
        }
        try eventually("the desk took the code") { d.count("taken") == 1 }
        XCTAssertEqual(reports, 0, "no listener (the door, the program, the broker) hears of a setup code")
        XCTAssertFalse(lines.all.contains { $0.contains("event=scan") }, "no scan event: its data would carry the secrets")
        assertNoSecret(lines.all.joined(separator: "\n"))
    }

    /// A code handed over just as the kiosk stops (a replay's last frame, a stop from systemd) is
    /// still checked before the desk's thread ends: the shut-down waits for it.
    func testACodeHandedOverAsTheKioskStopsIsStillTaken() throws {
        let lines = Lines()
        let d = desk(ManualClock(), bootS: 30, lines: lines)
        // The thread finds the code and the stop together (as it does when the stop comes before
        // it woke for the code): the order made certain by asking to stop before it starts.
        d.submit(try peer.code(signer: "site", claims: claims()))
        d.shutDown()
        d.start()
        d.shutDown()
        XCTAssertEqual(d.count("taken"), 1, lines.all.joined(separator: "\n"))
        XCTAssertNotNil(FileManager.default.contents(atPath: folder + "/run/setup/code"))
    }

    /// The frame loop looks at the whole frame while setup is open on a new door, on any door
    /// for the button's 60 s, and never after a code is taken or the window closed.
    func testANewDoorLooksAtItsWholeFrameWhileSetupIsOpen() throws {
        let clock = ManualClock(), lines = Lines()
        let fresh = desk(clock, bootS: 30, lines: lines)
        XCTAssertTrue(fresh.looksAtWholeFrame(atNs: clock.now()), "a new door in its window")
        clock.advance(byNs: 600 * second)
        XCTAssertFalse(fresh.looksAtWholeFrame(atNs: clock.now()), "the window closed")
        fresh.button(pressed: true, atNs: clock.now())
        clock.advance(byNs: 5 * second)
        fresh.button(pressed: false, atNs: clock.now())
        XCTAssertTrue(fresh.looksAtWholeFrame(atNs: clock.now()), "the button opened it")
        XCTAssertNil(reason(fresh.take(try peer.code(signer: "site", claims: claims()))))
        XCTAssertFalse(fresh.looksAtWholeFrame(atNs: clock.now()), "a code taken: the door restarts on its settings")

        try "KIOSK_DOOR_MS=3000\n".write(toFile: folder + "/root/etc/default/kiosk", atomically: true, encoding: .utf8)
        let setUp = desk(clock, bootS: 30, lines: lines)
        XCTAssertFalse(setUp.looksAtWholeFrame(atNs: clock.now()), "a door set up over SSH keeps its ROI in its window")
        setUp.button(pressed: true, atNs: clock.now())
        clock.advance(byNs: 5 * second)
        setUp.button(pressed: false, atNs: clock.now())
        XCTAssertTrue(setUp.looksAtWholeFrame(atNs: clock.now()), "a hand on the inside")
        clock.advance(byNs: 61 * second)
        XCTAssertFalse(setUp.looksAtWholeFrame(atNs: clock.now()), "the button's 60 s are over")
    }
}
