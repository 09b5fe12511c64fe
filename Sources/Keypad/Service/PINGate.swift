// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Keypad
import Platform
import Policy

/// The PIN's step between the verifier and the door (interface.md 0.6): a credential granted by
/// a line that says `pin` (or, without rules, whose subject the pins file lists) is not yet the
/// door's: the door beeps its prompt, the listeners hear `pinRequested` (a speaking door says
/// `pin`), the code's verdict waits `KIOSK_PIN_WINDOW_S` longer, and the keypad's keys go to one
/// `PINEntryPolicy`. The PIN is checked on the verifier's thread (scrypt, off the frame loop and
/// the keypad's thread); then the verdict: granted, granted under duress, or denied `wrong pin`,
/// `pin required` (no PIN in the window, or no keypad), `pin locked` (`PINLockout`, in the
/// used-token store).
///
/// One PIN is awaited at a time (one door, one keypad): a second credential that needs one while
/// the first waits ends the first (`pin required`). No digit is kept past its check, and none is
/// logged: the `pin` event says `ok`, `wrong`, `timeout` or `locked`.
public final class PINGate: KeypadListener, @unchecked Sendable {  // `pins`, `ready`, `pending` guarded by `lock`
    /// Beyond the window: the check's own time (two scrypt hashes) and the clock's lateness.
    public static let checkMarginMs = 3000

    let windowS: Int
    let duress: DuressCode
    let door: String
    let store: UsedTokenStore
    /// Whether the door's rules are in force (then only their `pin` asks for one).
    let rulesInForce: @Sendable () -> Bool
    let clock: Clock
    let wallClock: @Sendable () -> Int64
    let logger: Logger
    let prompt: @Sendable () -> Void
    private let lock = Lock()
    private var pins: PinsFile
    private var ready = false
    private var pending: Pending?
    private var asked: UInt64 = 0
    /// The verifier's thread, where the PINs are checked too (scrypt takes tens of milliseconds).
    let worker: CredentialWorker

    private struct Pending {
        let number: UInt64
        let code: ReportedCode
        let outcome: CredentialOutcome
        let subjectID: String
        var entry: PINEntryPolicy
    }

    init(config: Configuration, pins: PinsFile, worker: CredentialWorker, rulesInForce: @escaping @Sendable () -> Bool, clock: Clock,
         wallClock: @escaping @Sendable () -> Int64 = unixSeconds, logger: Logger, prompt: @escaping @Sendable () -> Void) {
        windowS = config.pinWindowS
        duress = config.duressCode
        door = config.credentialRules.audience ?? config.hostname
        self.pins = pins
        self.worker = worker
        store = worker.verifier.store
        self.rulesInForce = rulesInForce
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.prompt = prompt
    }

    /// The pins file now in force.
    var pinsInForce: PinsFile { lock.withLock { pins } }
    func replace(_ file: PinsFile) { lock.withLock { pins = file } }

    /// Whether this grant waits for a PIN.
    func needsPIN(_ o: CredentialOutcome) -> Bool {
        guard o.granted else { return false }
        if o.pinRequired { return true }
        guard let sub = o.sub, !rulesInForce() else { return false }
        return lock.withLock { pins.entry(for: sub) != nil }
    }

    /// The verifier's outcome for `code`: handed on to the door at once when no PIN is needed
    /// (false returned), else asked for (true: the verdict comes later, from here).
    func judge(_ o: CredentialOutcome, for code: ReportedCode) -> Bool {
        guard needsPIN(o) else { return false }
        let now = clock.now()
        guard let sub = o.sub, lock.withLock({ ready }) else {
            give(o, .pinRequired, to: code)
            return true
        }
        let id = PINGate.subjectID(sub)
        if store.locked(id, now: wallClock()) {
            logger.info("pin", ["result": "locked", "credential": .text(sub)])
            give(o, .pinLocked, to: code)
            return true
        }
        let (number, ended) = lock.withLock { () -> (UInt64, Pending?) in
            asked += 1
            defer { pending = Pending(number: asked, code: code, outcome: o, subjectID: id, entry: PINEntryPolicy(askedNs: now, windowS: windowS)) }
            return (asked, pending)
        }
        if let ended { timedOut(ended) }
        code.verdict?.extend(untilNs: now + UInt64(windowS * 1000 + PINGate.checkMarginMs) * 1_000_000)
        prompt()
        for listener in code.listeners.all { listener.pinRequested(for: code) }
        watch(number, until: now + UInt64(windowS) * 1_000_000_000)
        return true
    }

    // MARK: the keypad (its thread)

    public func keyPressed(_ key: KeypadKey) {
        let now = clock.now()
        let (taken, step) = lock.withLock { () -> (Pending?, PINEntryPolicy.Step?) in
            guard var p = pending else { return (nil, nil) }
            let step = p.entry.key(key, at: now)
            pending = step == nil ? p : nil
            return (p, step)
        }
        guard let taken, let step else { return }
        settle(taken, step)
    }

    public func keypadReady(_ what: String) {
        lock.withLock { ready = true }
        logger.info("keypad", ["state": "ready", "keypad": .text(what)])
    }

    public func keypadLost(_ why: String) {
        lock.withLock { ready = false }
        logger.warning("keypad", ["state": "lost", "error": .text(why)])
    }

    public func burstRefused(bits: Int) {
        logger.debug("keypad_burst_refused", ["bits": .int(bits)])
    }

    // MARK: the decision

    /// The window's end on the clock (a timer that comes early looks again).
    private func watch(_ number: UInt64, until deadline: UInt64) {
        let now = clock.now()
        clock.schedule(afterNs: deadline > now ? deadline - now : 0) { [self] in
            let t = clock.now()
            let (taken, step, open) = lock.withLock { () -> (Pending?, PINEntryPolicy.Step?, Bool) in
                guard var p = pending, p.number == number else { return (nil, nil, false) }
                let step = p.entry.check(at: t)
                pending = step == nil ? p : nil
                return (p, step, step == nil)
            }
            if let taken, let step { settle(taken, step) } else if open { watch(number, until: deadline) }
        }
    }

    private func settle(_ p: Pending, _ step: PINEntryPolicy.Step) {
        switch step {
        case .timedOut: timedOut(p)
        case .entered(let pin): check(pin, p)
        }
    }

    private func timedOut(_ p: Pending) {
        logger.info("pin", ["result": "timeout", "credential": .text(p.outcome.sub ?? "")])
        give(p.outcome, .pinRequired, to: p.code)
    }

    /// The hashes on the verifier's thread; the verdict from there.
    private func check(_ pin: PINDigits, _ p: Pending) {
        let sub = p.outcome.sub ?? ""
        // A subject the rules ask for a PIN but the pins file does not list: any PIN is wrong,
        // found so in the same time as a listed one's.
        let entry = lock.withLock { pins.entry(for: sub) } ?? PINGate.unknownSubject
        let duress = self.duress
        let accepted = worker.submit { [self] in
            decided(PINJudgement.judge(pin, entry, duress: duress) { digits, hash in PINGate.matches(digits, hash) }, p)
        }
        if !accepted { give(p.outcome, .pinRequired, to: p.code) }
    }

    private func decided(_ result: PINResult, _ p: Pending) {
        let sub = p.outcome.sub ?? ""
        switch result {
        case .ok, .duress:
            // The same `pin` event, the same verdict: nothing at the door differs.
            logger.info("pin", ["result": "ok", "credential": .text(sub)])
            var verdict = Verdict(p.outcome)
            if result == .duress {
                verdict.duress = true
                logger.warning("duress", ["credential": .text(sub), "door": .text(door)])
            }
            p.code.verdict?.give(verdict, at: clock.now())
        case .wrong:
            let locked = store.wrongPIN(p.subjectID, now: wallClock())
            logger.info("pin", ["result": "wrong", "credential": .text(sub)])
            if locked { logger.warning("pin_locked", ["credential": .text(sub), "minutes": .int(Int(PINLockout.lockS / 60))]) }
            give(p.outcome, .wrongPIN, to: p.code)
        }
    }

    private func give(_ o: CredentialOutcome, _ reason: CredentialReason, to code: ReportedCode) {
        var denied = o
        denied.reason = reason
        code.verdict?.give(Verdict(denied), at: clock.now())
    }

    /// How the store names a subject: the first 16 bytes of its SHA-256, hex (no name on disk).
    static func subjectID(_ subject: String) -> String {
        ((try? Crypto.sha256(Array(subject.utf8))).map { PayloadBytes.hex(Array($0.prefix(16))) }) ?? PayloadBytes.hex(Array(subject.utf8.prefix(60)))
    }

    /// Whether `pin` is `hash`'s: scrypt with its parameters, compared in constant time.
    public static func matches(_ pin: PINDigits, _ hash: PINHash) -> Bool {
        guard let key = try? Crypto.scrypt(password: pin.ascii, salt: hash.salt, logN: hash.logN, r: hash.r, p: hash.p,
                                           length: hash.key.count) else { return false }
        return (try? Crypto.equalInConstantTime(key, hash.key)) == true
    }

    /// A line no PIN matches (a random key), for a subject the file does not list (line 0).
    static let unknownSubject: PinsEntry = {
        let salt = (try? Crypto.randomBytes(16)) ?? [UInt8](repeating: 1, count: 16)
        let key = (try? Crypto.randomBytes(32)) ?? [UInt8](repeating: 2, count: 32)
        return PinsEntry(subject: "", hash: PINHash(logN: PINHasher.defaultLogN, r: PINHasher.r, p: PINHasher.p, salt: salt, key: key), line: 0)
    }()
}

/// The parameters `pin set` writes (deploy/examples/issue-credential) and the kiosk's figure of a
/// check's cost was counted with (docs/measurements/door-features.md).
public enum PINHasher {
    public static let defaultLogN = 11
    public static let r = 8
    public static let p = 1
}

extension UsedTokenStore {
    /// Whether the subject's PINs are locked now (Unix seconds).
    func locked(_ id: String, now: Int64) -> Bool { reading { PINLockout.isLocked($0, id: id, now: now) } }

    /// A wrong PIN counted on disk; true when it locks the subject.
    func wrongPIN(_ id: String, now: Int64) -> Bool {
        var locked = false
        _ = update(touching: [PINLockout.wrongKey(id), PINLockout.lockKey(id)]) { tokens in
            let r = PINLockout.wrong(&tokens, id: id, now: now)
            locked = r.locked
            return r.claim
        }
        return locked
    }
}
