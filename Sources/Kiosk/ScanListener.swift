// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Platform
import Policy
import Reader

/// What the frame loop tells the kiosk's features: the one way `ScanService` reaches the door,
/// the scan program, the building's broker, the controller's bus, the modes and the door's inputs.
/// Each method does nothing unless a feature implements it. The composition root hands the loop
/// its listeners in order, the door first: its outputs go off before anyone else hears of a stop
/// or a lost camera.
///
/// Called on the frame loop's thread, except `verdictGiven` (the thread that gave the verdict:
/// the verifier's, the scan program's, the clock's).
public protocol ScanListener: AnyObject {
    /// A code past the repeat filter, classified (`CodeReporter`). The door hears it first and
    /// opens the wait for its verdict (`code.verdict`), which the others may then wait on.
    func codeReported(_ code: ReportedCode)
    /// The door acted on a code's verdict (the lines, the beeps, the `verdict` event); `verdict`
    /// is what it acted on (a credential's outcome in `verdict.credential`).
    func verdictGiven(_ verdict: Verdict, for code: ReportedCode)
    /// The code's holder is asked for a PIN (the door has beeped; a speaking door says `pin`):
    /// its verdict comes once the PIN is checked or the window ends (from the keypad's or the
    /// clock's thread).
    func pinRequested(for code: ReportedCode)
    /// A frame went through the loop; `count` frames so far.
    func frameProcessed(_ count: Int)
    /// The torch went on or off.
    func torchSwitched(on: Bool)
    /// The camera was lost (`false`, before it is closed) or opened again (`true`).
    func cameraChanged(ok: Bool)
    /// The `stats` event's fields, at each interval.
    func statsReported(_ fields: [(String, LogValue)])
    /// A replay ended: the last codes' verdicts, programs and reads are waited for, unless a stop
    /// is asked for meanwhile.
    func sourceEnded(unless stop: StopSignal)
    /// The loop ends, whatever the reason (a signal, the source's end, a camera that never opened).
    func loopEnding()
    /// Adds what this feature counts to the figures of `stats` and the metrics file.
    func contribute(to snapshot: inout StatsSnapshot)
}

public extension ScanListener {
    func codeReported(_ code: ReportedCode) {}
    func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {}
    func pinRequested(for code: ReportedCode) {}
    func frameProcessed(_ count: Int) {}
    func torchSwitched(on: Bool) {}
    func cameraChanged(ok: Bool) {}
    func statsReported(_ fields: [(String, LogValue)]) {}
    func sourceEnded(unless stop: StopSignal) {}
    func loopEnding() {}
    func contribute(to snapshot: inout StatsSnapshot) {}
}

/// A listener made of closures, for the tools and tests that watch the loop from outside (the
/// bench counts reports, a test stops the loop after so many frames).
public final class ScanObserver: ScanListener, @unchecked Sendable {  // set before the loop runs
    public var onReport: (DecodedSymbol, Frame) -> Void = { _, _ in }
    public var onFrame: (Int) -> Void = { _ in }
    public var onCameraLost: () -> Void = {}
    public var onVerdict: @Sendable (Verdict) -> Void = { _ in }
    public init() {}
    public func codeReported(_ code: ReportedCode) { onReport(code.symbol, code.frame) }
    public func frameProcessed(_ count: Int) { onFrame(count) }
    public func cameraChanged(ok: Bool) { if !ok { onCameraLost() } }
    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) { onVerdict(verdict) }
}

// The features' parts, beside the protocol so that what each hears is read in one place.

extension DoorReader: ScanListener {
    /// The read pattern and the Wiegand frame at once; the wait for the verdict, which tells the
    /// listeners once the door has acted on it.
    public func codeReported(_ code: ReportedCode) {
        code.verdict = reported(symbology: code.symbology, payload: code.shownBytes, frame: code.frame.sequence, code: code)
    }
    public func cameraChanged(ok: Bool) { if !ok { cameraLost() } }
    public func sourceEnded(unless stop: StopSignal) { settle(unless: stop) }
    /// The outputs inactive (the strike shut) before the service says it stops.
    public func loopEnding() { shutDown() }
}

extension ScanHook: ScanListener {
    /// A code as it is: the program gets its exact bytes (a Shift-JIS QR code stays Shift-JIS),
    /// and in hook mode its exit status is the verdict.
    public func codeReported(_ code: ReportedCode) {
        guard code.judge == .program else { return }
        var onEnd: OnEnd?
        if let wait = code.verdict { onEnd = { end, atNs in wait.programEnded(end, at: atNs) } }
        submit(symbology: code.symbology, payload: code.bytes, onEnd: onEnd)
    }

    /// A credential: the program is told, never asked: one logfmt line instead of the token,
    /// queued while the door still counts the verdict as pending, so that a replay's end, which
    /// waits for the verdicts and then for the program's queue, finds it there.
    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {
        guard code.judge == .verifier, let o = verdict.credential else { return }
        var extra = ["KIOSK_CREDENTIAL_RESULT": o.granted ? "granted" : "denied", "KIOSK_CREDENTIAL_REASON": o.reason.rawValue,
                     "KIOSK_CREDENTIAL_SUB": o.sub ?? ""]
        // A duress code's grant: the program may raise its own alarm (interface.md 0.6).
        if verdict.duress { extra["KIOSK_DURESS"] = "1" }
        submit(symbology: code.symbology, payload: Array(CodeReporter.credentialLine(o).utf8), extra: extra)
    }
    public func sourceEnded(unless stop: StopSignal) { settle(unless: stop) }
}

extension FleetReporter: ScanListener {
    /// In line at once; with its verdict when the door gives one.
    public func codeReported(_ code: ReportedCode) {
        reported(code: ObjectIdentifier(code), symbology: code.symbology, bytes: code.shownBytes, frame: Int(code.frame.sequence),
                 latencyMs: code.latencyMs, awaitsVerdict: code.verdict != nil)
    }
    /// A credential's message says what may be said of it (`ScanCredential`), never its token.
    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {
        let credential = code.judge == .verifier
            ? ScanCredential(subject: verdict.subject, hash: verdict.credential?.hash ?? "", reason: verdict.reason) : nil
        decided(code: ObjectIdentifier(code), verdict: verdict.result.rawValue, credential: credential)
        if verdict.duress { duress(subject: verdict.subject ?? "") }
    }
    public func torchSwitched(on: Bool) { torch(on: on) }
    public func cameraChanged(ok: Bool) { camera(ok: ok) }
    public func statsReported(_ fields: [(String, LogValue)]) { link.publishStats(StatsMessage.json(fields)) }
    /// The codes still waiting for a verdict go to the broker without one: none is lost.
    public func loopEnding() { flush() }
    public func contribute(to snapshot: inout StatsSnapshot) { snapshot.fleet = link.counters }
}

extension DoorWatch: ScanListener {
    public func contribute(to snapshot: inout StatsSnapshot) { snapshot.door = counters }
}

extension DoorModeKeeper: ScanListener {
    /// A grant of a group the modes name (first-in unlock) is news to the modes.
    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {
        if verdict.result == .granted, let o = verdict.credential { granted(groups: o.groups) }
    }
}

extension ScanService {
    /// A new `ScanObserver` that hears this loop (for the tools and tests; before `run`).
    public func observe() -> ScanObserver {
        let observer = ScanObserver()
        listen(observer)
        return observer
    }
}
