// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform
import XCTest

/// The one loop on EINTR for the raw calls (`Syscall.retryingEINTR`), and the one that writes
/// everything (`Syscall.writeAll`).
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

    // fcntl(2)'s pipe sizes (<fcntl.h> defines them only with _GNU_SOURCE, which Swift's Glibc lacks).
    private let setPipeSize: Int32 = 1031, getPipeSize: Int32 = 1032

    /// A pipe whose buffer holds one page (4096 bytes on Linux): its ends and what it holds.
    private func smallPipe() throws -> (read: Int32, write: Int32, capacity: Int) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        XCTAssertGreaterThan(fcntl(fds[1], setPipeSize, 4096), 0)
        let capacity = Int(fcntl(fds[1], getPipeSize))
        XCTAssertEqual(capacity, 4096)
        return (fds[0], fds[1], capacity)
    }

    private static func drain(_ fd: Int32, _ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count < count {
            let n = read(fd, &chunk, min(chunk.count, count - out.count))
            guard n > 0 else { break }
            out += chunk[0..<n]
        }
        return out
    }

    func testNothingToWriteMakesNoCall() throws {
        try Syscall.writeAll(-1, [])
        XCTAssertThrowsError(try Syscall.writeAll(-1, [1])) { XCTAssertEqual($0 as? Errno, Errno(EBADF)) }
    }

    /// A non-blocking pipe takes a page of a larger write (a short write), then says EAGAIN: the
    /// offset says how far it got, and the write goes on from there once the pipe is read.
    func testAShortWriteIsFollowedByAnotherAndTheOffsetSaysHowFar() throws {
        let (readFD, writeFD, capacity) = try smallPipe()
        defer { close(readFD); close(writeFD) }
        XCTAssertEqual(fcntl(writeFD, F_SETFL, O_NONBLOCK), 0)
        let bytes = (0..<(2 * capacity + 1000)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var offset = 0
        var received: [UInt8] = []
        for expected in [capacity, 2 * capacity] {
            XCTAssertThrowsError(try Syscall.writeAll(writeFD, bytes, from: &offset)) { XCTAssertEqual($0 as? Errno, Errno(EAGAIN)) }
            XCTAssertEqual(offset, expected, "a page a write, then a write that finds the pipe full")
            received += Self.drain(readFD, capacity)
        }
        try Syscall.writeAll(writeFD, bytes, from: &offset)
        XCTAssertEqual(offset, bytes.count)
        received += Self.drain(readFD, 1000)
        XCTAssertTrue(received == bytes, "the bytes as written, in order")
    }

    /// A real blocking write interrupted by signals (no SA_RESTART) into a pipe that holds a page:
    /// the first signal ends a write that has put a page in (a short write), the second one a write
    /// that has put nothing in (EINTR); all of the bytes arrive, in order, once the pipe is read.
    func testAWriteInterruptedBySignalsWritesEverything() throws {
        let (readFD, writeFD, capacity) = try smallPipe()
        defer { close(readFD) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: the write returns what it wrote, or fails with EINTR
        var old = sigaction()
        XCTAssertEqual(sigaction(SIGUSR2, &action, &old), 0)
        defer { sigaction(SIGUSR2, &old, nil) }
        let bytes = (0..<(3 * capacity)).map { UInt8(truncatingIfNeeded: $0 * 13) }
        final class Received: @unchecked Sendable { var bytes: [UInt8] = [] }  // read after `done`
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        let writer = pthread_self()
        let helper = Thread {
            usleep(100_000)
            pthread_kill(writer, SIGUSR2)  // a page is in the pipe: the write returns 4096
            usleep(100_000)
            pthread_kill(writer, SIGUSR2)  // the next write has put nothing in: EINTR
            usleep(100_000)
            received.bytes = SyscallTests.drain(readFD, bytes.count)  // to the end, or to EOF if the writer gave up
            done.signal()
        }
        helper.start()
        var failure: Errno?
        do throws(Errno) { try Syscall.writeAll(writeFD, bytes) } catch { failure = error }
        close(writeFD)  // EOF for the helper, should the write have stopped early
        done.wait()
        XCTAssertNil(failure)
        XCTAssertEqual(received.bytes.count, bytes.count)
        XCTAssertTrue(received.bytes == bytes, "the bytes as written, in order")
    }
}
