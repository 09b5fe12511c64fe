// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy

/// The used-token store on disk: `used-tokens` under `$STATE_DIRECTORY` (else /var/lib/kiosk).
/// Each claim rewrites the file (temporary file, fsync, rename, folder fsync) before it returns,
/// so a token is on disk before the door opens for it, and survives a restart or a SIGKILL. A
/// file that does not read back exactly (`UsedTokens.parse`) makes the store damaged: every
/// credential that needs it is then denied, never granted, until an operator looks.
public final class UsedTokenStore: @unchecked Sendable {  // guarded by `lock`
    public static let fileName = "used-tokens"

    public enum Claim: Equatable, Sendable {
        case fresh, used, full
        /// The store cannot be trusted or written: why.
        case unavailable(String)
    }

    public let path: String
    private let lock = Lock()
    private var tokens: UsedTokens
    /// Why the file could not be read back (nil: it could).
    public private(set) var damage: String?

    public init(directory: String, capacity: Int = UsedTokens.defaultCapacity) {
        path = directory + "/" + UsedTokenStore.fileName
        tokens = UsedTokens(capacity: capacity)
        do {
            if let bytes = try SmallFile.read(path) {
                if let text = String(validating: bytes, as: UTF8.self) {
                    switch UsedTokens.parse(text, capacity: capacity) {
                    case .success(let t): tokens = t
                    case .failure(let d): damage = d.description
                    }
                } else {
                    damage = "not UTF-8 text"
                }
            }
        } catch {
            damage = String(describing: error)
        }
    }

    /// The state directory systemd gives (`StateDirectory=kiosk`), else /var/lib/kiosk.
    public static func directory(_ environment: [String: String]) -> String {
        (environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }) ?? "/var/lib/kiosk"
    }

    public var count: Int { lock.withLock { tokens.entries.count } }

    /// How many times `key` was claimed.
    public func uses(of key: String) -> Int { lock.withLock { tokens.uses(of: key) } }
    public var capacity: Int { tokens.capacity }

    /// Claims a token until `expiry`, at most `uses` times; a fresh claim is on disk when this returns.
    public func claim(_ key: String, until expiry: Int64?, now: Int64, skew: Int64, uses: Int = 1) -> Claim {
        lock.withLock {
            if let damage { return .unavailable("the store \(path) is damaged (\(damage))") }
            let before = tokens
            let c = tokens.claim(key, until: expiry, now: now, skew: skew, uses: uses)
            switch c {
            case .used: return .used
            case .full: return .full
            case .fresh:
                do {
                    try SmallFile.replace(path, with: Array(tokens.fileText.utf8))
                    return .fresh
                } catch {
                    tokens = before
                    return .unavailable("the store \(path) cannot be written: \(error)")
                }
            }
        }
    }

    /// Changes the tokens as `change` says (a pass's slot and its uses at once, issue 43): a
    /// `fresh` change is on disk when this returns; `used` or `full` changes nothing.
    public func update(_ change: (inout UsedTokens) -> UsedTokens.Claim) -> Claim {
        lock.withLock {
            if let damage { return .unavailable("the store \(path) is damaged (\(damage))") }
            let before = tokens
            switch change(&tokens) {
            case .used: tokens = before; return .used
            case .full: tokens = before; return .full
            case .fresh:
                do {
                    try SmallFile.replace(path, with: Array(tokens.fileText.utf8))
                    return .fresh
                } catch {
                    tokens = before
                    return .unavailable("the store \(path) cannot be written: \(error)")
                }
            }
        }
    }
}
