// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// The scan events and duress alarms that the broker has not yet acknowledged, oldest first, in
/// memory and in a file (`<directory>/mqtt-spool`) that survives a crash, a SIGKILL or a power cut:
/// each event is appended and fsynced before it is sent, and marked gone when the broker's PUBACK
/// comes (or when the queue is full and it is the oldest scan, else the oldest alarm: dropped, and
/// counted; an alarm outlives the scans).
///
/// The file is text, one record a line, so that an operator can read it (`cat`) and a torn last
/// line after a crash is easy to tell from a whole one:
///
///     S <sequence> <payload in base64>     a scan event (`<topic>/scan`)
///     A <sequence> <payload in base64>     an alarm (`<topic>/alarm`: a duress code's)
///     X <sequence>                         that event is gone (acknowledged or dropped)
///
/// A line without its newline (the write a crash cut short) or one that does not parse is
/// ignored and counted in `ignoredLines`. The file is rewritten with only the live events when it
/// is opened and whenever the gone lines outnumber them, so it never grows beyond about twice the
/// queue. Thread-safe (its own lock): the kiosk's spool writer appends, the MQTT thread reads and
/// removes.
public final class Spool: @unchecked Sendable {  // all state guarded by `lock`
    /// Where a record goes: `<topic>/scan` or `<topic>/alarm`.
    public enum Kind: Equatable, Sendable {
        case scan, alarm
        var letter: String { self == .scan ? "S" : "A" }
    }

    public struct Record: Equatable, Sendable {
        public let sequence: UInt64
        public let payload: [UInt8]
        public var kind: Kind = .scan
    }

    public let path: String
    public let capacity: Int
    private let lock = Lock()
    private var live: [Record] = []  // ascending sequence
    private var nextSequence: UInt64 = 1
    private var fd: Int32 = -1
    private var goneLines = 0
    private var dropCount = 0
    private var ignored = 0
    private var lastWriteError: Errno?

    /// Opens (or creates) the spool in `directory` (made if missing, mode 0700) and reads back what
    /// a previous run left. Throws when the file can be neither read nor created.
    public init(directory: String, capacity: Int, fileName: String = "mqtt-spool") throws {
        precondition(capacity > 0)
        self.capacity = capacity
        path = directory + "/" + fileName
        if !Files.exists(directory), mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw SpoolError("mkdir \(directory)", Errno.current)
        }
        try load()
        try rewrite()
    }

    deinit { if fd >= 0 { close(fd) } }

    /// The events waiting, oldest first.
    public var records: [Record] { lock.withLock { live } }
    public var count: Int { lock.withLock { live.count } }
    /// Events dropped since the spool was opened because the queue was full.
    public var dropped: Int { lock.withLock { dropCount } }
    /// Lines of the file that could not be read when it was opened (a torn last line after a crash).
    public var ignoredLines: Int { lock.withLock { ignored } }
    /// The last failure to write the file (the queue still holds the events in memory).
    public var writeError: Errno? { lock.withLock { lastWriteError } }

    /// The oldest waiting event with a sequence of at least `sequence`.
    public func first(from sequence: UInt64) -> Record? {
        lock.withLock { live.first { $0.sequence >= sequence } }
    }

    /// Appends an event and fsyncs it; when the queue is full the oldest scan (else the oldest
    /// alarm) is dropped first. Returns the new record and the one dropped for it, if any. A failed
    /// write is kept in `writeError` and the event is kept in memory all the same (it is still sent).
    @discardableResult
    public func append(_ payload: [UInt8], kind: Kind = .scan) -> (record: Record, dropped: Record?) {
        lock.withLock {
            var droppedRecord: Record?
            if live.count >= capacity {
                droppedRecord = live.remove(at: live.firstIndex { $0.kind == .scan } ?? 0)
                dropCount += 1
                writeLine("X \(droppedRecord!.sequence)\n", sync: false)
                goneLines += 1
            }
            let record = Record(sequence: nextSequence, payload: payload, kind: kind)
            nextSequence += 1
            live.append(record)
            writeLine("\(kind.letter) \(record.sequence) \(Base64.encode(payload))\n", sync: true)
            return (record, droppedRecord)
        }
    }

    /// Marks an event gone (the broker acknowledged it). Not fsynced: after a crash the event is
    /// sent once more, which at-least-once delivery allows (the `id` tells a consumer). Compacts
    /// the file when gone lines outnumber live ones. Returns false when it was not waiting.
    @discardableResult
    public func remove(sequence: UInt64) -> Bool {
        lock.withLock {
            guard let i = live.firstIndex(where: { $0.sequence == sequence }) else { return false }
            live.remove(at: i)
            writeLine("X \(sequence)\n", sync: false)
            goneLines += 1
            if goneLines > max(64, live.count) { try? rewriteLocked() }
            return true
        }
    }

    /// Writes what is in memory to the file again (the live events only), atomically.
    public func rewrite() throws { try lock.withLock { try rewriteLocked() } }

    // MARK: - The file

    private func load() throws {
        let readFD = open(path, O_RDONLY | O_CLOEXEC)
        if readFD < 0 {
            guard errno == ENOENT else { throw SpoolError("open \(path)", Errno.current) }
            return
        }
        defer { close(readFD) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            do throws(Errno) { n = try Syscall.retryingEINTR { read(readFD, &buffer, buffer.count) } } catch {
                throw SpoolError("read \(path)", error)
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        var byFile: [UInt64: (payload: [UInt8], kind: Kind)] = [:]
        var order: [UInt64] = []
        var start = 0
        var maxSequence: UInt64 = 0
        while start < bytes.count {
            guard let newline = bytes[start...].firstIndex(of: 0x0A) else { ignored += 1; break }  // torn last line
            let line = Array(bytes[start..<newline])
            start = newline + 1
            let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
            guard fields.count >= 2, let sequence = UInt64(String(decoding: fields[1], as: UTF8.self)) else { ignored += 1; continue }
            let kind: Kind? = fields[0].elementsEqual([UInt8(ascii: "S")]) ? .scan : fields[0].elementsEqual([UInt8(ascii: "A")]) ? .alarm : nil
            if let kind, fields.count == 3, let payload = Base64.decode(Array(fields[2])) {
                if byFile[sequence] == nil { order.append(sequence) }
                byFile[sequence] = (payload, kind)
                maxSequence = max(maxSequence, sequence)
            } else if fields[0].elementsEqual([UInt8(ascii: "X")]), fields.count == 2 {
                byFile[sequence] = nil
                maxSequence = max(maxSequence, sequence)
            } else {
                ignored += 1
            }
        }
        live = order.sorted().compactMap { s in byFile[s].map { Record(sequence: s, payload: $0.payload, kind: $0.kind) } }
        while live.count > capacity {  // the queue was made smaller since
            dropCount += 1
            live.remove(at: live.firstIndex { $0.kind == .scan } ?? 0)
        }
        nextSequence = maxSequence + 1
    }

    private func rewriteLocked() throws {
        let temporary = path + ".tmp"
        let out = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw SpoolError("open \(temporary)", Errno.current) }
        var text: [UInt8] = []
        for r in live { text += Array("\(r.kind.letter) \(r.sequence) \(Base64.encode(r.payload))\n".utf8) }
        do throws(Errno) { try Syscall.writeAll(out, text) } catch {
            close(out)
            unlink(temporary)
            throw SpoolError("write \(temporary)", error)
        }
        fsync(out)
        close(out)
        guard Glibc.rename(temporary, path) == 0 else {
            let e = Errno.current
            unlink(temporary)
            throw SpoolError("rename to \(path)", e)
        }
        syncDirectory()
        if fd >= 0 { close(fd) }
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw SpoolError("open \(path)", Errno.current) }
        goneLines = 0
    }

    private func syncDirectory() {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let dirFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }

    private func writeLine(_ line: String, sync: Bool) {
        guard fd >= 0 else { lastWriteError = Errno(EBADF); return }
        do throws(Errno) { try Syscall.writeAll(fd, Array(line.utf8)) } catch { lastWriteError = error; return }
        if sync, fdatasync(fd) != 0 { lastWriteError = Errno.current }
    }
}

/// A spool file that could not be opened, read or written, and what for.
public struct SpoolError: Error, CustomStringConvertible {
    public var what: String
    public var errno: Errno
    init(_ what: String, _ errno: Errno) { self.what = what; self.errno = errno }
    public var description: String { "\(what): \(errno.message)" }
}
