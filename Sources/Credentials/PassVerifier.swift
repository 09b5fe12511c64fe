// SPDX-License-Identifier: Apache-2.0
import Crypto
import Platform
import Policy

/// The holders of passes (`KIOSK_HOLDERS_FILE`): each line's key read by OpenSSL as a
/// point of P-256 once, at load, and found by its key_id (the first 8 bytes of its RFC 9679
/// thumbprint). Public keys only.
public struct HolderKeys: @unchecked Sendable {
    public struct Entry: @unchecked Sendable {
        public let holder: PassHolder
        public let keyID: [UInt8]
        public let key: PublicKey
    }

    public private(set) var entries: [Entry] = []
    private var byKeyID: [[UInt8]: Int] = [:]

    public init() {}

    /// A line of the holders file that is wrong: its number and why.
    public struct LineError: Error, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public var count: Int { entries.count }

    public func find(keyID: [UInt8]) -> Entry? { byKeyID[keyID].map { entries[$0] } }

    /// The file's text read strictly (`PassHolder.parseFile`), then each key checked on the curve
    /// and its thumbprint taken; a bad line throws its number and why.
    public static func parse(_ text: String) throws -> HolderKeys {
        var out = HolderKeys()
        let holders: [PassHolder]
        switch PassHolder.parseFile(text) {
        case .success(let h): holders = h
        case .failure(let e): throw LineError(line: e.line, reason: e.reason)
        }
        for h in holders {
            let key: PublicKey
            do { key = try PublicKey(p256Point: h.key.sec1) } catch {
                throw LineError(line: h.line, reason: "the key of \(h.name) is not a point of P-256 (\(error))")
            }
            let id = HolderKey.keyID(thumbprint: try Crypto.sha256(h.key.thumbprintInput))
            guard out.byKeyID[id] == nil else { throw LineError(line: h.line, reason: "the key of \(h.name) has the key_id of another holder's") }
            out.byKeyID[id] = out.entries.count
            out.entries.append(Entry(holder: h, keyID: id, key: key))
        }
        return out
    }

    /// The file at `path`; a missing file is no holder (nil returned: none there).
    public static func load(_ path: String) throws -> HolderKeys? {
        guard let bytes = try SmallFile.read(path, limit: 4 << 20) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw SmallFile.Failure(description: "\(path): not UTF-8 text") }
        return try parse(text)
    }
}

/// Form 1's holders' keys as OpenSSL read them, by their SEC1 bytes: a phone shows the same
/// credential every 5 seconds, and reading its point (a compressed one is a square root) costs
/// about a quarter of a signature's check. Public keys only; at most 256, then it starts again.
final class HolderPoints: @unchecked Sendable {  // `keys` guarded by `lock`
    static let shared = HolderPoints()
    static let capacity = 256
    private let lock = Lock()
    private var keys: [[UInt8]: PublicKey] = [:]

    /// The key, or nil when OpenSSL does not read the bytes as a point of P-256.
    func key(_ sec1: [UInt8]) -> PublicKey? {
        if let k = lock.withLock({ keys[sec1] }) { return k }
        guard let k = try? PublicKey(p256Point: sec1) else { return nil }
        lock.withLock {
            if keys.count >= HolderPoints.capacity { keys.removeAll(keepingCapacity: true) }
            keys[sec1] = k
        }
        return k
    }
}

extension CredentialVerifier {
    /// A pass (interface.md 0.5), in the contract's order: it reads (`malformed`); form 1: the
    /// issuer's signature and every KC1 check of its claims, then the door's rules; form 2: the
    /// holder is listed (`unknown key`) and not revoked by NAME, then the rules with its groups;
    /// then the proof with the bound key (`holder signature`); the clock and the slot's window
    /// (`stale`); antipassback; the slot later than the last accepted (`used`, in the store
    /// before this returns a grant).
    func pass(_ payload: [UInt8], hash: String) -> CredentialOutcome {
        var o = CredentialOutcome(kind: .pass, reason: .malformed, hash: hash)
        guard let pass = try? Pass(payload) else { return o }
        o.form = pass.form.name
        let (revoked, access) = lock.withLock { (trust.revoked, trust.access) }
        let now = wallClock()
        // The clock as the other credentials see it (its source and floor: TimeSource).
        let time = synchronization.judgement
        let synced = TimeSource.judges(rules, time)
        let holderKey: PublicKey
        let storeKey: String
        var uses: (key: String, expiry: Int64?, count: Int)?
        var groups: [String]
        let digest: [UInt8]
        switch pass.form {
        case .selfContained:
            guard let message = trusted(pass.credential, &o) else { return o }
            // Read only now that a trusted key signed it: the claims, then the bound key.
            guard let claims = try? CWTClaims(payload: message.payload), let bound = try? Confirmation.key(payload: message.payload),
                  let d = try? Crypto.sha256(pass.credential) else { return o }
            o.iss = claims.iss
            o.sub = claims.sub
            o.cti = claims.cti.map(PayloadBytes.hex)
            o.exp = claims.exp
            groups = claims.groups ?? []
            o.groups = groups
            o.reason = TimeSource.reason(CredentialCheck.claims(claims, rules: TimeSource.rules(rules, time), now: now, clockSynced: synced,
                                                                isRevoked: { revoked.contains($0) }), time)
            guard o.reason == .valid else { return o }
            o.reason = TimeSource.reason(allowed(groups, access: access, now: now, synced: synced, pin: &o.pinRequired), time)
            guard o.reason == .valid else { return o }
            // The point is OpenSSL's to read and check on the curve: one that is not is no key.
            guard let k = HolderPoints.shared.key(bound.sec1) else { o.reason = .malformed; return o }
            holderKey = k
            digest = d
            storeKey = claims.cti.map { UsedTokens.passKey(cti: $0) } ?? UsedTokens.passKey(credentialDigest: d)
            // `uses` counts entries as for a KC1 credential (each pass accepted is one).
            if let n = claims.uses, let cti = claims.cti { uses = (UsedTokens.signedKey(cti: cti), claims.exp, n) }
        case .holder:
            // No kid: the key_id is the pass's own bytes, and no output carries them.
            guard let entry = lock.withLock({ trust.holders.find(keyID: pass.credential) }) else { o.reason = .unknownKey; return o }
            let name = entry.holder.name
            o.sub = name
            o.holder = name
            groups = entry.holder.groups
            o.groups = groups
            if revoked.contains(name) { o.reason = .revoked; return o }
            o.reason = TimeSource.reason(allowed(groups, access: access, now: now, synced: synced, pin: &o.pinRequired), time)
            guard o.reason == .valid else { return o }
            guard let d = try? Crypto.sha256(pass.credential) else { o.reason = .signature; return o }
            holderKey = entry.key
            digest = d
            storeKey = UsedTokens.passKey(holder: name)
        }
        let signed = Pass.proofMessage(form: pass.form, slot: pass.slot, digest: digest)
        guard (try? holderKey.verify(message: signed, signature: pass.proof)) == true else { o.reason = .holderSignature; return o }
        o.skewS = Pass.skew(slot: pass.slot, now: now)
        // A pass is always time-bound (its slot): judged only by a clock the kiosk trusts.
        if !synced { o.reason = TimeSource.reason(.clockNotSynchronized, time); return o }
        guard Pass.isFresh(slot: pass.slot, now: now, window: rules.passWindowSeconds) else { o.reason = .stale; return o }
        o.reason = admitPass(subject: o.sub, key: storeKey, slot: pass.slot, uses: uses, now: now)
        return o
    }

    /// Antipassback, then the store: the slot (and a credential's uses) claimed at once, on disk
    /// before a grant returns.
    private func admitPass(subject: String?, key: String, slot: Int64, uses: (key: String, expiry: Int64?, count: Int)?, now: Int64) -> CredentialReason {
        let t = clock.now()
        return lock.withLock {
            if let subject, antipassback.blocks(subject, at: t) { return .antipassback }
            let skew = rules.skewSeconds
            let c = store.update(touching: [key] + (uses.map { [$0.key] } ?? [])) { tokens in
                let s = tokens.claimSlot(key, slot: slot, now: now, skew: skew)
                guard s == .fresh, let uses else { return s }
                return tokens.claim(uses.key, until: uses.expiry, now: now, skew: skew, uses: uses.count)
            }
            switch c {
            case .fresh: break
            case .used: return .used
            case .full, .unavailable: return .storeFull
            }
            if let subject { antipassback.granted(subject, at: t) }
            return .valid
        }
    }
}
