// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform

/// The tests' children (peers, tools, the kiosk itself) run and ended with a deadline, never a
/// wait without an end: a child that hangs fails its test and is killed, the suite goes on.
///
/// Foundation's `waitUntilExit` waits for its own bookkeeping of the child, and once (a trixie run
/// of the suite in four processes) that never came: the test process hung after `terminate()`.
/// So an end is also read from the kernel: a child that is a zombie or gone has ended.
public enum Child {
    public struct Timeout: Error, CustomStringConvertible {
        public let description: String
    }

    /// What a child left: its status (a signal's number when `signalled`) and both outputs.
    public struct Outcome {
        public let status: Int32
        public let signalled: Bool
        public let stdout: Data
        public let stderr: Data
        public var output: String { String(decoding: stdout, as: UTF8.self) }
        public var errors: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// How long a child may take unless its caller says: a peer or a tool ends in seconds; qemu and
    /// a loaded machine are slower, and the kiosk's own end-to-end runs say their own.
    public static let seconds: Double = 120

    /// Runs `process` (set up, not started) to its end within `seconds`: `input` written to its
    /// stdin, stdout and stderr read at once (a child that fills one pipe while the test reads
    /// the other would never end) into the outcome, unless the caller sent one to
    /// `FileHandle.nullDevice`. Throws `Timeout` when it did not end in time (and kills it).
    @discardableResult
    public static func run(_ process: Process, input: Data? = nil, within seconds: Double = Child.seconds) throws -> Outcome {
        // Foundation's default is the test's own stdout and stderr: those are replaced by pipes too.
        func capture(_ current: Any?) -> Pipe? {
            if let pipe = current as? Pipe { return pipe }
            if let handle = current as? FileHandle, handle === FileHandle.nullDevice { return nil }
            return Pipe()
        }
        let out = capture(process.standardOutput), err = capture(process.standardError)
        if let out { process.standardOutput = out }
        if let err { process.standardError = err }
        let stdin = input.map { _ in Pipe() }
        if let stdin { process.standardInput = stdin }
        try process.run()
        if let stdin, let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        return try finish(process, out: out, err: err, within: seconds)
    }

    /// Reads a started child's pipes (either may be nil) to their end and waits for it, all within
    /// `seconds`; on time out the child is killed and `Timeout` thrown.
    public static func finish(_ process: Process, out: Pipe?, err: Pipe?, within seconds: Double = Child.seconds) throws -> Outcome {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        let (read, ended) = pump([out, err], until: deadline) { _ in false }
        guard ended else { return try timedOut(process, seconds) }
        let left = Double(deadline > monotonicNanoseconds() ? deadline - monotonicNanoseconds() : 0) / 1e9
        guard awaitExit(process, within: max(left, 1)) else { return try timedOut(process, seconds) }
        return Outcome(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                       stdout: read[0], stderr: read[1])
    }

    /// Reads `pipe` until what was read satisfies `enough` or it closes, at most `seconds`: what
    /// was read. For a test that watches a running child's log for a line.
    public static func read(_ pipe: Pipe, within seconds: Double, until enough: (Data) -> Bool) -> Data {
        pump([pipe], until: monotonicNanoseconds() + UInt64(seconds * 1e9)) { enough($0[0]) }.read[0]
    }

    /// The one read loop: reads the pipes (nil: none) with poll until `enough` holds of what was
    /// read, every pipe has closed (`ended`), or the deadline passes.
    private static func pump(_ pipes: [Pipe?], until deadline: UInt64, enough: ([Data]) -> Bool) -> (read: [Data], ended: Bool) {
        var open = pipes.map { $0?.fileHandleForReading.fileDescriptor ?? -1 }
        var read = pipes.map { _ in Data() }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) && !enough(read) {
            let now = monotonicNanoseconds()
            guard now < deadline else { return (read, false) }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(1000, (deadline - now) / 1_000_000 + 1)))
            if ready < 0 && errno != EINTR { break }
            for i in fds.indices where open[i] >= 0 && fds[i].revents != 0 {
                let n = Glibc.read(open[i], &chunk, chunk.count)
                if n > 0 { read[i].append(contentsOf: chunk[0..<n]) } else if n == 0 || errno != EINTR && errno != EAGAIN { open[i] = -1 }
            }
        }
        return (read, true)
    }

    /// Waits at most `seconds` for `process` to end on its own; true when it did (and Foundation
    /// knows it, so that its `terminationStatus` can be read).
    @discardableResult
    public static func awaitExit(_ process: Process, within seconds: Double = Child.seconds) -> Bool {
        eventually("the child \(process.processIdentifier) to end", within: seconds, every: 0.005) { hasEnded(process) }
            && eventually("Foundation to see the child \(process.processIdentifier) end", within: 5) { !process.isRunning }
    }

    /// Ends a child within `seconds`: SIGTERM (or `signal`), repeated every half second, then
    /// SIGKILL. True when it ended before the SIGKILL.
    @discardableResult
    public static func end(_ process: Process, signal: Int32 = SIGTERM, within seconds: Double = 10) -> Bool {
        guard process.isRunning else { return true }
        let pid = process.processIdentifier
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while monotonicNanoseconds() < deadline {
            if hasEnded(process) { break }
            Glibc.kill(pid, signal)
            if eventually("the child \(pid) to end on signal \(signal)", within: 0.5, every: 0.005, { hasEnded(process) }) { break }
        }
        if hasEnded(process) { return awaitExit(process, within: 5) }
        Glibc.kill(pid, SIGKILL)
        _ = awaitExit(process, within: 10)
        return false
    }

    /// True when the child has ended: Foundation has seen it, or the kernel holds only its
    /// zombie, or no such process is left.
    public static func hasEnded(_ process: Process) -> Bool {
        guard process.isRunning else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        // "pid (comm) STATE ...": the name may hold spaces and parentheses, the state follows the last ')'.
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state == "Z" || state == "X"
    }

    private static func timedOut(_ process: Process, _ seconds: Double) throws -> Outcome {
        let what = ([process.executableURL?.path ?? "?"] + (process.arguments ?? [])).joined(separator: " ")
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = awaitExit(process, within: 10)
        throw Timeout(description: "\(what.prefix(300)) did not end within \(Int(seconds)) s (killed)")
    }
}
