// SPDX-License-Identifier: Apache-2.0
import Platform

/// The building's commands, whose handler is made after the link starts (it needs the
/// door); a command that comes before (a retained one, at the subscription) waits for it, in
/// order, and is judged then like any other (it was dropped unanswered when the handler came late).
final class LateCommands: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var target: FleetCommands?
    private var early: [(payload: [UInt8], retained: Bool)] = []
    func set(_ commands: FleetCommands) {
        lock.withLock {
            target = commands
            for c in early { commands.received(c.payload, retained: c.retained) }
            early = []
        }
    }
    func received(_ payload: [UInt8], retained: Bool) {
        lock.withLock {
            if let target { target.received(payload, retained: retained) } else if early.count < 64 { early.append((payload, retained)) }
        }
    }
}

