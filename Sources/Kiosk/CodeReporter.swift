// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Platform
import Policy
import Reader

/// Reports a code that is news: the one place where a decoded symbol is classified (`CodeKind`,
/// once), becomes its `scan` event and goes to its judge (the verifier, or the scan program
/// through the listeners). The features hear of it only through the listeners, the door first
/// (`ScanListener.codeReported`); its verdict comes back through the door (`ReportedCode`).
///
/// A credential never reaches the log, the broker or the program as itself: they hear its
/// outcome (the subject, the hash, the reason). A setup code reaches none of them: the setup desk
/// takes it, in every mode.
public final class CodeReporter {
    let credentials: CredentialWorker?
    /// Where a setup code goes (nil: the demo, which takes none).
    let setup: SetupDesk?
    /// Whether a `KIOSK_ON_SCAN` program judges the codes that are no credential.
    let programJudges: Bool
    /// `KIOSK_CREDENTIAL_PREFIX`: what a signed credential begins with.
    let signedPrefix: String
    let logger: Logger
    let clock: Clock
    /// Told of each code, in order, the door first (`ScanListener`).
    var listeners: [ScanListener] = []
    /// The PIN's step between the verifier and the door (a keypad's door; nil: none).
    var pinGate: PINGate?

    /// The most of a payload the `scan` event shows.
    public static let loggedPayloadLimit = 512

    init(credentials: CredentialWorker?, setup: SetupDesk? = nil, programJudges: Bool, signedPrefix: String, logger: Logger, clock: Clock) {
        self.credentials = credentials
        self.setup = setup
        self.programJudges = programJudges
        self.signedPrefix = signedPrefix
        self.logger = logger
        self.clock = clock
    }

    /// Who judges a code of this kind here.
    func judge(_ kind: CodeKind) -> ReportedCode.Judge {
        if kind == .setup { return .setup }
        guard credentials != nil else { return .program }
        if case .credential = kind { return .verifier }
        // Credentials mode: the KIOSK_ON_SCAN program decides the rest, as in hook mode.
        return programJudges ? .program : .notACredential
    }

    /// `latencyMs`: from the frame's capture to now.
    func report(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        let kind = CodeKind.of(symbol.bytes, signedPrefix: signedPrefix)
        let code = ReportedCode(symbol: symbol, kind: kind, judge: judge(kind), frame: frame, latencyMs: max(0, latencyMs),
                                listeners: ListenerList(listeners))
        switch code.judge {
        case .setup:
            setup?.submit(code.bytes)
        case .program:
            logScan(code)
            for listener in listeners { listener.codeReported(code) }
        case .notACredential:
            logScan(code)
            let outcome = CredentialOutcome(kind: .none, reason: .notACredential, hash: CredentialVerifier.shortHash(symbol.bytes))
            CodeReporter.logCredential(outcome, logger)
            for listener in listeners { listener.codeReported(code) }
            code.verdict?.give(Verdict(outcome), at: clock.now())
        case .verifier:
            for listener in listeners { listener.codeReported(code) }
            if let credentials { judge(code, worker: credentials) }
        }
    }

    /// The `scan` event of a code shown as it is, with its frame and latency.
    private func logScan(_ code: ReportedCode) {
        logger.log(.info, "scan", fields: CodeReporter.plainScanFields(code.symbol, kind: code.kind)
                   + [("frame", .int(Int(code.frame.sequence))), ("latency_ms", .ms(code.latencyMs))])
    }

    /// A signed credential, rotating code, ticket or pass: verified on the verifier's thread,
    /// where its `scan` and `credential` events are logged and its verdict given to the door.
    private func judge(_ code: ReportedCode, worker: CredentialWorker) {
        let (logger, clock, gate) = (self.logger, self.clock, self.pinGate)
        let accepted = worker.submit(code.bytes, as: code.kind.credential) { o in
            var scan: [(String, LogValue)] = [("symbology", .text(code.symbology))]
            if let sub = o.sub { scan.append(("credential", .text(sub))) }
            scan += [("hash", .text(o.hash)), ("frame", .int(Int(code.frame.sequence))), ("latency_ms", .ms(code.latencyMs))]
            logger.log(.info, "scan", fields: scan)
            CodeReporter.logCredential(o, logger)
            // A grant that asks for a PIN gets its verdict from the gate, once the PIN is checked.
            if gate?.judge(o, for: code) != true { code.verdict?.give(Verdict(o), at: clock.now()) }
        }
        if !accepted {
            logger.warning("credential_dropped", ["reason": "the verifier's queue is full", "frame": .int(Int(code.frame.sequence))])
            code.verdict?.give(Verdict(result: .error, reason: "verifier busy", elapsedNs: 0), at: clock.now())
        }
    }

    /// The `scan` event's fields for a code shown as it is (not a credential).
    static func plainScanFields(_ symbol: DecodedSymbol, kind: CodeKind) -> [(String, LogValue)] {
        var fields: [(String, LogValue)] = [("symbology", .text(symbol.symbology.displayName))]
        // The text (UTF-8, Shift-JIS or ISO-8859-1 made UTF-8); a payload that is not text, or of a
        // binary kind (a pass's CBOR), is shown as its escaped bytes in `data` and as hex in `data_hex`.
        let text = kind.isBinary ? nil : symbol.text
        let payload = text.map { Array($0.utf8) } ?? symbol.bytes
        if payload.count > CodeReporter.loggedPayloadLimit {
            // A stranger's 3 kB QR code must not flood the journal: the start, and how long it
            // was, in the bytes `data` shows (UTF-8 for text), cut between two characters.
            let cut = text == nil ? CodeReporter.loggedPayloadLimit
                : PayloadBytes.utf8Boundary(in: payload, atMost: CodeReporter.loggedPayloadLimit)
            fields += [("data", .bytes(Array(payload.prefix(cut)))),
                       ("truncated", .bool(true)), ("length", .int(payload.count))]
        } else {
            fields.append(("data", .bytes(payload)))
        }
        if text == nil {
            fields.append(("data_hex", .text(String(PayloadBytes.hex(symbol.bytes).prefix(2 * CodeReporter.loggedPayloadLimit)))))
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
