// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import Glibc
import Platform
import Policy

/// The MQTT thread (`kiosk-mqtt`): libmosquitto's sessions, one a connection, made, watched and
/// ended with the back-off; what is spooled, queued and retained sent to the broker; the
/// broker's acknowledgements and messages; the clean stop's `offline`.
extension BrokerLink {
    // MARK: - The MQTT thread

    func runNetwork() {
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
                                               clock: settings.clock, duress: settings.duress)
        for m in discovery.messages { _ = publish(s, m.topic, Array(m.payload.utf8), qos: 1, retain: true) }
    }

    private func sendSpooled(_ s: OpaquePointer) {
        while inFlight.count < settings.window, let record = spool.first(from: nextToSend) {
            let topic = record.kind == .alarm ? settings.topics.alarm : settings.topics.scan
            guard let mid = publish(s, topic, record.payload, qos: 1, retain: false) else { return }
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
}
