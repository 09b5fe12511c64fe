// SPDX-License-Identifier: Apache-2.0
import GPIO
import Platform
import Policy

/// What the kiosk says and does about each reported code: the read pattern on the
/// buzzer; in hook mode the verdict (the `KIOSK_ON_SCAN` program's exit status, or its deadline)
/// with its pattern, its LED and, when granted, the door strike; in Wiegand mode the code's frame
/// to the access controller, which decides (the kiosk then gives only its read feedback).
///
/// Nothing here waits: the patterns and the strike are timed on the clock, the Wiegand frame goes
/// out on its sender's thread, the verdict comes from the scan program's thread or the clock's.
/// Every output is inactive at start (requested so), on camera loss (the strike), and after
/// `shutDown` on every way out.
public final class DoorReader: @unchecked Sendable {  // `stopped`, `pendingVerdicts` guarded by `lock`; outputs lock themselves
    /// The lines, requested inactive under the consumer "kiosk" (`OutputLines`); each optional.
    public struct Lines {
        public var buzzer: SwitchedOutput?
        public var grantedLED: SwitchedOutput?
        public var deniedLED: SwitchedOutput?
        public var door: SwitchedOutput?
        public var wiegand: (d0: SwitchedOutput, d1: SwitchedOutput)?
        public init(buzzer: SwitchedOutput? = nil, grantedLED: SwitchedOutput? = nil, deniedLED: SwitchedOutput? = nil,
                    door: SwitchedOutput? = nil, wiegand: (d0: SwitchedOutput, d1: SwitchedOutput)? = nil) {
            self.buzzer = buzzer
            self.grantedLED = grantedLED
            self.deniedLED = deniedLED
            self.door = door
            self.wiegand = wiegand
        }

        /// Every line, for a shutdown when building the reader failed half-way.
        public var all: [SwitchedOutput] {
            [buzzer, grantedLED, deniedLED, door, wiegand?.d0, wiegand?.d1].compactMap { $0 }
        }
    }

    public let mode: VerdictMode
    public let verdictMs: Int
    public let readPattern: BeepPattern
    public let grantedPattern: BeepPattern
    public let deniedPattern: BeepPattern
    public let errorPattern: BeepPattern
    public let ledMs: Int
    public let buzzer: PatternPlayer?
    public let grantedLED: PatternPlayer?
    public let deniedLED: PatternPlayer?
    public let door: Strike?
    public let wiegand: WiegandSender?
    public let wiegandFormat: WiegandFormat
    public let wiegandFacility: Int
    /// An OSDP controller drives the LEDs and the strike; verdicts leave them alone.
    public let controllerDecides: Bool
    private let logger: Logger
    private let clock: Clock
    private let lock = Lock()
    private var stopped = false
    private var pendingVerdicts = 0
    private var verdictCounts: [Verdict.Result: Int] = [:]
    /// Whether the door is in lockdown (the door's modes); a scan program's grant is
    /// then denied (credentials mode: the verifier knows the groups and decides).
    private var lockdownNow: (@Sendable () -> Bool)?
    /// Who hears of grants and of the strike shutting (the door's inputs, `DoorWatch`).
    public let strikeListeners = StrikeListeners()

    public init(configuration c: Configuration, lines: Lines, logger: Logger, clock: Clock,
                failures: GPIOWriteFailures? = nil) {
        mode = c.verdict
        verdictMs = c.verdictMs
        readPattern = c.readPattern
        grantedPattern = c.beepGranted
        deniedPattern = c.beepDenied
        errorPattern = c.beepError
        ledMs = c.ledMs
        wiegandFormat = c.wiegandFormat
        wiegandFacility = c.wiegandFacility
        controllerDecides = c.isOSDP
        self.logger = logger
        self.clock = clock
        let report: (Error) -> Void = { failures?.report($0) }
        func player(_ output: SwitchedOutput?) -> PatternPlayer? {
            output.map { o in
                let p = PatternPlayer(output: o, clock: clock)
                p.onError = report
                return p
            }
        }
        buzzer = player(lines.buzzer)
        grantedLED = player(lines.grantedLED)
        deniedLED = player(lines.deniedLED)
        let doorMs = c.doorMs
        let listeners = strikeListeners
        door = lines.door.map { o in
            let d = Strike(output: o, openMilliseconds: doorMs, clock: clock) { change in
                switch change {
                case .opened(_, .max):
                    logger.info("door", ["state": "open", "held": .bool(true)])  // Unlock, emergency
                case .opened(let at, let until):
                    // KIOSK_DOOR_MS, or the building's `open` command's own time.
                    logger.info("door", ["state": "open", "ms": .int(Int((until &- at) / 1_000_000))])
                case .extended(_, .max):
                    logger.debug("door_extended", ["held": .bool(true)])
                case .extended(let at, let until):
                    logger.debug("door_extended", ["closes_in_ms": .int(Int((until &- at) / 1_000_000))])
                case .closed(_, let reason):
                    logger.info("door", ["state": "closed", "reason": .text(reason.text)])
                }
                listeners.strikeChanged(change)
            }
            d.onError = report
            return d
        }
        wiegand = lines.wiegand.map { w in
            let s = WiegandSender(d0: w.d0, d1: w.d1, pulseMicroseconds: c.wiegandPulseUs,
                                  intervalMicroseconds: c.wiegandIntervalUs, clock: clock)
            s.onError = report
            return s
        }
    }

    /// A code was reported (on the frame loop's thread; returns at once). The read pattern sounds,
    /// the Wiegand frame is queued (or skipped, with why); when verdicts are on, the returned wait
    /// is what the verdict's judge settles (`VerdictWait.give`, `programEnded`), or its deadline
    /// does. Once the door has acted on the verdict, `code`'s listeners hear it
    /// (`ReportedCode.given`): the one way a verdict travels.
    public func reported(symbology: String, payload: [UInt8], frame: UInt64, code: ReportedCode? = nil) -> VerdictWait? {
        guard !isStopped else { return nil }
        sound(readPattern, for: "read")
        if let wiegand { sendWiegand(wiegand, payload: payload, symbology: symbology, frame: frame) }
        guard mode != .none else { return nil }
        lock.withLock { pendingVerdicts += 1 }
        return VerdictWait(reportedNs: clock.now(), limitMs: verdictMs, clock: clock) { [weak self] verdict in
            if let acted = self?.decided(verdict, symbology: symbology, frame: frame) { code?.given(acted) }
            // Counted once the listeners have it too: `settle` (a replay's end) must not let the
            // fleet flush this code without its verdict (the arm64 tier, slower, caught that),
            // nor the scan program's queue be looked at before a credential's line is in it.
            self?.lock.withLock { self?.pendingVerdicts -= 1 }
        }
    }

    /// A prompt on the buzzer (a PIN is asked for), with its `beep` debug event.
    public func prompt(_ pattern: BeepPattern, for what: String) {
        guard !isStopped else { return }
        sound(pattern, for: what)
    }

    /// The door's lockdown, asked at each hook verdict (set once, before codes come).
    public func follow(lockdown: @escaping @Sendable () -> Bool) { lock.withLock { lockdownNow = lockdown } }

    /// The camera is lost: nobody watches the door, so the strike shuts at once (unless held
    /// released by the door's mode: free passage needs nobody to watch).
    public func cameraLost() { door?.forceClose(reason: "camera_lost") }

    /// Verdicts given so far, by result (for tests and the demo).
    public func verdicts(_ result: Verdict.Result) -> Int { lock.withLock { verdictCounts[result] ?? 0 } }

    /// Waits (on the clock) until every code's verdict is in, the buzzer is quiet and the Wiegand
    /// frames are out, at most the verdict's wait plus 11 s: the end of a replay, so that its
    /// last codes are answered before the outputs are shut.
    public func settle(unless stop: StopSignal) {
        let limit = clock.now() + UInt64(verdictMs + 11_000) * 1_000_000
        while clock.now() < limit {
            let busy = lock.withLock { pendingVerdicts > 0 } || buzzer?.isPlaying == true || wiegand.map { !$0.isIdle } == true
            guard busy else { return }
            guard clock.sleep(ns: 5_000_000, unless: stop) else { return }
        }
    }

    /// Every output inactive and released, the strike shut (`door state=closed reason=stop` when
    /// it was open), the Wiegand lines idle; later codes and verdicts do nothing. On every way
    /// out, from any thread (the signal thread on a second signal); a second call does nothing.
    public func shutDown() {
        lock.withLock { stopped = true }
        wiegand?.shutDown()
        door?.shutDown(reason: "stop")
        buzzer?.shutDown()
        grantedLED?.shutDown()
        deniedLED?.shutDown()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Acts on a verdict; returns what it acted on (a hook grant under lockdown is a denial), or
    /// nil once the door is shut.
    private func decided(_ given: Verdict, symbology: String, frame: UInt64) -> Verdict? {
        var verdict = given
        if verdict.result == .granted, mode == .hook, lock.withLock({ lockdownNow })?() == true {
            verdict = Verdict(result: .denied, reason: "lockdown", elapsedNs: verdict.elapsedNs, subject: verdict.subject)
        }
        let proceed = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            verdictCounts[verdict.result, default: 0] += 1
            return true
        }
        guard proceed else { return nil }
        var fields: [(String, LogValue)] = [
            ("result", .text(verdict.result.rawValue)), ("reason", .text(verdict.reason)), ("ms", .ms(verdict.ms)),
            ("symbology", .text(symbology)), ("frame", .int(Int(frame))),
        ]
        if let subject = verdict.subject { fields.append(("credential", .text(subject))) }
        logger.log(verdict.result == .error ? .warning : .info, "verdict", fields: fields)
        // With OSDP the access controller owns the LEDs and the strike (its osdp_LED and
        // osdp_OUT); a local verdict (credentials mode) only sounds its pattern.
        if controllerDecides {
            sound(verdict.result == .granted ? grantedPattern : verdict.result == .denied ? deniedPattern : errorPattern,
                  for: verdict.result.rawValue)
            return verdict
        }
        switch verdict.result {
        case .granted:
            sound(grantedPattern, for: "granted")
            deniedLED?.silence()
            grantedLED?.light(milliseconds: ledMs)
            door?.grant()
            strikeListeners.granted()
        case .denied, .error:
            // The door stays shut either way: the red LED; the buzzer tells the two apart.
            sound(verdict.result == .denied ? deniedPattern : errorPattern, for: verdict.result.rawValue)
            grantedLED?.silence()
            deniedLED?.light(milliseconds: ledMs)
        }
        return verdict
    }

    /// A pattern on the buzzer, with its `beep` debug event; silence cuts nothing.
    private func sound(_ pattern: BeepPattern, for what: String) {
        guard let buzzer, !pattern.isSilent else { return }
        buzzer.play(onOffMilliseconds: pattern.milliseconds)
        logger.debug("beep", ["ms": .int(pattern.totalMs), "pattern": .text(pattern.description), "for": .text(what)])
    }

    private func sendWiegand(_ sender: WiegandSender, payload: [UInt8], symbology: String, frame: UInt64) {
        switch Wiegand.frame(payload: payload, defaultFacility: wiegandFacility, format: wiegandFormat) {
        case .success(let f):
            let before = sender.dropped
            sender.send(f.bits)
            logger.info("wiegand", ["bits": .int(f.bits.count), "facility": .int(f.credential.facility), "card": .int(f.credential.card),
                                    "frame": .int(Int(frame))])
            let dropped = sender.dropped
            if dropped > before {
                logger.warning("wiegand_dropped", ["reason": "the controller's line is busy with earlier frames; the oldest waiting one was dropped",
                                                   "dropped": .int(dropped)])
            }
        case .failure(let skip):
            logger.warning("wiegand_skipped", ["reason": .text(skip.reason), "symbology": .text(symbology), "frame": .int(Int(frame))])
        }
    }
}

/// One code's wait for its verdict: its judge's (`give`: the verifier's; `programEnded`: the scan
/// program's end, from the program's thread) or the deadline (`KIOSK_VERDICT_MS` after the report,
/// on the clock), whichever comes first, decides once (`VerdictWaitPolicy`).
public final class VerdictWait: @unchecked Sendable {  // `pending`, `decide` guarded by `lock`
    private let lock = Lock()
    private var pending: VerdictWaitPolicy
    private let clock: Clock
    /// Let go once it has run: the code it tells holds this wait.
    private var decide: (@Sendable (Verdict) -> Void)?

    init(reportedNs: UInt64, limitMs: Int, clock: Clock, decide: @escaping @Sendable (Verdict) -> Void) {
        pending = VerdictWaitPolicy(reportedNs: reportedNs, limitMs: limitMs)
        self.clock = clock
        self.decide = decide
        scheduleCheck()
    }

    /// The program ended at `t` (the clock's time when it was reaped).
    public func programEnded(_ end: ProgramEnd, at t: UInt64) {
        decided(lock.withLock { pending.programEnded(end, at: t) })
    }

    /// A verdict given directly (the credential verifier's), at `t`.
    public func give(_ verdict: Verdict, at t: UInt64) {
        decided(lock.withLock { pending.given(verdict, at: t) })
    }

    public var isDecided: Bool { lock.withLock { pending.isDecided } }

    /// The judge waits for more than the deadline allows (a PIN): the deadline moves to the
    /// clock's `untilNs` (the scheduled check finds it early and looks again then).
    public func extend(untilNs: UInt64) {
        lock.withLock {
            let ms = untilNs > pending.reportedNs ? (untilNs - pending.reportedNs + 999_999) / 1_000_000 : 0
            pending.extend(toMs: Int(min(ms, UInt64(Int32.max))))
        }
    }

    private func decided(_ verdict: Verdict?) {
        guard let verdict else { return }
        let act = lock.withLock { () -> (@Sendable (Verdict) -> Void)? in
            defer { decide = nil }
            return decide
        }
        act?(verdict)
    }

    private func scheduleCheck() {
        let now = clock.now(), deadline = lock.withLock { pending.deadlineNs }
        clock.schedule(afterNs: deadline > now ? deadline - now : 0) { [self] in
            let (verdict, open) = lock.withLock { (pending.check(at: clock.now()), !pending.isDecided) }
            if verdict != nil { decided(verdict) } else if open { scheduleCheck() }  // a timer that came early
        }
    }
}

/// Grants and the strike's changes, told to the door's watcher (set once, before any
/// code is read; called from the verdict's and the strike's threads, outside their work).
public final class StrikeListeners: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var onGranted: [@Sendable () -> Void] = []
    private var onChange: [@Sendable (StrikePolicy.Change) -> Void] = []

    public func listen(granted: @escaping @Sendable () -> Void, strikeChanged: @escaping @Sendable (StrikePolicy.Change) -> Void) {
        lock.withLock {
            onGranted.append(granted)
            onChange.append(strikeChanged)
        }
    }

    func granted() { lock.withLock { onGranted }.forEach { $0() } }
    func strikeChanged(_ change: StrikePolicy.Change) { lock.withLock { onChange }.forEach { $0(change) } }
}
