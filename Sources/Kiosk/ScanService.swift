// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Reader
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

/// What the frame loop works with besides the camera, in one value; each is optional (a tool or a
/// test gives what it needs).
public struct ScanFeatures {
    /// The door: the read pattern, the verdicts' waits and what a verdict does.
    public var door: DoorReader?
    /// The `KIOSK_ON_SCAN` program.
    public var hook: ScanHook?
    /// The building's broker.
    public var fleet: FleetReporter?
    /// The verifier of credentials (`KIOSK_VERDICT=credentials`).
    public var credentials: CredentialWorker?
    /// Where setup codes go (`KS1:`).
    public var setup: SetupDesk?
    /// The PIN's step after the verifier (`KeypadSetup`).
    public var pin: PINGate?
    public var torch: Torch?
    public var notifier: ServiceNotifier?
    public var stats: StatsReporter?
    /// The other features that hear the loop (the door's inputs, the controller's bus, the modes,
    /// the demo's tally), after those above.
    public var listeners: [ScanListener]

    public init(door: DoorReader? = nil, hook: ScanHook? = nil, fleet: FleetReporter? = nil, credentials: CredentialWorker? = nil,
                setup: SetupDesk? = nil, torch: Torch? = nil, notifier: ServiceNotifier? = nil, stats: StatsReporter? = nil, listeners: [ScanListener] = [],
                pin: PINGate? = nil) {
        self.door = door
        self.pin = pin
        self.hook = hook
        self.fleet = fleet
        self.credentials = credentials
        self.setup = setup
        self.torch = torch
        self.notifier = notifier
        self.stats = stats
        self.listeners = listeners
    }

    /// The order they hear the loop in: the door first (its outputs go off before anyone else
    /// hears of a stop or a lost camera, and it opens a code's wait for its verdict), the broker
    /// before the program (a program that answers at once finds the code's message waiting).
    var inOrder: [ScanListener] { ([door, fleet, hook] as [ScanListener?]).compactMap { $0 } + listeners }
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
    /// Reports each code that is news (the door, the program, the broker, the verifier).
    let reporter: CodeReporter
    let torch: Torch?
    let notifier: ServiceNotifier?
    let stats: StatsReporter?
    /// The features that hear the loop, in order: the door first (`ScanListener`).
    public private(set) var listeners: [ScanListener]
    let clock: Clock
    let processStartNs: UInt64
    public var backoff = Backoff()
    /// How long a camera that cannot be opened at start is retried before the service gives up (exit 69).
    public var startupRetryNs: UInt64 = 30_000_000_000
    /// No frame for this long and the camera counts as lost: a few frame intervals, at least 2 s.
    public var stallNs: UInt64
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
    /// Where setup codes go; while it says so, the loop looks at the whole frame (`SetupDesk.looksAtWholeFrame`).
    private let setupDesk: SetupDesk?
    private var lookingAtWholeFrame = false

    public private(set) var frames = 0
    public private(set) var decoded = 0
    public private(set) var reopenings = 0

    public init(configuration: Configuration, source: FrameSource, features: ScanFeatures = ScanFeatures(), logger: Logger,
                stop: StopSignal, clock: Clock, processStartNs: UInt64 = monotonicNanoseconds(),
                decodeDensity: Int = DecodePipeline.defaultDensity, attempts: [Attempt] = Attempt.kept) {
        self.notifier = features.notifier
        self.stats = features.stats
        self.configuration = configuration
        self.source = source
        self.torch = features.torch
        listeners = features.inOrder
        reporter = CodeReporter(credentials: features.credentials, setup: features.setup, programJudges: features.hook != nil,
                                signedPrefix: configuration.credentialPrefix, logger: logger, clock: clock)
        reporter.listeners = listeners
        reporter.pinGate = features.pin
        self.logger = logger
        self.stop = stop
        self.clock = clock
        self.processStartNs = processStartNs
        stallNs = max(2_000_000_000, UInt64(4e9 / configuration.fps))
        decoding = DecodePipeline(symbologies: configuration.symbologies, density: decodeDensity, mount: configuration.mount,
                                  attempts: attempts, clock: clock)
        repeatFilter = RepeatFilter(windowMilliseconds: configuration.repeatMs)
        setupDesk = features.setup
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

    /// Adds a feature that hears the loop, after those given at the start (before `run`).
    public func listen(_ listener: ScanListener) {
        listeners.append(listener)
        reporter.listeners = listeners
    }

    /// On every way out: the outputs inactive (the strike shut) before the service says it stops.
    private func finishing(because why: String) {
        for listener in listeners { listener.loopEnding() }
        notifier?.notify("STOPPING=1\nSTATUS=stopping (\(why))")
        stats?.finish(snapshot())
    }

    private func loop() throws -> StopReason {
        guard try openAtStart() else { return stopping() }
        while true {
            if stop.requested != nil { return stopping() }
            if let stats, stats.isDue(at: clock.now()) {
                if let fields = stats.report(snapshot()) {
                    for listener in listeners { listener.statsReported(fields) }
                }
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
                for listener in listeners { listener.sourceEnded(unless: stop) }
                return .sourceEnded
            case .frame(let frame):
                lastFrameNs = clock.now()
                process(frame)
            }
        }
    }

    private func stopping() -> StopReason { .signal(stop.requested ?? "stop") }

    /// The torch's switches the listeners have been told of.
    private var torchChangesSeen = 0

    /// Tells the listeners of a torch switch (a counter compare a frame; they hear only changes).
    private func listenersSeeTorch() {
        guard let torch, torch.changes != torchChangesSeen else { return }
        torchChangesSeen = torch.changes
        for listener in listeners { listener.torchSwitched(on: torch.isOn) }
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
        for listener in listeners { listener.contribute(to: &s) }
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
        listenersSeeTorch()
        for listener in listeners { listener.cameraChanged(ok: false) }
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
                listenersSeeTorch()
                for listener in listeners { listener.cameraChanged(ok: true) }
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
        listenersSeeTorch()
        let roi = regionToDecode(width: frame.luma.width, height: frame.luma.height, view: frame.view)
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
        for listener in listeners { listener.frameProcessed(frames) }
    }

    /// The repeat filter, then a report for each code that is news. The frame is the one decoded,
    /// which with a bounded `decoding.waitNs` may be an earlier one than the frame being processed.
    @discardableResult
    private func admit(_ symbols: [DecodedSymbol], _ frame: Frame) -> Bool {
        let news = repeatFilter.admit(setupDesk == nil ? symbols : symbols.filter { inROIOrSetup($0, frame) }, at: frame.timestampNs)
        for symbol in news {
            decoded += 1
            reporter.report(symbol, frame: frame, latencyMs: Double(monotonicNanoseconds() &- frame.capturedNs) / 1e6)
        }
        return !news.isEmpty
    }

    /// Whether a symbol is reported when the whole frame may have been decoded for setup: a
    /// setup code wherever it lies, any other code only when its centre is inside the ROI (what
    /// the ROI keeps out stays out: a poster's code beside the door, a code an installer aims).
    private func inROIOrSetup(_ symbol: DecodedSymbol, _ frame: Frame) -> Bool {
        if CodeKind.of(symbol.bytes, signedPrefix: configuration.credentialPrefix) == .setup { return true }
        guard !symbol.location.isEmpty else { return false }
        let x = symbol.location.reduce(0) { $0 + $1.x } / symbol.location.count
        let y = symbol.location.reduce(0) { $0 + $1.y } / symbol.location.count
        return sensorROI(width: frame.luma.width, height: frame.luma.height, view: frame.view).contains(x: x, y: y)
    }

    /// The ROI, or the whole frame while the setup desk asks for it (a new door's setup window:
    /// a setup code is larger than the default ROI); each change is a `roi` line.
    private func regionToDecode(width: Int, height: Int, view: NormalizedRect) -> PixelRect {
        let whole = setupDesk?.looksAtWholeFrame(atNs: clock.now()) ?? false
        if whole != lookingAtWholeFrame {
            lookingAtWholeFrame = whole
            logger.log(.debug, "roi", fields: whole ? [("upright", .text(NormalizedRect.whole.description)), ("for", "setup")]
                                                     : [("upright", .text(configuration.uprightROI.description)), ("for", "scans")])
        }
        return whole ? PixelRect(x: 0, y: 0, width: width, height: height) : sensorROI(width: width, height: height, view: view)
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
