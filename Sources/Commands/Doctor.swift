// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Reader
import GPIO
import Glibc
import Kiosk
import Fleet
import Platform
import Policy
import Speech
import Systemd

/// `kiosk doctor`: one PASS/WARN/FAIL line for each thing the configuration points at, so an
/// installer on SSH sees what is wrong and what to do. Exit 1 on any FAIL.
public struct Doctor {
    public enum Verdict: String { case pass = "PASS", warn = "WARN", fail = "FAIL" }

    public struct Check: Equatable {
        public var verdict: Verdict
        public var subject: String
        public var detail: String
        public var line: String { "\(verdict.rawValue) \(subject): \(detail)" }
    }

    public var configuration: Configuration
    /// Opens the camera the configuration names (tests pass a fake).
    public var makeSource: (Configuration) -> FrameSource = { KioskService.makeSource($0, clock: MonotonicClock()) }
    /// Opens a GPIO chip by name for inspection.
    public var openChip: (String) throws -> GPIOChipInspector = { try LibgpiodChip($0) }
    /// The groups the process is in, and whether it is root.
    public var groups: () -> (uid: uid_t, gids: Set<gid_t>) = Doctor.currentGroups
    /// `systemctl` answers, when systemd runs this machine.
    public var systemdState: () -> (active: String, enabled: String)? = Doctor.kioskUnitState

    /// The environment the configuration came from: the password's credential, the spool's folder.
    public var environment: [String: String] = [:]
    /// Asks the broker (DNS, TCP, TLS, login); tests may pass a shorter timeout.
    public var brokerTimeoutNs: UInt64 = 5_000_000_000

    /// Reads whether the state directory survives a power cut (tests pass another).
    public var stateProbe: StateDirectoryProbe = .system

    public init(configuration: Configuration) { self.configuration = configuration }

    public func run() -> [Check] {
        var checks: [Check] = []
        checks += camera()
        checks += gpio()
        checks += door()
        checks += mqtt()
        checks += osdp()
        checks += speech()
        checks += KeypadCheck.doctor(configuration, environment).map {
            Check(verdict: Verdict(rawValue: $0.verdict.rawValue) ?? .fail, subject: $0.subject, detail: $0.detail)
        }
        checks += state()
        checks += CredentialSetup.doctor(configuration, environment)
        if let state = systemdState() {
            let verdict: Verdict = state.active == "active" ? .pass : .warn
            checks.append(Check(verdict: verdict, subject: "systemd", detail: "kiosk.service is \(state.active), \(state.enabled)"))
        }
        return checks
    }

    // MARK: the state directory

    /// Whether this configuration keeps there what a power cut must not lose: used one-time
    /// credentials (credentials mode), the door's mode (a strike), the scans spooled for the broker.
    var keepsState: Bool { configuration.verdict == .credentials || configuration.doorLine != nil || configuration.isMQTT }

    /// Whether /var/lib/kiosk (`$STATE_DIRECTORY`) survives a power cut: FAIL when it is in RAM and
    /// the configuration keeps something there, whatever `KIOSK_VOLATILE_STATE` says.
    public func state() -> [Check] {
        let folder = UsedTokenStore.directory(environment)
        switch stateProbe.verdict(folder) {
        case .durable:
            return [Check(verdict: .pass, subject: "state", detail: "\(folder) survives a power cut (not in RAM)")]
        case .unknown(let why):
            return [Check(verdict: .warn, subject: "state", detail: "\(why): whether it survives a power cut is not known")]
        case .volatile(let why) where !keepsState:
            return [Check(verdict: .warn, subject: "state", detail: "\(why): a power cut loses what is kept there, and this configuration keeps nothing that must survive one "
                          + "(no credentials, no door line, no broker); with any of them this is a FAIL")]
        case .volatile(let why):
            let policy = configuration.volatileState == .refuse
                ? "one-time credentials, uses and ticket entries are denied (KIOSK_VOLATILE_STATE=refuse)"
                : "one-time credentials, uses and ticket entries are judged anyway (KIOSK_VOLATILE_STATE=accept): a used one could open again after a power cut"
            return [Check(verdict: .fail, subject: "state", detail: "\(why): a power cut loses \(StateDirectoryProbe.whatIsLost); \(policy). "
                          + "Put \(folder) on a writable partition of the card (docs/operating.md, Power cuts and the card)")]
        }
    }

    // MARK: camera

    func camera() -> [Check] {
        var checks: [Check] = []
        let c = configuration
        if case .device(let path) = c.camera {
            var st = stat()
            guard stat(path, &st) == 0 else {
                let present = Files.names(in: "/dev")?.filter { $0.hasPrefix("video") }.sorted()
                    .map { "/dev/" + $0 }.joined(separator: " ") ?? ""
                return [Check(verdict: .fail, subject: "camera", detail: "\(path) does not exist (video devices here: \(present.isEmpty ? "none" : present))")]
            }
            checks.append(access(path: path, st: st, role: "camera", group: "video"))
        }
        if case .libcamera = c.camera {
            let plugin = LoadedLibcameraPlugin.shared
            do {
                let path = try plugin.load()
                checks.append(Check(verdict: .pass, subject: "libcamera", detail: "plugin \(path), libcamera \(plugin.libcameraVersion ?? "?")"))
                let ids = try plugin.list()
                guard !ids.isEmpty else {
                    checks.append(Check(verdict: .fail, subject: "libcamera", detail: "libcamera lists no camera (is the ribbon cable in, the camera enabled in config.txt, udev running?)"))
                    return checks
                }
                checks.append(Check(verdict: .pass, subject: "libcamera", detail: "cameras: " + ids.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: ", ")))
            } catch {
                checks.append(Check(verdict: .fail, subject: "libcamera", detail: "\(error)"))
                return checks
            }
        } else if c.zoom {
            checks.append(Check(verdict: .warn, subject: "zoom", detail: "KIOSK_ZOOM=1 needs a camera that crops on its sensor (KIOSK_CAMERA=libcamera); \(c.camera) cannot, so the ROI is cut from the whole frame"))
        }
        let source = makeSource(c)
        let description: CameraDescription
        do {
            description = try source.open()
        } catch {
            let e = error as? CameraError
            let verdict: Verdict = e?.errno == EBUSY ? .warn : .fail
            let hint = e?.errno == EBUSY ? " (the kiosk service is probably using it: stop it for a full check)" : ""
            checks.append(Check(verdict: verdict, subject: "camera", detail: "cannot open \(c.camera): \(error)\(hint)"))
            return checks
        }
        defer { source.close() }
        checks.append(Check(verdict: .pass, subject: "camera", detail: "\(description.device) opens: \(description.format) \(description.width)x\(description.height) at \(Format.fixed(description.fps, 1)) fps"))
        if case .device = c.camera, description.width != c.width || description.height != c.height {
            checks.append(Check(verdict: .warn, subject: "camera", detail: "asked for \(c.width)x\(c.height), the driver gave \(description.width)x\(description.height): KIOSK_SIZE=\(description.width)x\(description.height) says what you get"))
        }
        if case .device = c.camera, c.fps > 0, description.fps > 0, abs(description.fps - c.fps) > 0.5 {
            checks.append(Check(verdict: .warn, subject: "camera", detail: "asked for \(Configuration.trim(c.fps)) fps, the driver gave \(Format.fixed(description.fps, 1))"))
        }
        // Brightness from a few frames (the exposure needs a moment).
        let estimator = BrightnessEstimator()
        var last: Double?
        for _ in 0..<30 {
            guard case .frame(let frame)? = try? source.nextFrame(timeoutMs: 1000) else { break }
            last = ambientBrightness(meanLuma: estimator.meanLuma(frame.luma), exposure: source.exposure)
        }
        guard let brightness = last else {
            checks.append(Check(verdict: .fail, subject: "camera", detail: "no frame within a second"))
            return checks
        }
        let b = Format.fixed(brightness, 1)
        let advice: String
        switch c.torch {
        case .on: advice = "KIOSK_TORCH=on: the torch is always on"
        case .off: advice = "KIOSK_TORCH=off: the torch stays off"
        case .auto:
            if brightness < c.torchOnBelow { advice = "below KIOSK_TORCH_ON_BELOW=\(Configuration.trim(c.torchOnBelow)): the torch would go on" }
            else if brightness > c.torchOffAbove { advice = "above KIOSK_TORCH_OFF_ABOVE=\(Configuration.trim(c.torchOffAbove)): the torch would stay off" }
            else { advice = "between the thresholds: the torch would stay as it is" }
        }
        checks.append(Check(verdict: .pass, subject: "brightness", detail: "\(b) (\(source.exposure == nil ? "mean luma" : "exposure-normalised")); \(advice)"))
        checks += controlChecks(source.controls, lens: source.lens)
        if let lc = source as? LibcameraCamera { checks += libcameraChecks(lc, brightness: brightness) }
        return checks
    }

    /// Focus and exposure: what the camera took of KIOSK_FOCUS and KIOSK_EXPOSURE, what
    /// it lacks, and for a camera without a lens motor or focus control how to check its focus.
    func controlChecks(_ report: CameraControlReport?, lens: LensReading?) -> [Check] {
        guard let report else { return [] }
        var checks: [Check] = []
        let c = configuration.cameraSettings
        let set = report.set.isEmpty ? "nothing set" : "set " + report.set.joined(separator: ",")
        let missing = report.missing.isEmpty ? "" : "; the camera lacks " + report.missing.joined(separator: ",")
        checks.append(Check(verdict: report.refused.isEmpty ? .pass : .warn, subject: "controls",
                            detail: set + missing + (report.refused.isEmpty ? "" : "; refused: " + report.refused.joined(separator: "; "))))
        if report.fixedFocus, c.focus != .camera {
            checks.append(Check(verdict: .warn, subject: "focus",
                                detail: "fixed focus: the camera has no lens motor or focus control, so KIOSK_FOCUS=\(c.focus) cannot be set. "
                                    + "Check it with a code held where visitors hold theirs: stop the service and run `kiosk aim` "
                                    + "(sharpness highest, hint \"good\"); turn the lens by hand if it has a ring (Camera Module 2: the focus tool)"))
        } else if case .v4l2 = c.focus, report.missing.contains("focus_absolute") {
            checks.append(Check(verdict: .warn, subject: "focus", detail: "KIOSK_FOCUS=\(c.focus) needs a USB camera with focus_absolute; this one has none"))
        } else if let position = lens?.position {
            checks.append(Check(verdict: .pass, subject: "focus", detail: "lens at \(Format.fixed(position, 2))\(lens?.afState.map { ", autofocus \($0)" } ?? "") (KIOSK_FOCUS=\(c.focus))"))
        }
        return checks
    }

    /// What libcamera's metadata and controls give the kiosk: the light figures the torch uses,
    /// metering, and whether zoom can crop.
    func libcameraChecks(_ lc: LibcameraCamera, brightness: Double) -> [Check] {
        var checks: [Check] = []
        let light = lc.light
        if let e = light.exposure {
            var detail = "exposure \(Format.fixed(e.seconds * 1000, 2)) ms, analogue gain \(Format.fixed(e.gain, 2))"
            if let lux = light.lux {
                // The torch decides on the brightness figure; Lux is the IPA's own estimate of the
                // same scene, shown beside it so an installer can relate the thresholds to a light meter.
                detail += ", Lux \(Format.fixed(lux, 1)) (brightness \(Format.fixed(brightness, 1)) here: the thresholds compare with the brightness figure, not with Lux)"
            }
            checks.append(Check(verdict: .pass, subject: "light", detail: detail))
        } else {
            checks.append(Check(verdict: .warn, subject: "light", detail: "the camera reports no ExposureTime: the torch decides on the picture's mean luma alone"))
        }
        guard let info = lc.info else { return checks }
        if !info.hasMetering {
            checks.append(Check(verdict: .warn, subject: "metering", detail: "the camera has no AeMeteringMode: a bright phone screen may be under-exposed"))
        }
        if configuration.zoom {
            if info.canCrop, let crop = lc.zoomCrop {
                checks.append(Check(verdict: .pass, subject: "zoom", detail: "ScalerCrop \(crop) of the sensor's \(info.cropMaximum) for the ROI"))
            } else {
                checks.append(Check(verdict: .warn, subject: "zoom", detail: "KIOSK_ZOOM=1 but the camera has no ScalerCrop: the ROI is cut from the whole frame"))
            }
        }
        return checks
    }

    // MARK: GPIO

    func gpio() -> [Check] {
        let c = configuration
        let roles: [(String, Int?)] = [("buzzer", c.buzzerLine), ("torch", c.torchLine), ("granted LED", c.grantedLedLine),
                                       ("denied LED", c.deniedLedLine), ("door strike", c.doorLine),
                                       ("wiegand D0", c.wiegandD0Line), ("wiegand D1", c.wiegandD1Line)]
        let lines = roles.compactMap { role, line in line.map { (role, $0) } }
        // The inputs, each with what its active level means.
        let inputRoles: [(String, Int?, Bool, String)] = [("door contact", c.doorContactLine, c.doorContactActiveLow, "the door is open|the door is shut"),
                                                          ("exit button", c.rexLine, c.rexActiveLow, "pressed|released"),
                                                          ("tamper", c.tamperLine, c.tamperActiveLow, "tampered|the loop is whole"),
                                                          // A Wiegand keypad's lines idle high (pulled up); a bit pulls one low.
                                                          ("keypad D0", c.keypad?.lines.first, false, "idle (high)|low: a bit being sent, or the line shorted to ground"),
                                                          ("keypad D1", c.keypad?.lines.last, false, "idle (high)|low: a bit being sent, or the line shorted to ground")]
        let inputs = inputRoles.compactMap { role, line, activeLow, meaning in line.map { (role, $0, activeLow, meaning) } }
        guard !lines.isEmpty || !inputs.isEmpty else {
            return [Check(verdict: .pass, subject: "gpio", detail: "no buzzer or torch line configured")]
        }
        if c.isSimulatedGPIO {
            return [Check(verdict: .pass, subject: "gpio", detail: "simulated lines (KIOSK_GPIO_CHIP=sim): they only log")]
        }
        var checks: [Check] = []
        let chip: GPIOChipInspector
        do {
            chip = try openChip(c.gpioChip)
        } catch {
            let chips = Files.names(in: "/dev")?.filter { $0.hasPrefix("gpiochip") }.sorted().joined(separator: " ") ?? ""
            return [Check(verdict: .fail, subject: "gpio", detail: "\(error) (chips here: \(chips.isEmpty ? "none" : chips))")]
        }
        checks.append(Check(verdict: .pass, subject: "gpio", detail: "chip \(c.gpioChip) is \(chip.kernelName) [\(chip.label)] with \(chip.lineCount) lines, through \(LibgpiodChip.libraryVersion)"))
        let path = "/dev/" + chip.kernelName
        var st = stat()
        if stat(path, &st) == 0 { checks.append(access(path: path, st: st, role: "gpio", group: "gpio")) }
        for (role, offset) in lines {
            do {
                let info = try chip.lineInfo(offset: offset)
                let name = info.name.map { " (\($0))" } ?? ""
                if info.used {
                    let holder = info.consumer ?? "the kernel"
                    let verdict: Verdict = holder == "kiosk" ? .warn : .fail
                    let hint = holder == "kiosk" ? ": the kiosk service holds it (running)" : ": stop that program or choose another line"
                    checks.append(Check(verdict: verdict, subject: "gpio \(role)", detail: "line \(offset)\(name) is held by \"\(holder)\"\(hint)"))
                } else {
                    checks.append(Check(verdict: .pass, subject: "gpio \(role)", detail: "line \(offset)\(name) is free"))
                }
            } catch {
                checks.append(Check(verdict: .fail, subject: "gpio \(role)", detail: "\(error)"))
            }
        }
        checks += inputChecks(inputs, chip: chip)
        return checks
    }

    /// Each input free or held; a free one is requested for a moment (as the service
    /// would: bias, under "kiosk-doctor") to read its level now, then given back.
    func inputChecks(_ inputs: [(String, Int, Bool, String)], chip: GPIOChipInspector) -> [Check] {
        let c = configuration
        let bias = GPIOBias(rawValue: c.inputBias.rawValue) ?? .pullUp
        return inputs.map { role, offset, activeLow, meaning in
            do {
                let info = try chip.lineInfo(offset: offset)
                let name = info.name.map { " (\($0))" } ?? ""
                if info.used {
                    let holder = info.consumer ?? "the kernel"
                    if holder == "kiosk" {
                        return Check(verdict: .warn, subject: "gpio \(role)", detail: "input line \(offset)\(name) is held by \"kiosk\": the kiosk service holds it (running); its level is in the service's log")
                    }
                    return Check(verdict: .fail, subject: "gpio \(role)", detail: "input line \(offset)\(name) is held by \"\(holder)\": stop that program or choose another line")
                }
                guard let inputChip = chip as? GPIOInputChip else {
                    return Check(verdict: .pass, subject: "gpio \(role)", detail: "input line \(offset)\(name) is free")
                }
                let line = try inputChip.requestInput(offset: offset, consumer: "kiosk-doctor", activeLow: activeLow, bias: bias, debounceMicroseconds: 0)
                defer { line.release() }
                let level = try line.level()
                let active = (level != 0) != activeLow
                let says = meaning.split(separator: "|").map(String.init)
                return Check(verdict: .pass, subject: "gpio \(role)",
                             detail: "input line \(offset)\(name) is free; level \(level) now with \(bias.rawValue)\(activeLow ? ", active-low" : ""): \(active ? says[0] : says[1])")
            } catch {
                return Check(verdict: .fail, subject: "gpio \(role)", detail: "\(error)")
            }
        }
    }

    // MARK: the door reader

    /// The verdict, its patterns and outputs, and what a Wiegand controller would receive; nothing
    /// when none of the door's variables is set (the old doctor output).
    func door() -> [Check] {
        let c = configuration
        var checks: [Check] = []
        func pattern(_ p: BeepPattern) -> String { p.isSilent ? "silent" : p.description }
        if c.verdict == .credentials {
            var detail = "KIOSK_VERDICT=credentials: signed credentials (\(c.credentialPrefix)) and rotating codes (KT1:) checked here"
            detail += c.onScan.map { "; other codes: \($0) decides" } ?? "; other codes are denied (not a credential)"
            detail += "; issuers \(c.credentialIssuers?.joined(separator: ",") ?? "any trusted key"), audience \(c.credentialAudience ?? "unset")"
            detail += ", skew \(c.clockSkewS) s, antipassback \(c.antipassbackS) s"
            checks.append(Check(verdict: .pass, subject: "verdict", detail: detail))
        }
        if c.verdict == .hook {
            var detail = "KIOSK_VERDICT=hook: \(c.onScan ?? "?") decides (exit 0 granted, 1 denied, else error) within \(c.verdictMs) ms"
            detail += "; patterns: read \(pattern(c.readPattern)), granted \(pattern(c.beepGranted)), denied \(pattern(c.beepDenied)), error \(pattern(c.beepError))"
            detail += c.buzzerLine == nil ? " (no KIOSK_BUZZER_LINE: not heard)" : " on line \(c.buzzerLine!)"
            checks.append(Check(verdict: .pass, subject: "verdict", detail: detail))
            var outputs: [String] = []
            if let l = c.grantedLedLine { outputs.append("granted LED line \(l)") }
            if let l = c.deniedLedLine { outputs.append("denied LED line \(l)") }
            if !outputs.isEmpty { outputs[outputs.count - 1] += " lit \(c.ledMs) ms" }
            if let l = c.doorLine { outputs.append("door strike line \(l)\(c.doorActiveLow ? " (active-low)" : "") open \(c.doorMs) ms on each grant") }
            if !outputs.isEmpty { checks.append(Check(verdict: .pass, subject: "door", detail: outputs.joined(separator: ", "))) }
        }
        if c.isWiegand {
            checks.append(Check(verdict: .pass, subject: "wiegand", detail: Doctor.wiegandSample(c)))
        }
        return checks
    }

    // MARK: the building's broker

    /// With `KIOSK_MQTT_URL`: the settings and libmosquitto, the spool's folder, then the broker
    /// itself step by step (`BrokerChecks`: dns, tcp, tls, login). Nothing without it. The
    /// password is never shown: only the file it came from.
    func mqtt() -> [Check] {
        let c = configuration
        guard let url = c.mqttURL else { return [] }
        var checks: [Check] = []
        let settings: BrokerSettings
        switch FleetSetup.settings(c, environment) {
        case .success(let s): settings = s
        case .failure(let problems):
            return problems.list.map { Check(verdict: .fail, subject: "mqtt", detail: "\($0.variable)=\($0.value): expected \($0.expected)") }
        }
        var login = "anonymous"
        if let user = c.mqttUser {
            login = "user \(user)" + (FleetSetup.passwordFile(c, environment).map { ", password from \($0)" } ?? " without a password")
        }
        let discovery = c.mqttDiscovery.map { "Home Assistant discovery under \($0)/" } ?? "no discovery"
        if let problem = BrokerLink.loadLibrary() {  // Loaded on first use, and KIOSK_MQTT_URL uses it
            checks.append(Check(verdict: .fail, subject: "mqtt", detail: "\(problem); the kiosk will not start (exit 69)"))
            return checks
        }
        checks.append(Check(verdict: .pass, subject: "mqtt", detail: "\(url) as client \(c.mqttClientID), \(login), topics \(c.mqttTopic)/{status,scan,state,stats}, \(discovery); libmosquitto \(BrokerLink.libraryVersion)"))
        let folder = FleetSetup.spoolDirectory(environment)
        if Glibc.access(folder, W_OK) == 0 {
            checks.append(Check(verdict: .pass, subject: "mqtt spool", detail: "\(folder) is writable: up to \(c.mqttQueue) scan events wait there while the broker is away"))
        } else {
            checks.append(Check(verdict: .fail, subject: "mqtt spool", detail: "\(folder) is not writable (\(Errno.current.message)): the kiosk will not start; set STATE_DIRECTORY (systemd's StateDirectory=kiosk does) or run as the kiosk user"))
        }
        for b in BrokerChecks.run(settings, timeoutNs: brokerTimeoutNs) {
            checks.append(Check(verdict: Verdict(rawValue: b.verdict.rawValue) ?? .fail, subject: "mqtt \(b.name)", detail: b.detail))
        }
        return checks
    }

    /// How the kiosk sends a card to the controller, with a sample card's frame, grouped
    /// (parity, facility, card, parity): what an installer compares with the controller's log.
    static func wiegandSample(_ c: Configuration) -> String {
        let facility = c.wiegandFacility == 0 ? 18 : c.wiegandFacility
        let sample = WiegandFrame(WiegandCredential(facility: facility, card: 36963), format: c.wiegandFormat)!
        let pin = c.wiegandActiveLow ? "low" : "high"
        return "\(c.wiegandFormat.rawValue)-bit on D0 line \(c.wiegandD0Line!) and D1 line \(c.wiegandD1Line!), \(c.wiegandPulseUs) us pulses every \(c.wiegandIntervalUs) us (the pin goes \(pin) for a pulse); default facility \(c.wiegandFacility); the code \(facility):36963 is sent as \(sample.grouped)"
    }

    // MARK: the speaker

    /// With `KIOSK_SPEAKER`: libasound, the voice, the phrases, the speaker opened and heard.
    func speech() -> [Check] {
        guard let settings = SpeechSettings(configuration: configuration, environment: environment) else { return [] }
        return SpeechSetup.doctor(settings).map { Check(verdict: Verdict(rawValue: $0.verdict.rawValue) ?? .fail, subject: $0.subject, detail: $0.detail) }
    }

    // MARK: permissions and systemd

    func access(path: String, st: stat, role: String, group: String) -> Check {
        let me = groups()
        if me.uid == 0 { return Check(verdict: .pass, subject: "permissions", detail: "running as root: \(path) is accessible (the service runs as user kiosk)") }
        let worldRW = st.st_mode & 0o006 == 0o006
        let groupRW = st.st_mode & 0o060 == 0o060 && me.gids.contains(st.st_gid)
        let owner = st.st_uid == me.uid && st.st_mode & 0o600 == 0o600
        let groupName = getgrgid(st.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(st.st_gid)
        if worldRW || groupRW || owner {
            return Check(verdict: .pass, subject: "permissions", detail: "\(path) is readable and writable (group \(groupName))")
        }
        return Check(verdict: .fail, subject: "permissions", detail: "\(path) belongs to group \(groupName) and this user is not in it: sudo usermod -aG \(groupName) $USER (then log in again)")
    }

    static func currentGroups() -> (uid: uid_t, gids: Set<gid_t>) {
        let n = getgroups(0, nil)
        var list = [gid_t](repeating: 0, count: Int(max(0, n)))
        _ = getgroups(n, &list)
        return (getuid(), Set(list + [getgid()]))
    }

    static func kioskUnitState() -> (active: String, enabled: String)? {
        guard Files.exists("/run/systemd/system") else { return nil }
        func ask(_ verb: String) -> String {
            guard let out = programOutput("/bin/systemctl", [verb, "kiosk.service"]) else { return "unknown" }
            return String(out.split(whereSeparator: { $0 == "\n" || $0 == " " }).first ?? "")
        }
        return (ask("is-active"), ask("is-enabled"))
    }
}

extension KioskCommand {
    static func doctor(environment: [String: String]) -> Int32 {
        let reading = Configuration.read(environment: environment)
        guard reading.errors.isEmpty else {
            for e in reading.errors { print("FAIL configuration: \(e.variable)=\(e.value): expected \(e.expected)") }
            return ExitStatus.failure
        }
        for w in reading.warnings {
            if let reason = w.reason { print("WARN configuration: \(w.variable): \(reason)"); continue }
            print("WARN configuration: \(w.variable) is not a kiosk setting\(w.suggestion.map { " (did you mean \($0)?)" } ?? "")")
        }
        var doctor = Doctor(configuration: reading.configuration)
        doctor.environment = environment
        let checks = doctor.run()
        for c in checks { print(c.line) }
        return checks.contains { $0.verdict == .fail } ? ExitStatus.failure : ExitStatus.ok
    }
}
