// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy

/// The link to the building's broker as the service sees it. `Commands` gives it the
/// MQTT module's `BrokerLink`; the service's module does not link libmosquitto, and the tests
/// give it a recorder. Every call returns at once: the frame loop never waits for the network.
public protocol FleetLink: AnyObject, Sendable {
    /// One reported code (QoS 1, spooled until the broker has it); `timeMs` is the wall clock of
    /// its report, `verdict` the door's verdict when verdicts are on; for a credential
    /// `bytes` is empty and `credential` says what may be said of it.
    func publishScan(symbology: String, bytes: [UInt8], frame: Int, latencyMs: Double, verdict: String?, timeMs: Int64,
                     credential: ScanCredential?)
    /// The kiosk's state (retained).
    func publishState(_ state: KioskState)
    /// A `stats` payload (`StatsMessage.json` of the `stats` event's fields).
    func publishStats(_ json: String)
    /// The link's counters for `stats` and the metrics file.
    var counters: BrokerCounters { get }
    // The door.
    /// `<topic>/door` (retained): closed, open, forced, held.
    func publishDoor(_ state: String)
    /// An `AlarmMessage.json` on `<topic>/alarm`.
    func publishAlarm(_ json: String)
    /// An alarm on `<topic>/alarm` through the spool on disk (a duress code's: never lost).
    func publishSpooledAlarm(_ json: String)
    /// A `FleetCommandsPolicy.resultJSON` on `<topic>/command/result`.
    func publishCommandResult(_ json: String)
    /// The door's mode (`ModeMessage.json`) on `<topic>/mode`, retained.
    func publishMode(_ json: String)
}

/// The service's side of the fleet: each reported code once, in the order reported, and the
/// kiosk's state when it changes.
///
/// With verdicts on (`KIOSK_VERDICT=hook`) a code's message waits for its verdict, so that a door
/// reader's scan event says what the door did. The wait is bounded: the verdict comes by
/// `KIOSK_VERDICT_MS` at the latest (an error verdict for a program that hangs), and on every way
/// out (`flush`) the codes still waiting go without a verdict. Codes go in report order: a code
/// whose verdict came early waits for the earlier codes' (a dropped code's error verdict comes at
/// once, while the code before it may still be waiting for its program).
public final class FleetReporter: DoorFleet, @unchecked Sendable {  // `waiting`, `state`, `flushed` guarded by `lock`
    private struct Waiting {
        var code: ObjectIdentifier?
        var symbology: String
        var bytes: [UInt8]
        var frame: Int
        var latencyMs: Double
        var timeMs: Int64
        var decided: Bool
        var verdict: String?
        var credential: ScanCredential? = nil
    }

    public let link: FleetLink
    private let wallClockMs: @Sendable () -> Int64
    private let lock = Lock()
    private var waiting: [(number: UInt64, scan: Waiting)] = []
    private var reportedCount: UInt64 = 0
    private var state: KioskState
    private var flushed = false

    public init(link: FleetLink, torchOn: Bool?, wallClockMs: @escaping @Sendable () -> Int64) {
        self.link = link
        self.wallClockMs = wallClockMs
        state = KioskState(torchOn: torchOn, cameraOK: true, lastScanMs: nil)
        link.publishState(state)
    }

    /// A code was reported. Without a verdict to wait for it goes at once (nil is returned); else
    /// its number, which `decided` settles once (from any thread). `code`: the reported code the
    /// frame loop's listeners know it by.
    @discardableResult
    public func reported(code: ObjectIdentifier? = nil, symbology: String, bytes: [UInt8], frame: Int, latencyMs: Double,
                         awaitsVerdict: Bool) -> UInt64? {
        let now = wallClockMs()
        let scan = Waiting(code: code, symbology: symbology, bytes: bytes, frame: frame, latencyMs: latencyMs, timeMs: now,
                           decided: !awaitsVerdict, verdict: nil)
        let number: UInt64 = lock.withLock {
            reportedCount += 1
            waiting.append((reportedCount, scan))
            state.lastScanMs = now
            return reportedCount
        }
        sendReady()
        link.publishState(lock.withLock { state })
        return awaitsVerdict ? number : nil
    }

    /// The verdict of the code numbered `number` (`reported`), and for a credential what may be
    /// said of it; later verdicts of the same code, and any after `flush`, do nothing.
    public func decided(_ number: UInt64, verdict: String, credential: ScanCredential? = nil) {
        settle(where: { $0.number == number }, verdict: verdict, credential: credential)
    }

    /// The same, by the reported code's identity.
    func decided(code: ObjectIdentifier, verdict: String, credential: ScanCredential?) {
        settle(where: { $0.scan.code == code }, verdict: verdict, credential: credential)
    }

    /// The torch went on or off (nil: no torch).
    public func torch(on: Bool?) { change { $0.torchOn = on } }

    /// The camera was lost (false) or is back (true).
    public func camera(ok: Bool) { change { $0.cameraOK = ok } }

    /// The site bundle in force and the newest refused (nil: no site key).
    public func bundle(_ standing: KioskState.BundleStanding?) { change { $0.bundle = standing } }

    // The door's state and alarms (DoorFleet), from the door's thread.
    public func door(_ state: String) { link.publishDoor(state) }
    public func alarm(_ event: String, state: String?) {
        link.publishAlarm(AlarmMessage.json(event: event, state: state, timeMs: wallClockMs()))
    }
    public func tamper(_ active: Bool) { change { $0.tamper = active } }
    /// A duress code opened the door: `{"type":"duress","subject","time"}` on `<topic>/alarm`.
    public func duress(subject: String) {
        link.publishSpooledAlarm(AlarmMessage.duress(subject: subject, timeMs: wallClockMs()))
    }
    /// The clock's source (`ntp`, `rtc`, `none`) or `behind`.
    public func clock(_ state: String) { change { $0.clock = state } }
    public func mode(_ json: String) { link.publishMode(json) }

    /// On every way out: the codes still waiting for a verdict go without one, in order; later
    /// verdicts do nothing.
    public func flush() {
        lock.withLock {
            flushed = true
            for w in waiting { send(w.scan) }
            waiting.removeAll()
        }
    }

    /// Codes reported and not yet handed to the link (waiting for a verdict).
    public var waitingCount: Int { lock.withLock { waiting.count } }

    private func settle(where which: ((number: UInt64, scan: Waiting)) -> Bool, verdict: String, credential: ScanCredential?) {
        let known = lock.withLock { () -> Bool in
            // Undecided: a code's identity may be that of an earlier code, gone since, whose message
            // still waits behind an undecided one.
            guard !flushed, let i = waiting.firstIndex(where: { !$0.scan.decided && which($0) }) else { return false }
            waiting[i].scan.decided = true
            waiting[i].scan.verdict = verdict
            waiting[i].scan.credential = credential
            return true
        }
        if known { sendReady() }
    }

    /// Hands the decided codes at the head of the line to the link, in order. Under the lock so
    /// that two threads (the frame loop, a verdict) cannot hand them over out of order; the link
    /// only queues them.
    private func sendReady() {
        lock.withLock {
            while let first = waiting.first, first.scan.decided {
                waiting.removeFirst()
                send(first.scan)
            }
        }
    }

    private func send(_ s: Waiting) {
        link.publishScan(symbology: s.symbology, bytes: s.bytes, frame: s.frame, latencyMs: s.latencyMs, verdict: s.verdict, timeMs: s.timeMs,
                         credential: s.credential)
    }

    private func change(_ body: (inout KioskState) -> Void) {
        let changed: KioskState? = lock.withLock {
            var next = state
            body(&next)
            guard next != state else { return nil }
            state = next
            return next
        }
        if let changed { link.publishState(changed) }
    }
}
