// SPDX-License-Identifier: Apache-2.0
import Glibc
import Policy
import XCTest

/// `ProgramEnd(waitStatus:)` reads the status words the kernel really gives for a verdict
/// program's ends (the pure decoder in Policy cannot call glibc's macros), and `Verdict` maps them.
final class VerdictProgramEndTests: XCTestCase {
    /// Runs `/bin/sh -c script` and returns waitpid's status word.
    func waitStatus(_ script: String) throws -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", script].map { (s: String) in strdup(s) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
        XCTAssertEqual(spawned, 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    func testRealExitsAndSignals() throws {
        let cases: [(String, ProgramEnd, Verdict.Result, String)] = [
            ("exit 0", .exited(status: 0), .granted, "exit status 0"),
            ("exit 1", .exited(status: 1), .denied, "exit status 1"),
            ("exit 7", .exited(status: 7), .error, "exit status 7"),
            ("kill -KILL $$", .signalled(signal: 9), .error, "killed by signal 9 (SIGKILL)"),
            ("kill -TERM $$", .signalled(signal: 15), .error, "killed by signal 15 (SIGTERM)"),
        ]
        for (script, end, result, reason) in cases {
            let decoded = ProgramEnd(waitStatus: try waitStatus(script))
            XCTAssertEqual(decoded, end, script)
            let verdict = decoded.map { Verdict(programEnd: $0, elapsedNs: 1) }
            XCTAssertEqual(verdict?.result, result, script)
            XCTAssertEqual(verdict?.reason, reason, script)
        }
    }
}
