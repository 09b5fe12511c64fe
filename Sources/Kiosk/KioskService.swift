// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Fleet
import GPIO
import Glibc
import OSDP
import Platform
import Policy
import Reader
import Systemd

public let kioskVersion = "0.1.0"

/// The composition root: the one place where the running kiosk is put together from its parts
/// (the lines, the broker, the verifier, the controller's bus, the modes, the scan program, the
/// camera) in the order they must start, and taken apart in the reverse order on every way out.
/// The command line parses arguments and calls `run`; nothing here calls back into it.
public enum KioskService {
    public static func run(configuration: Configuration, logger: Logger, environment: [String: String], demo: Bool,
                           processStartNs: UInt64) -> Int32 {
        var config = configuration
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
        // Whether the state directory survives a power cut, said once at start.
        var volatile: String?
        if !demo, case .volatile(let why) = StateDirectoryProbe.system.verdict(UsedTokenStore.directory(environment)) {
            volatile = why
            logger.warning("state_volatile", ["folder": .text(UsedTokenStore.directory(environment)), "why": .text(why),
                                              "lost": .text(StateDirectoryProbe.whatIsLost),
                                              "policy": .text(config.volatileState == .refuse
                                                  ? "KIOSK_VOLATILE_STATE=refuse: one-time credentials, uses and ticket entries are denied (state volatile)"
                                                  : "KIOSK_VOLATILE_STATE=accept: judged anyway")])
        }
        let stop = StopSignal()
        // Outputs to silence if a second signal ends the process at once.
        let outputs = OutputsOnExit()
        // What SIGHUP and the building's `reload` command reload (the credentials' files;
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
        // The site's bundles, before the broker (a retained one waits for its thread).
        var siteBundles: SiteBundles?
        if config.verdict == .credentials, config.siteKey != nil {
            guard let b = SiteBundles(config, environment, logger: logger) else { return ExitStatus.config }
            siteBundles = b
        }
        defer { siteBundles?.shutDown() }
        var fleetLink: BrokerLink?
        let lateCommands = LateCommands()
        var fleetGraceNs = KioskService.fleetGraceOnSignalNs
        if config.isMQTT {
            let settings: BrokerSettings
            switch FleetSetup.settings(config, environment) {
            case .success(let s): settings = s
            case .failure(let problems):
                for e in problems.list { logger.configError(e) }
                return ExitStatus.config
            }
            // Libmosquitto is loaded now that it is configured; missing, nothing reaches the broker.
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
                if spool.ignoredLines > 0 {
                    logger.warning("state_damaged", ["file": .text(spool.path),
                                                     "did": .text("kept \(spool.count) queued scan events, skipped \(spool.ignoredLines) torn line(s)")])
                }
            }
            let link = BrokerLink(settings: settings, spool: spool) { FleetSetup.log($0, logger) }
            // The building's commands, once the door is wired (refused until then).
            if settings.commands { link.onCommand { payload, retained in lateCommands.received(payload, retained: retained) } }
            if settings.siteTopic != nil, let siteBundles { link.onSiteBundle { siteBundles.received($0) } }
            link.start()
            fleetLink = link
        }
        defer {
            if let fleetLink {
                fleetLink.stop(graceNs: fleetGraceNs, limitNs: fleetGraceNs == KioskService.fleetGraceOnSignalNs ? KioskService.fleetLimitOnSignalNs : nil)
            }
        }

        // The verifier, before any line is requested (a bad trust directory is exit 78).
        var credentials: CredentialWorker?
        // The clock's source and floor (the bundle's `issued` among the floor's sources).
        let clockWatch = config.verdict == .credentials && !demo ? ClockSetup.watch(config, environment, bundles: siteBundles, logger: logger) : nil
        defer { clockWatch?.shutDown() }
        if config.verdict == .credentials {
            // The bundle file first (what it carries is what the verifier reads).
            siteBundles?.takeFile(reload: false)
            switch CredentialSetup.start(config, environment, sources: siteBundles?.sources, clock: clockWatch, volatile: volatile, logger: logger) {
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

        // The access controller's OSDP reader, on its own thread; shut before the lines.
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
        // The door's modes, kept in $STATE_DIRECTORY/mode (not by the demo), set by the
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
        if let volatile { modes.warnWhenVolatile(volatile) }
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
        // The door's inputs on their own thread; the building's commands.
        if let watch = lines.watch {
            watch.report(to: fleet)
            // The tamper loop in the OSDP reader's LSTATR (1 tamper, 0 normal).
            if let osdp { watch.onTamper { osdp.tamper($0) } }
            watch.start()
            if let sim = lines.simulatedChip { SimulatedInputFeed.start(chip: sim, config: config, logger: logger) }
        }
        if let fleetLink, config.mqttCommands {
            lateCommands.set(FleetCommands(maxAgeSeconds: config.commandMaxAgeS, defaultOpenMilliseconds: config.doorMs, door: door,
                                              watch: lines.watch, reloadables: reloadables, modes: modes, logger: logger,
                                              wallClockMs: BrokerLink.wallClockMilliseconds) { fleetLink.publishCommandResult($0) })
        }
        // The features that hear the loop besides the door, the program and the broker: the
        // door's inputs (their counters), the controller's bus, the modes, the demo's tally.
        let listeners: [ScanListener?] = [lines.watch, osdp, modes, demoScene]
        let service = ScanService(configuration: config, source: source, door: door, hook: hook, torch: torch,
                                  notifier: SystemdNotifier(),
                                  stats: StatsReporter(intervalSeconds: config.statsSeconds, metricsFile: config.metricsFile, logger: logger),
                                  fleet: fleet, credentials: credentials, listeners: listeners.compactMap { $0 },
                                  logger: logger, stop: stop, processStartNs: processStartNs)
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
        if case .sourceEnded = reason { fleetGraceNs = KioskService.fleetGraceAtEndNs }
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

    public static func makeSource(_ config: Configuration) -> FrameSource {
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

    public static func logGPIOError(_ error: Error, logger: Logger) {
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
