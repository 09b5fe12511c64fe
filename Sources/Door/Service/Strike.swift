// SPDX-License-Identifier: Apache-2.0
import GPIO
import Platform
import Policy

/// The door strike (`KIOSK_DOOR_LINE`): `StrikePolicy`'s decisions carried out on its line, timed
/// on the service's clock. A grant returns at once; the close is scheduled at the strike's
/// deadline. Every change (opened, extended, closed) is told to `onChange`, under the door's lock
/// and in order (the `door` event is made of the opens and closes); it must not call back into
/// the door.
///
/// Here rather than in GPIO, as `Torch` is: it drives a line from a Policy state machine, and
/// the GPIO module knows nothing of Policy.
public final class Strike: @unchecked Sendable {  // state guarded by `lock`
    public let output: SwitchedOutput
    private let clock: Clock
    private let lock = Lock()
    private var strike: StrikePolicy
    private var stopped = false
    private let onChange: (StrikePolicy.Change) -> Void
    /// Called with the error when the line cannot be driven; scanning goes on.
    public var onError: (Error) -> Void = { _ in }

    /// The line is inactive (requested so by `SwitchedOutput`) and the door shut.
    public init(output: SwitchedOutput, openMilliseconds: Int, clock: Clock,
                onChange: @escaping (StrikePolicy.Change) -> Void = { _ in }) {
        self.output = output
        self.clock = clock
        strike = StrikePolicy(openMilliseconds: openMilliseconds)
        self.onChange = onChange
    }

    public var isOpen: Bool { lock.withLock { strike.isOpen } }
    /// When it shuts, while it is open.
    public var closesAtNs: UInt64? { lock.withLock { strike.closesAtNs } }

    /// A granted verdict: open for the strike's time, or keep open until then.
    public func grant() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        apply(strike.grant(at: clock.now()))
    }

    /// Open for `milliseconds` (the building's `open` command), or keep open until then.
    public func grant(milliseconds: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        apply(strike.grant(at: clock.now(), forNs: UInt64(max(0, milliseconds)) * 1_000_000))
    }

    /// Shut now (the camera is lost: nobody is watching the door); later grants open it again.
    public func forceClose(reason: String) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        apply(strike.forceClose(at: clock.now(), reason: reason))
    }

    /// Held released (`unlock`, `emergency`) until `endHold`.
    public func hold() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        apply(strike.hold(at: clock.now()))
    }

    /// The hold ends: shut now (`reason`: the mode that followed).
    public func endHold(reason: String) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        apply(strike.endHold(at: clock.now(), reason: reason))
    }

    public var isHeld: Bool { lock.withLock { strike.isHeld } }

    /// Shut and released, on every way out (from any thread); later grants do nothing.
    public func shutDown(reason: String = "stop") {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        let changes = strike.forceClose(at: clock.now(), reason: reason, evenHeld: true)
        stopped = true
        output.shutDown()
        changes.forEach(onChange)
    }

    private func apply(_ changes: [StrikePolicy.Change]) {
        for change in changes {
            switch change {
            case .opened(_, let until), .extended(_, let until):
                drive(true)
                if until != .max { schedule(closeAt: until) }
            case .closed:
                drive(false)
            }
            onChange(change)
        }
    }

    /// A close that finds the deadline moved (extended, or shut already) does nothing; one that
    /// comes early (a timer is never due before its time, but a clock may say so) waits again.
    private func schedule(closeAt deadline: UInt64) {
        let now = clock.now()
        clock.schedule(afterNs: deadline > now ? deadline - now : 0) { [weak self] in self?.closeIfDue(deadline) }
    }

    private func closeIfDue(_ deadline: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, strike.closesAtNs == deadline else { return }
        let now = clock.now()
        if now < deadline { return schedule(closeAt: deadline) }
        apply(strike.tick(at: now))
    }

    private func drive(_ active: Bool) {
        guard output.isActive != active else { return }
        do { try output.set(active: active) } catch { onError(error) }
    }
}
