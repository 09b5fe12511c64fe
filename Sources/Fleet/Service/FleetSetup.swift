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
    func publishSpooledAlarm(_ json: String) { link.publishSpooledAlarm(json) }
    func publishCommandResult(_ json: String) { link.publishCommandResult(json) }
    func publishMode(_ json: String) { link.publishMode(json) }

    var counters: BrokerCounters { link.counters }
}

/// The building's broker in the running kiosk: its link, with its own threads and its spool
/// opened at start (a folder the kiosk cannot write is said at start, not at the first scan).
extension FleetSetup {
    /// The link, started (nil: no `KIOSK_MQTT_URL`); the building's commands go to `commands`
    /// once the door is wired, a site bundle to `bundles`. Throws the exit status once the reasons
    /// are logged: 78 for a file the settings name, 69 for libmosquitto or the spool.
    static func assemble(_ a: Assembly, commands: LateCommands, bundles: SiteBundles?) throws -> BrokerLink? {
        guard a.config.isMQTT else { return nil }
        let settings: BrokerSettings
        switch FleetSetup.settings(a.config, a.environment) {
        case .success(let s): settings = s
        case .failure(let problems):
            for e in problems.list { a.logger.configError(e) }
            throw ServiceExit(ExitStatus.config)
        }
        // Libmosquitto is loaded now that it is configured; missing, nothing reaches the broker.
        if let problem = BrokerLink.loadLibrary() {
            a.logger.error("mqtt_unavailable", ["library": .text(BrokerLink.libraryFile), "package": .text(BrokerLink.libraryPackage),
                                                "error": .text(problem)])
            throw ServiceExit(ExitStatus.unavailable)
        }
        let spool = try openSpool(a)
        let logger = a.logger
        let link = BrokerLink(settings: settings, spool: spool, clock: a.clock) { FleetSetup.log($0, logger) }
        // The building's commands, once the door is wired (refused until then).
        if settings.commands { link.onCommand { payload, retained in commands.received(payload, retained: retained) } }
        if settings.siteTopic != nil, let bundles { link.onSiteBundle { bundles.received($0) } }
        link.start()
        return link
    }

    /// The spool of scan events kept while the broker is away, in `$STATE_DIRECTORY`; what a power
    /// cut left of it is said (`mqtt_spool`, `state_damaged` for torn lines).
    static func openSpool(_ a: Assembly) throws -> Spool {
        let folder = spoolDirectory(a.environment)
        let spool: Spool
        do {
            spool = try Spool(directory: folder, capacity: a.config.mqttQueue)
        } catch {
            a.logger.error("mqtt_spool_unavailable", ["directory": .text(folder), "error": .text(String(describing: error)),
                                                      "hint": "the kiosk keeps its scan events there while the broker is away: set STATE_DIRECTORY (systemd's StateDirectory=kiosk does) or make /var/lib/kiosk writable"])
            throw ServiceExit(ExitStatus.unavailable)
        }
        if spool.count > 0 || spool.ignoredLines > 0 {
            a.logger.info("mqtt_spool", ["file": .text(spool.path), "queued": .int(spool.count), "torn_lines": .int(spool.ignoredLines)])
            if spool.ignoredLines > 0 {
                a.logger.warning("state_damaged", ["file": .text(spool.path),
                                                   "did": .text("kept \(spool.count) queued events (scans and duress alarms), skipped \(spool.ignoredLines) torn line(s)")])
            }
        }
        return spool
    }

    /// On SIGTERM the kiosk stops within a second (interface.md): the frame loop notices the
    /// signal within its 100 ms poll and the outputs go off in a few ms, so the broker gets 0.5 s
    /// to take what is queued (on a LAN a few ms when connected) and the link 0.7 s in all; what
    /// it has not acknowledged by then stays in the spool for the next start. At the end of a
    /// replay (no one waiting on a stop): BrokerLink's own 2 s.
    static let graceOnSignalNs: UInt64 = 500_000_000
    static let limitOnSignalNs: UInt64 = 700_000_000
    static let graceAtEndNs: UInt64 = 2_000_000_000

    /// Stops the link after the outputs, with the time a stop allows.
    static func stop(_ link: BrokerLink, after reason: StopReason?) {
        if reason == .sourceEnded {
            link.stop(graceNs: graceAtEndNs)
        } else {
            link.stop(graceNs: graceOnSignalNs, limitNs: limitOnSignalNs)
        }
    }
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
        settings.duress = c.verdict == .credentials && !c.isOSDP && c.keypad != nil && c.duressCode != .off
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
