// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Reader
import GPIO
import Glibc
import Kiosk
import Fleet
import OSDP
import Platform
import Policy
import Speech
import Systemd

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
        case "setup":
            return SetupCommand.run(Array(args.dropFirst()), environment: environment)
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
      kiosk setup --apply FILE [--root DIR] | --show FILE [--root DIR] | --forget-site [--root DIR]
                                      a signed setup code (KS1:, a file or a PNG): apply it (root;
                                      --root: an SD card's root, the files only), show what it
                                      would change, or forget the pinned site key
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
            logger.configError(e)
        }
        return reading.errors.isEmpty ? (reading.configuration, logger) : nil
    }

    static func check(environment: [String: String]) -> Int32 {
        let reading = Configuration.read(environment: environment)
        guard let (config, logger) = readConfiguration(environment) else { return ExitStatus.config }
        // The files the MQTT settings name: readable (the password itself is never printed).
        if config.isMQTT, case .failure(let problems) = FleetSetup.settings(config, environment) {
            for e in problems.list { logger.configError(e) }
            return ExitStatus.config
        }
        // The OSDP key file is a key (where it comes from is said; the key never).
        var osdpNote: String?
        if config.isOSDP {
            switch OSDPReader.key(config, OSDPStore(environment: environment, keyFile: config.osdpKeyFile)) {
            case .failure(let e):
                logger.configError(e)
                return ExitStatus.config
            case .success(let loaded):
                osdpNote = OSDPReader.checkNote(config, keySource: loaded?.source)
            }
        }
        // The files the credentials' settings name (the secrets are never printed).
        if config.verdict == .credentials {
            // The kept bundle (verified again) decides where each kind is read.
            let site = CredentialSetup.bundleSources(config, environment)
            if let k = site.keyProblem {
                logger.configError(ConfigError(variable: "KIOSK_SITE_KEY", value: config.siteKey ?? "", expected: "the site's public key, a PEM file (EC P-256 or Ed25519): \(k)"))
                return ExitStatus.config
            }
            if config.siteKey != nil {
                print("# bundle: " + (site.bundle.map { "version \($0.bundle.version) in force (\($0.folder))" } ?? "none in force")
                      + (site.problem.map { "; the kept one is not used: \($0)" } ?? ""))
                for line in CredentialSetup.inForceLines(site.sources) { print("# in force: " + line) }
            }
            let (trust, problems) = CredentialFiles.load(config, environment, sources: site.sources)
            for p in problems { logger.configError(ConfigError(variable: p.variable, value: p.value, expected: p.reason)) }
            if !problems.isEmpty { return ExitStatus.config }
            print("# credentials: \(trust.keys.count) keys, \(trust.revoked.count) revoked, \(trust.secrets.count) TOTP holders, "
                  + "\(trust.ticketKeys.count) event keys (pretix), \(trust.holders.count) pass holders")
            print("# clock: " + ClockSetup.checkLine(config, environment, bundleIssued: site.bundle?.bundle.issued))
            // The door's rules as understood, at the local time now.
            if let access = trust.access {
                let now = LocalTime.wallClock(unixSeconds())
                print("# access: \(access.path) at \(now.weekday.name) \(now) local time: \(access.summary)")
                for line in access.rules.understood(at: now, holidays: access.holidays) { print("# access: " + line) }
            }
        }
        // The speaker, the voice and the phrases (an unknown voice, a bad phrases file: exit 78).
        if let speech = SpeechSettings(configuration: config, environment: environment) {
            switch SpeechSetup.checkLine(speech) {
            case .failure(let e):
                logger.configError(e)
                return ExitStatus.config
            case .success(let line):
                print("# speech: " + line)
            }
        }
        // The keypad and the pins file (one that does not read: exit 78, as at start).
        switch KeypadCheck.checkLines(config, environment) {
        case .failure(let e):
            logger.configError(e)
            return ExitStatus.config
        case .success(let lines):
            for line in lines { print("# " + line) }
        }
        // The mode a command left in force (a running kiosk has the same file).
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

    /// The service, wired by its composition root (KioskService.run) once the configuration reads.
    static func run(environment: [String: String], demo: Bool, processStartNs: UInt64) -> Int32 {
        guard let (config, logger) = readConfiguration(environment) else { return ExitStatus.config }
        return KioskService.run(configuration: config, logger: logger, environment: environment, demo: demo,
                                processStartNs: processStartNs)
    }
}
