// SPDX-License-Identifier: Apache-2.0
import Glibc
import Fleet
import Platform
import Policy

/// The MQTT module's `BrokerLink` as the service's `FleetLink`.
final class BrokerFleetLink: FleetLink {
    let link: BrokerLink
    init(_ link: BrokerLink) { self.link = link }

    func publishScan(symbology: String, bytes: [UInt8], frame: Int, latencyMs: Double, verdict: String?, timeMs: Int64,
                     credential: ScanCredential?) {
        link.publishScan(symbology: symbology, bytes: bytes, frame: frame, latencyMs: latencyMs, verdict: verdict, timeMs: timeMs,
                         credential: credential)
    }

    func publishState(_ state: KioskState) { link.publishState(state) }
    func publishStats(_ json: String) { link.publishStats(json) }
    func publishDoor(_ state: String) { link.publishDoor(state) }
    func publishAlarm(_ json: String) { link.publishAlarm(json) }
    func publishCommandResult(_ json: String) { link.publishCommandResult(json) }
    func publishMode(_ json: String) { link.publishMode(json) }

    var counters: BrokerCounters { link.counters }
}

/// What `run`, `check` and `doctor` make of the MQTT settings: the files they name (read here, at
/// start: the configuration itself never touches the file system), the spool's folder.
public enum FleetSetup {
    /// The credential `LoadCredential=` gives the password under.
    static let credentialName = "mqtt-password"

    /// The spool's folder: `$STATE_DIRECTORY` (systemd's `StateDirectory=kiosk`; the first of a
    /// list), else /var/lib/kiosk.
    public static func spoolDirectory(_ environment: [String: String]) -> String {
        let first = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
        return first.flatMap { $0.isEmpty ? nil : $0 } ?? "/var/lib/kiosk"
    }

    /// Which file holds the password, if any: `KIOSK_MQTT_PASSWORD_FILE`, else systemd's credential.
    public static func passwordFile(_ c: Configuration, _ environment: [String: String]) -> String? {
        BrokerPassword.file(explicit: c.mqttPasswordFile, credentialsDirectory: environment["CREDENTIALS_DIRECTORY"], name: credentialName)
    }

    /// The broker's settings, the password read from its file; or the problems with the files,
    /// as `config_error`s (the password's content is never in them).
    public static func settings(_ c: Configuration, _ environment: [String: String]) -> Result<BrokerSettings, ConfigErrors> {
        guard let address = c.mqttURL else { return .failure(ConfigErrors(list: [])) }
        var errors: [ConfigError] = []
        var password: BrokerPassword?
        if c.mqttUser != nil, let file = passwordFile(c, environment) {
            do {
                password = try BrokerPassword.read(file: file)
            } catch let e as PasswordFileError {
                errors.append(ConfigError(variable: "KIOSK_MQTT_PASSWORD_FILE", value: file,
                                          expected: "a file the kiosk can read, whose first line is the password (\(e.errno.message))"))
            } catch {
                errors.append(ConfigError(variable: "KIOSK_MQTT_PASSWORD_FILE", value: file, expected: "a readable file"))
            }
        }
        if address.tls, let ca = c.mqttCAFile, access(ca, R_OK) != 0 {
            errors.append(ConfigError(variable: "KIOSK_MQTT_CA_FILE", value: ca,
                                      expected: "a PEM file the kiosk can read (\(Errno.current.message))"))
        }
        guard errors.isEmpty else { return .failure(ConfigErrors(list: errors)) }
        var settings = BrokerSettings(address: address, topics: FleetTopics(prefix: c.mqttTopic), clientID: c.mqttClientID,
                                      user: c.mqttUser, password: password, caFile: address.tls ? c.mqttCAFile : nil,
                                      discoveryPrefix: c.mqttDiscovery, version: kioskVersion)
        // The building's commands (subscribed only then) and the door's entities.
        settings.commands = c.mqttCommands
        settings.siteTopic = c.siteKey != nil && c.verdict == .credentials ? c.siteTopic : nil
        settings.door = c.doorContactLine != nil
        settings.tamper = c.tamperLine != nil
        settings.clock = c.verdict == .credentials
        return .success(settings)
    }

    /// The link's events as the log's `mqtt_connected` (info) and `mqtt_disconnected` (warning).
    public static func log(_ event: BrokerEvent, _ logger: Logger) {
        switch event {
        case .connected(let broker):
            logger.info("mqtt_connected", ["broker": .text(broker)])
        case .disconnected(let reason, let retryInMs):
            logger.log(.warning, "mqtt_disconnected", fields: [("reason", .text(reason)), ("retry_ms", .int(retryInMs))])
        case .spoolWriteFailed(let what):
            logger.error("mqtt_spool_write_failed", ["error": .text(what)])
        }
    }
}

public struct ConfigErrors: Error {
    public var list: [ConfigError]
}
