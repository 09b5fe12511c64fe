// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Platform
import Policy

/// Runs the installer's program (`KIOSK_ON_SCAN`) for each reported code.
///
/// The code was printed by a stranger, so it is only ever data: the program is started with
/// `posix_spawn` (never a shell), gets the exact bytes on stdin and, when they hold no NUL byte
/// (and fit the environment), in `KIOSK_CODE` too, with `KIOSK_SYMBOLOGY` beside. One program runs at a time, on its own
/// thread; the frame loop only drops a request into a small queue and goes on. A program that
/// outlives its timeout gets SIGTERM, then SIGKILL, together with anything it started.
///
/// In hook mode (`KIOSK_VERDICT=hook`) each code comes with `onEnd`, told how its program ended
/// (`ProgramEnd`) and when, on the program's thread: its exit status is the code's verdict.
public final class ScanHook: @unchecked Sendable {  // queue state guarded by `condition`
    public let program: String
    public let timeoutNs: UInt64
    public let killGraceNs: UInt64
    public let queueLimit: Int
    private let environment: [String: String]
    private let logger: Logger
    private let clock: Clock
    private let condition = Condition()
    /// Told how a code's program ended, and the clock's time then (the verdict's answer).
    public typealias OnEnd = @Sendable (_ end: ProgramEnd, _ atNs: UInt64) -> Void
    private var queue: [(symbology: String, payload: [UInt8], onEnd: OnEnd?, extra: [String: String])] = []
    private var stopping = false
    private var busy = false
    private var runningGroup: pid_t = 0

    /// Longest payload also given in `KIOSK_CODE`.
    public static let environmentLimit = 65_536

    private var droppedCount = 0
    private var finishedCount = 0
    /// Codes dropped from a full queue, and programs run to their end (read under the lock: the
    /// worker thread writes them).
    public var dropped: Int { condition.lock(); defer { condition.unlock() }; return droppedCount }
    public var finished: Int { condition.lock(); defer { condition.unlock() }; return finishedCount }

    public init(program: String, environment: [String: String], logger: Logger,
                timeoutNs: UInt64 = 5_000_000_000, killGraceNs: UInt64 = 1_000_000_000, queueLimit: Int = 4,
                clock: Clock) {
        self.clock = clock
        self.program = program
        self.environment = environment.filter { $0.key != "KIOSK_CODE" && $0.key != "KIOSK_SYMBOLOGY" }
        self.logger = logger
        self.timeoutNs = timeoutNs
        self.killGraceNs = killGraceNs
        self.queueLimit = queueLimit
        startThread(name: "kiosk.on-scan") { [unowned self] in self.work() }
    }

    /// Queues a run; never blocks. A full queue drops its oldest request, with a warning (its
    /// `onEnd` hears that it was not started: an error verdict at once, not at its deadline).
    /// `extra`: more variables for this run (a credential's `KIOSK_CREDENTIAL_*`).
    public func submit(symbology: String, payload: [UInt8], onEnd: OnEnd? = nil, extra: [String: String] = [:]) {
        condition.lock()
        guard !stopping else { return condition.unlock() }
        var droppedOnEnd: OnEnd?
        if queue.count >= queueLimit {
            droppedOnEnd = queue.removeFirst().onEnd
            droppedCount += 1
            logger.warning("hook_dropped", ["reason": "the previous codes' programs are still running; the oldest waiting code was dropped",
                                            "queue": .int(queueLimit), "dropped": .int(droppedCount)])
        }
        queue.append((symbology, payload, onEnd, extra))
        condition.signal()
        condition.unlock()
        if let droppedOnEnd { droppedOnEnd(.notStarted("dropped from the queue: the programs of earlier codes were still running"), clock.now()) }
    }

    /// Whether nothing is queued or running (for tests and shutdown).
    public var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return queue.isEmpty && !busy
    }

    /// Waits until every queued program has run (each within its deadline), or `stop` is asked
    /// for: the end of the frames, so that the programs told of the last codes hear them.
    public func settle(unless stop: StopSignal) {
        let limit = clock.now() + (timeoutNs + killGraceNs) * UInt64(queueLimit + 1)
        while !isIdle && clock.now() < limit {
            guard clock.sleep(ns: 5_000_000, unless: stop) else { return }
        }
    }

    /// Stops taking codes; a running program gets until `graceNs` to finish, then SIGTERM and
    /// SIGKILL. Returns when the worker is done.
    public func shutDown(graceNs: UInt64 = 300_000_000) {
        condition.lock()
        stopping = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        let deadline = clock.now() + graceNs
        while !isIdle && clock.now() < deadline { usleep(5_000) }
        condition.lock()
        let group = runningGroup
        condition.unlock()
        if group > 0 {
            kill(-group, SIGTERM)
            usleep(100_000)
            kill(-group, SIGKILL)
        }
        while !isIdle { usleep(5_000) }
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if stopping && queue.isEmpty {
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            busy = true
            condition.unlock()
            let end = run(symbology: job.symbology, payload: job.payload, extra: job.extra)
            job.onEnd?(end, clock.now())
            condition.lock()
            busy = false
            finishedCount += 1
            runningGroup = 0
            condition.unlock()
        }
    }

    /// Runs the program for one code to its end; how it ended (or why it could not start).
    private func run(symbology: String, payload: [UInt8], extra: [String: String] = [:]) -> ProgramEnd {
        let started = clock.now()
        var stdinPipe: [Int32] = [-1, -1], outputPipe: [Int32] = [-1, -1]
        // Close-on-exec: only the ends dup'ed onto 0, 1 and 2 reach the program. This thread is
        // the only one that starts programs, so nothing can fork between pipe and fcntl.
        guard pipe(&stdinPipe) == 0 else { return fail("pipe", errno) }
        guard pipe(&outputPipe) == 0 else {
            let e = errno
            Glibc.close(stdinPipe[0]); Glibc.close(stdinPipe[1])
            return fail("pipe", e)
        }
        for fd in stdinPipe + outputPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer {
            for fd in [stdinPipe[1], outputPipe[0]] where fd >= 0 { Glibc.close(fd) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The kiosk ignores SIGPIPE and handles SIGTERM/SIGINT/SIGHUP itself; an ignored signal
        // stays ignored across exec, so give the program the defaults back, an empty signal mask,
        // and a process group of its own, so that a timeout can end everything it started.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        var env = environment.merging(extra) { _, b in b }.map { Array("\($0.key)=\($0.value)".utf8) }
        env.append(Array("KIOSK_SYMBOLOGY=\(symbology)".utf8))
        // The environment cannot hold a NUL byte, and Linux refuses one string over 128 kB: such
        // payloads (no barcode holds that much; a QR code at most 3 kB) are on stdin only.
        if !payload.contains(0) && payload.count <= ScanHook.environmentLimit { env.append(Array("KIOSK_CODE=".utf8) + payload) }
        let cEnv: [UnsafeMutablePointer<CChar>?] = env.map { bytes in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { p.update(from: $0.baseAddress!, count: bytes.count) }
            }
            p[bytes.count] = 0
            return p
        } + [nil]
        let cArgs: [UnsafeMutablePointer<CChar>?] = [strdup(program), nil]
        defer {
            cEnv.forEach { $0?.deallocate() }
            cArgs.forEach { free($0) }
        }

        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, &attributes, cArgs, cEnv)
        Glibc.close(stdinPipe[0])
        Glibc.close(outputPipe[1])
        guard spawned == 0 else { return fail("posix_spawn \(program)", spawned) }
        condition.lock()
        runningGroup = pid
        condition.unlock()

        _ = fcntl(stdinPipe[1], F_SETFL, O_NONBLOCK)
        _ = fcntl(outputPipe[0], F_SETFL, O_NONBLOCK)
        var written = 0
        var output: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 4096)
        var status: Int32 = 0
        var terminatedAt: UInt64?
        var killed = false
        while true {
            // Feed stdin as the program takes it; close it when all is written (its EOF).
            if stdinPipe[1] >= 0 {
                do throws(Errno) {
                    try Syscall.writeAll(stdinPipe[1], payload, from: &written)
                } catch {
                    if error != EAGAIN { written = payload.count }  // it closed its stdin: the rest is not for it
                }
                if written >= payload.count {
                    Glibc.close(stdinPipe[1])
                    stdinPipe[1] = -1
                }
            }
            // Keep the first 4 kB of what it says for the log; drain the rest so it never blocks.
            let n = scratch.withUnsafeMutableBytes { Glibc.read(outputPipe[0], $0.baseAddress!, 4096) }
            if n > 0 && output.count < 4096 { output += scratch.prefix(min(n, 4096 - output.count)) }
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            let elapsed = clock.now() - started
            if terminatedAt == nil && elapsed >= timeoutNs {
                kill(-pid, SIGTERM)
                terminatedAt = clock.now()
            } else if let t = terminatedAt, !killed, clock.now() - t >= killGraceNs {
                kill(-pid, SIGKILL)
                killed = true
            }
            if n <= 0 { usleep(5_000) }
        }
        // Whatever it started in its group goes with it.
        kill(-pid, SIGKILL)
        let ms = Double(clock.now() - started) / 1e6
        var fields: [(String, LogValue)] = [("program", .text(program))]
        let exited = (status & 0x7f) == 0
        if exited {
            fields.append(("status", .int(Int((status >> 8) & 0xff))))
        } else {
            fields.append(("signal", .int(Int(status & 0x7f))))
        }
        if terminatedAt != nil { fields.append(("timeout", .bool(true))) }
        fields.append(("ms", .ms(ms)))
        if !output.isEmpty { fields.append(("output", .bytes(output.count > 512 ? Array(output.prefix(512)) : output))) }
        let ok = exited && (status >> 8) & 0xff == 0 && terminatedAt == nil
        logger.log(ok ? .info : .warning, "hook", fields: fields)
        // waitpid without WUNTRACED reports only an end: the word always reads as one.
        return ProgramEnd(waitStatus: status) ?? .notStarted("unexpected wait status \(status)")
    }

    private func fail(_ what: String, _ error: Int32) -> ProgramEnd {
        let message = "\(what): \(String(cString: strerror(error)))"
        logger.warning("hook_failed", ["program": .text(program), "error": .text(message)])
        return .notStarted(message)
    }
}

extension ScanHook {
    /// The `KIOSK_ON_SCAN` program (nil: none). With verdicts on its answer counts until
    /// `KIOSK_VERDICT_MS`; one still running then is ended (its answer can no longer open the
    /// door) so that the next code's runs. Else it has 5 s.
    static func assemble(_ a: Assembly) -> ScanHook? {
        let timeoutNs: UInt64 = a.config.verdict != .none ? UInt64(a.config.verdictMs) * 1_000_000 : 5_000_000_000
        return a.config.onScan.map { ScanHook(program: $0, environment: a.environment, logger: a.logger, timeoutNs: timeoutNs, clock: a.clock) }
    }
}
