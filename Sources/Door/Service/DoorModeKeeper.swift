// SPDX-License-Identifier: Apache-2.0
import Credentials
import Fleet
import Platform
import Policy

/// The door's mode kept and carried out: `DoorModes` decides (pure); this reads the
/// clocks, keeps what must survive a restart in `$STATE_DIRECTORY/mode` (written whole before a
/// command is answered), looks again every second (an unlock window's start and end, a
/// commanded unlock's `until`), and carries each change out: the `mode` event, `<topic>/mode`,
/// the strike held released in `unlock` and `emergency` (and the door's watcher told, so that
/// an open door is no alarm then), shut when they end.
///
/// Commands come from the building's broker and `kiosk mode` (their threads), grants from the
/// verifier's, the emergency input from the door's: all under `lock`; the strike and the broker
/// are told outside it, in the order of the changes.
public final class DoorModeKeeper: @unchecked Sendable {  // `modes`, `emergency`, `saved`, `stopped` guarded by `lock`
    public static let fileName = "mode"

    private let lock = Lock()
    private let apply = Lock()  // the changes carried out one at a time, in order
    private var modes: DoorModes
    private var emergency = false
    private var saved: String
    private var stopped = false
    private let path: String?
    private let rules: @Sendable () -> DoorRules?
    private let synchronized: @Sendable () -> Bool
    private let wallClock: @Sendable () -> Int64
    private let wallClockMs: @Sendable () -> Int64
    private let clock: Clock
    private let logger: Logger
    private var door: Strike?
    private var watch: DoorWatch?
    private var fleet: DoorFleet?
    /// Why the state directory does not survive a power cut: a lockdown says it is lost at the next one.
    private var volatileFolder: String?

    /// `path` nil: nothing kept (a test, `check`). What the file holds is read back: a lockdown
    /// in force, an unlock until its time. A file that cannot be read keeps the door in lockdown
    /// (a torn file must not open it) until a command ends it.
    public init(path: String?, rules: @escaping @Sendable () -> DoorRules?, synchronized: @escaping @Sendable () -> Bool,
                wallClock: @escaping @Sendable () -> Int64 = unixSeconds, wallClockMs: @escaping @Sendable () -> Int64,
                clock: Clock, logger: Logger) {
        self.path = path
        self.rules = rules
        self.synchronized = synchronized
        self.wallClock = wallClock
        self.wallClockMs = wallClockMs
        self.clock = clock
        self.logger = logger
        var modes = DoorModes()
        if let path {
            do {
                if let bytes = try SmallFile.read(path, limit: 4096) {
                    if let restored = String(validating: bytes, as: UTF8.self).flatMap(DoorModes.restore) {
                        modes = restored
                    } else {
                        logger.warning("mode_file_unreadable", ["file": .text(path), "kept": "lockdown",
                                                                "hint": "end it with kiosk mode normal, or the building's mode command"])
                        logger.warning("state_damaged", ["file": .text(path), "did": "kept the door in lockdown (a torn mode file must not open it) until kiosk mode normal or the building's mode command ends it"])
                        modes = DoorModes.restore("kiosk-mode 1\nlockdown\n")!
                    }
                }
            } catch {
                logger.warning("mode_file_unreadable", ["file": .text(path), "error": .text(String(describing: error)), "kept": "lockdown"])
                logger.warning("state_damaged", ["file": .text(path), "did": .text("kept the door in lockdown (\(error)) until kiosk mode normal or the building's mode command ends it")])
                modes = DoorModes.restore("kiosk-mode 1\nlockdown\n")!
            }
        }
        self.modes = modes
        saved = modes.persisted
    }

    /// `$STATE_DIRECTORY/mode` (the first of a list), else /var/lib/kiosk/mode.
    public static func path(_ environment: [String: String]) -> String {
        let folder = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? "/var/lib/kiosk"
        return folder + "/" + fileName
    }

    /// The state directory does not survive a power cut (`why` what it is on).
    public func warnWhenVolatile(_ why: String) { lock.withLock { volatileFolder = why } }

    /// What the mode drives; then `start`.
    public func attach(door: Strike?, watch: DoorWatch?, fleet: DoorFleet?) {
        lock.withLock {
            self.door = door
            self.watch = watch
            self.fleet = fleet
        }
    }

    /// The mode now (and published: `<topic>/mode` from the first connection), then a look every second.
    public func start() {
        evaluate()
        let (mode, until) = lock.withLock { (modes.mode, modes.unlockUntil) }
        lock.withLock { fleet }?.mode(ModeMessage.json(mode: mode, reason: .restart, until: until, timeMs: wallClockMs()))
        tick()
    }

    public var mode: DoorMode { lock.withLock { modes.mode } }
    public var isLockdown: Bool { mode == .lockdown }

    /// A command (`via`: `mqtt`, `socket`): nil when taken (and kept on disk), else why not.
    public func command(_ c: DoorModeCommand, via: String) -> String? {
        let refused = lock.withLock { stopped ? "stopping" : modes.command(c, now: wallClock()) }
        if let refused { return refused }
        save()
        evaluate()
        return nil
    }

    /// A grant with `groups` (the verifier's thread): a `first=GROUP` window may begin.
    public func granted(groups: [String]) {
        guard !groups.isEmpty, let r = rules() else { return }
        let clock = LocalTime.wallClock(wallClock())
        let (hasFirst, before) = lock.withLock { (r.rules.unlocks.contains { $0.firstGroup != nil }, modes.mode) }
        guard hasFirst else { return }
        lock.withLock { modes.granted(groups: groups, at: clock, rules: r.rules, holidays: r.holidays) }
        if before != .unlock { evaluate() }
    }

    /// The fire panel's input (the door's thread).
    public func setEmergency(_ active: Bool) {
        lock.withLock { emergency = active }
        lock.withLock { fleet }?.alarm("emergency", state: active ? "active" : "ended")
        evaluate()
    }

    public func shutDown() { lock.withLock { stopped = true } }

    private func tick() {
        clock.schedule(afterNs: 1_000_000_000) { [weak self] in
            guard let self, !self.lock.withLock({ self.stopped }) else { return }
            self.evaluate()
            self.tick()
        }
    }

    /// Looks at the mode now; a change is logged, published and carried out.
    private func evaluate() {
        apply.lock()
        defer { apply.unlock() }
        let now = wallClock()
        let r = rules()
        let synced = synchronized()
        let wall = LocalTime.wallClock(now)
        let change = lock.withLock { () -> (DoorMode, DoorModeReason, Int64?, Strike?, DoorWatch?, DoorFleet?)? in
            guard !stopped else { return nil }
            guard let why = modes.evaluate(now: now, clock: wall, rules: r?.rules ?? AccessRules(), holidays: r?.holidays ?? [],
                                           clockSynced: synced, emergency: emergency) else { return nil }
            return (modes.mode, why, modes.unlockUntil, door, watch, fleet)
        }
        save()
        guard let (mode, why, until, door, watch, fleet) = change else { return }
        var fields: [(String, LogValue)] = [("mode", .text(mode.rawValue)), ("reason", .text(why.rawValue))]
        if let until { fields.append(("until", .int(Int(until)))) }
        logger.log(mode == .emergency || mode == .lockdown ? .warning : .info, "mode", fields: fields)
        if mode == .lockdown, let why = lock.withLock({ volatileFolder }) {
            logger.warning("state_volatile", ["folder": .text(path.map { String($0[..<($0.lastIndex(of: "/") ?? $0.endIndex)]) } ?? "none"),
                                              "why": .text(why), "lost": "this lockdown: it ends at the next power cut"])
        }
        switch mode {
        case .unlock, .emergency:
            watch?.setFreePassage(true)
            door?.hold()
        case .normal, .lockdown:
            door?.endHold(reason: "mode_" + mode.rawValue)
            watch?.setFreePassage(false)
        }
        fleet?.mode(ModeMessage.json(mode: mode, reason: why, until: until, timeMs: wallClockMs()))
    }

    /// What must survive a restart, written when it changed (a failure is said, the mode kept).
    private func save() {
        guard let path else { return }
        let text = lock.withLock { modes.persisted }
        guard text != lock.withLock({ saved }) else { return }
        do {
            try SmallFile.replace(path, with: Array(text.utf8), mode: 0o600)
            lock.withLock { saved = text }
        } catch {
            logger.warning("mode_not_saved", ["file": .text(path), "error": .text(String(describing: error)),
                                              "hint": "the mode holds until the kiosk stops; set STATE_DIRECTORY or make /var/lib/kiosk writable"])
        }
    }
}

extension DoorModeKeeper {
    /// The door's modes in the running kiosk, kept in $STATE_DIRECTORY/mode (not by the demo), set
    /// by the building, by `kiosk mode` over the socket in $RUNTIME_DIRECTORY (systemd's), by the
    /// `unlock` lines and by the fire panel's input; started. Its ticks write the mode file: a
    /// lane of the clock of their own. The lockdown is asked by the verifier
    /// and the door at each decision. Returns the keeper and its socket (nil: none), each to be
    /// shut.
    static func assemble(_ a: Assembly, lines: OutputLines, verifier: CredentialVerifier?, clockWatch: ClockWatch?,
                         fleet: FleetReporter?, volatile: String?) -> (keeper: DoorModeKeeper, socket: ModeSocket?) {
        let requireSynced = a.config.requireSyncedClock
        let modes = DoorModeKeeper(path: a.demo ? nil : DoorModeKeeper.path(a.environment),
                                   rules: { verifier?.currentTrust.access },
                                   synchronized: { clockWatch?.judgesTime ?? (!requireSynced || KernelClockSynchronization().isSynchronized) },
                                   wallClockMs: BrokerLink.wallClockMilliseconds, clock: a.clock.lane("kiosk.mode"), logger: a.logger)
        verifier?.follow(lockdown: { modes.isLockdown })
        lines.door.follow(lockdown: { modes.isLockdown })
        if let volatile { modes.warnWhenVolatile(volatile) }
        modes.attach(door: lines.door.door, watch: lines.watch, fleet: fleet)
        lines.watch?.onEmergency { modes.setEmergency($0) }
        modes.start()
        var socket: ModeSocket?
        if !a.demo, a.environment["RUNTIME_DIRECTORY"] != nil {
            do {
                socket = try ModeSocket(path: ModeSocket.path(a.environment), keeper: modes, logger: a.logger)
            } catch {
                a.logger.warning("mode_socket_unavailable", ["error": .text(String(describing: error)),
                                                             "hint": "kiosk mode cannot reach this kiosk; the building's mode command still can"])
            }
        }
        return (modes, socket)
    }
}
