// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The built `kiosk` binary run as a child process, the way systemd or an installer runs it: the
/// end-to-end tests' one way to start it.
public enum KioskProcess {
    /// The binary: the optimised one an installer ships (`make test` builds it and names it in
    /// KIOSK_BINARY), since the end-to-end tests check behaviour in real time (the demo's
    /// narration at 30 frames a second, the watchdog's cadence, a stop within a second) that an
    /// unoptimised build of Swift 6.0.3 cannot keep on a loaded 2-core machine. Without
    /// KIOSK_BINARY: the release build beside this debug one if there is one, else the kiosk this
    /// test bundle was built with.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["KIOSK_BINARY"] { return URL(fileURLWithPath: path) }
        // The test bundle sits beside the products it was built with: .build/<triple>/debug.
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let release = products.deletingLastPathComponent().appendingPathComponent("release/kiosk")
        if products.lastPathComponent == "debug", FileManager.default.isExecutableFile(atPath: release.path) { return release }
        return products.appendingPathComponent("kiosk")
    }

    /// Only what the test says, a PATH, and the sanitizers' options when the suite runs under one.
    public static func environment(_ env: [String: String]) -> [String: String] {
        let sanitizer = ProcessInfo.processInfo.environment.filter { $0.key.hasSuffix("SAN_OPTIONS") }
        return env.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }.merging(sanitizer) { a, _ in a }
    }

    /// What a finished run printed.
    public struct Run {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
        public var lines: [String] { stderr.split(separator: "\n").map(String.init) }
        public var events: [String] { lines.map { Logfmt.fields($0)["event"] ?? "?" } }
        public func of(_ event: String) -> [[String: String]] { lines.map(Logfmt.fields).filter { $0["event"] == event } }
    }

    /// Starts the binary with `args` and only `env` (see `environment`); its standard error on a
    /// pipe, its standard output on a pipe too unless `stdout` is false (then /dev/null), its
    /// standard input `stdin` when given.
    public static func start(_ args: [String], env: [String: String], stdout: Bool = true,
                             stdin: Pipe? = nil, executable: URL? = nil) throws -> (process: Process, stdout: Pipe?, stderr: Pipe) {
        let p = Process()
        p.executableURL = executable ?? binary
        p.arguments = args
        p.environment = environment(env)
        let out = stdout ? Pipe() : nil
        let err = Pipe()
        p.standardOutput = out ?? FileHandle.nullDevice
        p.standardError = err
        if let stdin { p.standardInput = stdin }
        try p.run()
        return (p, out, err)
    }

    /// Runs the binary to its end. Both pipes are read at once: a child that fills one while the
    /// test waits on the other would never end.
    public static func run(_ args: [String], env: [String: String] = [:]) throws -> Run {
        let (p, out, err) = try start(args, env: env)
        return try finish(p, out: out, err: err)
    }

    /// A started kiosk to its end (both pipes read at once), within `seconds` (Child.finish).
    public static func finish(_ p: Process, out: Pipe?, err: Pipe, within seconds: Double = Child.seconds) throws -> Run {
        let end = try Child.finish(p, out: out, err: err, within: seconds)
        return Run(status: end.status, stdout: end.output, stderr: end.errors)
    }
}
