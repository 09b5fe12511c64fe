// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// `kiosk mode` over SSH: a Unix socket, `$RUNTIME_DIRECTORY/mode.sock` (systemd's
/// `RuntimeDirectory=kiosk`: /run/kiosk), mode 0660: only root, the kiosk's own user and the
/// members of its group may connect (the kernel checks the socket file's permissions at
/// connect(2)). One request a connection (`ModeRequest`: a line), one answer line, then closed;
/// who asked (SO_PEERCRED's uid and pid) is logged with the command.
public final class ModeSocket: @unchecked Sendable {  // `stopped` guarded by `lock`
    public static let fileName = "mode.sock"

    public let path: String
    private let listener: Int32
    private let keeper: DoorModeKeeper
    private let logger: Logger
    private let lock = Lock()
    private var stopped = false
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// `$RUNTIME_DIRECTORY/mode.sock` (the first of a list), else /run/kiosk/mode.sock.
    public static func path(_ environment: [String: String]) -> String {
        let folder = environment["RUNTIME_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? "/run/kiosk"
        return folder + "/" + fileName
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds the socket (a stale one from an earlier run is replaced) and starts its thread.
    public init(path: String, keeper: DoorModeKeeper, logger: Logger) throws {
        self.path = path
        self.keeper = keeper
        self.logger = logger
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(Errno.current.message)") }
        guard var address = ModeSocket.address(path) else {
            close(fd)
            throw Failure(description: "\(path): longer than a socket's path may be")
        }
        unlink(path)
        // Created 0660 from the start (no moment when anyone could connect), then listened on.
        let old = umask(0o117)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(old)
        guard bound == 0, chmod(path, 0o660) == 0, listen(fd, 4) == 0 else {
            let why = Errno.current.message
            close(fd)
            throw Failure(description: "\(path): \(why)")
        }
        listener = fd
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            close(fd)
            throw Failure(description: "pipe: \(Errno.current.message)")
        }
        for f in fds { _ = fcntl(f, F_SETFD, FD_CLOEXEC) }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        startThread(name: "kiosk-mode") { [self] in run() }
    }

    public static func address(_ path: String) -> sockaddr_un? {
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: a.sun_path)
        guard bytes.count < capacity, !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &a.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return a
    }

    /// Stops taking requests; the socket file goes.
    public func shutDown() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        unlink(path)
    }

    private func run() {
        while !lock.withLock({ stopped }) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            guard (try? Syscall.retryingEINTR({ poll(&fds, 2, 1000) })) != nil else { break }
            if fds[1].revents != 0 || lock.withLock({ stopped }) { break }
            guard fds[0].revents != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            serve(client)
            close(client)
        }
        close(listener)
        close(wakeRead)
        close(wakeWrite)
    }

    /// One request: read (2 s at most), decided, answered.
    private func serve(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let peer = peerCredentials(client)
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: ModeRequest.maxBytes + 1)
        while request.count <= ModeRequest.maxBytes, request.last != 0x0A {
            guard let n = try? Syscall.retryingEINTR({ read(client, &chunk, chunk.count) }), n > 0 else { break }
            request += chunk[0..<n]
        }
        var fields: [(String, LogValue)] = [("id", .text("socket")), ("command", "mode")]
        if let peer { fields += [("uid", .int(Int(peer.uid))), ("pid", .int(Int(peer.pid)))] }
        let answer: String
        switch ModeRequest.parse(request) {
        case .failure(let e):
            answer = "refused \(e.text)\n"
            fields += [("result", "refused"), ("reason", .text(e.text))]
        case .success(let c):
            if let why = keeper.command(c, via: "socket") {
                answer = "refused \(why)\n"
                fields += [("mode", .text(ModeSocket.name(c))), ("result", "refused"), ("reason", .text(why))]
            } else {
                answer = "ok \(keeper.mode.rawValue)\n"
                fields += [("mode", .text(ModeSocket.name(c))), ("result", "ok")]
            }
        }
        logger.log(answer.hasPrefix("ok") ? .info : .warning, "command", fields: fields)
        let bytes = Array(answer.utf8)
        _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
    }

    static func name(_ c: DoorModeCommand) -> String {
        switch c {
        case .normal: return "normal"
        case .lockdown: return "lockdown"
        case .unlock: return "unlock"
        }
    }
}
