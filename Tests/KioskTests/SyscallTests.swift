// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform
import XCTest

/// The one loop on EINTR for the raw calls (`Syscall.retryingEINTR`).
final class SyscallTests: XCTestCase {
    /// A call that fails as `failures` say (errno), then returns `value`.
    private func scripted<T>(_ failures: [Int32], then value: T, failure: T) -> (() -> T, () -> Int) {
        var left = failures
        var calls = 0
        return ({
            calls += 1
            guard !left.isEmpty else { return value }
            errno = left.removeFirst()
            return failure
        }, { calls })
    }

    func testAnInterruptedCallIsMadeAgain() throws {
        let (call, calls) = scripted([EINTR, EINTR], then: 5, failure: -1)
        XCTAssertEqual(try Syscall.retryingEINTR(call), 5)
        XCTAssertEqual(calls(), 3)
    }

    func testAnyOtherFailureIsItsErrnoAfterOneCall() {
        let (call, calls) = scripted([EAGAIN], then: 5, failure: -1)
        XCTAssertThrowsError(try Syscall.retryingEINTR(call)) { XCTAssertEqual($0 as? Errno, Errno(EAGAIN)) }
        XCTAssertEqual(calls(), 1)
    }

    func testAnInterruptionThenAnotherFailure() {
        let (call, calls) = scripted([EINTR, EIO], then: Int32(0), failure: -1)
        XCTAssertThrowsError(try Syscall.retryingEINTR(call)) { XCTAssertEqual($0 as? Errno, Errno(EIO)) }
        XCTAssertEqual(calls(), 2)
    }

    /// mmap's failure is MAP_FAILED, not -1.
    func testAnotherFailureValue() throws {
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        let mapped = UnsafeMutableRawPointer(bitPattern: 0x1000)
        let (call, calls) = scripted([EINTR], then: mapped, failure: failed)
        XCTAssertEqual(try Syscall.retryingEINTR(failingWith: failed, call), mapped)
        XCTAssertEqual(calls(), 2)
    }

    /// A real interruption: read(2) on an empty pipe, a signal without SA_RESTART, then a byte.
    func testAReadInterruptedByASignalGetsTheByteThatComesLater() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: the read fails with EINTR
        var old = sigaction()
        XCTAssertEqual(sigaction(SIGUSR2, &action, &old), 0)
        defer { sigaction(SIGUSR2, &old, nil) }
        let reader = pthread_self()
        let writeFD = fds[1]
        let helper = Thread {
            usleep(100_000)
            pthread_kill(reader, SIGUSR2)
            usleep(100_000)
            var byte: UInt8 = 42
            _ = write(writeFD, &byte, 1)
        }
        helper.start()
        var byte: UInt8 = 0
        let n = try Syscall.retryingEINTR { read(fds[0], &byte, 1) }
        XCTAssertEqual(n, 1)
        XCTAssertEqual(byte, 42)
    }
}
