// SPDX-License-Identifier: Apache-2.0
import Foundation
import Fleet
import Policy
import TestSupport
import XCTest

final class BrokerChecksTests: XCTestCase {
    override func setUpWithError() throws {
        XCTAssertTrue(MosquittoBroker.isInstalled, "these tests need Debian's mosquitto and mosquitto-clients (make deps)")
        try XCTSkipUnless(MosquittoBroker.isInstalled)
    }

    private func settings(host: String = "127.0.0.1", port: Int, tls: Bool, ca: String? = nil, user: String? = nil,
                          password: String? = nil) -> BrokerSettings {
        BrokerSettings(address: BrokerAddress(host: host, port: port, tls: tls), topics: FleetTopics(prefix: "kiosk/door-9"),
                       clientID: "door-9", user: user, password: password.map(BrokerPassword.init), caFile: ca, version: "test")
    }

    private func lines(_ checks: [BrokerCheck]) -> String { checks.map { "\($0.name) \($0.verdict.rawValue) \($0.detail)" }.joined(separator: "\n") }

    func testEveryStepPassesWithTLSAndTheRightLogin() throws {
        let broker = try MosquittoBroker(tls: true, users: [("door-9", "right")])
        let checks = BrokerChecks.run(settings(port: broker.tlsPort!, tls: true, ca: broker.caFile, user: "door-9", password: "right"))
        XCTAssertEqual(checks.map(\.name), ["dns", "tcp", "tls", "login"])
        XCTAssertEqual(checks.map(\.verdict), [.pass, .pass, .pass, .pass], lines(checks))
        XCTAssertEqual(checks.last?.detail, "accepted as door-9")
        XCTAssertFalse(lines(checks).contains("right"), "no password in doctor's lines")
    }

    func testAWrongPasswordFailsTheLoginLineOnly() throws {
        let broker = try MosquittoBroker(tls: true, users: [("door-9", "right")])
        let checks = BrokerChecks.run(settings(port: broker.tlsPort!, tls: true, ca: broker.caFile, user: "door-9", password: "wrong"))
        XCTAssertEqual(checks.map(\.verdict), [.pass, .pass, .pass, .fail], lines(checks))
        XCTAssertEqual(checks.last?.detail, "refused: not authorised (as door-9)")
    }

    func testACertificateForAnotherNameFailsTheTLSLine() throws {
        let broker = try MosquittoBroker(tls: true, certificateNamesIP: false)
        let checks = BrokerChecks.run(settings(port: broker.tlsPort!, tls: true, ca: broker.caFile))
        XCTAssertEqual(checks.map(\.verdict), [.pass, .pass, .fail, .warn], lines(checks))
        XCTAssertTrue(checks[2].detail.contains("certificate verify failed"), lines(checks))
    }

    func testPlainMQTTWarnsAndABrokerThatIsDownFailsTheTCPLine() throws {
        let broker = try MosquittoBroker()
        let up = BrokerChecks.run(settings(host: "localhost", port: broker.port, tls: false))
        XCTAssertEqual(up.map(\.verdict), [.pass, .pass, .warn, .pass], lines(up))
        broker.stop()
        let down = BrokerChecks.run(settings(port: broker.port, tls: false))
        XCTAssertEqual(down.map(\.verdict), [.pass, .fail, .warn, .warn], lines(down))
        XCTAssertTrue(down[1].detail.contains("Connection refused"), lines(down))
    }

    func testANameThatDoesNotResolveFailsTheDNSLine() {
        let checks = BrokerChecks.run(settings(host: "no-such-broker.invalid", port: 1883, tls: false))
        XCTAssertEqual(checks.map(\.verdict), [.fail, .warn, .warn, .warn], lines(checks))
        XCTAssertTrue(checks[0].detail.hasPrefix("no-such-broker.invalid does not resolve"), lines(checks))
    }
}
