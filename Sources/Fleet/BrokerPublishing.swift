// SPDX-License-Identifier: Apache-2.0
import Policy

/// What the kiosk hands the link, from any thread: scans, the state, stats, the door, its mode,
/// alarms and command answers, and who hears the building's commands and site bundles. None of it
/// waits for the disk or the network: it is queued, and the spool and MQTT threads are woken.
extension BrokerLink {
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
            inbox.append((Array(json.utf8), .scan))
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

    /// A duress alarm (`AlarmMessage.duress`) on `<topic>/alarm`, QoS 1, through the spool as the
    /// scans go (interface.md 0.6): on disk before it is sent, so that a broker away, a crash or a
    /// power cut loses no call for help.
    public func publishSpooledAlarm(_ json: String) {
        shared.lock_ {
            inbox.append((Array(json.utf8), .alarm))
            shared.broadcast()
        }
    }

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
    func enqueue(_ topic: String, _ json: String, retain: Bool) {
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
}
