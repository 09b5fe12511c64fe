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
/// Called on the frame loop's thread, except `credentialJudged` (the verifier's thread).
public protocol ScanListener: AnyObject {
    /// A code past the repeat filter, after the door and the program have it (`CodeReporter`).
    func codeReported(_ symbol: DecodedSymbol, frame: Frame)
    /// A credential's outcome, after the door has its verdict.
    func credentialJudged(_ outcome: CredentialOutcome)
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
    func codeReported(_ symbol: DecodedSymbol, frame: Frame) {}
    func credentialJudged(_ outcome: CredentialOutcome) {}
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
    public var onCredential: @Sendable (CredentialOutcome) -> Void = { _ in }
    public init() {}
    public func codeReported(_ symbol: DecodedSymbol, frame: Frame) { onReport(symbol, frame) }
    public func frameProcessed(_ count: Int) { onFrame(count) }
    public func cameraChanged(ok: Bool) { if !ok { onCameraLost() } }
    public func credentialJudged(_ outcome: CredentialOutcome) { onCredential(outcome) }
}

// The features' parts, beside the protocol so that what each hears is read in one place.

extension DoorReader: ScanListener {
    public func cameraChanged(ok: Bool) { if !ok { cameraLost() } }
    public func sourceEnded(unless stop: StopSignal) { settle(unless: stop) }
    /// The outputs inactive (the strike shut) before the service says it stops.
    public func loopEnding() { shutDown() }
}

extension ScanHook: ScanListener {
    public func sourceEnded(unless stop: StopSignal) { settle(unless: stop) }
}

extension FleetReporter: ScanListener {
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
    public func credentialJudged(_ outcome: CredentialOutcome) {
        if outcome.granted { granted(groups: outcome.groups) }
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
