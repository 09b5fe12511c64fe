// SPDX-License-Identifier: Apache-2.0
import CPlatform
import Glibc

/// Runs a program (never through a shell) and returns what it printed on stdout, nil when it
/// could not be started. stdin and stderr are /dev/null. For short questions such as
/// `systemctl is-active kiosk.service`; the scan program has its own runner (timeouts, stdin).
public func programOutput(_ path: String, _ arguments: [String]) -> String? {
    runProgram(path, arguments)?.output
}

/// Runs a program (never through a shell: `arguments` are its argv, a stranger's text stays one
/// argument) and returns its `waitpid` status word (Policy's `ProgramEnd` reads it) and what it
/// printed on stdout and stderr (`mergeErrors`), nil when it could not be started. stdin is /dev/null.
public func runProgram(_ path: String, _ arguments: [String], mergeErrors: Bool = false) -> (waitStatus: Int32, output: String)? {
    var pipeFDs: [Int32] = [-1, -1]
    guard kiosk_pipe_cloexec(&pipeFDs) == 0 else { return nil }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
    if mergeErrors {
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, path, &actions, nil, argv, environ)
    close(pipeFDs[1])
    guard status == 0 else { close(pipeFDs[0]); return nil }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while let n = try? Syscall.retryingEINTR({ read(pipeFDs[0], &buffer, buffer.count) }), n > 0 { output += buffer[0..<n] }
    close(pipeFDs[0])
    var waitStatus: Int32 = 0
    _ = try? Syscall.retryingEINTR { waitpid(pid, &waitStatus, 0) }
    return (waitStatus, String(decoding: output, as: UTF8.self))
}

/// The wall clock as ISO 8601 in UTC, to the second ("2026-12-01T09:45:00Z"): for captions only;
/// nothing times itself by it.
public func utcTimestamp() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}
