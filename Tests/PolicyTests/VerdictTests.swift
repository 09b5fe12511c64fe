// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

final class VerdictTests: XCTestCase {
    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func testExitStatusDecides() {
        XCTAssertEqual(Verdict(programEnd: .exited(status: 0), elapsedNs: 5).result, .granted)
        XCTAssertEqual(Verdict(programEnd: .exited(status: 1), elapsedNs: 5).result, .denied)
        let seven = Verdict(programEnd: .exited(status: 7), elapsedNs: 5)
        XCTAssertEqual(seven.result, .error)
        XCTAssertEqual(seven.reason, "exit status 7")
        XCTAssertEqual(Verdict(programEnd: .exited(status: 2), elapsedNs: 5).result, .error)
        XCTAssertEqual(Verdict(programEnd: .exited(status: 255), elapsedNs: 5).result, .error)
    }

    func testASignalOrAFailedStartIsAnError() {
        let killed = Verdict(programEnd: .signalled(signal: 9), elapsedNs: 5)
        XCTAssertEqual(killed.result, .error)
        XCTAssertEqual(killed.reason, "killed by signal 9 (SIGKILL)")
        XCTAssertEqual(Verdict(programEnd: .signalled(signal: 64), elapsedNs: 5).reason, "killed by signal 64")
        let missing = Verdict(programEnd: .notStarted("No such file or directory"), elapsedNs: 5)
        XCTAssertEqual(missing.result, .error)
        XCTAssertEqual(missing.reason, "not started: No such file or directory")
    }

    /// The status words glibc's macros read (exit status in bits 8-15; signal in 0-6; 0x7f stopped;
    /// 0xffff continued), written out as the kernel makes them.
    func testWaitStatusWords() {
        XCTAssertEqual(ProgramEnd(waitStatus: 0x0000), .exited(status: 0))
        XCTAssertEqual(ProgramEnd(waitStatus: 0x0100), .exited(status: 1))
        XCTAssertEqual(ProgramEnd(waitStatus: 0x0700), .exited(status: 7))
        XCTAssertEqual(ProgramEnd(waitStatus: 0x000f), .signalled(signal: 15))
        XCTAssertEqual(ProgramEnd(waitStatus: 0x0089), .signalled(signal: 9), "killed, core dumped")
        XCTAssertNil(ProgramEnd(waitStatus: 0x137f), "stopped by SIGSTOP: not an end")
        XCTAssertNil(ProgramEnd(waitStatus: 0xffff), "continued: not an end")
    }

    func testTheFirstOfAnswerAndDeadlineDecidesOnce() {
        var pending = VerdictWaitPolicy(reportedNs: ms(1000), limitMs: 2000)
        XCTAssertEqual(pending.deadlineNs, ms(3000))
        XCTAssertNil(pending.check(at: ms(2999)))
        let v = pending.programEnded(.exited(status: 1), at: ms(1250))
        XCTAssertEqual(v, Verdict(result: .denied, reason: "exit status 1", elapsedNs: ms(250)))
        XCTAssertEqual(v?.ms, 250)
        XCTAssertNil(pending.check(at: ms(5000)), "decided already: the deadline says nothing")
        XCTAssertNil(pending.programEnded(.exited(status: 0), at: ms(1300)), "one verdict per code")
        XCTAssertEqual(pending.verdict?.result, .denied)
    }

    func testNoAnswerWithinTheLimitIsAnErrorAndTheLateAnswerIsIgnored() {
        var pending = VerdictWaitPolicy(reportedNs: ms(1000), limitMs: 2000)
        let v = pending.check(at: ms(3000))
        XCTAssertEqual(v, Verdict(result: .error, reason: "no answer within 2000 ms", elapsedNs: ms(2000)))
        XCTAssertNil(pending.programEnded(.exited(status: 0), at: ms(3500)))
        XCTAssertEqual(pending.verdict?.result, .error)
    }

    func testAnAnswerPastTheDeadlineIsAnErrorEvenBeforeTheCheckRan() {
        var pending = VerdictWaitPolicy(reportedNs: ms(0), limitMs: 2000)
        XCTAssertEqual(pending.programEnded(.exited(status: 0), at: ms(2000))?.result, .error, "the deadline's instant is late, as check says")
        var onTime = VerdictWaitPolicy(reportedNs: ms(0), limitMs: 2000)
        XCTAssertEqual(onTime.programEnded(.exited(status: 0), at: ms(2000) - 1)?.result, .granted)
    }

    func testModes() {
        XCTAssertEqual(VerdictMode(rawValue: "none"), VerdictMode.none)
        XCTAssertEqual(VerdictMode(rawValue: "hook"), .hook)
        XCTAssertNil(VerdictMode(rawValue: "HOOK"))
        XCTAssertEqual(VerdictMode.defaultMilliseconds, 2000)
        XCTAssertEqual(Verdict.Result.allCases.map(\.rawValue), ["granted", "denied", "error"])
    }
}
