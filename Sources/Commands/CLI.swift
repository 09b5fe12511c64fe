// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Decoder
import GPIO
import Glibc
import Kiosk
import MQTT
import OSDP
import Platform
import Policy
import Systemd

public let kioskVersion = "0.1.0"

/// The `kiosk` command line. Returns the process's exit status.
public enum KioskCommand {
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        let processStartNs = monotonicNanoseconds()
        let args = Array(arguments.dropFirst())
        switch args.first ?? "run" {
        case "run":
            guard args.count <= 1 else { return usageError("'run' takes no arguments") }
            return run(environment: environment, demo: false, processStartNs: processStartNs)
        case "demo":
            guard args.count <= 1 else { return usageError("'demo' takes no arguments") }
            return run(environment: environment, demo: true, processStartNs: processStartNs)
        case "check":
            return check(environment: environment)
        case "decode":
            return decode(Array(args.dropFirst()), environment: environment)
        case "snapshot":
            return Snapshot.run(Array(args.dropFirst()), environment: environment)
        case "aim":
            return Aim.run(Array(args.dropFirst()), environment: environment)
        case "mode":
            return ModeCommand.run(Array(args.dropFirst()), environment: environment)
        case "doctor":
            guard args.count == 1 else { return usageError("'doctor' takes no arguments") }
            return doctor(environment: environment)
        case "bench":
            // The benches are development tools: they are not on the door (`kiosk-dev`).
            return usageError("'bench' is in kiosk-dev, the development tool (make bench, make accuracy)")
        case "--help", "-h", "help":
            print(helpText)
            return ExitStatus.ok
        case "--version", "-V":
            print("kiosk \(kioskVersion)")
            print(LibgpiodChip.libraryVersion)
            print(BrokerLink.loadLibrary().map { "libmosquitto: \($0)" } ?? "libmosquitto \(BrokerLink.libraryVersion)")
            return ExitStatus.ok
        default:
            return usageError("unknown command '\(args[0])'")
        }
    }

    static let helpText = """
    kiosk \(kioskVersion): a headless barcode and QR-code scanner service for a door

    Usage:
      kiosk [run]                     scan until SIGTERM/SIGINT (or a replay ends)
      kiosk demo                      run the real pipeline on a built-in simulated scene
      kiosk check                     validate the environment, print every effective setting
      kiosk decode [--json] [--roi x,y,w,h] [--budget-ms N] FILE...
                                      decode still images (PGM, PNG) with the service's settings
      kiosk doctor                    PASS/WARN/FAIL for the camera, GPIO lines, permissions, brightness
      kiosk snapshot [--sensor] FILE.png
                                      one settled frame, upright, ROI outlined, brightness in a caption
      kiosk aim [--json] [--seconds N] [--sweep]
                                      the installer's live view: picture, ROI, brightness, sharpness,
                                      the last code's module size, a hint (the service must be stopped)
      kiosk mode normal | lockdown | unlock --until HH:MM|+N[smh]|UNIX_SECONDS
                                      set the running kiosk's door mode (root or the group kiosk)
      kiosk --help | --version

    Configuration comes from KIOSK_* environment variables (man kiosk.conf, or `kiosk check`).
    Exit status: 0 clean stop, 1 failure, 64 usage, 69 camera/GPIO unavailable, 78 bad configuration.
    """

    static func usageError(_ message: String) -> Int32 {
        printError("kiosk: \(message)\n\(helpText)")
        return ExitStatus.usage
    }

    static func printError(_ message: String) {
        Logger.writeToStandardError(message)
    }

    // MARK: - configuration

    /// Reads the configuration; on errors logs one `config_error` a problem and returns nil.
    static func readConfiguration(_ environment: [String: String], isExecutableFile: ((String) -> Bool)? = nil) -> (Configuration, Logger)? {
        let reading = isExecutableFile.map { Configuration.read(environment: environment, isExecutableFile: $0) }
            ?? Configuration.read(environment: environment)
        let logger = Logger(level: reading.configuration.logLevel, format: reading.configuration.logFormat,
                            priorityPrefix: environment["JOURNAL_STREAM"] != nil,
                            journal: SystemdJournal.stderrIsJournal(environment) ? SystemdJournal() : nil)
        for w in reading.warnings {
            var fields: [(String, LogValue)] = [("var", .text(w.variable)), ("value", .text(w.value)),
                                                ("reason", .text(w.reason ?? "not a kiosk setting; ignored"))]
            if let s = w.suggestion { fields.append(("did_you_mean", .text(s))) }
            logger.log(.warning, "config_warning", fields: fields)
        }
        for e in reading.errors {
            logger.error("config_error", ["var": .text(e.variable), "value": .text(e.value), "expected": .text(e.expected)])
        }
        return reading.errors.isEmpty ? (reading.configuration, logger) : nil
    }

    static func check(environment: [String: String]) -> Int32 {
        let reading = Configuration.read(environment: environment)
        guard let (config, logger) = readConfiguration(environment) else { return ExitStatus.config }
        // The files the MQTT settings name: readable (the password itself is never printed).
        if config.isMQTT, case .failure(let problems) = FleetSetup.settings(config, environment) {
            for e in problems.list { logger.error("config_error", ["var": .text(e.variable), "value": .text(e.value), "expected": .text(e.expected)]) }
            return ExitStatus.config
        }
        // issue 22: the OSDP key file is a key (where it comes from is said; the key never).
        var osdpNote: String?
        if config.isOSDP {
            switch OSDPReader.key(config, OSDPStore(environment: environment, keyFile: config.osdpKeyFile)) {
            case .failure(let e):
                logger.error("config_error", ["var": .text(e.variable), "value": .text(e.value), "expected": .text(e.expected)])
                return ExitStatus.config
            case .success(let loaded):
                osdpNote = OSDPReader.checkNote(config, keySource: loaded?.source)
            }
        }
        // issue 21: the files the credentials' settings name (the secrets are never printed).
        if config.verdict == .credentials {
            // issue 35: the kept bundle (verified again) decides where each kind is read.
            let site = CredentialSetup.bundleSources(config, environment)
            if let k = site.keyProblem {
                logger.error("config_error", ["var": "KIOSK_SITE_KEY", "value": .text(config.siteKey ?? ""), "expected": .text("the site's public key, a PEM file (EC P-256 or Ed25519): \(k)")])
                return ExitStatus.config
            }
            if config.siteKey != nil {
                print("# bundle: " + (site.bundle.map { "version \($0.bundle.version) in force (\($0.folder))" } ?? "none in force")
                      + (site.problem.map { "; the kept one is not used: \($0)" } ?? ""))
                for line in CredentialSetup.inForceLines(site.sources) { print("# in force: " + line) }
            }
            let (trust, problems) = CredentialFiles.load(config, environment, sources: site.sources)
            for p in problems { logger.error("config_error", ["var": .text(p.variable), "value": .text(p.value), "expected": .text(p.reason)]) }
            if !problems.isEmpty { return ExitStatus.config }
            print("# credentials: \(trust.keys.count) keys, \(trust.revoked.count) revoked, \(trust.secrets.count) TOTP holders, "
                  + "\(trust.ticketKeys.count) event keys (pretix)")
            print("# clock: " + ClockSetup.checkLine(config, environment, bundleIssued: site.bundle?.bundle.issued))
            // issue 33: the door's rules as understood, at the local time now.
            if let access = trust.access {
                let now = LocalTime.wallClock(unixSeconds())
                print("# access: \(access.path) at \(now.weekday.name) \(now) local time: \(access.summary)")
                for line in access.rules.understood(at: now, holidays: access.holidays) { print("# access: " + line) }
            }
        }
        // issue 33: the mode a command left in force (a running kiosk has the same file).
        let modeFile = DoorModeKeeper.path(environment)
        if let bytes = try? SmallFile.read(modeFile, limit: 4096) {
            let kept = String(validating: bytes, as: UTF8.self).flatMap(DoorModes.restore)
            let text = kept.map { m in
                m.lockdown ? "lockdown, until ended (kiosk mode normal)"
                    : m.unlockUntil.map { "unlock until \(LocalTime.wallClock($0).weekday.name) \(LocalTime.wallClock($0)) local time" } ?? "normal"
            } ?? "unreadable: the kiosk keeps the door in lockdown until a command ends it"
            print("# mode: \(modeFile): \(text)")
        } else if config.verdict == .credentials {
            print("# mode: no command in force (\(modeFile)); the unlock lines above and the emergency input decide")
        }
        let width = reading.settings.map { $0.variable.count + $0.value.count + 1 }.max() ?? 0
        for s in reading.settings {
            let line = "\(s.variable)=\(s.value)"
            print(line + String(repeating: " ", count: max(width, line.count) + 2 - line.count)
                  + (s.fromEnvironment ? "# from the environment" : "# default"))
        }
        // With Wiegand on: what a sample card becomes on the wire (after the settings, as a comment).
        if reading.configuration.isWiegand { print("# wiegand: " + Doctor.wiegandSample(reading.configuration)) }
        if let osdpNote { print("# osdp: " + osdpNote) }
        return ExitStatus.ok
    }

    // MARK: - run and demo

    static func run(environment: [String: String], demo: Bool, processStartNs: UInt64) -> Int32 {
        guard let reading = readConfiguration(environment) else { return ExitStatus.config }
        var config = reading.0
        let logger = reading.1
        if demo {
            config.gpioChip = "sim"
            config.uprightROI = DemoScene.roi
            config.repeatMs = DemoScene.repeatMs
            if config.buzzerLine == nil { config.buzzerLine = 18 }
            if config.torchLine == nil && config.buzzerLine != 17 { config.torchLine = 17 }
        }
        logger.info("start", [
            "version": .text(kioskVersion), "camera": .text(demo ? "demo scene" : config.camera.description),
            "size": .text("\(config.width)x\(config.height)"), "roi": .text(config.uprightROI.description),
            "rotate": .int(config.mount.rotation.rawValue), "mirror": .int(config.mount.mirrored ? 1 : 0),
            "symbologies": .text(config.symbologies.map(\.rawValue).joined(separator: ",")),
        ])
        let stop = StopSignal()
        // Outputs to silence if a second signal ends the process at once.
        let outputs = OutputsOnExit()
        // What SIGHUP and the building's `reload` command reload (the credentials' files, issue 21;
        // the features that keep lists add theirs); empty: SIGHUP is ignored.
        let reloadables = Reloadables()
        let signals = SignalHandling(stop: stop, logger: logger, reloadables: reloadables) {
            outputs.silence()
            _exit(ExitStatus.ok)
        }
        defer { withExtendedLifetime(signals) {} }

        // The building's broker: its own threads, its spool opened now (a folder the kiosk cannot
        // write is said at start, not at the first scan). Stopped on every way out, after the
        // outputs (the defers below run first): on a signal within the contract's second.
        // issue 35: the site's bundles, before the broker (a retained one waits for its thread).
        var siteBundles: SiteBundles?
        if config.verdict == .credentials, config.siteKey != nil {
            guard let b = SiteBundles(config, environment, logger: logger) else { return ExitStatus.config }
            siteBundles = b
        }
        defer { siteBundles?.shutDown() }
        var fleetLink: BrokerLink?
        let lateCommands = LateCommands()
        var fleetGraceNs = KioskCommand.fleetGraceOnSignalNs
        if config.isMQTT {
            let settings: BrokerSettings
            switch FleetSetup.settings(config, environment) {
            case .success(let s): settings = s
            case .failure(let problems):
                for e in problems.list { logger.error("config_error", ["var": .text(e.variable), "value": .text(e.value), "expected": .text(e.expected)]) }
                return ExitStatus.config
            }
            // issue 23: libmosquitto is loaded now that it is configured; missing, nothing reaches the broker.
            if let problem = BrokerLink.loadLibrary() {
                logger.error("mqtt_unavailable", ["library": .text(BrokerLink.libraryFile), "package": .text(BrokerLink.libraryPackage),
                                                  "error": .text(problem)])
                return ExitStatus.unavailable
            }
            let folder = FleetSetup.spoolDirectory(environment)
            let spool: Spool
            do {
                spool = try Spool(directory: folder, capacity: config.mqttQueue)
            } catch {
                logger.error("mqtt_spool_unavailable", ["directory": .text(folder), "error": .text(String(describing: error)),
                                                        "hint": "the kiosk keeps its scan events there while the broker is away: set STATE_DIRECTORY (systemd's StateDirectory=kiosk does) or make /var/lib/kiosk writable"])
                return ExitStatus.unavailable
            }
            if spool.count > 0 || spool.ignoredLines > 0 {
                logger.info("mqtt_spool", ["file": .text(spool.path), "queued": .int(spool.count), "torn_lines": .int(spool.ignoredLines)])
            }
            let link = BrokerLink(settings: settings, spool: spool) { FleetSetup.log($0, logger) }
            // issue 25: the building's commands, once the door is wired (refused until then).
            if settings.commands { link.onCommand { payload, retained in lateCommands.received(payload, retained: retained) } }
            if settings.siteTopic != nil, let siteBundles { link.onSiteBundle { siteBundles.received($0) } }
            link.start()
            fleetLink = link
        }
        defer {
            if let fleetLink {
                fleetLink.stop(graceNs: fleetGraceNs, limitNs: fleetGraceNs == KioskCommand.fleetGraceOnSignalNs ? KioskCommand.fleetLimitOnSignalNs : nil)
            }
        }

        // issue 21: the verifier, before any line is requested (a bad trust directory is exit 78).
        var credentials: CredentialWorker?
        // issue 44: the clock's source and floor (the bundle's `issued` among the floor's sources).
        let clockWatch = config.verdict == .credentials && !demo ? ClockSetup.watch(config, environment, bundles: siteBundles, logger: logger) : nil
        defer { clockWatch?.shutDown() }
        if config.verdict == .credentials {
            // issue 35: the bundle file first (what it carries is what the verifier reads).
            siteBundles?.takeFile(reload: false)
            switch CredentialSetup.start(config, environment, sources: siteBundles?.sources, clock: clockWatch, logger: logger) {
            case .success(let worker):
                credentials = worker
                if let siteBundles { reloadables.add("site bundle") { siteBundles.takeFile(reload: false) } }
                let bundles = siteBundles
                let step = CredentialSetup.reloadStep(config, environment, verifier: worker.verifier, logger: logger) { bundles?.sources }
                reloadables.add("credentials", step)
                siteBundles?.afterApply {
                    do {
                        logger.info("reloaded", ["what": "credentials", "via": "bundle", "holds": .text(try step())])
                    } catch {
                        logger.error("reload_failed", ["what": "credentials", "via": "bundle", "error": .text(String(describing: error))])
                    }
                }
            case .failure(let exit): return exit.status
            }
        }
        defer { credentials?.shutDown() }

        let lines: OutputLines
        do {
            lines = try OutputLines(config, logger: logger)
        } catch {
            logGPIOError(error, logger: logger)
            return ExitStatus.unavailable
        }
        let door = lines.door, torch = lines.torch
        outputs.hold(door: door, torch: torch, watch: lines.watch)
        defer { outputs.silence() }

        // issue 22: the access controller's OSDP reader, on its own thread; shut before the lines.
        var osdp: OSDPReader?
        if config.isOSDP {
            do {
                osdp = try OSDPReader(config: config, environment: environment, door: door, logger: logger)
            } catch OSDPReader.Failure.configuration {
                return ExitStatus.config
            } catch {
                return ExitStatus.unavailable
            }
            osdp?.start()
        }
        defer { osdp?.shutDown() }

        // In hook mode the program's answer counts until KIOSK_VERDICT_MS; one still running
        // then is ended (its answer can no longer open the door) so that the next code's runs.
        let hookTimeoutNs: UInt64 = config.verdict != .none ? UInt64(config.verdictMs) * 1_000_000 : 5_000_000_000
        let hook = config.onScan.map { ScanHook(program: $0, environment: environment, logger: logger, timeoutNs: hookTimeoutNs) }
        // The outputs first: a verdict that comes while the program is ended does nothing.
        defer { outputs.silence(); hook?.shutDown() }

        let source: FrameSource
        var demoScene: ScriptedSceneHandle?
        if demo {
            do {
                let scene = try DemoScene.make(mount: config.mount, fps: config.fps, realTime: true, cameraSettings: config.cameraSettings)
                scene.onStep = { step in logger.info("demo", ["step": .text(step.narration)]) }
                torch?.onSwitch = { scene.torchOn = $0 }
                source = scene
                demoScene = ScriptedSceneHandle()
            } catch {
                logger.error("demo_error", ["error": .text(String(describing: error))])
                return ExitStatus.failure
            }
        } else {
            source = makeSource(config)
        }

        let fleet = fleetLink.map { FleetReporter(link: BrokerFleetLink($0), torchOn: torch?.isOn, wallClockMs: BrokerLink.wallClockMilliseconds) }
        if let clockWatch {
            clockWatch.report { fleet?.clock(ClockSetup.stateText($0)) }
            clockWatch.start()
        }
        if let siteBundles {
            fleet?.bundle(siteBundles.standing)
            siteBundles.report { fleet?.bundle($0) }
            siteBundles.start()
        }
        // issue 33: the door's modes, kept in $STATE_DIRECTORY/mode (not by the demo), set by the
        // building, by `kiosk mode` over the socket in $RUNTIME_DIRECTORY (systemd's), by the
        // `unlock` lines and by the fire panel's input.
        let requireSynced = config.requireSyncedClock
        let verifier = credentials?.verifier
        let modes = DoorModeKeeper(path: demo ? nil : DoorModeKeeper.path(environment),
                                   rules: { verifier?.currentTrust.access },
                                   synchronized: { clockWatch?.judgesTime ?? (!requireSynced || KernelClockSynchronization().isSynchronized) },
                                   wallClockMs: BrokerLink.wallClockMilliseconds, clock: MonotonicClock(label: "kiosk.mode"), logger: logger)
        verifier?.follow(lockdown: { modes.isLockdown })
        door.follow(lockdown: { modes.isLockdown })
        modes.attach(door: door.door, watch: lines.watch, fleet: fleet)
        lines.watch?.onEmergency { modes.setEmergency($0) }
        modes.start()
        defer { modes.shutDown() }
        var modeSocket: ModeSocket?
        if !demo, environment["RUNTIME_DIRECTORY"] != nil {
            do {
                modeSocket = try ModeSocket(path: ModeSocket.path(environment), keeper: modes, logger: logger)
            } catch {
                logger.warning("mode_socket_unavailable", ["error": .text(String(describing: error)),
                                                           "hint": "kiosk mode cannot reach this kiosk; the building's mode command still can"])
            }
        }
        defer { modeSocket?.shutDown() }
        // issue 25: the door's inputs on their own thread; the building's commands.
        if let watch = lines.watch {
            watch.report(to: fleet)
            // The tamper loop in the OSDP reader's LSTATR (1 tamper, 0 normal).
            if let osdp { watch.onTamper { osdp.tamper($0) } }
            watch.start()
            if let sim = lines.simulatedChip { SimulatedInputFeed.start(chip: sim, config: config, logger: logger) }
        }
        if let fleetLink, config.mqttCommands {
            lateCommands.set(BuildingCommands(maxAgeSeconds: config.commandMaxAgeS, defaultOpenMilliseconds: config.doorMs, door: door,
                                              watch: lines.watch, reloadables: reloadables, modes: modes, logger: logger,
                                              wallClockMs: BrokerLink.wallClockMilliseconds) { fleetLink.publishCommandResult($0) })
        }
        let service = ScanService(configuration: config, source: source, door: door, hook: hook, torch: torch,
                                  notifier: SystemdNotifier(),
                                  stats: StatsReporter(intervalSeconds: config.statsSeconds, metricsFile: config.metricsFile, logger: logger),
                                  fleet: fleet, credentials: credentials, logger: logger, stop: stop, processStartNs: processStartNs)
        let credentialsMode = config.verdict == .credentials
        service.onReport = { symbol, _ in
            demoScene?.record(symbol)
            // issue 22: the controller gets the code itself, except in credentials mode, where a
            // payload is a token: there only a valid credential's subject goes (onCredential).
            if !credentialsMode { osdp?.reported(payload: symbol.bytes) }
        }
        if credentialsMode {
            let osdpReader = osdp
            service.onCredential = { outcome in
                if outcome.granted, let sub = outcome.sub { osdpReader?.reported(payload: Array(sub.utf8)) }
                if outcome.granted { modes.granted(groups: outcome.groups) }
            }
        }
        service.onSourceEnded = { osdp?.settle() }
        service.doorWatch = lines.watch
        if !config.camera.isReplay { service.decoding.waitNs = DecodePipeline.liveWaitNs(fps: config.fps) }
        let reason: StopReason
        do {
            reason = try service.run()
        } catch let error as CameraError where error.needsRestart {
            // libcamera after a stall: only a new process can have the camera; systemd starts one.
            logger.error("camera_unavailable", ["camera": .text(config.camera.description), "error": .text(error.description),
                                                "restart": .bool(true)])
            logger.info("stop", ["reason": "camera unavailable", "frames": .int(service.frames), "decoded": .int(service.decoded)])
            return ExitStatus.unavailable
        } catch {
            logger.error("camera_unavailable", ["camera": .text(config.camera.description), "error": .text(String(describing: error)),
                                                "retried_s": .number(Double(service.startupRetryNs) / 1e9, digits: 0)])
            logger.info("stop", ["reason": "camera unavailable", "frames": 0, "decoded": 0])
            return ExitStatus.unavailable
        }
        logger.info("stop", ["reason": .text(reason.logText), "frames": .int(service.frames), "decoded": .int(service.decoded)])
        // A replay's end is no signal: the broker gets the time to take what is queued.
        if case .sourceEnded = reason { fleetGraceNs = KioskCommand.fleetGraceAtEndNs }
        if let demoScene, case .sourceEnded = reason {
            return demoScene.judge(logger: logger, reopenings: service.reopenings, torchChanges: torch?.changes ?? 0,
                                   screenLooks: torch?.screenLooks ?? 0)
        }
        return ExitStatus.ok
    }

    /// On SIGTERM the kiosk stops within a second (interface.md): the frame loop notices the
    /// signal within its 100 ms poll and the outputs go off in a few ms, so the broker gets 0.5 s
    /// to take what is queued (on a LAN a few ms when connected) and the link 0.7 s in all; what
    /// it has not acknowledged by then stays in the spool for the next start.
    static let fleetGraceOnSignalNs: UInt64 = 500_000_000
    static let fleetLimitOnSignalNs: UInt64 = 700_000_000
    /// At the end of a replay (no one waiting on a stop): BrokerLink's own 2 s.
    static let fleetGraceAtEndNs: UInt64 = 2_000_000_000

    static func makeSource(_ config: Configuration) -> FrameSource {
        switch config.camera {
        case .replay(let folder):
            return ReplaySource(directory: folder, fps: config.fps)
        case .device(let path):
            return V4L2Camera(device: path, width: config.width, height: config.height, fps: config.fps,
                              format: config.format, settings: config.cameraSettings)
        case .libcamera(let id):
            let sensorROI = config.mount.sensorRegion(fromUpright: config.uprightROI)
            return LibcameraCamera(camera: id, width: config.width, height: config.height, fps: config.fps,
                                   settings: config.cameraSettings, sensorROI: sensorROI, zoomROI: config.zoom ? sensorROI : nil)
        }
    }

    static func logGPIOError(_ error: Error, logger: Logger) {
        if let e = error as? GPIOError {
            var fields: [(String, LogValue)] = [("chip", .text(e.chip))]
            if let line = e.line { fields.append(("line", .int(line))) }
            fields.append(("error", .text(e.description)))
            if let holder = e.heldBy { fields.append(("held_by", .text(holder))) }
            logger.log(.error, "gpio_unavailable", fields: fields)
        } else {
            logger.error("gpio_unavailable", ["error": .text(String(describing: error))])
        }
    }
}

/// What must be left inactive if the process has to end at once (a second signal).
/// Set by the frame loop's thread, used by the signal thread: both under `lock`. The outputs'
/// own locks make a shutdown while the frame loop drives a line safe.
final class OutputsOnExit: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var door: DoorReader?
    private var torch: Torch?
    private var watch: DoorWatch?
    func hold(door: DoorReader?, torch: Torch?, watch: DoorWatch? = nil) {
        lock.withLock { self.door = door; self.torch = torch; self.watch = watch }
    }
    func silence() {
        let (d, t, w) = lock.withLock { (door, torch, watch) }
        // The inputs first: an exit button pressed now cannot open a strike being shut.
        w?.shutDown()
        d?.shutDown()
        t?.shutDown()
    }
}

/// The GPIO chip and the lines the configuration asks for: all requested at their inactive level
/// under the consumer name `kiosk`, or none (exit 69 names the chip, the line and its holder).
struct OutputLines {
    /// The buzzer's patterns, the LEDs, the strike and Wiegand (there even with no line: the
    /// verdicts are logged).
    var door: DoorReader
    var torch: Torch?
    /// issue 25: the door's inputs, when any is configured; the simulated chip whose inputs
    /// standard input drives (`KIOSK_GPIO_CHIP=sim`).
    var watch: DoorWatch?
    var simulatedChip: SimulatedChip?

    init(_ config: Configuration, logger: Logger) throws {
        let failures = GPIOWriteFailures(logger: logger)
        let policy = TorchPolicy(settings: .init(mode: config.torch == .on ? .on : config.torch == .off ? .off : .auto,
                                                 onBelow: config.torchOnBelow, offAbove: config.torchOffAbove,
                                                 holdNs: UInt64(config.torchHoldMs) * 1_000_000))
        let clock = MonotonicClock(label: "kiosk.door")
        guard !config.lines.isEmpty || config.watchesDoor else {
            door = DoorReader(configuration: config, lines: .init(), logger: logger, clock: clock, failures: failures)
            return
        }
        let simulated = config.isSimulatedGPIO ? SimulatedChip() : nil
        simulatedChip = simulated
        let chip: GPIOInputChip = try simulated ?? LibgpiodChip(config.gpioChip)
        let gpioLevel: LogLevel = config.isSimulatedGPIO ? .info : .debug
        let onDrive: (Int, Int) -> Void = { offset, level in
            logger.log(gpioLevel, "gpio", ["line": .int(offset), "value": .int(level)])
        }
        var made: [SwitchedOutput] = []
        func output(_ line: Int?, activeLow: Bool) throws -> SwitchedOutput? {
            guard let line else { return nil }
            do {
                let o = try SwitchedOutput(chip: chip, offset: line, activeLow: activeLow, onDrive: onDrive)
                made.append(o)
                return o
            } catch {
                // All or none: the lines taken so far go back, inactive.
                made.forEach { $0.shutDown() }
                throw error
            }
        }
        var lines = DoorReader.Lines()
        lines.buzzer = try output(config.buzzerLine, activeLow: config.buzzerActiveLow)
        let torchOutput = try output(config.torchLine, activeLow: config.torchActiveLow)
        lines.grantedLED = try output(config.grantedLedLine, activeLow: config.grantedLedActiveLow)
        lines.deniedLED = try output(config.deniedLedLine, activeLow: config.deniedLedActiveLow)
        lines.door = try output(config.doorLine, activeLow: config.doorActiveLow)
        if let d0 = try output(config.wiegandD0Line, activeLow: config.wiegandActiveLow),
           let d1 = try output(config.wiegandD1Line, activeLow: config.wiegandActiveLow) {
            lines.wiegand = (d0, d1)
        }
        // issue 25: the inputs, all or none (the outputs go back too when one cannot be had).
        var inputs: [DoorMonitor.Input: DoorWatch.Input] = [:]
        let bias = GPIOBias(rawValue: config.inputBias.rawValue) ?? .pullUp
        for (input, line, activeLow) in [(DoorMonitor.Input.contact, config.doorContactLine, config.doorContactActiveLow),
                                         (.rex, config.rexLine, config.rexActiveLow), (.tamper, config.tamperLine, config.tamperActiveLow),
                                         (.emergency, config.emergencyLine, config.emergencyActiveLow)] {
            guard let line else { continue }
            do {
                let l = try chip.requestInput(offset: line, consumer: "kiosk", activeLow: activeLow, bias: bias,
                                              debounceMicroseconds: config.inputDebounceMs * 1000)
                inputs[input] = DoorWatch.Input(line: l, activeLow: activeLow)
            } catch {
                inputs.values.forEach { $0.line.release() }
                made.forEach { $0.shutDown() }
                throw error
            }
        }
        door = DoorReader(configuration: config, lines: lines, logger: logger, clock: clock, failures: failures)
        torch = torchOutput.map { Torch(policy: policy, output: $0, logger: logger, failures: failures,
                                        screenLook: ScreenLook(settings: .init(afterMs: config.torchScreenMs))) }
        if !inputs.isEmpty {
            // The kernel debounced (libgpiod v2 with a period): the monitor takes the edges as they come.
            let kernelDebounced = inputs.values.allSatisfy { $0.line.kernelDebounced }
            let settings = DoorMonitor.Settings(heldNs: UInt64(config.doorHeldS) * 1_000_000_000,
                                                debounceNs: kernelDebounced ? 0 : UInt64(config.inputDebounceMs) * 1_000_000,
                                                rexOpens: config.rexOpens, relockOnContact: config.doorRelock == .contact,
                                                releaseMilliseconds: config.doorMs)
            watch = DoorWatch(settings: settings, inputs: inputs, door: door, alarmPattern: config.beepAlarm, logger: logger)
            logger.log(.info, "door_inputs", fields: inputs.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, LogValue.int($0.value.line.offset)) }
                        + [("bias", .text(bias.rawValue)), ("debounce", .text(config.inputDebounceMs == 0 ? "off" : kernelDebounced ? "kernel" : "kiosk"))])
        }
    }
}

/// issue 25: the building's commands, whose handler is made after the link starts (it needs the
/// door); a command that comes before (a retained one, at the subscription) waits for it, in
/// order, and is judged then like any other (it was dropped unanswered when the handler came late).
final class LateCommands: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var target: BuildingCommands?
    private var early: [(payload: [UInt8], retained: Bool)] = []
    func set(_ commands: BuildingCommands) {
        lock.withLock {
            target = commands
            for c in early { commands.received(c.payload, retained: c.retained) }
            early = []
        }
    }
    func received(_ payload: [UInt8], retained: Bool) {
        lock.withLock {
            if let target { target.received(payload, retained: retained) } else if early.count < 64 { early.append((payload, retained)) }
        }
    }
}

/// Counts what the demo reported, to say at the end whether the scene went as narrated.
final class ScriptedSceneHandle {
    private var inside = 0
    private var outside = 0

    func record(_ symbol: DecodedSymbol) {
        if [DemoScene.codeInsideROI, DemoScene.codeUnderTorch, DemoScene.codeOnPhone].contains(symbol.text) { inside += 1 }
        if symbol.text == DemoScene.codeOutsideROI { outside += 1 }
    }

    func judge(logger: Logger, reopenings: Int, torchChanges: Int, screenLooks: Int) -> Int32 {
        let pass = inside == DemoScene.expectedScans && outside == 0 && reopenings == 1 && torchChanges == 2 && screenLooks == 1
        logger.log(pass ? .info : .error, "demo_result", [
            "result": pass ? "pass" : "fail", "expected_scans": .int(DemoScene.expectedScans),
            "scans": .int(inside), "outside_roi_scans": .int(outside), "camera_reopens": .int(reopenings),
            "torch_changes": .int(torchChanges), "screen_looks": .int(screenLooks),
        ])
        return pass ? ExitStatus.ok : ExitStatus.failure
    }
}
