// SPDX-License-Identifier: Apache-2.0
import Platform

/// What SIGHUP and the building's `reload` command reload: one list, filled by the
/// features that keep lists read from files (the credentials' trust directory, revocations and
/// TOTP secrets register here). Each entry reloads its own and says what it now holds, or throws
/// (it then keeps what it had: a bad file must not empty a trust list).
///
/// With nothing registered, SIGHUP is logged and ignored as before (`signal_ignored`), and the
/// command answers `ok` with the reason `nothing to reload`.
public final class Reloadables: @unchecked Sendable {  // `entries` guarded by `lock`
    public struct Outcome {
        public var name: String
        /// What it holds now (`keys=3 revoked=10`), or why it failed.
        public var result: Result<String, Error>
    }

    private let lock = Lock()
    private var entries: [(name: String, reload: @Sendable () throws -> String)] = []

    public init() {}

    /// Registers `reload` under `name` (`credentials`, ...), called in registration order.
    public func add(_ name: String, _ reload: @escaping @Sendable () throws -> String) {
        lock.withLock { entries.append((name, reload)) }
    }

    public var isEmpty: Bool { lock.withLock { entries.isEmpty } }
    public var names: [String] { lock.withLock { entries.map(\.name) } }

    /// Reloads everything, each entry once, in order; one at a time (SIGHUP and a command do not
    /// reload the same list at once).
    public func reloadAll() -> [Outcome] {
        lock.withLock {
            entries.map { entry in
                do { return Outcome(name: entry.name, result: .success(try entry.reload())) } catch { return Outcome(name: entry.name, result: .failure(error)) }
            }
        }
    }

    /// Reloads everything and logs one `reloaded` line per entry (`via`: SIGHUP or command);
    /// returns whether all succeeded, and the failures' text.
    @discardableResult
    public func reloadAndLog(via: String, logger: Logger) -> (ok: Bool, failures: [String]) {
        var failures: [String] = []
        for o in reloadAll() {
            switch o.result {
            case .success(let holds):
                logger.info("reloaded", ["what": .text(o.name), "via": .text(via), "holds": .text(holds)])
            case .failure(let error):
                failures.append("\(o.name): \(error)")
                logger.error("reload_failed", ["what": .text(o.name), "via": .text(via), "error": .text(String(describing: error))])
            }
        }
        return (failures.isEmpty, failures)
    }
}
