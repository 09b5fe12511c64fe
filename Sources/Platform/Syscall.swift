// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The raw calls' one loop on EINTR, in the manner of swift-system's `valueOrErrno` and
/// `_retryWhileInterrupted`: a call that a signal's handler interrupted did nothing (Linux, no
/// SA_RESTART for the calls here), so it is made again; any other failure comes back as its errno.
/// Not for close(2): Linux releases the descriptor even when close fails with EINTR.
public enum Syscall {
    /// `call`'s result, made again while it fails with EINTR; its `Errno` when it fails otherwise.
    /// A failure is -1 with errno set (read, write, open, poll, waitpid, ioctl, ...).
    @discardableResult
    public static func retryingEINTR<Value: FixedWidthInteger & SignedInteger>(_ call: () -> Value) throws(Errno) -> Value {
        try retryingEINTR(failingWith: -1, call)
    }

    /// The same for a call whose failure is another value (mmap's MAP_FAILED).
    public static func retryingEINTR<Value: Equatable>(failingWith failure: Value, _ call: () -> Value) throws(Errno) -> Value {
        while true {
            let result = call()
            if result != failure { return result }
            let code = Glibc.errno
            if code != EINTR { throw Errno(code) }
        }
    }
}
