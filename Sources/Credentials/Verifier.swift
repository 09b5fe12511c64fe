// SPDX-License-Identifier: Apache-2.0
import CZlib
import Crypto
import Platform
import Policy

/// What the verifier trusts: reloaded together at start and on SIGHUP.
public struct CredentialTrust: @unchecked Sendable {
    public var keys: [TrustedKey]
    public var revoked: Set<String>
    public var secrets: [TOTPSecret]
    /// The door's rules (`KIOSK_ACCESS_FILE`); nil: every valid credential opens.
    public var access: DoorRules?
    /// Events' keys for their tickets (`$KIOSK_TRUST_DIR/pretix/`).
    public var ticketKeys: [TicketKey]
    /// The holders of passes (`KIOSK_HOLDERS_FILE`): public keys only.
    public var holders: HolderKeys
    public init(keys: [TrustedKey] = [], revoked: Set<String> = [], secrets: [TOTPSecret] = [], access: DoorRules? = nil,
                ticketKeys: [TicketKey] = [], holders: HolderKeys = HolderKeys()) {
        self.holders = holders
        self.keys = keys
        self.revoked = revoked
        self.secrets = secrets
        self.access = access
        self.ticketKeys = ticketKeys
    }
}

/// The credential verifier: signed credentials (PREFIX + Base45 + [zlib] + COSE_Sign1
/// + CWT), rotating codes (KT1) and event tickets (pretix_sig1), checked with no network. The signature is verified over the
/// exact bytes before any claim is read; the used-token store has a token on disk before a grant
/// is returned. Thread-safe; `verify` does the work on the caller's thread (`CredentialWorker`
/// runs it off the frame loop).
public final class CredentialVerifier: @unchecked Sendable {  // `trust`, `antipassback` guarded by `lock`
    /// The longest Base45 text's bytes, and what zlib may inflate them to (a bomb stops there).
    public static let maxEncodedBytes = 4096
    public static let maxInflatedBytes = 16_384

    public let prefix: String
    public let rules: CredentialRules
    public let store: UsedTokenStore
    let clock: Clock
    let wallClock: @Sendable () -> Int64
    let synchronization: ClockSynchronization
    let lock = Lock()
    var trust: CredentialTrust
    var antipassback: Antipassback
    /// Whether the door is in lockdown now (the door's modes); nil: never.
    private var lockdownNow: (@Sendable () -> Bool)?

    public init(prefix: String, rules: CredentialRules, antipassbackSeconds: Int, trust: CredentialTrust, store: UsedTokenStore,
                clock: Clock, wallClock: @escaping @Sendable () -> Int64 = unixSeconds,
                synchronization: ClockSynchronization = KernelClockSynchronization()) {
        self.prefix = prefix
        self.rules = rules
        self.store = store
        self.clock = clock
        self.wallClock = wallClock
        self.synchronization = synchronization
        self.trust = trust
        antipassback = Antipassback(seconds: antipassbackSeconds)
    }

    /// The door's lockdown, asked at each decision (set once, before codes come).
    public func follow(lockdown: @escaping @Sendable () -> Bool) { lock.withLock { lockdownNow = lockdown } }

    /// Replaces what is trusted (SIGHUP).
    public func reload(_ trust: CredentialTrust) { lock.withLock { self.trust = trust } }

    public var currentTrust: CredentialTrust { lock.withLock { trust } }

    /// The first 8 bytes of the payload's SHA-256, hex: how the log tells two tokens apart.
    public static func shortHash(_ payload: [UInt8]) -> String {
        (try? Crypto.sha256(payload)).map { PayloadBytes.hex(Array($0.prefix(8))) } ?? "unavailable"
    }

    /// Judges a payload whose kind is not known yet (the tools, the tests): as the frame loop
    /// would classify it.
    public func verify(_ payload: [UInt8]) -> CredentialOutcome {
        verify(payload, as: CodeKind.of(payload, signedPrefix: prefix).credential)
    }

    /// Judges a payload of the kind it was classified as when reported (`CodeKind`).
    public func verify(_ payload: [UInt8], as kind: CredentialKind) -> CredentialOutcome {
        let hash = CredentialVerifier.shortHash(payload)
        switch kind {
        case .signed: return signed(payload.dropFirst(prefix.utf8.count), hash: hash)
        case .rotating: return rotating(payload, hash: hash)
        case .ticket: return ticket(payload, hash: hash)
        case .pass: return pass(payload, hash: hash)
        case .none: return CredentialOutcome(kind: .none, reason: .notACredential, hash: hash)
        }
    }

    // MARK: signed credentials

    /// Verify, then parse: a COSE_Sign1 whose signature a trusted key of its `kid` and algorithm
    /// checks over the exact bytes signed, before anything of its payload is read. Nil when it
    /// is not one (`o.reason` left as it was: malformed), when no such key is trusted (`unknown
    /// key`) or when none of them verifies it (`signature`). Every signed credential and pass
    /// comes through here.
    func trusted(_ bytes: [UInt8], _ o: inout CredentialOutcome) -> COSESign1? {
        guard let message = try? COSESign1(bytes) else { return nil }
        o.kid = TrustDirectory.kidText(message.kid)
        let wanted: PublicKey.Kind = message.algorithm == .es256 ? .ecP256 : .ed25519
        let candidates = lock.withLock { trust.keys }.filter { $0.kid == message.kid && $0.key.kind == wanted }
        guard !candidates.isEmpty else {
            o.reason = .unknownKey
            return nil
        }
        let tbs = message.toBeSigned
        guard candidates.contains(where: { (try? $0.key.verify(message: tbs, signature: message.signature)) == true }) else {
            o.reason = .signature
            return nil
        }
        return message
    }

    /// The bytes a signed credential's text stands for: Base45, then zlib when they start with a
    /// zlib header (RFC 1950 2.2: CM 8, the check bits); nil: malformed.
    public static func coseBytes<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        guard let bytes = Base45.decode(text, maxOutput: maxEncodedBytes), bytes.count >= 2 else { return nil }
        guard bytes[0] & 0x0f == 8, (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0 else { return bytes }
        var out = [UInt8](repeating: 0, count: maxInflatedBytes)
        var n = 0
        let rc = kiosk_inflate(bytes, bytes.count, &out, out.count, &n)
        guard rc == KIOSK_INFLATE_OK.rawValue else { return nil }
        return Array(out[0..<n])
    }

    private func signed(_ text: ArraySlice<UInt8>, hash: String) -> CredentialOutcome {
        var o = CredentialOutcome(kind: .signed, reason: .malformed, hash: hash)
        guard let bytes = CredentialVerifier.coseBytes(text), let message = trusted(bytes, &o) else { return o }
        guard let claims = try? CWTClaims(payload: message.payload) else { return o }
        o.iss = claims.iss
        o.sub = claims.sub
        o.cti = claims.cti.map(PayloadBytes.hex)
        o.exp = claims.exp
        o.groups = claims.groups ?? []
        // A credential bound to a holder's key opens only with its proof (a `KH1:` pass).
        do { if try Confirmation.key(payload: message.payload) != nil { o.reason = .noProof; return o } } catch { return o }
        let now = wallClock()
        let (revoked, access) = lock.withLock { (trust.revoked, trust.access) }
        let time = synchronization.judgement
        let synced = TimeSource.judges(rules, time)
        o.reason = TimeSource.reason(CredentialCheck.claims(claims, rules: TimeSource.rules(rules, time), now: now, clockSynced: synced,
                                                            isRevoked: { revoked.contains($0) }), time)
        guard o.reason == .valid else { return o }
        o.reason = TimeSource.reason(allowed(claims.groups ?? [], access: access, now: now, synced: synced, pin: &o.pinRequired), time)
        guard o.reason == .valid else { return o }
        o.reason = admit(subject: claims.sub, token: claims.cti.map { (UsedTokens.signedKey(cti: $0), claims.exp, claims.uses ?? 1) }, now: now)
        return o
    }

    // MARK: rotating codes

    private func rotating(_ payload: [UInt8], hash: String) -> CredentialOutcome {
        var o = CredentialOutcome(kind: .rotating, reason: .malformed, hash: hash)
        guard let code = RotatingCode(payload) else { return o }
        o.kid = code.holder
        let (secret, revoked, access) = lock.withLock { (trust.secrets.first { $0.holder == code.holder }, trust.revoked, trust.access) }
        var expected: String?
        let period = secret?.period ?? TOTPSecret.defaultPeriod
        let step = TOTP.step(time: code.time, period: period)
        if let secret, step >= 0, code.digits.count == secret.digits {
            guard let mac = try? Crypto.hmacSHA1(key: secret.secret, data: TOTP.message(step: step)) else { o.reason = .signature; return o }
            expected = TOTP.code(hmac: mac, digits: secret.digits)
        } else if secret != nil {
            expected = ""  // the wrong number of digits, or a time before 1970: it cannot match
        }
        let now = wallClock()
        let time = synchronization.judgement
        let synced = TimeSource.judges(rules, time)
        o.reason = TimeSource.reason(CredentialCheck.rotating(code, expected: expected, period: period, rules: TimeSource.rules(rules, time),
                                                              now: now, clockSynced: synced, isRevoked: { revoked.contains($0) }), time)
        guard o.reason == .valid else { return o }
        o.sub = code.holder
        o.groups = secret?.groups ?? []
        o.reason = TimeSource.reason(allowed(secret?.groups ?? [], access: access, now: now, synced: synced, pin: &o.pinRequired), time)
        guard o.reason == .valid else { return o }
        // A step's code is accepted once; the entry lasts as long as the code could be accepted.
        let until = (step + 1) * period + period
        o.exp = until
        o.reason = admit(subject: code.holder, token: (UsedTokens.rotatingKey(holder: code.holder, step: step), until, 1), now: now)
        return o
    }

    // MARK: event tickets

    /// A pretix_sig1 secret: the framing, then the signature against each event's key, then
    /// (only then) the payload; then revoked and the time, the door's rules, antipassback (per
    /// ticket) and the entries in the used-token store (`KIOSK_TICKET_ENTRIES`; 0: not counted).
    /// Without a key that verifies it, another event's ticket and a changed one look the same:
    /// `signature` (`unknown key` only when no event's key is trusted at all).
    private func ticket(_ payload: [UInt8], hash: String) -> CredentialOutcome {
        var o = CredentialOutcome(kind: .ticket, reason: .malformed, hash: hash)
        guard let secret = PretixSecret(payload) else { return o }
        let keys = lock.withLock { trust.ticketKeys }
        guard !keys.isEmpty else { o.reason = .unknownKey; return o }
        // Verify, then parse: the payload is read only once an event's key has signed it.
        guard let key = keys.first(where: { (try? $0.key.verify(message: secret.payload, signature: secret.signature)) == true }) else {
            o.reason = .signature
            return o
        }
        o.kid = key.name
        guard let t = try? PretixTicket(payload: secret.payload), let digest = try? Crypto.sha256(secret.payload) else { return o }
        o.sub = "pretix:\(key.name):\(t.item)"
        o.exp = t.validUntil
        o.variation = t.variation == 0 ? nil : t.variation
        o.subevent = t.subevent == 0 ? nil : t.subevent
        let now = wallClock()
        let (revoked, access) = lock.withLock { (trust.revoked, trust.access) }
        let time = synchronization.judgement
        let synced = TimeSource.judges(rules, time)
        o.reason = TimeSource.reason(TicketCheck.ticket(t, rules: TimeSource.rules(rules, time), now: now, clockSynced: synced,
                                                        revoked: revoked.contains(String(decoding: payload, as: UTF8.self))), time)
        guard o.reason == .valid else { return o }
        let groups = access.map { $0.rules.groups(forTicket: t.item, variation: t.variation, subevent: t.subevent) } ?? []
        o.groups = groups
        o.reason = TimeSource.reason(allowed(groups, access: access, now: now, synced: synced, pin: &o.pinRequired), time)
        guard o.reason == .valid else { return o }
        let entry = UsedTokens.ticketKey(payloadDigest: digest)
        o.reason = admit(subject: entry, token: rules.ticketEntries > 0 ? (entry, t.validUntil, rules.ticketEntries) : nil, now: now)
        return o
    }

    /// The door's rules, when there are any: after every check of the credential itself, before
    /// antipassback and the store (a credential refused here does not use up a one-time token).
    /// `synced`: the clock judges (`TimeSource.judges`: a source vouches, or
    /// `KIOSK_REQUIRE_SYNCED_CLOCK=0`, 0.3's rule; never behind the floor).
    /// In a lockdown only the `lockdown-allow` groups open (none without rules).
    /// `pin`: set when the line that opens asks for the holder's PIN (`allow ... pin`).
    func allowed(_ groups: [String], access: DoorRules?, now: Int64, synced: Bool, pin: inout Bool) -> CredentialReason {
        let lockdown = lock.withLock { lockdownNow }?() ?? false
        guard let access else { return lockdown ? .lockdown : .valid }
        let d = access.decision(groups: groups, now: now, clockSynced: synced, lockdown: lockdown)
        pin = d.pin
        return CredentialReason(d.reason)
    }

    /// Antipassback, then the store (a denied subject does not use up a one-time token).
    private func admit(subject: String?, token: (key: String, expiry: Int64?, uses: Int)?, now: Int64) -> CredentialReason {
        let t = clock.now()
        return lock.withLock {
            if let subject, antipassback.blocks(subject, at: t) { return .antipassback }
            if let token {
                switch store.claim(token.key, until: token.expiry, now: now, skew: rules.skewSeconds, uses: token.uses) {
                case .fresh: break
                case .used: return .used
                case .full: return .storeFull
                case .unavailable:
                    // A store that cannot be trusted, a folder a power cut empties, or a write that failed.
                    if store.damage != nil { return .stateDamaged }
                    return store.refusesAsVolatile(token.key) ? .stateVolatile : .storeFull
                }
            }
            if let subject { antipassback.granted(subject, at: t) }
            return .valid
        }
    }
}

/// Runs the verifier off the frame loop: one thread, a queue of 64 (a door shows a code a second;
/// a replayed folder, or a disk slow to fsync the store, can queue a burst); `submit` never waits.
public final class CredentialWorker: @unchecked Sendable {  // `queue`, `stopping` guarded by `condition`
    public let verifier: CredentialVerifier
    public let queueLimit: Int
    private let condition = Condition()
    private var queue: [@Sendable () -> Void] = []
    private var stopping = false
    private var busy = false
    private var ended = false

    public init(verifier: CredentialVerifier, queueLimit: Int = 64) {
        self.verifier = verifier
        self.queueLimit = queueLimit
        startThread(name: "kiosk.credential") { [self] in work() }
    }

    /// Queues a payload; a full queue refuses it at once (nil returned: the caller denies).
    @discardableResult
    public func submit(_ payload: [UInt8], as kind: CredentialKind, done: @escaping @Sendable (CredentialOutcome) -> Void) -> Bool {
        let verifier = self.verifier
        return submit { done(verifier.verify(payload, as: kind)) }
    }

    /// Queues other work of the credentials' that must not run on the frame loop (a PIN's
    /// scrypt): in turn with the credentials; false when the queue is full or stopping.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, queue.count < queueLimit else { return false }
        queue.append(job)
        condition.signal()
        return true
    }

    public var isIdle: Bool { condition.lock(); defer { condition.unlock() }; return queue.isEmpty && !busy }

    /// Stops taking payloads and waits (at most 2 s: a verification takes microseconds) until
    /// the thread has finished what it had and freed its libcrypto state (`Crypto.threadEnds`),
    /// so that the process's exit does not race it.
    public func shutDown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while !ended, monotonicNanoseconds() < deadline { _ = condition.wait(untilMonotonicNs: deadline) }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                Crypto.threadEnds()
                condition.lock()
                ended = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            busy = true
            condition.unlock()
            job()
            condition.lock()
            busy = false
            condition.unlock()
        }
    }
}
