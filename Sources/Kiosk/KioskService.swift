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
import Speech
import Systemd

public let kioskVersion = "0.1.0"

/// The composition root: the one place where the running kiosk is put together from its parts, in
/// the order they must start, by one assembler a concern (each builds its part and says what must
/// stop), on one clock; `Shutdown` takes them apart in the reverse order on every way out. The
/// command line parses arguments and calls `run`; nothing here calls back into it.
public enum KioskService {
    public static func run(configuration: Configuration, logger: Logger, environment: [String: String], demo: Bool,
                           processStartNs: UInt64, clock: Clock = MonotonicClock()) -> Int32 {
        let a = Assembly(config: demo ? DemoScene.configure(configuration) : configuration, environment: environment,
                         logger: logger, clock: clock, demo: demo)
        logStart(a)
        let signals = SignalHandling(stop: a.stop, logger: logger, reloadables: a.reloadables) { [outputs = a.outputs] in
            outputs.silence()
            _exit(ExitStatus.ok)
        }
        let shutdown = Shutdown()
        var reason: StopReason?
        defer { shutdown.run(after: reason); withExtendedLifetime(signals) {} }
        do {
            let volatile = CredentialSetup.stateVolatile(a)
            let bundles = try CredentialSetup.bundles(a)
            shutdown.add { _ in bundles?.shutDown() }
            let commands = LateCommands()
            let link = try FleetSetup.assemble(a, commands: commands, bundles: bundles)
            shutdown.add { reason in link.map { FleetSetup.stop($0, after: reason) } }
            let credentials = try CredentialSetup.assemble(a, bundles: bundles, volatile: volatile)
            shutdown.add { _ in credentials?.worker.shutDown(); credentials?.clockWatch?.shutDown() }
            let lines = try OutputLines.assemble(a)
            shutdown.add { _ in a.outputs.silence() }
            let speech = try SpeechSetup.assemble(a, lines: lines)
            shutdown.add { _ in speech?.speaker.stop() }
            let osdp = try OSDPReader.assemble(a, door: lines.door, speech: speech)
            shutdown.add { _ in osdp?.shutDown() }
            let keypad = try KeypadSetup.assemble(a, lines: lines, credentials: credentials?.worker, bundles: bundles, osdp: osdp)
            shutdown.add { _ in keypad?.shutDown() }
            let hook = ScanHook.assemble(a)
            // The outputs first: a verdict that comes while the program is ended does nothing.
            shutdown.add { _ in a.outputs.silence(); hook?.shutDown() }
            let (source, demoScene) = try DemoScene.source(a, torch: lines.torch)
            let fleet = link.map { FleetReporter(link: BrokerFleetLink($0), torchOn: lines.torch?.isOn, wallClockMs: BrokerLink.wallClockMilliseconds) }
            CredentialSetup.report(credentials?.clockWatch, bundles, to: fleet)
            let modes = DoorModeKeeper.assemble(a, lines: lines, verifier: credentials?.worker.verifier,
                                                clockWatch: credentials?.clockWatch, fleet: fleet, volatile: volatile)
            shutdown.add { _ in modes.keeper.shutDown(); modes.socket?.shutDown() }
            let setup = SetupDesk.assemble(a, store: credentials?.worker.verifier.store, lines: lines, speech: speech)
            shutdown.add { _ in setup?.shutDown() }
            DoorWatch.start(a, lines: lines, fleet: fleet, osdp: osdp)
            FleetCommands.assemble(a, link: link, commands: commands, lines: lines, modes: modes.keeper)
            let service = ScanService(configuration: a.config, source: source, features: ScanFeatures(
                door: lines.door, hook: hook, fleet: fleet, credentials: credentials?.worker, setup: setup, torch: lines.torch,
                notifier: SystemdNotifier(), stats: StatsReporter(intervalSeconds: a.config.statsSeconds, metricsFile: a.config.metricsFile, logger: logger),
                listeners: ([lines.watch, osdp, modes.keeper, speech, demoScene] as [ScanListener?]).compactMap { $0 }, pin: keypad?.gate),
                logger: logger, stop: a.stop, clock: clock, processStartNs: processStartNs)
            if !a.config.camera.isReplay { service.decoding.waitNs = DecodePipeline.liveWaitNs(fps: a.config.fps) }
            reason = try runLoop(service, a)
            guard let demoScene, reason == .sourceEnded else { return ExitStatus.ok }
            return demoScene.judge(logger: logger, reopenings: service.reopenings, torchChanges: lines.torch?.changes ?? 0,
                                   screenLooks: lines.torch?.screenLooks ?? 0)
        } catch let exit as ServiceExit {
            return exit.status
        } catch {
            return ExitStatus.failure
        }
    }

    /// The `start` event: what runs, on what, where it looks.
    static func logStart(_ a: Assembly) {
        let config = a.config
        a.logger.info("start", [
            "version": .text(kioskVersion), "camera": .text(a.demo ? "demo scene" : config.camera.description),
            "size": .text("\(config.width)x\(config.height)"), "roi": .text(config.uprightROI.description),
            "rotate": .int(config.mount.rotation.rawValue), "mirror": .int(config.mount.mirrored ? 1 : 0),
            "symbologies": .text(config.symbologies.map(\.rawValue).joined(separator: ",")),
        ])
    }

    /// The frame loop until a signal or the end of a replay; the `stop` event. A camera that
    /// cannot be had is exit 69 (`ServiceExit`).
    static func runLoop(_ service: ScanService, _ a: Assembly) throws -> StopReason {
        let reason: StopReason
        do {
            reason = try service.run()
        } catch let error as CameraError where error.needsRestart {
            // libcamera after a stall: only a new process can have the camera; systemd starts one.
            a.logger.error("camera_unavailable", ["camera": .text(a.config.camera.description), "error": .text(error.description),
                                                  "restart": .bool(true)])
            a.logger.info("stop", ["reason": "camera unavailable", "frames": .int(service.frames), "decoded": .int(service.decoded)])
            throw ServiceExit(ExitStatus.unavailable)
        } catch {
            a.logger.error("camera_unavailable", ["camera": .text(a.config.camera.description), "error": .text(String(describing: error)),
                                                  "retried_s": .number(Double(service.startupRetryNs) / 1e9, digits: 0)])
            a.logger.info("stop", ["reason": "camera unavailable", "frames": 0, "decoded": 0])
            throw ServiceExit(ExitStatus.unavailable)
        }
        a.logger.info("stop", ["reason": .text(reason.logText), "frames": .int(service.frames), "decoded": .int(service.decoded)])
        return reason
    }

    public static func makeSource(_ config: Configuration, clock: Clock) -> FrameSource {
        switch config.camera {
        case .replay(let folder):
            return ReplaySource(directory: folder, fps: config.fps)
        case .device(let path):
            return V4L2Camera(device: path, width: config.width, height: config.height, fps: config.fps,
                              format: config.format, settings: config.cameraSettings)
        case .libcamera(let id):
            let sensorROI = config.mount.sensorRegion(fromUpright: config.uprightROI)
            return LibcameraCamera(camera: id, width: config.width, height: config.height, fps: config.fps,
                                   settings: config.cameraSettings, sensorROI: sensorROI, zoomROI: config.zoom ? sensorROI : nil, clock: clock)
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
