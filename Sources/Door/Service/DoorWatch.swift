// SPDX-License-Identifier: Apache-2.0
import GPIO
import Glibc
import Platform
import Policy

/// The door's inputs: the door contact, the exit button and the tamper loop watched on
/// a thread of their own (`kiosk-door`), `DoorWatchPolicy`'s decisions carried out: the events in the
/// log, the alarm on the buzzer, the strike opened by the exit button (and shut on contact), the
/// door's state and alarms to the building's broker. The frame loop never waits for any of it.
///
/// The thread polls the lines' descriptors (the kernel's edge events, or a simulated line's pipe)
/// and a wake pipe, with a timeout to the monitor's next deadline (a level settling, the held
/// limit). Grants and the building's commands come from other threads through `release`. The
/// monitor's lock is never held while the strike or the buzzer is driven (the strike tells its
/// changes back under its own lock).
public final class DoorWatch: @unchecked Sendable {  // `monitor`, `counts`, `stopped`, `fleet`, `tamperListener` guarded by `lock`
    public struct Input {
        public var line: GPIOInputLine
        public var activeLow: Bool
        public init(line: GPIOInputLine, activeLow: Bool) {
            self.line = line
            self.activeLow = activeLow
        }
    }

    /// What the door has done, for `stats` and the metrics file (totals since start).
    public struct Counts: Equatable, Sendable {
        public var opened = 0
        public var forced = 0
        public var held = 0
        public var rex = 0
        public var tamper = 0
        public var state: DoorWatchPolicy.DoorState?
        public var tampered: Bool?
        public init() {}
    }

    public let inputs: [DoorWatchPolicy.Input: Input]
    private let door: DoorReader?
    private let alarmPattern: BeepPattern
    private let logger: Logger
    private let lock = Lock()
    private var monitor: DoorWatchPolicy
    private var counts = Counts()
    private var stopped = false
    private var threadDone = true
    private var fleet: DoorFleet?
    private var tamperListener: (@Sendable (Bool) -> Void)?
    private var emergencyListener: (@Sendable (Bool) -> Void)?
    private var buttonListener: (@Sendable (Bool, UInt64) -> Void)?
    private var strikeClosedAtNs: UInt64?
    private let finished = Condition()
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// The lines are requested (inputs, both edges); `door` is the reader whose strike the exit
    /// button opens and whose grants release the door.
    public init(settings: DoorWatchPolicy.Settings, inputs: [DoorWatchPolicy.Input: Input], door: DoorReader?,
                alarmPattern: BeepPattern, logger: Logger) {
        self.inputs = inputs
        self.door = door
        self.alarmPattern = alarmPattern
        self.logger = logger
        monitor = DoorWatchPolicy(settings: settings)
        (wakeRead, wakeWrite) = nonBlockingPipe()
        let releaseMs = settings.releaseMilliseconds
        door?.strikeListeners.listen(granted: { [weak self] in self?.release(milliseconds: releaseMs) },
                                     strikeChanged: { [weak self] change in
                                         if case .closed(_, .forced) = change { self?.strikeClosedEarly() }
                                     })
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Where the door's state and alarms go (the building's broker); set before `start`.
    public func report(to fleet: DoorFleet?) { lock.withLock { self.fleet = fleet } }

    /// Told the tamper loop's state at start and on each change (on the door's thread; it must
    /// not block): the OSDP reader's LSTATR. Set before `start`.
    public func onTamper(_ listener: @escaping @Sendable (Bool) -> Void) { lock.withLock { tamperListener = listener } }

    /// Told the fire panel's input (at start when active, and on each change; on the
    /// door's thread): the door's modes. Set before `start`.
    public func onEmergency(_ listener: @escaping @Sendable (Bool) -> Void) { lock.withLock { emergencyListener = listener } }

    /// Told each press (`true`) and release of the exit button, with the edge's time (monotonic
    /// ns; on the door's thread): setup opens when it is held. Set before `start`.
    public func onButton(_ listener: @escaping @Sendable (Bool, UInt64) -> Void) { lock.withLock { buttonListener = listener } }

    /// Free passage (`unlock`, `emergency`) begins or ends: an open door is no alarm while it lasts.
    public func setFreePassage(_ on: Bool) {
        let now = monotonicNanoseconds()
        let actions = lock.withLock { stopped ? [] : monitor.setFreePassage(on, at: now) }
        perform(actions, now: now)
        wake()
    }

    /// Reads the levels now, says what they mean (a door open at start, a tamper loop open), and
    /// starts the thread.
    public func start() {
        var levels: [DoorWatchPolicy.Input: Bool] = [:]
        for (input, i) in inputs {
            do {
                levels[input] = try active(i, level: i.line.level())
            } catch {
                logger.warning("gpio_read_failed", ["line": .int(i.line.offset), "error": .text(String(describing: error))])
                levels[input] = false
            }
        }
        let now = monotonicNanoseconds()
        let actions = lock.withLock { () -> [DoorWatchPolicy.Action] in
            threadDone = false
            return monitor.start(levels: levels, at: now)
        }
        perform(actions, now: now)
        if let tampered = levels[.tamper] {
            // The tamper loop's state from the first `<topic>/state` on, not only once it changes.
            lock.withLock { counts.tampered = tampered }
            lock.withLock { fleet }?.tamper(tampered)
            lock.withLock { tamperListener }?(tampered)
        }
        startThread(name: "kiosk-door") { [self] in run() }
    }

    /// A grant or the building's `open`: the door may open for `milliseconds` without an alarm.
    public func release(milliseconds: Int) {
        let now = monotonicNanoseconds()
        let actions = lock.withLock { stopped ? [] : monitor.release(at: now, milliseconds: milliseconds) }
        perform(actions, now: now)
        wake()
    }

    public var counters: Counts { lock.withLock { counts } }
    public var state: DoorWatchPolicy.DoorState { lock.withLock { monitor.state } }

    /// Stops the thread (within its poll) and releases the lines; a second call does nothing.
    public func shutDown() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        wake()
        finished.lock()
        while !lock.withLock({ threadDone }) { _ = finished.wait(untilMonotonicNs: monotonicNanoseconds() + 100_000_000) }
        finished.unlock()
        for (_, i) in inputs { i.line.release() }
    }

    /// Told under the strike's lock: noted here and taken by the thread, which may drive the
    /// strike itself (a settling exit button) without that lock held.
    private func strikeClosedEarly() {
        let now = monotonicNanoseconds()
        lock.withLock { strikeClosedAtNs = now }
        wake()
    }

    private func active(_ input: Input, level: Int) -> Bool { (level != 0) != input.activeLow }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        let watched = inputs.map { ($0.key, $0.value) }
        while !lock.withLock({ stopped }) {
            let now = monotonicNanoseconds()
            var timeoutMs: Int32 = 1000
            if let deadline = lock.withLock({ monitor.nextDeadlineNs }) {
                timeoutMs = deadline <= now ? 0 : Int32(min(1000, (deadline - now + 999_999) / 1_000_000))
            }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            fds += watched.map { pollfd(fd: $0.1.line.descriptor, events: Int16(POLLIN), revents: 0) }
            do throws(Errno) { try Syscall.retryingEINTR { poll(&fds, nfds_t(fds.count), timeoutMs) } } catch {
                logger.error("door_inputs_failed", ["error": .text("poll: \(error.message)")])
                break
            }
            if fds[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &sink, sink.count) > 0 {}
            }
            var edges: [(DoorWatchPolicy.Input, Bool, UInt64)] = []
            for (k, (input, i)) in watched.enumerated() where fds[k + 1].revents != 0 {
                do {
                    edges += try i.line.readEdges().map { (input, active(i, level: $0.level), $0.timestampNs) }
                } catch {
                    logger.warning("gpio_read_failed", ["line": .int(i.line.offset), "error": .text(String(describing: error))])
                }
            }
            edges.sort { $0.2 < $1.2 }
            let at = monotonicNanoseconds()
            let actions = lock.withLock { () -> [DoorWatchPolicy.Action] in
                var out: [DoorWatchPolicy.Action] = []
                if let closed = strikeClosedAtNs {
                    strikeClosedAtNs = nil
                    out += monitor.strikeClosed(at: closed)
                }
                for (input, isActive, t) in edges { out += monitor.edge(input, active: isActive, at: t) }
                return out + monitor.tick(at: max(at, edges.last?.2 ?? 0))
            }
            perform(actions, now: at)
        }
        lock.withLock { threadDone = true }
        finished.lock()
        finished.broadcast()
        finished.unlock()
    }

    /// Carries out the monitor's actions, in order (from whichever thread decided them).
    private func perform(_ actions: [DoorWatchPolicy.Action], now: UInt64) {
        guard !actions.isEmpty else { return }
        let (fleet, tamperListener, emergencyListener, buttonListener) = lock.withLock {
            (self.fleet, self.tamperListener, self.emergencyListener, self.buttonListener)
        }
        func latency(_ edgeNs: UInt64) -> LogValue { .ms(Double(monotonicNanoseconds() &- edgeNs) / 1e6) }
        for action in actions {
            switch action {
            case .contact(let open, let edgeNs):
                if open { lock.withLock { counts.opened += 1 } }
                logger.log(.info, "door_contact", fields: [("state", .text(open ? "open" : "closed")), ("latency_ms", latency(edgeNs))])
            case .rex(let edgeNs, let opens):
                lock.withLock { counts.rex += 1 }
                logger.log(.info, "rex", fields: [("opens", .bool(opens)), ("latency_ms", latency(edgeNs))])
                buttonListener?(true, edgeNs)
            case .rexReleased(let edgeNs):
                buttonListener?(false, edgeNs)
            case .forced(let edgeNs):
                lock.withLock { counts.forced += 1 }
                logger.log(.warning, "door_forced", fields: [("latency_ms", latency(edgeNs))])
                fleet?.alarm("door_forced", state: nil)
            case .held(_, let openNs):
                lock.withLock { counts.held += 1 }
                logger.log(.warning, "door_held", fields: [("open_s", .number(Double(openNs) / 1e9, digits: 1))])
                fleet?.alarm("door_held", state: nil)
            case .alarmEnd(let alarm, _, let openNs):
                logger.log(.info, "door_alarm_end", fields: [("alarm", .text(alarm.rawValue)), ("open_s", .number(Double(openNs) / 1e9, digits: 1))])
                fleet?.alarm("door_alarm_end", state: alarm.rawValue)
            case .tamper(let isActive, let edgeNs):
                if isActive { lock.withLock { counts.tamper += 1 } }
                lock.withLock { counts.tampered = isActive }
                logger.log(isActive ? .warning : .info, "tamper", fields: [("state", .text(isActive ? "alarm" : "ok")), ("latency_ms", latency(edgeNs))])
                fleet?.alarm("tamper", state: isActive ? "alarm" : "ok")
                fleet?.tamper(isActive)
                tamperListener?(isActive)
            case .emergency(let isActive, let edgeNs):
                logger.log(isActive ? .warning : .info, "emergency_input", fields: [("state", .text(isActive ? "active" : "ended")), ("latency_ms", latency(edgeNs))])
                emergencyListener?(isActive)
            case .openStrike(let ms):
                door?.door?.grant(milliseconds: ms)
            case .closeStrike:
                door?.door?.forceClose(reason: "contact")
            case .doorState(let state):
                lock.withLock { counts.state = state }
                fleet?.door(state.rawValue)
            case .soundAlarm:
                if let buzzer = door?.buzzer, !alarmPattern.isSilent {
                    buzzer.play(onOffMilliseconds: alarmPattern.milliseconds)
                    logger.debug("beep", ["ms": .int(alarmPattern.totalMs), "pattern": .text(alarmPattern.description), "for": "alarm"])
                }
            case .silenceAlarm:
                door?.buzzer?.silence()
            }
        }
    }
}

/// Where the door's state and alarms go: the building's broker (`FleetReporter` gives one).
public protocol DoorFleet: AnyObject, Sendable {
    /// `<topic>/door` (retained): closed, open, forced, held.
    func door(_ state: String)
    /// An alarm as a message: `door_forced`, `door_held`, `door_alarm_end` (`state`: the alarm
    /// that ended), `tamper` (`state`: alarm or ok).
    func alarm(_ event: String, state: String?)
    /// The tamper loop's state in `<topic>/state`.
    func tamper(_ active: Bool)
    /// The door's mode (`ModeMessage.json`), `<topic>/mode` retained.
    func mode(_ json: String)
}

extension DoorWatch {
    /// The door's inputs on their own thread (when any is configured): its states to the
    /// broker, the tamper loop to the controller's LSTATR; the simulated chip's inputs from
    /// standard input (`KIOSK_GPIO_CHIP=sim`).
    static func start(_ a: Assembly, lines: OutputLines, fleet: FleetReporter?, osdp: OSDPReader?) {
        guard let watch = lines.watch else { return }
        watch.report(to: fleet)
        if let osdp { watch.onTamper { osdp.tamper($0) } }
        watch.start()
        if let sim = lines.simulatedChip { SimulatedInputFeed.start(chip: sim, config: a.config, logger: a.logger) }
    }
}
