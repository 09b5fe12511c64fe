// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy
import Systemd

/// One event a line on stderr, in logfmt (`level=info event=scan data="..."`) or JSON.
/// Under systemd each line starts with the `<N>` priority prefix so `journalctl -p` works.
public final class Logger: @unchecked Sendable {  // `write` is serialised by `lock`
    public let minimumLevel: LogLevel
    public let format: LogFormat
    public let priorityPrefix: Bool
    private let sink: (String) -> Void
    /// Under journald: entries go there natively, with their fields (`KIOSK_EVENT=scan`, ...).
    private let journal: JournalSink?
    private let lock = Lock()

    public init(level: LogLevel = .info, format: LogFormat = .logfmt, priorityPrefix: Bool = false,
                journal: JournalSink? = nil, sink: @escaping (String) -> Void = Logger.writeToStandardError) {
        self.minimumLevel = level
        self.format = format
        self.priorityPrefix = priorityPrefix
        self.journal = journal
        self.sink = sink
    }

    public static func writeToStandardError(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        // One write(2) a line, so that lines from two threads never interleave; an error (stderr
        // closed) drops the line.
        try? Syscall.writeAll(2, bytes)
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    public func log(_ level: LogLevel, _ event: String, _ fields: LogFields = [:]) {
        guard isEnabled(level) else { return }
        log(level, event, fields: fields.map { ($0.key, $0.value) })
    }

    /// For fields assembled at run time (some present only sometimes).
    public func log(_ level: LogLevel, _ event: String, fields: [(String, LogValue)]) {
        guard isEnabled(level) else { return }
        let line = render(level, event, fields)
        lock.lock()
        defer { lock.unlock() }
        if let journal {
            let message = priorityPrefix ? String(line.drop { $0 != ">" }.dropFirst()) : line
            if journal.send(Logger.journalFields(level, event, fields, message: message)) { return }
        }
        sink(line)
    }

    /// The journal entry of an event (`LogLine.journalFields`).
    static func journalFields(_ level: LogLevel, _ event: String, _ fields: [(String, LogValue)], message: String)
        -> [(name: String, value: [UInt8])] {
        LogLine.journalFields(level, event, fields, message: message)
    }

    public func debug(_ event: String, _ fields: LogFields = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: LogFields = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: LogFields = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: LogFields = [:]) { log(.error, event, fields) }

    func render(_ level: LogLevel, _ event: String, _ fields: [(String, LogValue)]) -> String {
        LogLine.render(level, event, fields, format: format, priorityPrefix: priorityPrefix)
    }
}

extension Logger {
    /// The one `config_error` line: the variable, the value given and what it accepts.
    public func configError(_ e: ConfigError) {
        error("config_error", ["var": .text(e.variable), "value": .text(e.value), "expected": .text(e.expected)])
    }
}
