// SPDX-License-Identifier: Apache-2.0
@testable import Commands
import Foundation
import TestSupport
import XCTest

/// What `kiosk setup --apply` writes besides the code's own values, on an SD card's root
/// (`--root`): fixes found when the arm64 VM tier first ran the live steps (harness/vm-arm64/setup.sh).
/// Codes made by the peers' `cbor2` and `cryptography` (`SetupPeer`).
final class SetupTargetTests: XCTestCase {
    var folder = ""
    var peer: SetupPeer!

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        folder = NSTemporaryDirectory() + "kiosk-setup-target-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder + "/card/etc/default", withIntermediateDirectories: true)
        peer = SetupPeer(python: python, folder: folder)
        try peer.keygen("site")
    }
    override func tearDown() { if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) } }

    func codeFile(env: [String: String]) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let bytes = try peer.code(signer: "site", claims: [
            "iat": now - 60, "exp": now + 3600, "cti": String(format: "%08x", UInt32.random(in: 0...UInt32.max)),
            "mqtt_password": "pw-of-the-test", "env": env,
        ])
        let path = folder + "/code.ks1"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func apply(_ file: String) -> Int32 {
        SetupCommand.run(["--apply", file, "--root", folder + "/card"], environment: [:])
    }

    var dropIn: String { folder + "/card" + SetupTarget.brokerDropIn }

    /// The package's unit allows the kiosk no Internet socket: a code that brings a broker also
    /// brings the drop-in install.sh writes for KIOSK_MQTT_URL, from the installed template.
    func testACodeWithABrokerGivesTheKioskTheNetworkDropIn() throws {
        let template = "[Service]\nRestrictAddressFamilies=\nRestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6\n"
        try FileManager.default.createDirectory(atPath: folder + "/card/usr/share/kiosk", withIntermediateDirectories: true)
        try template.write(toFile: folder + "/card/usr/share/kiosk/mqtt.conf", atomically: true, encoding: .utf8)
        XCTAssertEqual(apply(try codeFile(env: ["KIOSK_MQTT_URL": "mqtt://broker.local", "KIOSK_MQTT_USER": "door-3"])), 0)
        XCTAssertEqual(try String(contentsOfFile: dropIn, encoding: .utf8), template)
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: dropIn)[.posixPermissions] as? NSNumber)?.intValue, 0o644)
    }

    func testACodeWithoutABrokerWritesNoDropIn() throws {
        try FileManager.default.createDirectory(atPath: folder + "/card/usr/share/kiosk", withIntermediateDirectories: true)
        try "[Service]\n".write(toFile: folder + "/card/usr/share/kiosk/mqtt.conf", atomically: true, encoding: .utf8)
        XCTAssertEqual(apply(try codeFile(env: ["KIOSK_ROI": "0.2,0.2,0.6,0.6"])), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dropIn))
    }

    /// A card whose kiosk is not installed yet: the drop-in is left to its installation, the
    /// other steps still done.
    func testACardWithoutTheKioskLeavesTheDropInToItsInstallation() throws {
        XCTAssertEqual(apply(try codeFile(env: ["KIOSK_MQTT_URL": "mqtt://broker.local", "KIOSK_MQTT_USER": "door-3"])), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dropIn))
        XCTAssertTrue(try String(contentsOfFile: folder + "/card/etc/default/kiosk", encoding: .utf8).contains("KIOSK_MQTT_URL=mqtt://broker.local\n"))
    }
}
