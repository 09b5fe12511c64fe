// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Decoder
import GPIO
import Platform
import Policy
import Systemd

/// Why the frame loop ended, and the exit status that follows (interface.md).
public enum StopReason: Equatable {
    case signal(String)
    case sourceEnded

    public var logText: String {
        switch self {
        case .signal(let name): return name
        case .sourceEnded: return "end of frames"
        }
    }
}

public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    /// EX_UNAVAILABLE: the camera or a GPIO line cannot be had.
    public static let unavailable: Int32 = 69
    /// EX_CONFIG: the configuration is wrong; systemd must not restart into it.
    public static let config: Int32 = 78
}

/// The frame loop: frame → decode inside the ROI → repeat filter → `scan` event → the door
/// reader's feedback (the read beep, the Wiegand frame) and the `KIOSK_ON_SCAN` program, whose
/// exit status is the verdict in hook mode (`DoorReader`). A camera that fails or falls silent is closed and reopened with
/// back-off for as long as it takes; the loop only ends on a stop request or when a replay ends.
public final class ScanService {
    public let configuration: Configuration
    let source: FrameSource
    let logger: Logger
    let stop: StopSignal
    /// The buzzer's patterns, the LEDs, the strike and Wiegand; nil: none of them.
    let door: DoorReader?
    let hook: ScanHook?
    let torch: Torch?
    let notifier: ServiceNotifier?
    let stats: StatsReporter?
    /// The building's broker (issue 17); nil: none configured.
    let fleet: FleetReporter?
    /// The credential verifier (issue 21, `KIOSK_VERDICT=credentials`); nil: not in that mode.
    let credentials: CredentialWorker?
    let clock: Clock
    let processStartNs: UInt64
    public var backoff = Backoff()
    /// How long a camera that cannot be opened at start is retried before the service gives up (exit 69).
    public var startupRetryNs: UInt64 = 30_000_000_000
    /// No frame for this long and the camera counts as lost: a few frame intervals, at least 2 s.
    public var stallNs: UInt64
    /// Called when the camera is lost, before it is closed (after the torch has gone off and the
    /// strike shut): other outputs that must not stay on go off here.
    public var onCameraLost: () -> Void = {}
    /// issue 25: the door's inputs, whose counters `stats` and the metrics file show.
    public var doorWatch: DoorWatch?
    /// Called for each reported code after it is logged (the demo counts them; tests watch them).
    public var onReport: (DecodedSymbol, Frame) -> Void = { _, _ in }
    /// Called at the end of a replay, after the door reader settled (issue 22: the OSDP reader
    /// lets its controller poll the last reads).
    public var onSourceEnded: () -> Void = {}
    /// Called with each credential's outcome, on the verifier's thread, after the door has it.
    public var onCredential: @Sendable (CredentialOutcome) -> Void = { _ in }
    /// Called after each processed frame with the number of frames so far.
    public var onFrame: (Int) -> Void = { _ in }

    /// The decode gate and the zbar worker thread (DecodePipeline.swift).
    public let decoding: DecodePipeline
    private let estimator = BrightnessEstimator()
    private var repeatFilter: RepeatFilter
    private var lastTimestampNs: UInt64 = 0
    private var lastWatchdogNs: UInt64?
    /// Frames the camera skipped before it was last reopened (its own count restarts).
    private var skippedBefore = 0
    private var camera: CameraDescription?
    /// The latest ambient brightness figure (see `ambientBrightness`).
    public private(set) var brightness: Double?
    /// The sensor ROI for the frame size it was computed for; frames of one camera share a size,
    /// so this is computed once, and again only if a replayed picture has another size.
    private var sensorROI: (width: Int, height: Int, view: NormalizedRect, rect: PixelRect)?
    private var lastFrameNs: UInt64 = 0

    public private(set) var frames = 0
    public private(set) var decoded = 0
    public private(set) var reopenings = 0

    /// Longest payload the log shows; the full length is logged beside it.
    public static let loggedPayloadLimit = 512

    public init(configuration: Configuration, source: FrameSource, door: DoorReader?, hook: ScanHook? = nil,
                torch: Torch? = nil, notifier: ServiceNotifier? = nil, stats: StatsReporter? = nil, fleet: FleetReporter? = nil,
                credentials: CredentialWorker? = nil, logger: Logger,
                stop: StopSignal, clock: Clock = MonotonicClock(), processStartNs: UInt64 = monotonicNanoseconds(),
                decodeDensity: Int = DecodePipeline.defaultDensity, attempts: [Attempt] = Attempt.kept) {
        self.notifier = notifier
        self.stats = stats
        self.fleet = fleet
        self.credentials = credentials
        self.configuration = configuration
        self.source = source
        self.door = door
        self.hook = hook
        self.torch = torch
        self.logger = logger
        self.stop = stop
        self.clock = clock
        self.processStartNs = processStartNs
        stallNs = max(2_000_000_000, UInt64(4e9 / configuration.fps))
        decoding = DecodePipeline(symbologies: configuration.symbologies, density: decodeDensity, mount: configuration.mount,
                                  attempts: attempts, clock: clock)
        repeatFilter = RepeatFilter(windowMilliseconds: configuration.repeatMs)
    }

    /// How long the loop waits for a frame before it looks at the stop signal again.
    static let pollMilliseconds = 100

    /// Opens the camera (retrying for `startupRetryNs`), runs until stopped or the source ends,
    /// closes the camera. Throws the camera's last error when it could not be opened at start.
    /// On every way out (a signal, the end of a replay, a camera that never opened) systemd is
    /// told the service is stopping, and the metrics file gets the final totals.
    public func run() throws -> StopReason {
        defer { source.close() }
        torch?.start(at: 0)
        stats?.begin(snapshot())
        let reason: StopReason
        do {
            reason = try loop()
        } catch {
            finishing(because: "camera unavailable: \(error)")
            throw error
        }
        finishing(because: reason.logText)
        return reason
    }

    /// On every way out: the outputs inactive (the strike shut) before the service says it stops.
    private func finishing(because why: String) {
        door?.shutDown()
        // The codes still waiting for a verdict go to the broker without one: none is lost.
        fleet?.flush()
        notifier?.notify("STOPPING=1\nSTATUS=stopping (\(why))")
        stats?.finish(snapshot())
    }

    private func loop() throws -> StopReason {
        guard try openAtStart() else { return stopping() }
        while true {
            if stop.requested != nil { return stopping() }
            if let stats, stats.isDue(at: clock.now()) {
                let fields = stats.report(snapshot())
                if let fleet, let fields { fleet.link.publishStats(StatsMessage.json(fields)) }
            }
            let wait: FrameWait
            do {
                wait = try source.nextFrame(timeoutMs: ScanService.pollMilliseconds)
            } catch {
                guard try reopen(after: String(describing: error)) else { return stopping() }
                continue
            }
            switch wait {
            case .timedOut:
                let silent = clock.now() &- lastFrameNs
                if silent >= stallNs {
                    guard try reopen(after: "no frame for \(Format.fixed(Double(silent) / 1e9, 1)) s") else {
                        return stopping()
                    }
                }
            case .ended:
                decoding.finish { admit($0, $1) }
                // The last codes' verdicts and sounds, before the outputs are shut; then the
                // programs told of them (credentials mode) hear them.
                door?.settle(unless: stop)
                hook?.settle(unless: stop)
                onSourceEnded()
                return .sourceEnded
            case .frame(let frame):
                lastFrameNs = clock.now()
                process(frame)
            }
        }
    }

    private func stopping() -> StopReason { .signal(stop.requested ?? "stop") }

    /// The torch's switches the fleet has been told of.
    private var torchChangesSeen = 0

    /// Tells the fleet of a torch switch (a counter compare a frame; the link hears only changes).
    private func fleetSeesTorch() {
        guard let fleet, let torch, torch.changes != torchChangesSeen else { return }
        torchChangesSeen = torch.changes
        fleet.torch(on: torch.isOn)
    }

    /// The figures for `stats` and the metrics file.
    public func snapshot() -> StatsSnapshot {
        var s = StatsSnapshot()
        s.frames = frames
        s.decoded = decoded
        s.skipped = skippedBefore + source.skippedFrames
        s.reopenings = reopenings
        s.brightness = brightness
        s.torchOn = torch?.isOn
        s.cpuNs = processCPUNanoseconds()
        s.atNs = clock.now()
        s.fleet = fleet?.link.figures
        s.door = doorWatch?.counters
        return s
    }

    /// The one-line summary systemctl status shows.
    public var statusLine: String {
        var s = camera.map { "scanning \($0.device) (\($0.format) \($0.width)x\($0.height))" } ?? "opening the camera"
        s += ": \(frames) frames, \(decoded) codes"
        if let b = brightness { s += ", brightness \(Format.fixed(b, 0))" }
        if let torch { s += ", torch \(torch.isOn ? "on" : "off")" }
        return s
    }

    /// Returns false when stopped while waiting; throws when the start-up window runs out.
    private func openAtStart() throws -> Bool {
        let started = clock.now()
        var attempt = 0
        while true {
            attempt += 1
            do {
                let camera = try source.open()
                self.camera = camera
                logger.log(.info, "camera_open", fields: cameraFields(camera) + [("ms", .ms(Double(clock.now() - started) / 1e6))])
                logControls()
                lastFrameNs = clock.now()
                return true
            } catch {
                let elapsed = clock.now() - started
                guard elapsed < startupRetryNs else { throw error }
                logger.warning("camera_open_failed", ["attempt": .int(attempt), "error": .text(String(describing: error))])
                let wait = min(backoff.delay(attempt: attempt), startupRetryNs - elapsed)
                guard clock.sleep(ns: wait, unless: stop) else { return false }
            }
        }
    }

    /// The camera failed: say so, make the outputs safe, close it, and reopen it with back-off
    /// for as long as it takes. Returns false when stopped meanwhile. Throws when the camera says
    /// this process cannot have it again (`CameraError.needsRestart`: libcamera after a stall):
    /// the service then exits 69 and systemd starts a new one.
    private func reopen(after error: String) throws -> Bool {
        logger.warning("camera_lost", ["error": .text(error)])
        notifier?.notify("STATUS=camera lost (\(error)); reopening")
        torch?.forceOff(at: lastTimestampNs, reason: "camera lost")
        fleetSeesTorch()
        fleet?.camera(ok: false)
        door?.cameraLost()
        onCameraLost()
        skippedBefore += source.skippedFrames
        source.close()
        let lostAt = clock.now()
        var attempt = 0
        while true {
            attempt += 1
            guard clock.sleep(ns: backoff.delay(attempt: attempt), unless: stop) else { return false }
            do {
                let camera = try source.open()
                self.camera = camera
                reopenings += 1
                // A new camera (or the same one after a replug) may show anything: decode its
                // first frame rather than compare it with the last frame of the old one.
                decoding.resetGate()
                torch?.resume(at: lastTimestampNs)
                fleetSeesTorch()
                fleet?.camera(ok: true)
                logger.log(.info, "camera_reopen", fields: [("attempt", .int(attempt)), ("ms", .ms(Double(clock.now() - lostAt) / 1e6))] + cameraFields(camera))
                controlsLogged = nil
                logControls()
                lastFrameNs = clock.now()
                return true
            } catch let error as CameraError where error.needsRestart {
                logger.error("camera_reopen_failed", ["attempt": .int(attempt), "error": .text(error.description)])
                throw error
            } catch {
                logger.debug("camera_reopen_failed", ["attempt": .int(attempt), "error": .text(String(describing: error))])
            }
        }
    }

    /// The controls report last logged: told again only when it changed (a V4L2 camera's read-back
    /// at its first frame may add what it had to set again).
    private var controlsLogged: CameraControlReport?

    /// The `camera_controls` event: what was set of focus and exposure, what the camera lacks.
    private func logControls() {
        guard let report = source.controls, report != controlsLogged else { return }
        controlsLogged = report
        var fields: [(String, LogValue)] = [("set", .text(report.set.joined(separator: ","))),
                                            ("missing", .text(report.missing.joined(separator: ",")))]
        if !report.reapplied.isEmpty { fields.append(("reapplied", .text(report.reapplied.joined(separator: ",")))) }
        if !report.refused.isEmpty { fields.append(("refused", .text(report.refused.joined(separator: "; ")))) }
        if report.fixedFocus { fields.append(("focus", "fixed: no lens motor or focus control (turn the lens by hand; kiosk aim shows the sharpness)")) }
        logger.log(report.refused.isEmpty ? .info : .warning, "camera_controls", fields: fields)
    }

    private func cameraFields(_ camera: CameraDescription) -> [(String, LogValue)] {
        [("device", .text(camera.device)), ("format", .text(camera.format)),
         ("size", .text("\(camera.width)x\(camera.height)")), ("fps", .number(camera.fps, digits: 1))]
    }

    /// One frame through the loop's steps (brightness, torch, gate and decode, reports, watchdog).
    /// `run` calls it for each frame; the bench drives it frame by frame.
    public func process(_ frame: Frame) {
        frames += 1
        lastTimestampNs = frame.timestampNs
        let ambient = ambientBrightness(meanLuma: estimator.meanLuma(frame.luma), exposure: source.exposure)
        brightness = ambient
        torch?.observe(brightness: ambient, at: frame.timestampNs)
        fleetSeesTorch()
        let roi = sensorROI(width: frame.luma.width, height: frame.luma.height, view: frame.view)
        if frames == 1 {
            logControls()
            logger.info("ready", ["ms": .ms(Double(monotonicNanoseconds() - processStartNs) / 1e6)])
            notifier?.notify("READY=1\nSTATUS=\(statusLine)")
        }
        var news = false
        var read = false
        decoding.decode(frame, roi: roi) { symbols, decodedFrame in
            read = read || !symbols.isEmpty
            news = admit(symbols, decodedFrame) || news
        }
        torch?.observeReading(held: decoding.somethingHeld, read: read, at: frame.timestampNs)
        if let notifier {
            // Alive only while frames flow: a stalled camera lets the watchdog fire.
            let now = clock.now()
            if let interval = notifier.watchdogIntervalNs, lastWatchdogNs.map({ now &- $0 >= interval / 2 }) ?? true {
                lastWatchdogNs = now
                notifier.notify("WATCHDOG=1\nSTATUS=\(statusLine)")
            } else if news {
                notifier.notify("STATUS=\(statusLine)")
            }
        }
        onFrame(frames)
    }

    /// The repeat filter, then a report for each code that is news. The frame is the one decoded,
    /// which with a bounded `decoding.waitNs` may be an earlier one than the frame being processed.
    @discardableResult
    private func admit(_ symbols: [DecodedSymbol], _ frame: Frame) -> Bool {
        let news = repeatFilter.admit(symbols, at: frame.timestampNs)
        for symbol in news { report(symbol, frame: frame) }
        return !news.isEmpty
    }

    /// The `scan` event's fields for a code shown as it is (not a credential).
    private func plainScanFields(_ symbol: DecodedSymbol) -> [(String, LogValue)] {
        var fields: [(String, LogValue)] = [("symbology", .text(symbol.symbology.displayName))]
        // The text (UTF-8, Shift-JIS or ISO-8859-1 made UTF-8); a payload that is not text is
        // shown as its escaped bytes in `data` and also as hex in `data_hex`.
        let payload = symbol.text.map { Array($0.utf8) } ?? symbol.bytes
        if payload.count > ScanService.loggedPayloadLimit {
            // A stranger's 3 kB QR code must not flood the journal: the start, and how long it
            // was, in the bytes `data` shows (UTF-8 for text), cut between two characters.
            let cut = symbol.text == nil ? ScanService.loggedPayloadLimit
                : PayloadBytes.utf8Boundary(in: payload, atMost: ScanService.loggedPayloadLimit)
            fields += [("data", .bytes(Array(payload.prefix(cut)))),
                       ("truncated", .bool(true)), ("length", .int(payload.count))]
        } else {
            fields.append(("data", .bytes(payload)))
        }
        if symbol.text == nil, let hex = symbol.hex {
            fields.append(("data_hex", .text(String(hex.prefix(2 * ScanService.loggedPayloadLimit)))))
        }
        return fields
    }

    // issue 21
    /// A signed credential, rotating code or event ticket: the read pattern and the verdict's wait at once, the
    /// verification on the verifier's thread; the `scan` event, the `credential` event, the
    /// door, the broker and the program hear its outcome there, none of them its token.
    private func reportCredential(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double, worker: CredentialWorker) {
        let symbology = symbol.symbology.displayName
        let sequence = frame.sequence
        let toFleet = fleet?.reportedCredential(symbology: symbology, frame: Int(sequence), latencyMs: max(0, latencyMs))
        let outcomeBox = OutcomeBox()
        var onVerdict: (@Sendable (Verdict) -> Void)?
        if let toFleet {
            onVerdict = { verdict in
                let o = outcomeBox.value
                toFleet(verdict.result.rawValue, ScanCredential(subject: o?.sub, hash: o?.hash ?? "", reason: o?.reason.rawValue ?? verdict.reason))
            }
        }
        let wait = door?.reported(symbology: symbology, payload: [], frame: sequence, onVerdict: onVerdict)
        let (logger, hook, clock, onCredential) = (self.logger, self.hook, self.clock, self.onCredential)
        let accepted = worker.submit(symbol.bytes) { o in
            outcomeBox.value = o
            var scan: [(String, LogValue)] = [("symbology", .text(symbology))]
            if let sub = o.sub { scan.append(("credential", .text(sub))) }
            scan += [("hash", .text(o.hash)), ("frame", .int(Int(sequence))), ("latency_ms", .ms(max(0, latencyMs)))]
            logger.log(.info, "scan", fields: scan)
            ScanService.logCredential(o, logger)
            // The program is told, never asked: one logfmt line instead of the token. Queued
            // before the verdict is given, so that a replay's end, which waits for the verdicts
            // and then for the program's queue, finds it there.
            hook?.submit(symbology: symbology, payload: Array(ScanService.credentialLine(o).utf8), extra: [
                "KIOSK_CREDENTIAL_RESULT": o.granted ? "granted" : "denied", "KIOSK_CREDENTIAL_REASON": o.reason.rawValue,
                "KIOSK_CREDENTIAL_SUB": o.sub ?? "",
            ])
            wait?.give(Verdict(result: o.granted ? .granted : .denied, reason: o.reason.rawValue, elapsedNs: 0, subject: o.sub), at: clock.now())
            onCredential(o)
        }
        if !accepted {
            logger.warning("credential_dropped", ["reason": "the verifier's queue is full", "frame": .int(Int(sequence))])
            wait?.give(Verdict(result: .error, reason: "verifier busy", elapsedNs: 0), at: clock.now())
        }
        onReport(symbol, frame)
    }

    /// Credentials mode with no `KIOSK_ON_SCAN`: a code that is no credential is denied.
    private func reportNotACredential(_ symbol: DecodedSymbol, frame: Frame, latencyMs: Double) {
        let symbology = symbol.symbology.displayName
        logger.log(.info, "scan", fields: plainScanFields(symbol) + [("frame", .int(Int(frame.sequence))), ("latency_ms", .ms(max(0, latencyMs)))])
        let outcome = CredentialOutcome(kind: .none, reason: .notACredential, hash: CredentialVerifier.shortHash(symbol.bytes))
        ScanService.logCredential(outcome, logger)
        let toFleet = fleet?.reported(symbology: symbology, bytes: symbol.bytes, frame: Int(frame.sequence), latencyMs: max(0, latencyMs),
                                      awaitsVerdict: true)
        var onVerdict: (@Sendable (Verdict) -> Void)?
        if let toFleet { onVerdict = { toFleet($0.result.rawValue) } }
        let wait = door?.reported(symbology: symbology, payload: symbol.bytes, frame: frame.sequence, onVerdict: onVerdict)
        wait?.give(Verdict(result: .denied, reason: CredentialReason.notACredential.rawValue, elapsedNs: 0), at: clock.now())
        onReport(symbol, frame)
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

    private func report(_ symbol: DecodedSymbol, frame: Frame) {
        decoded += 1
        let latencyMs = Double(monotonicNanoseconds() &- frame.capturedNs) / 1e6
        // issue 21: a credential never reaches the log, the broker or the program as itself.
        if let credentials {
            switch CredentialKind.of(symbol.bytes, signedPrefix: credentials.verifier.prefix) {
            case .signed, .rotating, .ticket, .pass:
                return reportCredential(symbol, frame: frame, latencyMs: latencyMs, worker: credentials)
            case .none where hook == nil:
                return reportNotACredential(symbol, frame: frame, latencyMs: latencyMs)
            case .none:
                break  // the KIOSK_ON_SCAN program decides, as in hook mode
            }
        }
        var fields = plainScanFields(symbol)
        fields += [("frame", .int(Int(frame.sequence))), ("latency_ms", .ms(max(0, latencyMs)))]
        logger.log(.info, "scan", fields: fields)
        let symbology = symbol.symbology.displayName
        // To the building's broker: at once, or with verdicts on once the verdict is known.
        let toFleet = fleet?.reported(symbology: symbology, bytes: symbol.bytes, frame: Int(frame.sequence),
                                      latencyMs: max(0, latencyMs), awaitsVerdict: door.map { $0.mode != .none } ?? false)
        var onVerdict: (@Sendable (Verdict) -> Void)?
        if let toFleet { onVerdict = { verdict in toFleet(verdict.result.rawValue) } }
        let wait = door?.reported(symbology: symbology, payload: symbol.bytes, frame: frame.sequence, onVerdict: onVerdict)
        // The exact bytes of the symbol (a Shift-JIS QR code stays Shift-JIS), as promised.
        var onEnd: ScanHook.OnEnd?
        if let wait { onEnd = { end, atNs in wait.programEnded(end, at: atNs) } }
        hook?.submit(symbology: symbology, payload: symbol.bytes, onEnd: onEnd)
        onReport(symbol, frame)
    }

    /// The upright ROI in the sensor pixels of a frame of this size that shows `view` of the
    /// camera's picture (all of it, unless the camera zooms: `SensorZoom`).
    public func sensorROI(width: Int, height: Int, view: NormalizedRect = .whole) -> PixelRect {
        if let cached = sensorROI, cached.width == width, cached.height == height, cached.view == view { return cached.rect }
        let rect = configuration.mount.sensorROI(fromUpright: configuration.uprightROI, sensorWidth: width,
                                                 sensorHeight: height, view: view)
        sensorROI = (width, height, view, rect)
        var fields: [(String, LogValue)] = [("upright", .text(configuration.uprightROI.description)), ("sensor", .text(rect.description))]
        if view != .whole { fields.append(("view", .text(view.description))) }
        logger.log(.debug, "roi", fields: fields)
        return rect
    }
}

/// The verifier's outcome, for the broker's message when the verdict comes (issue 21).
final class OutcomeBox: @unchecked Sendable {  // `stored` guarded by `lock`
    private let lock = Lock()
    private var stored: CredentialOutcome?
    var value: CredentialOutcome? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
