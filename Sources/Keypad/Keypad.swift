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

/// A pipe that wakes a keypad's poll when it must stop.
final class WakePipe: @unchecked Sendable {
    let read: Int32
    let write: Int32
    init() {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe: \(Errno.current)")
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        read = fds[0]
        write = fds[1]
    }
    func wake() {
        var b: UInt8 = 1
        _ = Glibc.write(write, &b, 1)
    }
    deinit {
        close(read)
        close(write)
    }
}
