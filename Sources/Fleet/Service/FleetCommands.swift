// SPDX-License-Identifier: Apache-2.0
import Fleet
import Platform
import Policy

/// The building's commands carried out (`KIOSK_MQTT_COMMANDS=1`): `FleetCommandsPolicy`
/// decides what may be done; `open` releases the strike (and tells the door's watcher, so the
/// door opening is no alarm), `reload` reloads what SIGHUP reloads (`Reloadables`). Each command
/// is logged (`command id=… command=… result=… reason=…`) and answered once.
///
/// Called on the MQTT thread, one command at a time.
public final class FleetCommands: @unchecked Sendable {  // `desk` guarded by `lock`
    private let lock = Lock()
    private var desk: FleetCommandsPolicy
    private let door: DoorReader?
    private let watch: DoorWatch?
    private let reloadables: Reloadables
    private let modes: DoorModeKeeper?
    private let logger: Logger
    private let wallClockMs: @Sendable () -> Int64
    private let answer: @Sendable (String) -> Void

    public init(maxAgeSeconds: Int, defaultOpenMilliseconds: Int, door: DoorReader?, watch: DoorWatch?, reloadables: Reloadables,
                modes: DoorModeKeeper? = nil, logger: Logger, wallClockMs: @escaping @Sendable () -> Int64, answer: @escaping @Sendable (String) -> Void) {
        desk = FleetCommandsPolicy(maxAgeSeconds: maxAgeSeconds, defaultOpenMilliseconds: defaultOpenMilliseconds)
        self.door = door
        self.watch = watch
        self.reloadables = reloadables
        self.modes = modes
        self.logger = logger
        self.wallClockMs = wallClockMs
        self.answer = answer
    }

    /// A message on `<topic>/command`. A retained one is refused: the broker would give it again
    /// at every connection, long after whoever sent it meant it.
    public func received(_ payload: [UInt8], retained: Bool) {
        let decision: FleetCommandsPolicy.Decision = retained
            ? .refused(id: nil, command: nil, reason: "retained: a command must not be published with the retain flag")
            : lock.withLock { desk.receive(payload, nowMs: wallClockMs()) }
        switch decision {
        case .refused(let id, let command, let reason):
            finish(id: id, command: command, ok: false, reason: reason, ms: nil)
        case .carryOut(let id, .open(let ms)):
            guard let strike = door?.door else {
                return finish(id: id, command: "open", ok: false, reason: "no strike: KIOSK_DOOR_LINE is unset", ms: ms)
            }
            watch?.release(milliseconds: ms)
            strike.grant(milliseconds: ms)
            finish(id: id, command: "open", ok: true, reason: nil, ms: ms)
        case .carryOut(let id, .mode(let c)):
            // Taken (and kept on disk) before the answer; the `mode` event follows.
            guard let modes else { return finish(id: id, command: "mode", ok: false, reason: "the door's modes are not running", ms: nil) }
            let refused = modes.command(c, via: "mqtt")
            finish(id: id, command: "mode", ok: refused == nil, reason: refused, ms: nil)
        case .carryOut(let id, .reload):
            if reloadables.isEmpty { return finish(id: id, command: "reload", ok: true, reason: "nothing to reload", ms: nil) }
            let outcome = reloadables.reloadAndLog(via: "command", logger: logger)
            finish(id: id, command: "reload", ok: outcome.ok, reason: outcome.ok ? nil : outcome.failures.joined(separator: "; "), ms: nil)
        }
    }

    private func finish(id: String?, command: String?, ok: Bool, reason: String?, ms: Int?) {
        var fields: [(String, LogValue)] = [("id", id.map { .text($0) } ?? .text("")), ("command", .text(command ?? "")),
                                            ("result", .text(ok ? "ok" : "refused"))]
        if let reason { fields.append(("reason", .text(reason))) }
        if let ms { fields.append(("ms", .int(ms))) }
        logger.log(ok ? .info : .warning, "command", fields: fields)
        answer(FleetCommandsPolicy.resultJSON(id: id, ok: ok, reason: reason))
    }
}

extension FleetCommands {
    /// The building's commands (`KIOSK_MQTT_COMMANDS`), now that the door is wired: those that came
    /// before wait in `commands` and are judged now, in order.
    static func assemble(_ a: Assembly, link: BrokerLink?, commands: LateCommands, lines: OutputLines, modes: DoorModeKeeper) {
        guard let link, a.config.mqttCommands else { return }
        commands.set(FleetCommands(maxAgeSeconds: a.config.commandMaxAgeS, defaultOpenMilliseconds: a.config.doorMs, door: lines.door,
                                   watch: lines.watch, reloadables: a.reloadables, modes: modes, logger: a.logger,
                                   wallClockMs: BrokerLink.wallClockMilliseconds) { link.publishCommandResult($0) })
    }
}
