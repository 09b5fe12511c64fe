// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Platform
import Policy
import Reader

/// Reports a code that is news: the one place where a code becomes its `scan` event, a wait for
/// its verdict at the door, a message to the building's broker and a run of the scan program, and
/// where a credential goes to the verifier instead. The listeners hear of it last.
///
/// A credential never reaches the log, the broker or the program as itself: they hear its
/// outcome (the subject, the hash, the reason).
public final class CodeReporter {
    /// How the code is judged.
    enum Route {
        /// A signed credential, rotating code or ticket: the verifier decides.
        case credential(CredentialWorker)
        /// Credentials mode with no `KIOSK_ON_SCAN`: a code that is no credential is denied.
        case notACredential
        /// As it is: the scan program (if any) decides, in hook mode.
        case plain
    }

    let door: DoorReader?
    let hook: ScanHook?
    let fleet: FleetReporter?
    let credentials: CredentialWorker?
    let logger: Logger
    let clock: Clock
    /// Told of each code and each credential's outcome (`ScanListener`).
    var listeners: [ScanListener] = []

    /// The most of a payload the `scan` event shows.
    public static let loggedPayloadLimit = 512

    init(door: DoorReader?, hook: ScanHook?, fleet: FleetReporter?, credentials: CredentialWorker?, logger: Logger, clock: Clock) {
        self.door = door
        self.hook = hook
        self.fleet = fleet
        self.credentials = credentials
        self.logger = logger
        self.clock = clock
    }

    func route(_ symbol: DecodedSymbol) -> Route {
        guard let credentials else { return .plain }
        switch CredentialKind.of(symbol.bytes, signedPrefix: credentials.verifier.prefix) {
        case .signed, .rotating, .ticket, .pass: return .credential(credentials)
        case .none where hook == nil: return .notACredential
        case .none: return .plain  // the KIOSK_ON_SCAN program decides, as in hook mode
        }
    }

    /// `latencyMs`: from the frame's capture to now.
    func report(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        let latencyMs = max(0, latencyMs)
        switch route(symbol) {
        case .credential(let worker): judge(symbol, frame: frame, latencyMs: latencyMs, worker: worker)
        case .notACredential: deny(symbol, frame: frame, latencyMs: latencyMs)
        case .plain: pass(symbol, frame: frame, latencyMs: latencyMs)
        }
        for listener in listeners { listener.codeReported(symbol, frame: frame) }
    }

    /// The `scan` event of a code shown as it is, with its frame and latency.
    private func logScan(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        logger.log(.info, "scan", fields: CodeReporter.plainScanFields(symbol) + [("frame", .int(Int(frame.sequence))), ("latency_ms", .ms(latencyMs))])
    }

    /// To the broker (at once, or with its verdict once known) and to the door (the read pattern
    /// and the verdict's wait).
    private func announce(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double, awaitsVerdict: Bool) -> VerdictWait? {
        let symbology = symbol.symbology.displayName
        let toFleet = fleet?.reported(symbology: symbology, bytes: symbol.bytes, frame: Int(frame.sequence),
                                      latencyMs: latencyMs, awaitsVerdict: awaitsVerdict)
        var onVerdict: (@Sendable (Verdict) -> Void)?
        if let toFleet { onVerdict = { verdict in toFleet(verdict.result.rawValue) } }
        return door?.reported(symbology: symbology, payload: symbol.bytes, frame: frame.sequence, onVerdict: onVerdict)
    }

    /// A code as it is: the scan program gets its exact bytes (a Shift-JIS QR code stays
    /// Shift-JIS), and in hook mode its exit status is the verdict.
    private func pass(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        logScan(symbol, frame: frame, latencyMs: latencyMs)
        let wait = announce(symbol, frame: frame, latencyMs: latencyMs, awaitsVerdict: door.map { $0.mode != .none } ?? false)
        var onEnd: ScanHook.OnEnd?
        if let wait { onEnd = { end, atNs in wait.programEnded(end, at: atNs) } }
        hook?.submit(symbology: symbol.symbology.displayName, payload: symbol.bytes, onEnd: onEnd)
    }

    /// Credentials mode with no `KIOSK_ON_SCAN`: a code that is no credential is denied.
    private func deny(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        logScan(symbol, frame: frame, latencyMs: latencyMs)
        let outcome = CredentialOutcome(kind: .none, reason: .notACredential, hash: CredentialVerifier.shortHash(symbol.bytes))
        CodeReporter.logCredential(outcome, logger)
        let wait = announce(symbol, frame: frame, latencyMs: latencyMs, awaitsVerdict: true)
        wait?.give(Verdict(result: .denied, reason: CredentialReason.notACredential.rawValue, elapsedNs: 0), at: clock.now())
    }

    /// A signed credential, rotating code or event ticket: the read pattern and the verdict's
    /// wait at once, the verification on the verifier's thread; the `scan` event, the
    /// `credential` event, the door, the broker, the program and the listeners hear its outcome
    /// there, none of them its token.
    private func judge(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double, worker: CredentialWorker) {
        let symbology = symbol.symbology.displayName
        let sequence = frame.sequence
        let toFleet = fleet?.reportedCredential(symbology: symbology, frame: Int(sequence), latencyMs: latencyMs)
        let outcomeBox = OutcomeBox()
        var onVerdict: (@Sendable (Verdict) -> Void)?
        if let toFleet {
            onVerdict = { verdict in
                let o = outcomeBox.value
                toFleet(verdict.result.rawValue, ScanCredential(subject: o?.sub, hash: o?.hash ?? "", reason: o?.reason.rawValue ?? verdict.reason))
            }
        }
        let wait = door?.reported(symbology: symbology, payload: [], frame: sequence, onVerdict: onVerdict)
        let (logger, hook, clock, listeners) = (self.logger, self.hook, self.clock, ListenerList(self.listeners))
        let accepted = worker.submit(symbol.bytes) { o in
            outcomeBox.value = o
            var scan: [(String, LogValue)] = [("symbology", .text(symbology))]
            if let sub = o.sub { scan.append(("credential", .text(sub))) }
            scan += [("hash", .text(o.hash)), ("frame", .int(Int(sequence))), ("latency_ms", .ms(latencyMs))]
            logger.log(.info, "scan", fields: scan)
            CodeReporter.logCredential(o, logger)
            // The program is told, never asked: one logfmt line instead of the token. Queued
            // before the verdict is given, so that a replay's end, which waits for the verdicts
            // and then for the program's queue, finds it there.
            hook?.submit(symbology: symbology, payload: Array(CodeReporter.credentialLine(o).utf8), extra: [
                "KIOSK_CREDENTIAL_RESULT": o.granted ? "granted" : "denied", "KIOSK_CREDENTIAL_REASON": o.reason.rawValue,
                "KIOSK_CREDENTIAL_SUB": o.sub ?? "",
            ])
            wait?.give(Verdict(result: o.granted ? .granted : .denied, reason: o.reason.rawValue, elapsedNs: 0, subject: o.sub), at: clock.now())
            for listener in listeners.all { listener.credentialJudged(o) }
        }
        if !accepted {
            logger.warning("credential_dropped", ["reason": "the verifier's queue is full", "frame": .int(Int(sequence))])
            wait?.give(Verdict(result: .error, reason: "verifier busy", elapsedNs: 0), at: clock.now())
        }
    }

    /// The `scan` event's fields for a code shown as it is (not a credential).
    static func plainScanFields(_ symbol: DecodedSymbol) -> [(String, LogValue)] {
        var fields: [(String, LogValue)] = [("symbology", .text(symbol.symbology.displayName))]
        // The text (UTF-8, Shift-JIS or ISO-8859-1 made UTF-8); a payload that is not text is
        // shown as its escaped bytes in `data` and also as hex in `data_hex`.
        let payload = symbol.text.map { Array($0.utf8) } ?? symbol.bytes
        if payload.count > CodeReporter.loggedPayloadLimit {
            // A stranger's 3 kB QR code must not flood the journal: the start, and how long it
            // was, in the bytes `data` shows (UTF-8 for text), cut between two characters.
            let cut = symbol.text == nil ? CodeReporter.loggedPayloadLimit
                : PayloadBytes.utf8Boundary(in: payload, atMost: CodeReporter.loggedPayloadLimit)
            fields += [("data", .bytes(Array(payload.prefix(cut)))),
                       ("truncated", .bool(true)), ("length", .int(payload.count))]
        } else {
            fields.append(("data", .bytes(payload)))
        }
        if symbol.text == nil, let hex = symbol.hex {
            fields.append(("data_hex", .text(String(hex.prefix(2 * CodeReporter.loggedPayloadLimit)))))
        }
        return fields
    }

    static func logCredential(_ o: CredentialOutcome, _ logger: Logger) {
        var fields: [(String, LogValue)] = [("result", .text(o.granted ? "granted" : "denied")), ("reason", .text(o.reason.rawValue))]
        if let kid = o.kid { fields.append(("kid", .text(kid))) }
        if let iss = o.iss { fields.append(("iss", .text(iss))) }
        if let sub = o.sub { fields.append(("sub", .text(sub))) }
        if let cti = o.cti { fields.append(("cti", .text(cti))) }
        if let exp = o.exp { fields.append(("exp", .int(Int(exp)))) }
        if let v = o.variation { fields.append(("variation", .text(String(v)))) }
        if let s = o.subevent { fields.append(("subevent", .text(String(s)))) }
        if let f = o.form { fields.append(("form", .text(f))) }
        if let h = o.holder { fields.append(("holder", .text(h))) }
        if let k = o.skewS { fields.append(("skew_s", .int(Int(k)))) }
        fields.append(("hash", .text(o.hash)))
        logger.log(.info, "credential", fields: fields)
    }

    /// What the `KIOSK_ON_SCAN` program reads for a credential: the `credential` event's fields.
    static func credentialLine(_ o: CredentialOutcome) -> String {
        var parts = ["result=\(o.granted ? "granted" : "denied")", "reason=\(LogEscape.logfmt(.text(o.reason.rawValue)))"]
        for (k, v) in [("kid", o.kid), ("iss", o.iss), ("sub", o.sub), ("cti", o.cti), ("exp", o.exp.map(String.init)),
                       ("variation", o.variation.map(String.init)), ("subevent", o.subevent.map(String.init)),
                       ("form", o.form), ("holder", o.holder), ("skew_s", o.skewS.map(String.init))] {
            if let v { parts.append("\(k)=\(LogEscape.logfmt(.text(v)))") }
        }
        parts.append("hash=\(o.hash)")
        return parts.joined(separator: " ") + "\n"
    }
}

/// The verifier's outcome, for the broker's message when the verdict comes.
final class OutcomeBox: @unchecked Sendable {  // `stored` guarded by `lock`
    private let lock = Lock()
    private var stored: CredentialOutcome?
    var value: CredentialOutcome? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// The listeners, handed to the verifier's thread (set before the loop runs, never changed after).
struct ListenerList: @unchecked Sendable {
    let all: [ScanListener]
    init(_ all: [ScanListener]) { self.all = all }
}
