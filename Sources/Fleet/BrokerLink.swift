// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import Glibc
import Platform
import Policy

// The link itself: its events, its state, its life (start, stop) and libmosquitto's loading. What
// the kiosk calls is in BrokerPublishing.swift, the spool thread in BrokerSpoolThread.swift, the
// MQTT thread in BrokerMQTTThread.swift.

/// What the link says as it goes: the `mqtt_connected` and `mqtt_disconnected` events.
public enum BrokerEvent: Equatable, Sendable {
    /// CONNACK accepted: `mqtt_connected broker=mqtts://…:8883`.
    case connected(broker: String)
    /// The connection ended or could not be made, and why (`refused: not authorised`,
    /// `connect: Connection refused`, `TLS: … certificate verify failed`, `connection lost`), and
    /// when the next attempt is. Said once per outage and again when the reason changes, not at
    /// every attempt.
    case disconnected(reason: String, retryInMs: Int)
    /// The spool file could not be written (the events are still queued in memory).
    case spoolWriteFailed(String)
}

/// The kiosk's link to the building's broker, on libmosquitto. Publishing never waits for the
/// network or the disk: `publishScan` puts the event in an inbox and returns; a spool thread
/// appends it to the spool file (fsync) and wakes the MQTT thread, which sends what is spooled, in
/// order, QoS 1, and trims the spool as the broker acknowledges. The MQTT thread runs
/// libmosquitto's `mosquitto_loop` (its own socket handling, TLS included) around a poll that
/// also watches a wake pipe, reconnects with the back-off, keeps the last will (`offline`,
/// retained) and says `online` (retained) on each connection, with Home Assistant's discovery.
///
/// One libmosquitto session per connection: a lost connection destroys it and the next starts
/// clean, so that nothing is sent twice by the library behind the spool's back; what the broker
/// had not acknowledged is sent again from the spool (at least once: the `id` tells duplicates).
public final class BrokerLink: @unchecked Sendable {
    // Shared between the caller's threads, the spool thread and the MQTT thread: guarded by `shared`.
    let shared = Condition()
    var inbox: [(payload: [UInt8], kind: Spool.Kind)] = []
    var scanIDs: ScanID
    var desiredState: KioskState?
    var pendingStats: String?
    // The door's state (retained), alarms and command answers waiting for the connection.
    var desiredDoor: String?
    var outbox: [(topic: String, payload: [UInt8], retain: Bool)] = []
    var outboxDropped = 0
    var lastMode: String?
    var onCommand: (@Sendable (_ payload: [UInt8], _ retained: Bool) -> Void)?
    var onSiteBundle: (@Sendable (_ payload: [UInt8]) -> Void)?
    var stopDeadlineNs: UInt64?
    var spoolWriterDone = false
    var networkDone = false
    private var started = false
    var figures = BrokerCounters()

    public let settings: BrokerSettings
    public let spool: Spool
    let onEvent: @Sendable (BrokerEvent) -> Void
    let wallClockMs: @Sendable () -> Int64
    /// What the back-off, the CONNACK timeout and the stop's grace are measured on (a test's
    /// `ManualClock` moves them by hand). libmosquitto's keepalive runs on its own clock.
    let clock: Clock
    let wakeRead: Int32
    private let wakeWrite: Int32

    // The MQTT thread's own state (and libmosquitto's callbacks, which run inside its
    // `mosquitto_loop`): touched by that thread only.
    var session: OpaquePointer?
    var sessionStartedNs: UInt64 = 0
    var connackCode: Int32?
    var isConnected = false
    var inFlight: [Int32: UInt64] = [:]  // mid -> spool sequence
    var nextToSend: UInt64 = 0
    var publishedState: KioskState?
    var publishedDoor: String?
    var announceDue = false
    var offlineMid: Int32?
    var offlineAcknowledged = false
    var attempt = 0
    var nextAttemptNs: UInt64 = 0
    var lastLibraryError: String?
    var lastReasonSaid: String?
    var saidConnected = false
    var lastSpoolError: Errno?

    /// `spool`: opened by the caller in `$STATE_DIRECTORY` (else /var/lib/kiosk), sized by
    /// `KIOSK_MQTT_QUEUE`; what it holds from a previous run is sent first. `onEvent` is called
    /// on the MQTT thread. `clock`: the service's monotonic clock; the MQTT thread is woken through
    /// `clock.schedule` when a retry comes due, so that a manual clock's advance starts it at once.
    public init(settings: BrokerSettings, spool: Spool, clock: Clock,
                wallClockMs: @escaping @Sendable () -> Int64 = BrokerLink.wallClockMilliseconds,
                onEvent: @escaping @Sendable (BrokerEvent) -> Void) {
        self.settings = settings
        self.spool = spool
        self.clock = clock
        self.onEvent = onEvent
        self.wallClockMs = wallClockMs
        scanIDs = ScanID(random: BrokerLink.randomBytes(8))
        var fds: [Int32] = [-1, -1]
        let status = pipe(&fds)
        precondition(status == 0, "pipe: \(Errno.current)")
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = BrokerLink.libraryReady
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// mosquitto_lib_init, once a process (Swift runs a global's initialiser once, thread-safely).
    private static let libraryReady: Bool = { mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue }()

    /// libmosquitto is loaded on first use (Sources/CMosquitto): the file and the
    /// Debian package that ships it.
    public static let libraryFile = KIOSK_MOSQUITTO_LIBRARY, libraryPackage = KIOSK_MOSQUITTO_PACKAGE

    /// Loads libmosquitto now if it is not yet: nil when it is there, else what went wrong,
    /// naming the file and the package ("libmosquitto.so.1: cannot open ...: install libmosquitto1").
    public static func loadLibrary() -> String? {
        var buffer = [CChar](repeating: 0, count: 320)
        guard kiosk_mosquitto_load(&buffer, buffer.count) != 0 else { return nil }
        let why = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return "\(libraryFile) cannot be loaded (\(why)): install the Debian package \(libraryPackage)"
    }

    /// Whether libmosquitto is mapped in this process (it is once anything has used it).
    public static var libraryLoaded: Bool { kiosk_mosquitto_loaded() != 0 }

    /// libmosquitto's version, as doctor shows it: "2.0.11" (loads the library).
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    public static let wallClockMilliseconds: @Sendable () -> Int64 = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Starts the spool and MQTT threads (`kiosk-mqtt-spool`, `kiosk-mqtt`).
    public func start() {
        let first = shared.lock_ { () -> Bool in
            defer { started = true }
            return !started
        }
        guard first else { return }
        // A write to a socket the broker closed must be an error, not the end of the process
        // (OpenSSL writes with write(2), not send(MSG_NOSIGNAL)). The kiosk ignores it anyway.
        signal(SIGPIPE, SIG_IGN)
        startThread(name: "kiosk-mqtt-spool") { [self] in runSpoolWriter() }
        startThread(name: "kiosk-mqtt") { [self] in runNetwork() }
    }

    /// A clean stop: for up to `graceNs`, sends what is queued (when connected), then publishes
    /// `offline` (retained) and disconnects. What is still unacknowledged stays in the spool for
    /// the next start. Returns false when the threads had not finished in time (a connection
    /// attempt stuck in DNS or a TCP connect): the spool has everything all the same.
    /// `limitNs` bounds the whole wait for the network (default: the grace and 1 s more), so that
    /// a stop on SIGTERM keeps its second; the spool's writer is always waited for (up to the
    /// grace and 1 s), so that what was published is on disk before the process ends.
    /// The grace is measured on the link's clock (the MQTT thread's deadline); how long this call
    /// blocks is bounded in real time whatever the clock, so that a stop never hangs.
    @discardableResult
    public func stop(graceNs: UInt64 = 2_000_000_000, limitNs: UInt64? = nil) -> Bool {
        let wasStarted = shared.lock_ { () -> Bool in
            if stopDeadlineNs == nil { stopDeadlineNs = clock.now() + graceNs }
            shared.broadcast()
            return started
        }
        guard wasStarted else { return true }
        wake()
        let deadline = monotonicNanoseconds() + graceNs
        let giveUp = deadline + 1_000_000_000
        let networkGiveUp = limitNs.map { min(giveUp, deadline - graceNs + $0) } ?? giveUp
        return shared.lock_ {
            while !(networkDone && spoolWriterDone) {
                let until = spoolWriterDone ? networkGiveUp : giveUp
                if monotonicNanoseconds() >= until { return false }
                _ = shared.wait(untilMonotonicNs: until)
            }
            return true
        }
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe is already a wake-up
    }

    /// 8 bytes from /dev/urandom for the run's part of the scan ids (time and pid if it fails).
    static func randomBytes(_ n: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            defer { close(fd) }
            if read(fd, &out, n) == n { return out }
        }
        var seed = monotonicNanoseconds() ^ UInt64(getpid()) << 40 ^ UInt64(bitPattern: wallClockMilliseconds())
        for i in 0..<n {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            out[i] = UInt8(truncatingIfNeeded: seed >> 56)
        }
        return out
    }
}

extension Condition {
    /// `body` with the lock held.
    func lock_<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
