// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// What a keypad says: a key pressed, or itself come or gone (`ready` with what it is, `lost`
/// with why). Called on the keypad's own thread; a key is never logged here or anywhere.
public protocol KeypadListener: AnyObject, Sendable {
    func keyPressed(_ key: KeypadKey)
    func keypadReady(_ what: String)
    func keypadLost(_ why: String)
    /// A burst on the Wiegand lines that was no key (noise, a card's frame): how many bits.
    func burstRefused(bits: Int)
}

public extension KeypadListener {
    func burstRefused(bits: Int) {}
}

/// The door's keypad: a device read on its own thread from `start` until `shutDown`.
public protocol Keypad: AnyObject, Sendable {
    /// What it is, for `start` and `kiosk check` (`evdev:/dev/input/...`, `wiegand:5,6`).
    var description: String { get }
    func start(_ listener: KeypadListener)
    /// Stops the thread (within its poll) and lets the device go; a second call does nothing.
    func shutDown()
}

/// A keypad's thread: started once, stopped once (its poll woken by `wake`), waited for at most 2 s.
final class KeypadThread: @unchecked Sendable {  // `stopped`, `started` guarded by `lock`; `ended` by `done`
    private let lock = Lock()
    private var stopped = false
    private var started = false
    private let done = Condition()
    private var ended = false
    /// What the thread polls beside its device: readable once a stop is asked.
    let wake: Int32
    private let wakeWrite: Int32

    init() { (wake, wakeWrite) = nonBlockingPipe() }
    deinit {
        close(wake)
        close(wakeWrite)
    }

    var isStopped: Bool { lock.withLock { stopped } }

    func start(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { started = true }
        startThread(name: "kiosk-keypad") { [self] in
            body()
            done.lock(); ended = true; done.broadcast(); done.unlock()
        }
    }

    /// Stops the thread and waits for it; false on a second call.
    @discardableResult
    func stop() -> Bool {
        let (first, running) = lock.withLock { () -> (Bool, Bool) in
            defer { stopped = true }
            return (!stopped, started)
        }
        guard first else { return false }
        guard running else { return true }
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
        done.lock()
        let deadline = monotonicNanoseconds() + 2_000_000_000
        while !ended, monotonicNanoseconds() < deadline { _ = done.wait(untilMonotonicNs: deadline) }
        done.unlock()
        return true
    }
}
