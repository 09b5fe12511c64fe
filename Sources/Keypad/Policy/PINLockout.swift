// SPDX-License-Identifier: Apache-2.0
/// 5 wrong PINs for one subject within 10 minutes lock it for 10 minutes (interface.md 0.6), kept
/// in the used-token store beside the tokens so that a restart does not reset it: `n:ID` counts
/// the wrong PINs of a window that began with the first (it expires with the window), `l:ID`
/// holds the lock until it ends. `ID` is the edge's digest of the subject (hex): the store
/// names no one. Times are Unix seconds (the store's).
public enum PINLockout {
    public static let wrongLimit = 5
    public static let windowS: Int64 = 600
    public static let lockS: Int64 = 600

    public static func wrongKey(_ id: String) -> String { "n:" + id }
    public static func lockKey(_ id: String) -> String { "l:" + id }

    /// Whether the subject is locked at `now`.
    public static func isLocked(_ tokens: UsedTokens, id: String, now: Int64) -> Bool {
        guard let expiry = tokens.entries[lockKey(id)] else { return false }
        return expiry.map { $0 > now } ?? true
    }

    /// A wrong PIN at `now`: counted (`fresh`; `full` when the store has no room); `locked`
    /// when this one locks the subject.
    public static func wrong(_ tokens: inout UsedTokens, id: String, now: Int64) -> (claim: UsedTokens.Claim, locked: Bool) {
        tokens.dropExpired(now: now, skew: 0)
        let key = wrongKey(id)
        let count = tokens.uses(of: key)
        guard count > 0 || tokens.entries.count < tokens.capacity else { return (.full, false) }
        let windowEnd = count > 0 ? (tokens.entries[key] ?? nil) ?? now + windowS : now + windowS
        tokens.set(key, until: windowEnd, uses: count + 1)
        guard count + 1 >= wrongLimit else { return (.fresh, false) }
        guard tokens.entries.count < tokens.capacity else { return (.full, false) }
        tokens.set(lockKey(id), until: now + lockS, uses: 1)
        return (.fresh, true)
    }
}
