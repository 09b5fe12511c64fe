// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import Glibc
import Platform
import Policy

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
    private let shared = Condition()
    private var inbox: [[UInt8]] = []
    private var scanIDs: ScanID
    private var desiredState: KioskState?
    private var pendingStats: String?
    // The door's state (retained), alarms and command answers waiting for the connection.
    private var desiredDoor: String?
    private var outbox: [(topic: String, payload: [UInt8], retain: Bool)] = []
    private var outboxDropped = 0
    private var lastMode: String?
    private var onCommand: (@Sendable (_ payload: [UInt8], _ retained: Bool) -> Void)?
    private var onSiteBundle: (@Sendable (_ payload: [UInt8]) -> Void)?
    private var stopDeadlineNs: UInt64?
    private var spoolWriterDone = false
    private var networkDone = false
    private var started = false
    private var figures = BrokerCounters()

    public let settings: BrokerSettings
    public let spool: Spool
    private let onEvent: @Sendable (BrokerEvent) -> Void
    private let wallClockMs: @Sendable () -> Int64
    /// What the back-off, the CONNACK timeout and the stop's grace are measured on (a test's
    /// `ManualClock` moves them by hand). libmosquitto's keepalive runs on its own clock.
    private let clock: Clock
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // The MQTT thread's own state (and libmosquitto's callbacks, which run inside its
    // `mosquitto_loop`): touched by that thread only.
    private var session: OpaquePointer?
    private var sessionStartedNs: UInt64 = 0
    private var connackCode: Int32?
    private var isConnected = false
    private var inFlight: [Int32: UInt64] = [:]  // mid -> spool sequence
    private var nextToSend: UInt64 = 0
    private var publishedState: KioskState?
    private var publishedDoor: String?
    private var announceDue = false
    private var offlineMid: Int32?
    private var offlineAcknowledged = false
    private var attempt = 0
    private var nextAttemptNs: UInt64 = 0
    private var lastLibraryError: String?
    private var lastReasonSaid: String?
    private var saidConnected = false
    private var lastSpoolError: Errno?

    /// `spool`: opened by the caller in `$STATE_DIRECTORY` (else /var/lib/kiosk), sized by
    /// `KIOSK_MQTT_QUEUE`; what it holds from a previous run is sent first. `onEvent` is called
    /// on the MQTT thread. `clock`: the service's monotonic clock; the MQTT thread is woken through
    /// `clock.schedule` when a retry comes due, so that a manual clock's advance starts it at once.
    public init(settings: BrokerSettings, spool: Spool, clock: Clock = MonotonicClock(label: "kiosk.mqtt.clock"),
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

    // MARK: - What the kiosk calls (any thread; never waits for the disk or the network)

    /// Queues a scan event; returns its `id`.
    @discardableResult
    /// `timeMs`: the wall clock of the code's report (nil: now), when it is published later
    /// (with its verdict).
    public func publishScan(symbology: String, bytes: [UInt8], frame: Int, latencyMs: Double, verdict: String? = nil,
                            timeMs: Int64? = nil, credential: ScanCredential? = nil) -> String {
        let timeMs = timeMs ?? wallClockMs()
        let id = shared.lock_ { scanIDs.next() }
        let json = ScanMessage(id: id, symbology: symbology, bytes: bytes, timeMs: timeMs, frame: frame,
                               latencyMs: latencyMs, verdict: verdict, credential: credential).json
        shared.lock_ {
            inbox.append(Array(json.utf8))
            shared.broadcast()
        }
        return id
    }

    /// The kiosk's state now; published (retained) when it differs from what the broker has.
    public func publishState(_ state: KioskState) {
        shared.lock_ { desiredState = state }
        wake()
    }

    /// A `stats` payload (`StatsMessage.json`), sent when connected and dropped when not (the
    /// next one follows in `KIOSK_STATS_S`).
    public func publishStats(_ json: String) {
        shared.lock_ { pendingStats = json }
        wake()
    }

    // MARK: The door and the building's commands

    /// Alarms and command answers kept while the broker is away, at most (the oldest go first).
    public static let outboxCapacity = 256

    /// The door's state (`closed`, `open`, `forced`, `held`): `<topic>/door`, retained, when it
    /// differs from what the broker has.
    /// Every change goes, in order with the alarms (none is lost to a quicker one).
    /// The state and its message change together: a send between the two would publish the state
    /// as "not carried yet" and then its message again (a door state twice, seen under load).
    public func publishDoor(_ state: String) {
        shared.lock_ {
            desiredDoor = state
            enqueue(settings.topics.door, state, retain: true)
        }
        wake()
    }

    /// The door's mode (`{"mode","reason","until"}`): `<topic>/mode`, retained; sent
    /// again at each connection (a broker restarted without persistence forgets it).
    public func publishMode(_ json: String) {
        shared.lock_ {
            lastMode = json
            enqueue(settings.topics.mode, json, retain: true)
        }
        wake()
    }

    /// An alarm (`AlarmMessage.json`) on `<topic>/alarm`, QoS 1; kept in memory while away.
    public func publishAlarm(_ json: String) { queue(settings.topics.alarm, json) }

    /// A command's answer (`FleetCommandsPolicy.resultJSON`) on `<topic>/command/result`, QoS 1.
    public func publishCommandResult(_ json: String) { queue(settings.topics.commandResult, json) }

    /// Who hears `<topic>/command` (on the MQTT thread); set before `start`. Nothing is
    /// subscribed unless `settings.commands`.
    public func onCommand(_ handler: @escaping @Sendable (_ payload: [UInt8], _ retained: Bool) -> Void) {
        shared.lock_ { onCommand = handler }
    }

    /// What comes on `settings.siteTopic` (on the MQTT thread; the handler only hands it on).
    public func onSiteBundle(_ handler: @escaping @Sendable (_ payload: [UInt8]) -> Void) {
        shared.lock_ { onSiteBundle = handler }
    }

    private func queue(_ topic: String, _ json: String, retain: Bool = false) {
        shared.lock_ { enqueue(topic, json, retain: retain) }
        wake()
    }

    /// Appends to the outbox (the oldest go past its capacity); the caller holds `shared`.
    private func enqueue(_ topic: String, _ json: String, retain: Bool) {
        outbox.append((topic, Array(json.utf8), retain))
        if outbox.count > BrokerLink.outboxCapacity {
            outbox.removeFirst(outbox.count - BrokerLink.outboxCapacity)
            outboxDropped += 1
        }
    }

    public var counters: BrokerCounters {
        var c = shared.lock_ { figures }
        let waiting = shared.lock_ { inbox.count }
        c.queued = spool.count + waiting
        c.dropped = spool.dropped
        return c
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

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe is already a wake-up
    }

    // MARK: - The spool thread

    private func runSpoolWriter() {
        while true {
            let batch: [[UInt8]]? = shared.lock_ {
                while inbox.isEmpty && stopDeadlineNs == nil { shared.wait() }
                if inbox.isEmpty { return nil }
                defer { inbox.removeAll(keepingCapacity: true) }
                return inbox
            }
            guard let batch else { break }
            for payload in batch { spool.append(payload) }
            if let e = spool.writeError, e != lastSpoolError {
                lastSpoolError = e
                onEvent(.spoolWriteFailed("\(spool.path): \(e.message)"))
            }
            wake()
        }
        shared.lock_ {
            spoolWriterDone = true
            shared.broadcast()
        }
        wake()
    }

    // MARK: - The MQTT thread

    private func runNetwork() {
        while true {
            let (stopAt, state, stats, writerDone) = shared.lock_ { () -> (UInt64?, KioskState?, String?, Bool) in
                defer { pendingStats = nil }
                return (stopDeadlineNs, desiredState, pendingStats, spoolWriterDone)
            }
            let now = clock.now()
            if let stopAt {
                if session == nil || !isConnected && now >= stopAt { break }
                if isConnected && finishStopping(now: now, deadline: stopAt, writerDone: writerDone) { break }
            } else if session == nil && now >= nextAttemptNs {
                beginSession()
            }
            if let s = session, isConnected {
                if announceDue { announce(s) }
                sendDoorAndOutbox(s)
                if let state, state != publishedState, publish(s, settings.topics.state, Array(state.json.utf8), qos: 1, retain: true) != nil {
                    publishedState = state
                }
                if let stats { _ = publish(s, settings.topics.stats, Array(stats.utf8), qos: 0, retain: false) }
                if offlineMid == nil { sendSpooled(s) }
            } else if session != nil && connackCode == nil && clock.now() &- sessionStartedNs > settings.connectTimeoutNs {
                endSession(reason: "no CONNACK from the broker within \(settings.connectTimeoutNs / 1_000_000_000) s")
            }
            waitForWork(now: now, stopping: stopAt)
            if let s = session {
                let rc = mosquitto_loop(s, 0, 1)
                if let code = connackCode, code != 0 {
                    endSession(reason: ConnackReason.text(Int(code)))
                } else if rc != MOSQ_ERR_SUCCESS.rawValue || mosquitto_socket(s) < 0 {
                    endSession(reason: describe(rc))
                } else if connackCode == 0 && !isConnected {
                    connected(s)
                }
            }
        }
        if let s = session {
            // Not connected at the deadline, or done: the broker gets a DISCONNECT when it can.
            if isConnected { mosquitto_disconnect(s) ; _ = mosquitto_loop(s, 100, 1) }
            mosquitto_destroy(s)
            session = nil
        }
        shared.lock_ {
            figures.connected = false
            networkDone = true
            shared.broadcast()
        }
    }

    /// While stopping and connected: once everything is acknowledged (or the deadline came),
    /// `offline` (retained), then DISCONNECT. True when done.
    private func finishStopping(now: UInt64, deadline: UInt64, writerDone: Bool) -> Bool {
        guard let s = session else { return true }
        if offlineMid == nil {
            let drained = writerDone && spool.count == 0 && inFlight.isEmpty
            guard drained || now >= deadline else { return false }
            offlineMid = publish(s, settings.topics.status, Array("offline".utf8), qos: 1, retain: true) ?? -1
        }
        if offlineAcknowledged || offlineMid == -1 || now >= deadline + 500_000_000 {
            mosquitto_disconnect(s)
            _ = mosquitto_loop(s, 100, 1)  // writes the DISCONNECT
            isConnected = false
            return true
        }
        return false
    }

    /// Polls the session's socket and the wake pipe until something happens, the next attempt is
    /// due, or a second has passed (libmosquitto's keepalive wants `mosquitto_loop` that often).
    private func waitForWork(now: UInt64, stopping: UInt64?) {
        var timeoutMs: Int32 = 1000
        if session == nil, stopping == nil {
            timeoutMs = Int32(min(1000, (nextAttemptNs > now ? nextAttemptNs - now : 0) / 1_000_000))
        }
        if stopping != nil { timeoutMs = min(timeoutMs, 50) }
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        if let s = session {
            let sock = mosquitto_socket(s)
            if sock >= 0 {
                fds.append(pollfd(fd: sock, events: Int16(POLLIN) | (mosquitto_want_write(s) ? Int16(POLLOUT) : 0), revents: 0))
            }
        }
        _ = poll(&fds, nfds_t(fds.count), timeoutMs)
        if fds[0].revents != 0 {
            var sink = [UInt8](repeating: 0, count: 256)
            while read(wakeRead, &sink, sink.count) > 0 {}
        }
    }

    private func beginSession() {
        lastLibraryError = nil
        connackCode = nil
        isConnected = false
        inFlight = [:]
        nextToSend = 0
        publishedState = nil
        publishedDoor = nil
        offlineMid = nil
        offlineAcknowledged = false
        guard let s = mosquitto_new(settings.clientID, true, Unmanaged.passUnretained(self).toOpaque()) else {
            return scheduleRetry(reason: "mosquitto_new failed: \(Errno.current.message)")
        }
        session = s
        sessionStartedNs = clock.now()
        _ = mosquitto_int_option(s, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        mosquitto_connect_callback_set(s) { _, context, rc in
            BrokerLink.from(context).connackCode = rc
        }
        mosquitto_publish_callback_set(s) { _, context, mid in
            BrokerLink.from(context).acknowledged(mid: mid)
        }
        mosquitto_message_callback_set(s) { _, context, message in
            guard let message else { return }
            BrokerLink.from(context).received(message.pointee)
        }
        mosquitto_log_callback_set(s) { _, context, level, text in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            BrokerLink.from(context).lastLibraryError = String(cString: text)
        }
        let will = Array("offline".utf8)
        var rc = mosquitto_will_set(s, settings.topics.status, Int32(will.count), will, 1, true)
        if rc == MOSQ_ERR_SUCCESS.rawValue, let user = settings.user {
            rc = mosquitto_username_pw_set(s, user, settings.password?.text)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, settings.address.tls {
            if let ca = settings.caFile {
                rc = mosquitto_tls_set(s, ca, nil, nil, nil, nil)
            } else {
                rc = mosquitto_int_option(s, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            }
            // The broker's name is checked against its certificate (the default; said here so it stays).
            if rc == MOSQ_ERR_SUCCESS.rawValue { rc = mosquitto_tls_insecure_set(s, false) }
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { return endSession(reason: "setting up: " + describe(rc)) }
        rc = mosquitto_connect(s, settings.address.host, Int32(settings.address.port), settings.keepaliveSeconds)
        if rc != MOSQ_ERR_SUCCESS.rawValue { endSession(reason: "connect: " + describe(rc)) }
    }

    /// A session has ended (or never began): destroys it and schedules the next attempt.
    private func endSession(reason: String) {
        let wasConnected = isConnected
        if let s = session { mosquitto_destroy(s) }
        session = nil
        isConnected = false
        connackCode = nil
        inFlight = [:]
        if wasConnected { attempt = 0 }
        shared.lock_ { figures.connected = false }
        scheduleRetry(reason: reason, wasConnected: wasConnected)
    }

    private func scheduleRetry(reason: String, wasConnected: Bool = false) {
        attempt += 1
        var backoff = Backoff()
        backoff.initialNs = settings.backoffInitialNs
        backoff.capNs = settings.backoffCapNs
        let delay = backoff.delay(attempt: attempt)
        nextAttemptNs = clock.now() + delay
        if wasConnected || saidConnected || reason != lastReasonSaid {
            onEvent(.disconnected(reason: reason, retryInMs: Int(delay / 1_000_000)))
            lastReasonSaid = reason
            saidConnected = false
        }
        // The poll below also times out to the attempt; this wake is for a clock that is not the
        // poll's (a test's manual clock): scheduled after the event, so that a test that sees it
        // pending knows this attempt's outcome has been told.
        clock.schedule(afterNs: delay) { [weak self] in self?.wake() }
    }

    /// The broker accepted: `online`, discovery, state, then the spooled scans.
    private func connected(_ s: OpaquePointer) {
        isConnected = true
        attempt = 0
        saidConnected = true
        lastReasonSaid = nil
        shared.lock_ {
            figures.connected = true
            figures.connections += 1
        }
        _ = publish(s, settings.topics.status, Array("online".utf8), qos: 1, retain: true)
        if let prefix = settings.discoveryPrefix {
            let discovery = HomeAssistantDiscovery(prefix: prefix, clientID: settings.clientID, topics: settings.topics, version: settings.version)
            _ = mosquitto_subscribe(s, nil, discovery.statusTopic, 1)
            announceDue = true
        }
        // The building's commands, only when asked for (KIOSK_MQTT_COMMANDS=1).
        if settings.commands { _ = mosquitto_subscribe(s, nil, settings.topics.command, 1) }
        // The site's bundle, retained: the broker gives the one it holds at once.
        if let site = settings.siteTopic { _ = mosquitto_subscribe(s, nil, site, 1) }
        // The mode in force, retained, unless it is already waiting in the outbox.
        shared.lock_ {
            if let m = lastMode, !outbox.contains(where: { $0.topic == settings.topics.mode }) { enqueue(settings.topics.mode, m, retain: true) }
        }
        onEvent(.connected(broker: settings.address.description))
    }

    private func announce(_ s: OpaquePointer) {
        announceDue = false
        guard let prefix = settings.discoveryPrefix else { return }
        let discovery = HomeAssistantDiscovery(prefix: prefix, clientID: settings.clientID, topics: settings.topics, version: settings.version,
                                               door: settings.door, tamper: settings.tamper, commands: settings.commands,
                                               clock: settings.clock)
        for m in discovery.messages { _ = publish(s, m.topic, Array(m.payload.utf8), qos: 1, retain: true) }
    }

    private func sendSpooled(_ s: OpaquePointer) {
        while inFlight.count < settings.window, let record = spool.first(from: nextToSend) {
            guard let mid = publish(s, settings.topics.scan, record.payload, qos: 1, retain: false) else { return }
            inFlight[mid] = record.sequence
            nextToSend = record.sequence + 1
            shared.lock_ { figures.published += 1 }
        }
    }

    private func publish(_ s: OpaquePointer, _ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) -> Int32? {
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { mosquitto_publish(s, &mid, topic, Int32($0.count), $0.baseAddress, qos, retain) }
        return rc == MOSQ_ERR_SUCCESS.rawValue ? mid : nil
    }

    // Callbacks, inside mosquitto_loop on the MQTT thread.

    private static func from(_ context: UnsafeMutableRawPointer?) -> BrokerLink {
        Unmanaged<BrokerLink>.fromOpaque(context!).takeUnretainedValue()
    }

    private func acknowledged(mid: Int32) {
        if mid == offlineMid { offlineAcknowledged = true }
        guard let sequence = inFlight.removeValue(forKey: mid) else { return }
        spool.remove(sequence: sequence)
        shared.lock_ { figures.acknowledged += 1 }
    }

    private func received(_ message: mosquitto_message) {
        guard let topicText = message.topic.map({ String(cString: $0) }) else { return }
        let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
        if let site = settings.siteTopic, topicText == site {
            if let handler = shared.lock_({ onSiteBundle }) { handler(payload) }
            return
        }
        if settings.commands, topicText == settings.topics.command {
            if let handler = shared.lock_({ onCommand }) { handler(payload, message.retain) }
            return
        }
        guard let prefix = settings.discoveryPrefix, topicText == prefix + "/status" else { return }
        if payload == Array("online".utf8) { announceDue = true }
    }

    /// The door's changes, the alarms and the answers waiting, in order; then the door's state
    /// now if this connection has not carried it yet (after a reconnect: retained, once).
    private func sendDoorAndOutbox(_ s: OpaquePointer) {
        let (door, waiting) = shared.lock_ { () -> (String?, [(topic: String, payload: [UInt8], retain: Bool)]) in
            defer { outbox.removeAll() }
            return (desiredDoor, outbox)
        }
        for (i, m) in waiting.enumerated() {
            guard publish(s, m.topic, m.payload, qos: 1, retain: m.retain) != nil else {
                // Not taken by the library (the connection went): kept for the next one, in order.
                let rest = Array(waiting[i...])
                shared.lock_ { outbox = rest + outbox }
                return
            }
            if m.topic == settings.topics.door { publishedDoor = String(decoding: m.payload, as: UTF8.self) }
        }
        if let door, door != publishedDoor, publish(s, settings.topics.door, Array(door.utf8), qos: 1, retain: true) != nil {
            publishedDoor = door
        }
    }

    /// A libmosquitto result in words, with the library's last complaint (OpenSSL's reason).
    private func describe(_ rc: Int32) -> String {
        mosquittoErrorText(rc, errno: errno, host: settings.address.host, detail: lastLibraryError)
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
