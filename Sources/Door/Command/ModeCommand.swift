// SPDX-License-Identifier: Apache-2.0
import Credentials
import Glibc
import Kiosk
import Platform
import Policy

/// `kiosk mode normal|lockdown|unlock --until TIME`: the installer's or the operator's
/// order to the running kiosk, over its local socket (`ModeSocket`: root, the kiosk user and
/// the group kiosk only). TIME: `HH:MM` (the next such local time), `+N[smh]` (from now) or Unix
/// seconds; at most 24 h ahead. Exit 0 taken, 1 refused by the kiosk, 64 usage, 69 no kiosk
/// running (no socket), 77 not allowed.
enum ModeCommand {
    static let usage = "usage: kiosk mode normal | lockdown | unlock --until HH:MM|+N[smh]|UNIX_SECONDS"
    static let noPermission: Int32 = 77

    static func run(_ args: [String], environment: [String: String]) -> Int32 {
        let command: DoorModeCommand
        switch (args.first, args.count) {
        case ("normal", 1): command = .normal
        case ("lockdown", 1): command = .lockdown
        case ("unlock", 3) where args[1] == "--until":
            guard let until = untilTime(args[2], now: unixSeconds()) else {
                KioskCommand.printError("kiosk mode: --until \(args[2]): expected HH:MM (local time), +N followed by s, m or h, or Unix seconds")
                return ExitStatus.usage
            }
            command = .unlock(until: until)
        case ("unlock", _):
            KioskCommand.printError("kiosk mode: unlock needs --until TIME (at most 24 h ahead)\n\(usage)")
            return ExitStatus.usage
        default:
            KioskCommand.printError("kiosk mode: \(args.isEmpty ? "which mode?" : "unknown mode '\(args[0])'")\n\(usage)")
            return ExitStatus.usage
        }
        let path = ModeSocket.path(environment)
        switch ask(path, Array(ModeRequest.line(command).utf8)) {
        case .failure(let f):
            KioskCommand.printError("kiosk mode: \(f.text)")
            return f.status
        case .success(let answer):
            if answer.hasPrefix("ok ") {
                print("mode: \(answer.dropFirst(3))")
                return ExitStatus.ok
            }
            KioskCommand.printError("kiosk mode: the kiosk refused: \(answer.hasPrefix("refused ") ? String(answer.dropFirst(8)) : answer)")
            return ExitStatus.failure
        }
    }

    struct Failure: Error {
        var text: String
        var status: Int32
    }

    /// One request, one answer line.
    static func ask(_ path: String, _ request: [UInt8]) -> Result<String, Failure> {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(text: "socket: \(Errno.current.message)", status: ExitStatus.failure)) }
        defer { close(fd) }
        guard var address = ModeSocket.address(path) else { return .failure(Failure(text: "\(path): too long", status: ExitStatus.usage)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            switch e {
            case EACCES, EPERM:
                return .failure(Failure(text: "\(path): permission denied: only root and members of the group kiosk may set the door's mode (sudo kiosk mode ...)",
                                        status: noPermission))
            case ENOENT, ECONNREFUSED:
                return .failure(Failure(text: "\(path): no kiosk is running here (systemctl status kiosk)", status: ExitStatus.unavailable))
            default:
                return .failure(Failure(text: "\(path): \(Errno(e).message)", status: ExitStatus.unavailable))
            }
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A request not sent whole gets no answer: the read below says so.
        try? Syscall.writeAll(fd, request)
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while answer.count < 1024, answer.last != 0x0A {
            guard let n = try? Syscall.retryingEINTR({ read(fd, &chunk, chunk.count) }), n > 0 else { break }
            answer += chunk[0..<n]
        }
        guard answer.last == 0x0A else { return .failure(Failure(text: "no answer from the kiosk", status: ExitStatus.failure)) }
        return .success(String(decoding: answer.dropLast(), as: UTF8.self))
    }

    /// `HH:MM`: the next such local time (today, or tomorrow when it has passed); `+N[smh]`;
    /// Unix seconds (10 digits or more). nil: none of these.
    static func untilTime(_ text: String, now: Int64) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ s: ArraySlice<UInt8>) -> Int64? {
            guard !s.isEmpty, s.count <= 12, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(String(decoding: s, as: UTF8.self))
        }
        if b.first == UInt8(ascii: "+"), b.count >= 3, let n = digits(b[1..<(b.count - 1)]) {
            switch b.last {
            case UInt8(ascii: "s"): return now + n
            case UInt8(ascii: "m"): return now + n * 60
            case UInt8(ascii: "h"): return now + n * 3600
            default: return nil
            }
        }
        if b.count == 5, b[2] == UInt8(ascii: ":"), let h = digits(b[0..<2]), let m = digits(b[3..<5]), h < 24, m < 60 {
            var t = time_t(now)
            var tm = Glibc.tm()
            guard localtime_r(&t, &tm) != nil else { return nil }
            tm.tm_hour = Int32(h)
            tm.tm_min = Int32(m)
            tm.tm_sec = 0
            tm.tm_isdst = -1
            var at = Int64(mktime(&tm))
            if at <= now {
                tm.tm_mday += 1
                tm.tm_hour = Int32(h)
                tm.tm_min = Int32(m)
                tm.tm_isdst = -1
                at = Int64(mktime(&tm))
            }
            return at
        }
        if b.count >= 10, let n = digits(b[...]) { return n }
        return nil
    }
}
