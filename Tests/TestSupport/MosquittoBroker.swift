// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy

/// A real Mosquitto broker (Debian `mosquitto`) for a test: its own folder, configuration and
/// free loopback ports; plain MQTT, and TLS with a CA made here by `openssl` (the server's
/// certificate names `localhost` and, unless told otherwise, `127.0.0.1`); anonymous or with a
/// password file made by `mosquitto_passwd`. It can be stopped, killed and started again on the
/// same ports; `persistence` keeps a persistent subscriber's queue across that.
public final class MosquittoBroker: @unchecked Sendable {  // used from one test's thread
    public let folder: String
    public let port: Int
    public let tlsPort: Int?
    public let users: [(name: String, password: String)]
    private var process: Process?

    /// The CA's certificate (TLS only).
    public var caFile: String { folder + "/ca.crt" }
    public var logFile: String { folder + "/mosquitto.log" }

    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
    }

    public init(tls: Bool = false, users: [(name: String, password: String)] = [], certificateNamesIP: Bool = true) throws {
        folder = NSTemporaryDirectory() + "kiosk-mosquitto-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try MosquittoBroker.freePort()
        tlsPort = tls ? try MosquittoBroker.freePort() : nil
        self.users = users
        var conf = """
        per_listener_settings false
        user root
        persistence true
        persistence_location \(folder)/
        autosave_interval 1
        log_dest file \(folder)/mosquitto.log
        log_type all
        connection_messages true
        allow_anonymous \(users.isEmpty ? "true" : "false")
        listener \(port) 127.0.0.1

        """
        if !users.isEmpty {
            let file = folder + "/passwords"
            for (i, u) in users.enumerated() {
                try MosquittoBroker.run("/usr/bin/mosquitto_passwd", (i == 0 ? ["-c"] : []) + ["-b", file, u.name, u.password])
            }
            conf += "password_file \(file)\n"
        }
        if let tlsPort {
            try makeCertificates(namesIP: certificateNamesIP)
            conf += """
            listener \(tlsPort) 127.0.0.1
            cafile \(folder)/ca.crt
            certfile \(folder)/server.crt
            keyfile \(folder)/server.key

            """
        }
        try conf.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() throws {
        precondition(process == nil, "already running")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", folder + "/mosquitto.conf"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(10)
        while !MosquittoBroker.accepts(port: port) || (tlsPort.map { !MosquittoBroker.accepts(port: $0) } ?? false) {
            guard p.isRunning, Date() < deadline else {
                throw BrokerTestError("mosquitto did not start: \((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "")")
            }
            usleep(20_000)
        }
    }

    /// SIGTERM: the broker saves its persistent state and exits.
    public func stop() {
        guard let p = process else { return }
        Child.end(p)
        process = nil
    }

    /// SIGKILL.
    public func kill() {
        guard let p = process else { return }
        Child.end(p, signal: SIGKILL)
        process = nil
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    private func makeCertificates(namesIP: Bool) throws {
        let ssl = "/usr/bin/openssl"
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try MosquittoBroker.run(ssl, ["req", "-x509"] + ec + ["-keyout", folder + "/ca.key", "-out", folder + "/ca.crt",
                                     "-days", "2", "-subj", "/CN=kiosk test CA"])
        try MosquittoBroker.run(ssl, ["req"] + ec + ["-keyout", folder + "/server.key", "-out", folder + "/server.csr",
                                     "-subj", "/CN=localhost"])
        let names = namesIP ? "DNS:localhost,IP:127.0.0.1" : "DNS:localhost"
        try "subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: folder + "/server.ext", atomically: true, encoding: .utf8)
        try MosquittoBroker.run(ssl, ["x509", "-req", "-in", folder + "/server.csr", "-CA", folder + "/ca.crt",
                                     "-CAkey", folder + "/ca.key", "-CAcreateserial", "-out", folder + "/server.crt",
                                     "-days", "2", "-extfile", folder + "/server.ext"])
    }

    /// Runs a program to its end; throws with its output when it fails.
    @discardableResult
    public static func run(_ path: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let run = try Child.run(p)
        let text = run.output + run.errors
        guard run.status == 0 else { throw BrokerTestError("\(path) \(arguments.joined(separator: " ")): \(text)") }
        return text
    }

    /// A loopback port nobody listens on now (bound to port 0, then released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw BrokerTestError("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// `mosquitto_sub` as a test's consumer: every message on `topic` (a filter), with its retained
/// flag and its payload's exact bytes (printed as hex, so that NUL and newlines survive).
public final class MosquittoSubscriber: @unchecked Sendable {  // used from one test's thread
    public struct Message: Equatable {
        public var retained: Bool
        public var topic: String
        public var payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
    }

    private let process = Process()
    private let outputFile: String

    /// `persistentID`: a session the broker keeps (clean session off, QoS 1), so that what is
    /// published while this subscriber is away (the broker restarting) is delivered afterwards.
    public init(broker: MosquittoBroker, topic: String, persistentID: String? = nil, user: (String, String)? = nil) throws {
        outputFile = broker.folder + "/sub-\(UUID().uuidString).out"
        FileManager.default.createFile(atPath: outputFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        var args = ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-t", "kiosk-test/probe", "-q", "1", "-F", "%r %t %x"]
        if let persistentID { args += ["-c", "-i", persistentID] }
        if let user { args += ["-u", user.0, "-P", user.1] }
        process.arguments = args
        process.standardOutput = FileHandle(forWritingAtPath: outputFile)
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // Subscribed once a probe comes back.
        let deadline = Date().addingTimeInterval(10)
        repeat {
            try MosquittoBroker.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "kiosk-test/probe",
                                                               "-m", "probe"] + (user.map { ["-u", $0.0, "-P", $0.1] } ?? []))
            if rawMessages().contains(where: { $0.topic == "kiosk-test/probe" }) { return }
            usleep(50_000)
        } while Date() < deadline
        throw BrokerTestError("mosquitto_sub did not subscribe")
    }

    deinit { stop() }

    public func stop() {
        Child.end(process)
    }

    private func rawMessages() -> [Message] {
        guard let data = FileManager.default.contents(atPath: outputFile) else { return [] }
        // Whole lines only: the last may be half written.
        let whole = data.lastIndex(of: 0x0A).map { data[..<$0] } ?? Data()
        return String(decoding: whole, as: UTF8.self).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2 else { return nil }
            guard let bytes = Hex.bytes(parts.count == 3 ? Array(parts[2].utf8) : []) else { return nil }
            return Message(retained: parts[0] == "1", topic: String(parts[1]), payload: bytes)
        }
    }

    /// What arrived so far (the probes left out).
    public var messages: [Message] { rawMessages().filter { $0.topic != "kiosk-test/probe" } }

    /// Waits (at most `seconds`) until `condition` holds for what arrived; returns it.
    @discardableResult
    public func waitFor(seconds: Double = 15, _ condition: ([Message]) -> Bool) -> [Message] {
        eventuallyValue("the subscriber's messages", within: seconds, every: 0.02, { messages }, until: condition)
    }
}

public struct BrokerTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
