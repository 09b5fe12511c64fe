// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// The used-token store on disk, under `$STATE_DIRECTORY` (else /var/lib/kiosk): a snapshot,
/// `used-tokens` (`UsedTokens.fileText`), and a journal, `used-tokens.log` (`UsedTokenLog`).
/// Each fresh claim appends one record to the journal and fsyncs it before it returns, so a token
/// is on disk before the door opens for it, and a grant writes a record, not the whole store
/// . Once the journal is as large as the snapshot, it is folded into a new snapshot
/// (written beside it, fsynced, renamed over it, the folder fsynced) and then emptied: a cut at
/// any step leaves the old snapshot and the journal, or the new snapshot and a journal whose
/// records it already holds (a record replayed twice changes nothing).
///
/// At start a journal cut in its last record (a power cut during a grant that was therefore never
/// acknowledged) loses that record only, and is said (`recoveries`). A snapshot that does not read
/// (torn, zero length, a checksum that fails) or a journal with a damaged record before complete
/// ones makes the store damaged: every claim is then refused (`state damaged`), never granted on
/// a store that forgot tokens, until an operator moves the file away (`kiosk doctor` says how).
public final class UsedTokenStore: @unchecked Sendable {  // guarded by `lock`
    public static let fileName = "used-tokens"

    public enum Claim: Equatable, Sendable {
        case fresh, used, full
        /// The store cannot be trusted or written: why.
        case unavailable(String)
    }

    /// A state file that did not read, and what the store did about it (the `state_damaged` event).
    public struct Recovery: Equatable, Sendable {
        public var file: String
        public var did: String
    }

    /// The snapshot.
    public let path: String
    /// The journal.
    public let logPath: String
    private let lock = Lock()
    private var tokens: UsedTokens
    /// Why the store cannot be trusted (nil: it can).
    public private(set) var damage: String?
    /// The file that made it damaged.
    public private(set) var damageFile: String?
    /// What the start found and did, for `state_damaged` (empty: every file read).
    public private(set) var recoveries: [Recovery] = []
    /// Why one-time credentials, `uses` and ticket entries are refused: the folder does not
    /// survive a power cut and `KIOSK_VOLATILE_STATE=refuse` (nil: they are judged).
    private var volatileReason: String?
    private var logFD: Int32 = -1
    private var logBytes = 0
    private var snapshotBytes = 0
    private var logRecords = 0
    /// The last compaction's failure (the grant itself was on disk): tried again at the next grant.
    public private(set) var compactionProblem: String?
    private let minimumLogBytes: Int

    /// `readOnly` (`kiosk doctor`, `check`): what the files hold, nothing cut off or removed.
    public init(directory: String, capacity: Int = UsedTokens.defaultCapacity, minimumLogBytes: Int = UsedTokenLog.minimumBytes,
                readOnly: Bool = false) {
        path = directory + "/" + UsedTokenStore.fileName
        logPath = path + UsedTokenLog.fileSuffix
        tokens = UsedTokens(capacity: capacity)
        self.minimumLogBytes = minimumLogBytes
        self.readOnly = readOnly
        load(capacity: capacity)
    }
    private let readOnly: Bool

    deinit { if logFD >= 0 { close(logFD) } }

    private func load(capacity: Int) {
        // A compaction cut before its rename: its file is unfinished, the snapshot and the log are whole.
        if access(path + ".new", F_OK) == 0 {
            if !readOnly { unlink(path + ".new") }
            recoveries.append(Recovery(file: path + ".new", did: (readOnly ? "a compaction cut before its rename (removed at start)" : "removed a compaction cut before its rename")
                                       + "; kept the previous snapshot and the log"))
        }
        let refused = "one-time credentials, uses and ticket entries are refused (state damaged) until an operator moves it away (kiosk doctor)"
        do {
            if let bytes = try SmallFile.read(path, limit: 16 << 20) {
                snapshotBytes = bytes.count
                if let text = String(validating: bytes, as: UTF8.self) {
                    switch UsedTokens.parse(text, capacity: capacity) {
                    case .success(let t): tokens = t
                    case .failure(let d): damage = "\(path): \(d.description)"; damageFile = path
                    }
                } else {
                    damage = "\(path): not UTF-8 text"; damageFile = path
                }
                if damage != nil { recoveries.append(Recovery(file: path, did: "nothing recovered from the snapshot (\(damage!)): " + refused)) }
            }
        } catch {
            damage = String(describing: error); damageFile = path
            recoveries.append(Recovery(file: path, did: "the snapshot cannot be read (\(error)): " + refused))
        }
        let log: [UInt8]?
        do {
            log = try SmallFile.read(logPath, limit: 64 << 20)
        } catch {
            if damage == nil { damage = String(describing: error); damageFile = logPath }
            recoveries.append(Recovery(file: logPath, did: "the log cannot be read (\(error)): " + refused))
            return
        }
        guard let log else { return }
        let r = UsedTokenLog.replay(log, into: &tokens)
        logRecords = r.records
        logBytes = r.goodLength
        if r.damagedRecords > 0 {
            let d = "\(logPath): \(r.damagedRecords) damaged record(s) before complete ones"
            if damage == nil { damage = d; damageFile = logPath }
            recoveries.append(Recovery(file: logPath, did: "recovered \(r.records) records; \(r.damagedRecords) damaged record(s) before complete ones are lost: " + refused))
            return
        }
        guard r.tornBytes > 0 else { return }
        // A record cut by a power cut was never acknowledged (its fsync had not returned, the door
        // had not opened): dropped, so that the next record follows a complete one.
        var did = "recovered \(r.records) of \(r.records) complete records, dropped a torn tail of \(r.tornBytes) bytes (a record never acknowledged)"
        if damage == nil && !readOnly {
            let fd = open(logPath, O_WRONLY | O_CLOEXEC)
            if fd < 0 || ftruncate(fd, off_t(r.goodLength)) != 0 || fsync(fd) != 0 {
                damage = "\(logPath): the torn tail cannot be cut off: \(Errno.current.message)"; damageFile = logPath
                did += "; it cannot be cut off (\(Errno.current.message)): " + refused
            }
            if fd >= 0 { close(fd) }
        }
        recoveries.append(Recovery(file: logPath, did: did))
    }

    /// The state directory systemd gives (`StateDirectory=kiosk`), else /var/lib/kiosk.
    public static func directory(_ environment: [String: String]) -> String {
        (environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }) ?? "/var/lib/kiosk"
    }

    public var count: Int { lock.withLock { tokens.entries.count } }

    /// What `body` reads of the tokens now (the PIN's lockout).
    public func reading<T>(_ body: (UsedTokens) -> T) -> T { lock.withLock { body(tokens) } }

    /// How many times `key` was claimed.
    public func uses(of key: String) -> Int { lock.withLock { tokens.uses(of: key) } }
    public var capacity: Int { tokens.capacity }

    /// The journal's records and bytes since the last compaction, and the snapshot's bytes.
    public var sizes: (logRecords: Int, logBytes: Int, snapshotBytes: Int) { lock.withLock { (logRecords, logBytes, snapshotBytes) } }

    /// The folder does not survive a power cut and `KIOSK_VOLATILE_STATE=refuse`: from now on a
    /// claim that needs a durable store (`StateDurability.needsDurableStore`) is refused.
    public func refuseWhenVolatile(_ why: String) { lock.withLock { volatileReason = why } }

    /// Whether a claim of `key` is refused because the folder is volatile (`state volatile`).
    public func refusesAsVolatile(_ key: String) -> Bool {
        lock.withLock { volatileReason != nil && StateDurability.needsDurableStore(key: key) }
    }

    /// Claims a token until `expiry`, at most `uses` times; a fresh claim is on disk when this returns.
    public func claim(_ key: String, until expiry: Int64?, now: Int64, skew: Int64, uses: Int = 1) -> Claim {
        lock.withLock {
            if let damage { return .unavailable("the store \(path) is damaged (\(damage))") }
            if readOnly { return .unavailable("the store \(path) was opened to be read only") }
            if let volatileReason, StateDurability.needsDurableStore(key: key) {
                return .unavailable("the store would not survive a power cut (\(volatileReason))")
            }
            let before = tokens
            let c = tokens.claim(key, until: expiry, now: now, skew: skew, uses: uses)
            switch c {
            case .used: return .used
            case .full: return .full
            case .fresh:
                do {
                    try append(UsedTokenLog.record(key, in: tokens)!)
                } catch {
                    tokens = before
                    return .unavailable("the store \(logPath) cannot be written: \(error)")
                }
                compactIfDue()
                return .fresh
            }
        }
    }

    /// Changes the tokens as `change` says (a pass's slot and its uses at once): a `fresh` change
    /// is on disk when this returns (a record appended for each of `keys` the change left in the
    /// store); `used` or `full` changes nothing.
    public func update(touching keys: [String], _ change: (inout UsedTokens) -> UsedTokens.Claim) -> Claim {
        lock.withLock {
            if let damage { return .unavailable("the store \(path) is damaged (\(damage))") }
            if readOnly { return .unavailable("the store \(path) was opened to be read only") }
            if let volatileReason, keys.contains(where: StateDurability.needsDurableStore(key:)) {
                return .unavailable("the store would not survive a power cut (\(volatileReason))")
            }
            let before = tokens
            switch change(&tokens) {
            case .used: tokens = before; return .used
            case .full: tokens = before; return .full
            case .fresh:
                do {
                    for key in keys { if let record = UsedTokenLog.record(key, in: tokens) { try append(record) } }
                } catch {
                    tokens = before
                    return .unavailable("the store \(logPath) cannot be written: \(error)")
                }
                compactIfDue()
                return .fresh
            }
        }
    }

    /// One record, fsynced; the log (and its folder entry) created on the first.
    private func append(_ record: [UInt8]) throws {
        if logFD < 0 {
            let existed = access(logPath, F_OK) == 0
            logFD = open(logPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard logFD >= 0 else { throw SmallFile.Failure(description: "\(logPath): \(Errno.current.message)") }
            if !existed && !brokenWrites { try UsedTokenStore.syncFolder(of: logPath) }
        }
        do throws(Errno) { try Syscall.writeAll(logFD, record) } catch {
            // What was written of it is a torn tail: cut it off, so the next record follows a whole one.
            _ = ftruncate(logFD, off_t(logBytes))
            throw SmallFile.Failure(description: "\(logPath): \(error.message)")
        }
        if !brokenWrites {
            guard fdatasync(logFD) == 0 else {
                let e = Errno.current
                _ = ftruncate(logFD, off_t(logBytes))
                throw SmallFile.Failure(description: "fdatasync \(logPath): \(e.message)")
            }
        }
        logBytes += record.count
        logRecords += 1
    }

    /// Folds the log into the snapshot when it is as large (under the lock; a failure is kept and
    /// the fold tried again at the next grant).
    private func compactIfDue() {
        guard UsedTokenLog.shouldCompact(logBytes: logBytes, snapshotBytes: snapshotBytes, minimumBytes: minimumLogBytes) else { return }
        do {
            try compact()
            compactionProblem = nil
        } catch {
            compactionProblem = String(describing: error)
        }
    }

    /// The state into a new snapshot (durably renamed over the old one), then the log emptied.
    private func compact() throws {
        let text = Array(tokens.fileText.utf8)
        #if KIOSK_TEST_BROKEN_WRITES
        if brokenWrites { try UsedTokenStore.replaceWithoutSync(path, with: text) } else { try SmallFile.replace(path, with: text) }
        #else
        try SmallFile.replace(path, with: text)
        #endif
        snapshotBytes = text.count
        guard ftruncate(logFD, 0) == 0 else { throw SmallFile.Failure(description: "truncate \(logPath): \(Errno.current.message)") }
        if !brokenWrites {
            guard fsync(logFD) == 0 else { throw SmallFile.Failure(description: "fsync \(logPath): \(Errno.current.message)") }
        }
        logBytes = 0
        logRecords = 0
    }

    static func syncFolder(of file: String) throws {
        let folder = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
        let fd = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SmallFile.Failure(description: "\(folder): \(Errno.current.message)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SmallFile.Failure(description: "fsync \(folder): \(Errno.current.message)") }
    }

    /// A test build's broken write path (for the power-cut replay harness to prove it
    /// catches one): built only with `-Xswiftc -DKIOSK_TEST_BROKEN_WRITES`, and then only when
    /// `KIOSK_TEST_BROKEN_WRITES=1`: records appended and snapshots renamed without any fsync. The
    /// shipped kiosk has no such path.
    #if KIOSK_TEST_BROKEN_WRITES
    private let brokenWrites = getenv("KIOSK_TEST_BROKEN_WRITES").map { String(cString: $0) == "1" } ?? false

    /// The broken path's snapshot: written and renamed, nothing fsynced (test builds only).
    private static func replaceWithoutSync(_ path: String, with bytes: [UInt8]) throws {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SmallFile.Failure(description: "\(temporary): \(Errno.current.message)") }
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, bytes.count) }
        close(fd)
        guard n == bytes.count else { throw SmallFile.Failure(description: "\(temporary): a short write") }
        guard rename(temporary, path) == 0 else { throw SmallFile.Failure(description: "rename \(temporary): \(Errno.current.message)") }
    }
    #else
    private let brokenWrites = false
    #endif
}
