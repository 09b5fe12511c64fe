// SPDX-License-Identifier: Apache-2.0
import Glibc

/// The raw calls' one loop on EINTR, in the manner of swift-system's `valueOrErrno` and
/// `_retryWhileInterrupted`: a call that a signal's handler interrupted did nothing (Linux, no
/// SA_RESTART for the calls here), so it is made again; any other failure comes back as its errno.
/// Not for close(2): Linux releases the descriptor even when close fails with EINTR. `writeAll` is
/// the one loop that writes everything (short writes and EINTR), beside it.
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

    /// Writes all of `bytes` to `fd`: write(2) made again after a short write and after EINTR, the
    /// `Errno` of any other failure. A write that takes nothing of what is left (0) fails as EIO.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        try writeAll(fd, bytes, from: &offset)
    }

    /// The same from `offset` on, which says how far it got, also when it throws: a caller that
    /// waits for room after EAGAIN (a non-blocking descriptor) goes on from there.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], from offset: inout Int) throws(Errno) {
        while offset < bytes.count {
            let start = offset
            let n = try retryingEINTR { bytes.withUnsafeBytes { write(fd, $0.baseAddress! + start, $0.count - start) } }
            guard n > 0 else { throw Errno(EIO) }
            offset += n
        }
    }
}

/// A pipe whose ends are close-on-exec and non-blocking: a thread's wake-up (a byte written wakes
/// its poll), or a pollable queue's signal. A process out of descriptors stops here.
public func nonBlockingPipe() -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    precondition(pipe(&fds) == 0, "pipe: \(Errno.current)")
    for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
    return (fds[0], fds[1])
}
