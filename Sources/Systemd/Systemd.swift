// SPDX-License-Identifier: Apache-2.0
import CSystemd
import Glibc

/// Tells the service manager how the kiosk is doing (sd_notify): READY=1 after the first frame,
/// WATCHDOG=1 while frames flow, STATUS=, STOPPING=1. Outside systemd (no NOTIFY_SOCKET) every
/// call does nothing.
public protocol ServiceNotifier: AnyObject {
    func notify(_ state: String)
    /// The watchdog interval systemd expects pings within, when it has one for this process.
    var watchdogIntervalNs: UInt64? { get }
}

public final class SystemdNotifier: ServiceNotifier {
    public let watchdogIntervalNs: UInt64?

    public init() {
        var usec: UInt64 = 0
        watchdogIntervalNs = sd_watchdog_enabled(0, &usec) > 0 ? usec * 1000 : nil
    }

    public func notify(_ state: String) {
        _ = sd_notify(0, state)
    }
}

/// Where log events go under journald: natively, with their fields as journal fields.
public protocol JournalSink: AnyObject {
    /// Sends one entry; false when journald cannot be reached (the line then goes to stderr).
    func send(_ fields: [(name: String, value: [UInt8])]) -> Bool
}

public final class SystemdJournal: JournalSink {
    public init() {}

    /// True when stderr is connected to journald (systemd sets JOURNAL_STREAM to its
    /// device:inode), so native entries replace the stream's lines instead of doubling them.
    public static func stderrIsJournal(_ environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    public func send(_ fields: [(name: String, value: [UInt8])]) -> Bool {
        // "NAME=value" items; sd_journal_sendv takes binary-safe values as they are.
        let items: [[UInt8]] = fields.map { Array($0.name.utf8) + [UInt8(ascii: "=")] + $0.value }
        let buffers = items.map { bytes -> UnsafeMutableRawBufferPointer in
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
            b.copyBytes(from: bytes)
            return b
        }
        defer { buffers.forEach { $0.deallocate() } }
        var iov = zip(buffers, items).map { iovec(iov_base: $0.0.baseAddress, iov_len: $0.1.count) }
        return sd_journal_sendv(&iov, Int32(iov.count)) >= 0
    }
}
