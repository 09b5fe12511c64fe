// SPDX-License-Identifier: Apache-2.0

/// Where the frames come from.
public enum CameraSetting: Equatable, CustomStringConvertible {
    /// Image files, not a camera: frames come as fast as they are taken.
    public var isReplay: Bool { if case .replay = self { return true } else { return false } }
    case device(String)
    case replay(folder: String)
    /// A camera through libcamera (a Raspberry Pi Camera Module): "" for the first one libcamera
    /// lists, else an id as `cam --list` prints it, or an index into that list.
    case libcamera(String)

    public var description: String {
        switch self {
        case .device(let path): return path
        case .replay(let folder): return "replay:\(folder)"
        case .libcamera(let id): return id.isEmpty ? "libcamera" : "libcamera:\(id)"
        }
    }
}

public enum TorchMode: String, CaseIterable {
    case auto, on, off
}

/// The kiosk's settings, read once from the environment at start (interface.md).
public struct Configuration: Equatable {
    public var camera: CameraSetting = .device("/dev/video0")
    public var width = 640
    public var height = 480
    public var fps: Double = 30
    public var format: RequestedPixelFormat = .auto
    /// Crop on the sensor to the ROI where the camera can (libcamera's ScalerCrop).
    public var zoom = false
    public var mount = Mount()
    public var uprightROI = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
    /// Focus, exposure for screens and the mains filter: `CameraControls`.
    public var cameraSettings = CameraSettings()
    /// Something held with the torch on and nothing read for this long: the torch goes off for a
    /// short look (a phone screen lights itself). 0: never.
    public var torchScreenMs = 400
    /// What a door is shown (docs/design/reading-codes.md: tickets, boarding passes, IDs, parcels),
    /// chosen by measurement (docs/measurements/frame-loop.md).
    public var symbologies: [Symbology] = [.qrcode, .ean13, .ean8, .upca, .code128, .aztec, .datamatrix, .pdf417]
    public var repeatMs = 3000
    public var gpioChip = "gpiochip0"
    public var torchLine: Int?
    public var torchActiveLow = false
    public var torch: TorchMode = .auto
    public var torchOnBelow: Double = 50
    public var torchOffAbove: Double = 80
    public var torchHoldMs = 2000
    public var buzzerLine: Int?
    public var buzzerActiveLow = false
    public var beepMs = 120
    public var onScan: String?
    public var logLevel: LogLevel = .info
    public var logFormat: LogFormat = .logfmt
    public var statsSeconds = 60
    public var metricsFile: String?

    // The door reader; none of it set: 0.1's behaviour.
    public var verdict: VerdictMode = .none
    public var verdictMs = VerdictMode.defaultMilliseconds
    /// `KIOSK_BEEP_READ` as given; nil: its default (`readPattern`).
    public var beepRead: BeepPattern?
    public var beepGranted = BeepPattern.granted
    public var beepDenied = BeepPattern.denied
    public var beepError = BeepPattern.error
    public var grantedLedLine: Int?
    public var grantedLedActiveLow = false
    public var deniedLedLine: Int?
    public var deniedLedActiveLow = false
    public var ledMs = Configuration.defaultLedMs
    public var doorLine: Int?
    public var doorActiveLow = false
    public var doorMs = StrikePolicy.defaultOpenMilliseconds
    public var wiegandD0Line: Int?
    public var wiegandD1Line: Int?
    /// The Pi's pin is low during a pulse (a non-inverting level shifter: the pin follows the
    /// wire). Off by default: the documented open-collector NPN stage inverts, the pin goes high
    /// to pull the 5 V line low.
    public var wiegandActiveLow = false
    public var wiegandFormat: WiegandFormat = .h10301
    public var wiegandFacility = 0
    public var wiegandPulseUs = WiegandTiming.defaultPulseMicroseconds
    public var wiegandIntervalUs = WiegandTiming.defaultIntervalMicroseconds

    // A building of kiosks: off unless `KIOSK_MQTT_URL` is set.
    public var mqttURL: BrokerAddress?
    /// `KIOSK_MQTT_TOPIC` as given; nil: `kiosk/<hostname>` (`mqttTopic`).
    public var mqttTopicGiven: String?
    /// `KIOSK_MQTT_CLIENT_ID` as given; nil: the topic's last level (`mqttClientID`).
    public var mqttClientIDGiven: String?
    public var mqttUser: String?
    /// The file the password is read from (never the password: that is read at start, in `run`).
    public var mqttPasswordFile: String?
    public var mqttCAFile: String?
    /// Home Assistant's discovery prefix; nil (`KIOSK_MQTT_DISCOVERY` given empty): no discovery.
    public var mqttDiscovery: String? = "homeassistant"
    /// Scan events kept while the broker is away (the spool's capacity).
    public var mqttQueue = Configuration.defaultMQTTQueue
    // Credentials (KIOSK_VERDICT=credentials); files are read at start, not here.
    public var credentialPrefix = CredentialKind.defaultSignedPrefix
    public var trustDir = "/etc/kiosk/trust"
    /// nil: any trusted key's credential, whatever its iss.
    public var credentialIssuers: [String]?
    public var credentialAudience: String?
    public var revokedFile = "/etc/kiosk/revoked"
    /// nil: systemd's credential `totp-secrets` when there is one, else no rotating codes.
    public var totpFile: String?
    public var clockSkewS = 30
    public var antipassbackS = 0
    public var requireSyncedClock = true
    /// `KIOSK_REQUIRE_SYNCED_CLOCK=ntp` (with `requireSyncedClock`): only NTP, not an RTC.
    public var clockNTPOnly = false
    // Who may enter, and when (credentials mode); nil: every valid credential opens.
    public var accessFile: String?
    // How many times an event ticket opens; 0: any number (not counted).
    public var ticketEntries = 1
    // Passes bound to the holder's phone; the holders file is read at start, not here.
    public var holdersFile = "/etc/kiosk/holders"
    public var passWindowS = Pass.defaultWindowS
    // A PIN and a duress code (interface.md 0.6).
    /// The door's keypad; nil: none.
    public var keypad: KeypadSetting?
    public var pinsFile = "/etc/kiosk/pins"
    public var pinWindowS = PINEntryPolicy.defaultWindowS
    public var duressCode: DuressCode = .plus1
    // Site bundles; nil key: no bundle is taken.
    public var siteKey: String?
    public var siteTopic: String?
    public var bundleFile: String?
    // When the state directory does not survive a power cut.
    public var volatileState: VolatileState = .refuse
    // Set up at the door by a signed code: when codes are taken.
    public var setupMode: SetupMode = .boot
    public var setupWindowS = SetupWindow.defaultWindowS

    /// The rules a credential is judged by.
    public var credentialRules: CredentialRules {
        CredentialRules(issuers: credentialIssuers, audience: credentialAudience, skewSeconds: Int64(clockSkewS),
                        requireSyncedClock: requireSyncedClock, ticketEntries: ticketEntries, passWindowSeconds: Int64(passWindowS))
    }

    /// This machine's name (gethostname, given to `read` by the shell): the default topic's last level.
    public var hostname = "kiosk"

    // The kiosk as an OSDP reader; off unless `KIOSK_OSDP_PORT` is set.
    public var osdpPort: String?
    public var osdpBaud = 9600
    public var osdpAddress = 0
    /// The file the Secure Channel base key is read from (never the key: that is read in `run`).
    public var osdpKeyFile: String?
    public var osdpInstallMode = false
    public var osdpRequireSecure = true
    public var osdpCardFormat: OSDPCardFormat = .wiegand26
    /// Whether the kiosk is an OSDP reader (`KIOSK_OSDP_PORT` set).
    public var isOSDP: Bool { osdpPort != nil }
    // The door's inputs and alarms, commands from the building; no input line set: none watched.
    public var doorContactLine: Int?
    public var doorContactActiveLow = false
    public var rexLine: Int?
    public var rexActiveLow = false
    public var tamperLine: Int?
    public var tamperActiveLow = false
    /// The fire panel's relay: while active the strike is held released.
    public var emergencyLine: Int?
    public var emergencyActiveLow = false
    public var inputBias: InputBias = .pullUp
    public var inputDebounceMs = 20
    public var doorHeldS = 30
    public var rexOpens = true
    public var doorRelock: DoorRelock = .time
    public var beepAlarm = BeepPattern.alarm
    public var mqttCommands = false
    public var commandMaxAgeS = 30

    // The door speaks (interface.md 0.6); no speaker: no speech.
    public var speaker: String?
    public var voice = "en"
    public var speak: SpeakSetting = .denied
    public var speakVolume = 80
    public var speakQuiet: QuietWindow?
    public var phrasesFile = "/etc/kiosk/phrases"

    /// The input lines configured, with the variable that names each.
    public var inputLines: [(variable: String, offset: Int)] {
        let all: [(String, Int?)] = [("KIOSK_DOOR_CONTACT_LINE", doorContactLine), ("KIOSK_REX_LINE", rexLine), ("KIOSK_TAMPER_LINE", tamperLine),
                                     ("KIOSK_EMERGENCY_LINE", emergencyLine)]
        return all.compactMap { name, line in line.map { (name, $0) } }
    }

    /// Whether any door input is watched.
    public var watchesDoor: Bool { !inputLines.isEmpty }

    /// `KIOSK_LED_MS`: how long an LED stays lit after a verdict.
    public static let defaultLedMs = 2000
    public static let ledMsRange: ClosedRange<Int> = 100...60_000
    public static let defaultMQTTQueue = 1000
    /// The spool is kept in memory too: 10,000 events of a few hundred bytes are a few MB; of
    /// 4 kB codes 60 MB, which a 512 MB Pi Zero 2 W can still hold.
    public static let mqttQueueRange: ClosedRange<Int> = 1...10_000

    public init() {}

    /// What sounds when a code is read: `KIOSK_BEEP_READ`, or by default today's beep
    /// (`KIOSK_BEEP_MS`) when every code beeps, silence in hook mode (the verdict speaks).
    public var readPattern: BeepPattern {
        beepRead ?? BeepPattern.readDefault(verdict: verdict, beepMilliseconds: beepMs)
    }

    /// Whether Wiegand output is configured (both lines: the check refuses one alone).
    public var isWiegand: Bool { wiegandD0Line != nil && wiegandD1Line != nil }

    /// Every GPIO line configured, with the variable that names it, in the table's order.
    public var lines: [(variable: String, offset: Int)] {
        let all: [(String, Int?)] = [
            ("KIOSK_TORCH_LINE", torchLine), ("KIOSK_BUZZER_LINE", buzzerLine),
            ("KIOSK_GRANTED_LED_LINE", grantedLedLine), ("KIOSK_DENIED_LED_LINE", deniedLedLine),
            ("KIOSK_DOOR_LINE", doorLine), ("KIOSK_WIEGAND_D0_LINE", wiegandD0Line), ("KIOSK_WIEGAND_D1_LINE", wiegandD1Line),
        ]
        return all.compactMap { name, line in line.map { (name, $0) } }
    }

    public var isSimulatedGPIO: Bool { gpioChip == "sim" }

    /// Whether the kiosk talks to a broker (`KIOSK_MQTT_URL` set).
    public var isMQTT: Bool { mqttURL != nil }
    /// The topic prefix: `KIOSK_MQTT_TOPIC`, else `kiosk/<hostname>`.
    public var mqttTopic: String { mqttTopicGiven ?? FleetTopics.defaultPrefix(hostname: hostname) }
    /// The client id: `KIOSK_MQTT_CLIENT_ID`, else the topic's last level.
    public var mqttClientID: String { mqttClientIDGiven ?? FleetTopics.defaultClientID(prefix: mqttTopic) }
}

/// A value that was given but cannot be used: what the `config_error` event says.
public struct ConfigError: Error, Equatable {
    public var variable: String
    public var value: String
    public var expected: String

    public init(variable: String, value: String, expected: String) {
        self.variable = variable
        self.value = value
        self.expected = expected
    }
}

/// A `KIOSK_*` name the kiosk does not know: probably a typo, so it is said, not ignored.
public struct ConfigWarning: Equatable {
    public var variable: String
    public var value: String
    public var suggestion: String?
    /// Why a known variable's value does nothing (`KIOSK_MQTT_CA_FILE` with `mqtt://`); nil: the
    /// name is not a kiosk setting.
    public var reason: String?

    public init(variable: String, value: String, suggestion: String? = nil, reason: String? = nil) {
        self.variable = variable
        self.value = value
        self.suggestion = suggestion
        self.reason = reason
    }
}

/// The outcome of reading the environment: the configuration, or every problem found in it.
public struct ConfigurationReading {
    public var configuration: Configuration
    public var errors: [ConfigError]
    public var warnings: [ConfigWarning]
    /// Each setting's effective value as text, and whether the environment gave it, in the order of
    /// interface.md: what `kiosk check` prints.
    public var settings: [(variable: String, value: String, fromEnvironment: Bool)]
}

/// One variable the kiosk reads: its name, what it accepts (the `config_error` message), how a
/// value is stored (the text `kiosk check` then shows, or nil when the value is not accepted), and
/// how a configuration shows it when the environment did not give it.
public struct ConfigurationVariable: Sendable {
    public let name: String
    public let expected: String
    /// An empty value is a value (a silent beep pattern), not "unset".
    public let emptyIsValue: Bool
    /// The value names a program the kiosk runs: a setup code may never set it.
    public let namesProgram: Bool
    let parse: @Sendable (_ value: String, _ c: inout Configuration, _ isExecutableFile: (String) -> Bool) -> String?
    let shown: @Sendable (Configuration) -> String

    init(_ name: String, _ expected: String, emptyIsValue: Bool = false, namesProgram: Bool = false, shown: @escaping @Sendable (Configuration) -> String,
         parse: @escaping @Sendable (_ value: String, _ c: inout Configuration, _ isExecutableFile: (String) -> Bool) -> String?) {
        self.name = name
        self.expected = expected
        self.emptyIsValue = emptyIsValue
        self.namesProgram = namesProgram
        self.parse = parse
        self.shown = shown
    }

    /// A whole number within `range`.
    static func integer(_ name: String, _ range: ClosedRange<Int>, _ expected: String,
                        _ field: WritableKeyPath<Configuration, Int> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, expected, shown: { String($0[keyPath: field]) }) { v, c, _ in
            guard let n = Int(v), range.contains(n) else { return nil }
            c[keyPath: field] = n
            return String(n)
        }
    }

    /// A GPIO line offset; unset means no such output.
    static func line(_ name: String, _ field: WritableKeyPath<Configuration, Int?> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, "a GPIO line offset from 0 to 1023", shown: { $0[keyPath: field].map(String.init) ?? "unset" }) { v, c, _ in
            guard let n = Int(v), (0...1023).contains(n) else { return nil }
            c[keyPath: field] = n
            return String(n)
        }
    }

    /// A number (decimals allowed) within `range`.
    static func number(_ name: String, _ range: ClosedRange<Double>, _ expected: String,
                       _ field: WritableKeyPath<Configuration, Double> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, expected, shown: { Configuration.trim($0[keyPath: field]) }) { v, c, _ in
            guard let d = Double(v), d.isFinite, range.contains(d) else { return nil }
            c[keyPath: field] = d
            return Configuration.trim(d)
        }
    }

    /// A buzzer pattern (`BeepPattern`): on,off,... milliseconds; empty (given empty) is silence.
    static func pattern(_ name: String, _ field: WritableKeyPath<Configuration, BeepPattern> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, BeepPattern.expected, emptyIsValue: true, shown: { $0[keyPath: field].description }) { v, c, _ in
            guard let p = BeepPattern(parsing: v) else { return nil }
            c[keyPath: field] = p
            return p.description
        }
    }

    /// `0` or `1`.
    /// The absolute path of a file (not a folder: no trailing '/'), without a line break; unset
    /// leaves `field` nil.
    static func file(_ name: String, _ expected: String, _ field: WritableKeyPath<Configuration, String?> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, expected, shown: { $0[keyPath: field] ?? "unset" }) { v, c, _ in
            guard Configuration.isAbsolutePath(v, folder: false) else { return nil }
            c[keyPath: field] = v
            return v
        }
    }

    /// The absolute path of a file that has a default (not a folder: no trailing '/').
    static func path(_ name: String, _ expected: String, _ field: WritableKeyPath<Configuration, String> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, expected, shown: { $0[keyPath: field] }) { v, c, _ in
            guard Configuration.isAbsolutePath(v, folder: false) else { return nil }
            c[keyPath: field] = v
            return v
        }
    }

    static func flag(_ name: String, _ field: WritableKeyPath<Configuration, Bool> & Sendable) -> ConfigurationVariable {
        ConfigurationVariable(name, "0 or 1", shown: { $0[keyPath: field] ? "1" : "0" }) { v, c, _ in
            guard let b = Configuration.flag(v) else { return nil }
            c[keyPath: field] = b
            return b ? "1" : "0"
        }
    }
}

extension Configuration {
    /// Every variable the kiosk reads, in the order interface.md lists them: the one table that
    /// parsing, `kiosk check`, the unknown-name warnings and the manual's list (`kiosk-dev variables`, `make docs`) all come from.
    public static let table: [ConfigurationVariable] = [
        ConfigurationVariable("KIOSK_CAMERA", "a V4L2 device path such as /dev/video0, libcamera, libcamera:ID (an id as cam --list prints it, or an index), or replay:FOLDER",
                              shown: { $0.camera.description }) { v, c, _ in
            if v == "libcamera" || v.hasPrefix("libcamera:") {
                let id = v == "libcamera" ? "" : String(v.dropFirst("libcamera:".count))
                guard v == "libcamera" || !id.isEmpty, !id.contains(where: { $0.isNewline }) else { return nil }
                c.camera = .libcamera(id)
            } else if v.hasPrefix("replay:") {
                let folder = String(v.dropFirst("replay:".count))
                guard !folder.isEmpty else { return nil }
                c.camera = .replay(folder: folder)
            } else {
                guard v.hasPrefix("/") else { return nil }
                c.camera = .device(v)
            }
            return c.camera.description
        },
        ConfigurationVariable("KIOSK_SIZE", "WIDTHxHEIGHT in pixels, each 16-8192, e.g. 640x480",
                              shown: { "\($0.width)x\($0.height)" }) { v, c, _ in
            let parts = v.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
                  (16...8192).contains(w), (16...8192).contains(h) else { return nil }
            c.width = w
            c.height = h
            return "\(w)x\(h)"
        },
        .number("KIOSK_FPS", 1...240, "a frame rate from 1 to 240", \.fps),
        ConfigurationVariable("KIOSK_FORMAT", "one of auto, YUYV, GREY, NV12, YU12, MJPG", shown: { $0.format.rawValue }) { v, c, _ in
            guard let f = RequestedPixelFormat(rawValue: v.uppercased() == "AUTO" ? "auto" : v.uppercased()) else { return nil }
            c.format = f
            return f.rawValue
        },
        ConfigurationVariable("KIOSK_ROTATE", "0, 90, 180 or 270 (degrees clockwise that make the frame upright)",
                              shown: { String($0.mount.rotation.rawValue) }) { v, c, _ in
            guard let degrees = Int(v), let r = Mount.Rotation(rawValue: degrees) else { return nil }
            c.mount.rotation = r
            return String(degrees)
        },
        .flag("KIOSK_MIRROR", \.mount.mirrored),
        .flag("KIOSK_ZOOM", \.zoom),
        ConfigurationVariable("KIOSK_ROI", "x,y,w,h as fractions of the upright frame: each 0-1, w and h above 0, x+w and y+h at most 1",
                              shown: { $0.uprightROI.description }) { v, c, _ in
            let parts = v.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmedOfBlanks) }
            guard parts.count == 4, let x = parts[0], let y = parts[1], let w = parts[2], let h = parts[3],
                  [x, y, w, h].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }),
                  w > 0, h > 0, x + w <= 1 + 1e-9, y + h <= 1 + 1e-9 else { return nil }
            c.uprightROI = NormalizedRect(x: x, y: y, width: w, height: h)
            return c.uprightROI.description
        },
        ConfigurationVariable("KIOSK_SYMBOLOGIES", "a comma list of: " + Symbology.allCases.map(\.rawValue).joined(separator: ","),
                              shown: { $0.symbologies.map(\.rawValue).joined(separator: ",") }) { v, c, _ in
            var chosen: [Symbology] = []
            for name in v.split(separator: ",", omittingEmptySubsequences: false) {
                guard let s = Symbology(rawValue: name.trimmedOfBlanks.lowercased()) else { return nil }
                if !chosen.contains(s) { chosen.append(s) }
            }
            guard !chosen.isEmpty else { return nil }
            c.symbologies = chosen
            return chosen.map(\.rawValue).joined(separator: ",")
        },
        .integer("KIOSK_REPEAT_MS", 0...3_600_000, "milliseconds from 0 to 3600000", \.repeatMs),
        ConfigurationVariable("KIOSK_GPIO_CHIP", "a GPIO chip name (gpiochip0), path (/dev/gpiochip0), label or number, or sim",
                              shown: { $0.gpioChip }) { v, c, _ in
            guard !v.contains(where: { $0.isWhitespace || $0.isNewline }) else { return nil }
            c.gpioChip = v
            return v
        },
        .line("KIOSK_TORCH_LINE", \.torchLine),
        .flag("KIOSK_TORCH_ACTIVE_LOW", \.torchActiveLow),
        ConfigurationVariable("KIOSK_TORCH", "auto, on or off", shown: { $0.torch.rawValue }) { v, c, _ in
            guard let m = TorchMode(rawValue: v.lowercased()) else { return nil }
            c.torch = m
            return m.rawValue
        },
        .number("KIOSK_TORCH_ON_BELOW", 0...255, "a brightness from 0 to 255", \.torchOnBelow),
        .number("KIOSK_TORCH_OFF_ABOVE", 0...255, "a brightness from 0 to 255", \.torchOffAbove),
        .integer("KIOSK_TORCH_HOLD_MS", 0...600_000, "milliseconds from 0 to 600000", \.torchHoldMs),
        .line("KIOSK_BUZZER_LINE", \.buzzerLine),
        .flag("KIOSK_BUZZER_ACTIVE_LOW", \.buzzerActiveLow),
        .integer("KIOSK_BEEP_MS", 1...5000, "milliseconds from 1 to 5000", \.beepMs),
        ConfigurationVariable("KIOSK_ON_SCAN", "the absolute path of an executable program (it is run directly, never through a shell)",
                              namesProgram: true, shown: { $0.onScan ?? "unset" }) { v, c, isExecutableFile in
            guard v.hasPrefix("/"), isExecutableFile(v) else { return nil }
            c.onScan = v
            return v
        },
        ConfigurationVariable("KIOSK_LOG_LEVEL", "debug, info, warning or error", shown: { $0.logLevel.name }) { v, c, _ in
            guard let l = LogLevel.allCases.first(where: { $0.name == v.lowercased() }) else { return nil }
            c.logLevel = l
            return l.name
        },
        ConfigurationVariable("KIOSK_LOG_FORMAT", "logfmt or json", shown: { $0.logFormat.rawValue }) { v, c, _ in
            guard let f = LogFormat(rawValue: v.lowercased()) else { return nil }
            c.logFormat = f
            return f.rawValue
        },
        .integer("KIOSK_STATS_S", 0...86_400, "seconds from 0 (off) to 86400", \.statsSeconds),
        .file("KIOSK_METRICS_FILE", "an absolute file path", \.metricsFile),
        // The door reader (interface.md, "A door reader").
        ConfigurationVariable("KIOSK_VERDICT", VerdictMode.expected, shown: { $0.verdict.rawValue }) { v, c, _ in
            guard let m = VerdictMode(rawValue: v.lowercased()) else { return nil }
            c.verdict = m
            return m.rawValue
        },
        .integer("KIOSK_VERDICT_MS", VerdictMode.millisecondsRange, VerdictMode.millisecondsExpected, \.verdictMs),
        ConfigurationVariable("KIOSK_BEEP_READ", BeepPattern.expected, emptyIsValue: true, shown: { $0.readPattern.description }) { v, c, _ in
            guard let p = BeepPattern(parsing: v) else { return nil }
            c.beepRead = p
            return p.description
        },
        .pattern("KIOSK_BEEP_GRANTED", \.beepGranted),
        .pattern("KIOSK_BEEP_DENIED", \.beepDenied),
        .pattern("KIOSK_BEEP_ERROR", \.beepError),
        .line("KIOSK_GRANTED_LED_LINE", \.grantedLedLine),
        .flag("KIOSK_GRANTED_LED_ACTIVE_LOW", \.grantedLedActiveLow),
        .line("KIOSK_DENIED_LED_LINE", \.deniedLedLine),
        .flag("KIOSK_DENIED_LED_ACTIVE_LOW", \.deniedLedActiveLow),
        .integer("KIOSK_LED_MS", Configuration.ledMsRange, "a whole number of milliseconds from 100 to 60000", \.ledMs),
        .line("KIOSK_DOOR_LINE", \.doorLine),
        .flag("KIOSK_DOOR_ACTIVE_LOW", \.doorActiveLow),
        .integer("KIOSK_DOOR_MS", StrikePolicy.openMillisecondsRange, StrikePolicy.openMillisecondsExpected, \.doorMs),
        .line("KIOSK_WIEGAND_D0_LINE", \.wiegandD0Line),
        .line("KIOSK_WIEGAND_D1_LINE", \.wiegandD1Line),
        .flag("KIOSK_WIEGAND_ACTIVE_LOW", \.wiegandActiveLow),
        ConfigurationVariable("KIOSK_WIEGAND_FORMAT", WiegandFormat.expected, shown: { String($0.wiegandFormat.rawValue) }) { v, c, _ in
            guard let n = Int(v), let f = WiegandFormat(rawValue: n) else { return nil }
            c.wiegandFormat = f
            return String(n)
        },
        // Checked against the format once both are read (below): 0-255 in 26 bits, 0-65535 in 34.
        .integer("KIOSK_WIEGAND_FACILITY", WiegandFormat.bits34.facilityRange,
                 "a decimal facility code: 0-255 in the 26-bit format, 0-65535 in the 34-bit one", \.wiegandFacility),
        .integer("KIOSK_WIEGAND_PULSE_US", WiegandTiming.pulseRange, WiegandTiming.pulseExpected, \.wiegandPulseUs),
        .integer("KIOSK_WIEGAND_INTERVAL_US", WiegandTiming.intervalRange, WiegandTiming.intervalExpected, \.wiegandIntervalUs),
        // A building of kiosks (interface.md, "A building of kiosks"). The password itself is
        // never a variable: only the file it is in.
        ConfigurationVariable("KIOSK_MQTT_URL", BrokerAddress.expected, shown: { $0.mqttURL?.description ?? "unset" }) { v, c, _ in
            guard let a = BrokerAddress.parse(v) else { return nil }
            c.mqttURL = a
            return a.description
        },
        ConfigurationVariable("KIOSK_MQTT_TOPIC", "a topic prefix such as kiosk/door-3 (levels separated by '/', none empty; no '+', '#', NUL or leading '$'; at most 200 bytes)",
                              shown: { $0.mqttTopic }) { v, c, _ in
            guard FleetTopics.problem(with: v) == nil else { return nil }
            c.mqttTopicGiven = v
            return v
        },
        ConfigurationVariable("KIOSK_MQTT_CLIENT_ID", "an MQTT client id: 1 to 128 bytes of printable text without spaces",
                              shown: { $0.mqttClientID }) { v, c, _ in
            guard Configuration.isPrintableToken(v, maxBytes: 128) else { return nil }
            c.mqttClientIDGiven = v
            return v
        },
        ConfigurationVariable("KIOSK_MQTT_USER", "a user name: 1 to 256 bytes of printable text without spaces",
                              shown: { $0.mqttUser ?? "unset" }) { v, c, _ in
            guard Configuration.isPrintableToken(v, maxBytes: 256) else { return nil }
            c.mqttUser = v
            return v
        },
        .file("KIOSK_MQTT_PASSWORD_FILE", "the absolute path of a file whose first line is the password (or systemd's LoadCredential=mqtt-password:...)", \.mqttPasswordFile),
        .file("KIOSK_MQTT_CA_FILE", "the absolute path of a PEM file with the CA certificate(s) that signed the broker's (unset: the system's CAs)", \.mqttCAFile),
        ConfigurationVariable("KIOSK_MQTT_DISCOVERY", HomeAssistantDiscovery.expected, emptyIsValue: true,
                              shown: { $0.mqttDiscovery ?? "" }) { v, c, _ in
            if v.isEmpty { c.mqttDiscovery = nil; return "" }
            guard HomeAssistantDiscovery.isValidPrefix(v) else { return nil }
            c.mqttDiscovery = v
            return v
        },
        .integer("KIOSK_MQTT_QUEUE", Configuration.mqttQueueRange, "a number of scan events from 1 to 10000", \.mqttQueue),
        // OSDP (interface.md 0.3). The key itself is never a variable: only its file.
        .file("KIOSK_OSDP_PORT", "the absolute path of a serial device such as /dev/serial0 or /dev/ttyUSB0", \.osdpPort),
        ConfigurationVariable("KIOSK_OSDP_BAUD", "9600, 19200, 38400, 57600, 115200 or 230400", shown: { String($0.osdpBaud) }) { v, c, _ in
            guard let n = Int(v), OSDPPeripheral.baudRates.contains(n) else { return nil }
            c.osdpBaud = n
            return String(n)
        },
        .integer("KIOSK_OSDP_ADDRESS", 0...126, "a reader address from 0 to 126", \.osdpAddress),
        .file("KIOSK_OSDP_KEY_FILE", "the absolute path of a file holding the Secure Channel base key, 32 hex digits (or systemd's LoadCredential=osdp-scbk:...)", \.osdpKeyFile),
        .flag("KIOSK_OSDP_INSTALL_MODE", \.osdpInstallMode),
        .flag("KIOSK_OSDP_REQUIRE_SECURE", \.osdpRequireSecure),
        ConfigurationVariable("KIOSK_OSDP_CARD_FORMAT", OSDPCardFormat.expected, shown: { $0.osdpCardFormat.rawValue }) { v, c, _ in
            guard let f = OSDPCardFormat(rawValue: v) else { return nil }
            c.osdpCardFormat = f
            return v
        },
        // Credentials (interface.md 0.3, "Credentials").
        ConfigurationVariable("KIOSK_CREDENTIAL_PREFIX", "1 to 16 printable ASCII characters without spaces, other than KT1: (the rotating codes' prefix), KH1: (the passes') and KS1: (setup codes')",
                              shown: { $0.credentialPrefix }) { v, c, _ in
            guard v.utf8.count <= 16, Configuration.isPrintableToken(v, maxBytes: 16), v.utf8.allSatisfy({ $0 < 0x80 }),
                  v != CredentialKind.rotatingPrefix, !CredentialKind.rotatingPrefix.hasPrefix(v), !v.hasPrefix(CredentialKind.rotatingPrefix),
                  !Pass.prefix.hasPrefix(v), !v.hasPrefix(Pass.prefix), !SetupCode.prefix.hasPrefix(v), !v.hasPrefix(SetupCode.prefix) else { return nil }
            c.credentialPrefix = v
            return v
        },
        ConfigurationVariable("KIOSK_TRUST_DIR", "the absolute path of the folder of issuers' public keys (KID.pem, hex-HEX.pem)",
                              shown: { $0.trustDir }) { v, c, _ in
            guard Configuration.isAbsolutePath(v, folder: true) else { return nil }
            c.trustDir = v
            return v
        },
        ConfigurationVariable("KIOSK_CREDENTIAL_ISSUERS", "a comma list of iss values (each 1-256 bytes)",
                              shown: { $0.credentialIssuers?.joined(separator: ",") ?? "unset" }) { v, c, _ in
            let list = v.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmedOfBlanks }
            guard list.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 && !$0.contains(where: { $0.isNewline }) }) else { return nil }
            c.credentialIssuers = list
            return list.joined(separator: ",")
        },
        ConfigurationVariable("KIOSK_CREDENTIAL_AUDIENCE", "this door's id: 1 to 256 bytes of printable text without spaces",
                              shown: { $0.credentialAudience ?? "unset" }) { v, c, _ in
            guard Configuration.isPrintableToken(v, maxBytes: 256) else { return nil }
            c.credentialAudience = v
            return v
        },
        .path("KIOSK_REVOKED_FILE", "the absolute path of a file of revoked sub, holder or cti (hex) values, one a line", \.revokedFile),
        .file("KIOSK_TOTP_FILE", "the absolute path of the rotating codes' secrets (HOLDER BASE32SECRET [DIGITS [PERIOD]] a line; or systemd's LoadCredential=totp-secrets:...)", \.totpFile),
        .integer("KIOSK_CLOCK_SKEW_S", 0...300, "seconds from 0 to 300", \.clockSkewS),
        .integer("KIOSK_ANTIPASSBACK_S", 0...86_400, "seconds from 0 (off) to 86400", \.antipassbackS),
        ConfigurationVariable("KIOSK_REQUIRE_SYNCED_CLOCK", ClockSetting.expected, shown: { $0.clockSetting.rawValue }) { v, c, _ in
            guard let s = ClockSetting(rawValue: v) else { return nil }
            c.clockSetting = s
            return s.rawValue
        },
        // Who may enter, and when (interface.md 0.4); the file is read at start, not here.
        .file("KIOSK_ACCESS_FILE", "the absolute path of this door's rules (schedule, holidays, allow, lockdown-allow, unlock, pretix lines)", \.accessFile),
        .line("KIOSK_EMERGENCY_LINE", \.emergencyLine),
        .flag("KIOSK_EMERGENCY_ACTIVE_LOW", \.emergencyActiveLow),
        // Event tickets (interface.md 0.4, "Event tickets").
        .integer("KIOSK_TICKET_ENTRIES", 0...1000, "a whole number of entries from 0 (any number) to 1000", \.ticketEntries),
        // Passes bound to the holder's phone (interface.md 0.5).
        .path("KIOSK_HOLDERS_FILE", "the absolute path of the holders' public keys (NAME KEY [groups=a,b] a line)", \.holdersFile),
        .integer("KIOSK_PASS_WINDOW_S", Pass.windowRange, "seconds from 5 to 120", \.passWindowS),
        // Site bundles (interface.md 0.4, "Site bundles"); the key is read at start, not here.
        .file("KIOSK_SITE_KEY", "the absolute path of the site's public key (PEM, EC P-256 or Ed25519) that signs its bundles", \.siteKey),
        ConfigurationVariable("KIOSK_SITE_TOPIC", "an MQTT topic such as site/acme/bundle (levels separated by '/', none empty; no '+', '#', NUL or leading '$'; at most 200 bytes)",
                              shown: { $0.siteTopic ?? "unset" }) { v, c, _ in
            guard FleetTopics.problem(with: v) == nil else { return nil }
            c.siteTopic = v
            return v
        },
        .file("KIOSK_BUNDLE_FILE", "the absolute path of a file holding a site bundle (read at start, on SIGHUP and when it changes)", \.bundleFile),
        // Power cuts and the card (interface.md 0.5).
        ConfigurationVariable("KIOSK_VOLATILE_STATE", VolatileState.expected, shown: { $0.volatileState.rawValue }) { v, c, _ in
            guard let m = VolatileState(rawValue: v.lowercased()) else { return nil }
            c.volatileState = m
            return m.rawValue
        },
        // The door's inputs and alarms, commands from the building (interface.md 0.3).
        .line("KIOSK_DOOR_CONTACT_LINE", \.doorContactLine),
        .flag("KIOSK_DOOR_CONTACT_ACTIVE_LOW", \.doorContactActiveLow),
        .line("KIOSK_REX_LINE", \.rexLine),
        .flag("KIOSK_REX_ACTIVE_LOW", \.rexActiveLow),
        .line("KIOSK_TAMPER_LINE", \.tamperLine),
        .flag("KIOSK_TAMPER_ACTIVE_LOW", \.tamperActiveLow),
        ConfigurationVariable("KIOSK_INPUT_BIAS", InputBias.expected, shown: { $0.inputBias.rawValue }) { v, c, _ in
            guard let b = InputBias(rawValue: v.lowercased()) else { return nil }
            c.inputBias = b
            return b.rawValue
        },
        .integer("KIOSK_INPUT_DEBOUNCE_MS", 0...1000, "a whole number of milliseconds from 0 to 1000", \.inputDebounceMs),
        .integer("KIOSK_DOOR_HELD_S", 1...3600, "a whole number of seconds from 1 to 3600", \.doorHeldS),
        .flag("KIOSK_REX_OPENS", \.rexOpens),
        ConfigurationVariable("KIOSK_DOOR_RELOCK", DoorRelock.expected, shown: { $0.doorRelock.rawValue }) { v, c, _ in
            guard let r = DoorRelock(rawValue: v.lowercased()) else { return nil }
            c.doorRelock = r
            return r.rawValue
        },
        .pattern("KIOSK_BEEP_ALARM", \.beepAlarm),
        .flag("KIOSK_MQTT_COMMANDS", \.mqttCommands),
        .integer("KIOSK_COMMAND_MAX_AGE_S", 1...3600, "a whole number of seconds from 1 to 3600", \.commandMaxAgeS),
        // The camera at the door (0.4).
        ConfigurationVariable("KIOSK_FOCUS", FocusSetting.accepted, shown: { $0.cameraSettings.focus.description }) { v, c, _ in
            guard let f = FocusSetting.parse(v) else { return nil }
            c.cameraSettings.focus = f
            return f.description
        },
        ConfigurationVariable("KIOSK_EXPOSURE", "screens or camera", shown: { $0.cameraSettings.exposure.rawValue }) { v, c, _ in
            guard let e = ExposureSetting(rawValue: v) else { return nil }
            c.cameraSettings.exposure = e
            return e.rawValue
        },
        ConfigurationVariable("KIOSK_MAINS_HZ", "50, 60 or 0 (no power-line filter)", shown: { String($0.cameraSettings.mainsHz) }) { v, c, _ in
            guard let n = Int(v), [0, 50, 60].contains(n) else { return nil }
            c.cameraSettings.mainsHz = n
            return String(n)
        },
        .integer("KIOSK_TORCH_SCREEN_MS", 0...60_000, "milliseconds from 0 to 60000 (0: never)", \.torchScreenMs),
        // The door speaks (interface.md 0.6). Whether espeak-ng has the voice is asked at start
        // (an unknown one exits 78 there), not here: this table reads no program.
        ConfigurationVariable("KIOSK_SPEAKER", "an ALSA PCM name such as default, plughw:CARD=Device or a PCM of /etc/asound.conf (printable, no spaces, at most 256 bytes)",
                              shown: { $0.speaker ?? "unset" }) { v, c, _ in
            guard Configuration.isPrintableToken(v, maxBytes: 256) else { return nil }
            c.speaker = v
            return v
        },
        ConfigurationVariable("KIOSK_VOICE", "an espeak-ng voice such as en, en-us, de or fr (letters, digits, '-', '_', '/', '+'; at most 64 bytes)",
                              shown: { $0.voice }) { v, c, _ in
            let allowed: (UInt8) -> Bool = { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x30 && $0 <= 0x39) || "-_/+".utf8.contains($0) }
            guard v.utf8.count <= 64, !v.hasPrefix("-"), v.utf8.allSatisfy(allowed) else { return nil }
            c.voice = v
            return v
        },
        ConfigurationVariable("KIOSK_SPEAK", SpeakSetting.expected, shown: { $0.speak.rawValue }) { v, c, _ in
            guard let s = SpeakSetting(rawValue: v.lowercased()) else { return nil }
            c.speak = s
            return s.rawValue
        },
        .integer("KIOSK_SPEAK_VOLUME", 0...100, "a volume from 0 to 100", \.speakVolume),
        ConfigurationVariable("KIOSK_SPEAK_QUIET", QuietWindow.expected, shown: { $0.speakQuiet?.description ?? "unset" }) { v, c, _ in
            guard let w = QuietWindow(parsing: v) else { return nil }
            c.speakQuiet = w
            return w.description
        },
        .path("KIOSK_PHRASES_FILE", "the absolute path of a file of KEY TEXT lines (missing: the default phrases)", \.phrasesFile),
        // Set up at the door by a signed code (Sources/Setup).
        ConfigurationVariable("KIOSK_SETUP", SetupMode.expected, shown: { $0.setupMode.rawValue }) { v, c, _ in
            guard let m = SetupMode(rawValue: v) else { return nil }
            c.setupMode = m
            return m.rawValue
        },
        .integer("KIOSK_SETUP_WINDOW_S", SetupWindow.windowRange, "seconds from 60 to 3600", \.setupWindowS),
        // A PIN and a duress code (interface.md 0.6); the pins file is read at start, not here.
        ConfigurationVariable("KIOSK_KEYPAD", KeypadSetting.expected, shown: { $0.keypad?.description ?? "unset" }) { v, c, _ in
            guard let k = KeypadSetting(v) else { return nil }
            c.keypad = k
            return k.description
        },
        ConfigurationVariable("KIOSK_PINS_FILE", "the absolute path of the pins file (SUBJECT HASH [duress=HASH] a line)",
                              shown: { $0.pinsFile }) { v, c, _ in
            guard Configuration.isAbsolutePath(v, folder: false) else { return nil }
            c.pinsFile = v
            return v
        },
        .integer("KIOSK_PIN_WINDOW_S", PINEntryPolicy.windowRange, "a whole number of seconds from 3 to 60", \.pinWindowS),
        ConfigurationVariable("KIOSK_DURESS_CODE", DuressCode.expected, shown: { $0.duressCode.rawValue }) { v, c, _ in
            guard let d = DuressCode(rawValue: v.lowercased()) else { return nil }
            c.duressCode = d
            return d.rawValue
        },
    ]

    /// Every variable's name, in the table's order.
    public static let variables = table.map(\.name)

    /// Names the kiosk itself sets for its `KIOSK_ON_SCAN` program; not typos.
    static let reservedForOnScan: Set<String> = ["KIOSK_CODE", "KIOSK_SYMBOLOGY", "KIOSK_DURESS"]

    /// Reads and validates the whole configuration without touching any device. An empty value
    /// counts as unset (so `KIOSK_TORCH_LINE=` in an environment file means "no torch").
    /// `isExecutableFile` answers whether a path is an executable file (for `KIOSK_ON_SCAN`).
    /// `hostname` is this machine's name (the default MQTT topic's last level).
    public static func read(environment: [String: String], isExecutableFile: (String) -> Bool, hostname: String = "kiosk")
        -> ConfigurationReading {
        var c = Configuration()
        c.hostname = hostname
        var p = Parser(environment: environment)
        for variable in table {
            p.read(variable.name, variable.expected, emptyIsValue: variable.emptyIsValue) { variable.parse($0, &c, isExecutableFile) }
        }

        // Contradictions between values that are each fine on their own.
        if c.torchOnBelow >= c.torchOffAbove {
            // Name the variable the installer actually set.
            if p.given.contains("KIOSK_TORCH_ON_BELOW") {
                p.contradiction("KIOSK_TORCH_ON_BELOW",
                                expected: "less than KIOSK_TORCH_OFF_ABOVE (\(Configuration.trim(c.torchOffAbove))), so that the torch cannot flicker between the two")
            } else {
                p.contradiction("KIOSK_TORCH_OFF_ABOVE",
                                expected: "greater than KIOSK_TORCH_ON_BELOW (\(Configuration.trim(c.torchOnBelow))), so that the torch cannot flicker between the two")
            }
        }
        // One line, one output: the later variable is named, with the earlier one it repeats.
        let lines = c.lines
        for (i, line) in lines.enumerated() {
            if let first = lines[..<i].first(where: { $0.offset == line.offset }) {
                p.contradiction(line.variable, expected: "a line other than \(first.variable) (\(first.offset)): one line cannot drive both")
            }
        }
        doorContradictions(c, &p)
        doorInputContradictions(c, &p)
        var notes: [ConfigWarning] = []
        mqttContradictions(c, &p, &notes)
        osdpContradictions(c, &p, &notes)
        credentialContradictions(c, &p, &notes)
        if c.speaker == nil {
            for name in speechVariables where p.given.contains(name) {
                notes.append(ConfigWarning(variable: name, value: p.environment[name] ?? "", reason: "ignored: KIOSK_SPEAKER is unset, so the door does not speak"))
            }
        }

        let known = Set(variables).union(reservedForOnScan)
        let warnings = environment.keys.sorted()
            .filter { $0.hasPrefix("KIOSK_") && !known.contains($0) }
            .map { ConfigWarning(variable: $0, value: environment[$0] ?? "", suggestion: closestName(to: $0)) } + notes

        // A value not given shows what it is in this configuration (KIOSK_BEEP_READ's default
        // follows KIOSK_VERDICT and KIOSK_BEEP_MS); for every other variable that is its default.
        let settings = table.map { v in
            (variable: v.name, value: p.effective[v.name] ?? v.shown(c), fromEnvironment: p.given.contains(v.name))
        }
        return ConfigurationReading(configuration: c, errors: p.errors, warnings: warnings, settings: settings)
    }

    /// The door reader's settings that are each fine alone but not together.
    private static func doorContradictions(_ c: Configuration, _ p: inout Parser) {
        if c.verdict == .hook && c.onScan == nil {
            p.contradiction("KIOSK_VERDICT", expected: "none unless KIOSK_ON_SCAN names the program whose exit status decides")
        }
        if c.verdict == .none && !c.isOSDP {  // with OSDP the controller's commands drive them
            // The strike without a verdict is for the exit button or the building's commands.
            let strikeHasUse = c.rexLine != nil || (c.mqttCommands && c.mqttURL != nil)
            for (name, line) in [("KIOSK_GRANTED_LED_LINE", c.grantedLedLine), ("KIOSK_DENIED_LED_LINE", c.deniedLedLine),
                                 ("KIOSK_DOOR_LINE", strikeHasUse ? nil : c.doorLine)] where line != nil {
                p.contradiction(name, expected: "unset unless KIOSK_VERDICT is hook or credentials: without a verdict nothing grants or denies")
            }
        }
        if c.wiegandD0Line != nil && c.wiegandD1Line == nil {
            p.contradiction("KIOSK_WIEGAND_D0_LINE", expected: "set together with KIOSK_WIEGAND_D1_LINE: Wiegand needs both lines")
        }
        if c.wiegandD1Line != nil && c.wiegandD0Line == nil {
            p.contradiction("KIOSK_WIEGAND_D1_LINE", expected: "set together with KIOSK_WIEGAND_D0_LINE: Wiegand needs both lines")
        }
        if c.isWiegand && c.verdict != .none {
            p.contradiction("KIOSK_VERDICT", expected: "none while KIOSK_WIEGAND_D0_LINE and D1_LINE are set: the access controller decides, the kiosk only gives its read feedback")
        }
        if !c.wiegandFormat.facilityRange.contains(c.wiegandFacility) {
            p.contradiction("KIOSK_WIEGAND_FACILITY", expected: c.wiegandFormat.facilityExpected)
        }
    }

    /// The door's inputs that are each fine alone but not together. A line used twice (an
    /// input on an output's line, or two inputs on one) names both variables.
    private static func doorInputContradictions(_ c: Configuration, _ p: inout Parser) {
        let outputs = c.lines
        let inputs = c.inputLines
        for (i, input) in inputs.enumerated() {
            if let first = (outputs + inputs[..<i]).first(where: { $0.offset == input.offset }) {
                p.contradiction(input.variable, expected: "a line other than \(first.variable) (\(first.offset)): one line cannot be both")
            }
        }
        if c.rexLine != nil && c.rexOpens && c.doorLine == nil {
            p.contradiction("KIOSK_REX_LINE", expected: "set with KIOSK_DOOR_LINE, the strike the exit button opens (or KIOSK_REX_OPENS=0 for a door with a handle inside)")
        }
        if c.doorRelock == .contact && c.doorContactLine == nil {
            p.contradiction("KIOSK_DOOR_RELOCK", expected: "time unless KIOSK_DOOR_CONTACT_LINE is set: relocking on contact needs the door's position switch")
        }
        if c.doorRelock == .contact && c.doorLine == nil {
            p.contradiction("KIOSK_DOOR_RELOCK", expected: "time unless KIOSK_DOOR_LINE is set: there is no strike to relock")
        }
    }

    /// The MQTT settings that are each fine alone but not together; and those that do nothing
    /// (a warning: the kiosk starts, and says so).
    private static func mqttContradictions(_ c: Configuration, _ p: inout Parser, _ notes: inout [ConfigWarning]) {
        guard let url = c.mqttURL else {
            for name in variables where name.hasPrefix("KIOSK_MQTT_") && name != "KIOSK_MQTT_URL" && p.given.contains(name) {
                notes.append(ConfigWarning(variable: name, value: p.environment[name] ?? "", reason: "ignored: KIOSK_MQTT_URL is unset, so the kiosk talks to no broker"))
            }
            return
        }
        if c.mqttPasswordFile != nil && c.mqttUser == nil {
            p.contradiction("KIOSK_MQTT_PASSWORD_FILE", expected: "unset unless KIOSK_MQTT_USER names the user the password is for")
        }
        if c.mqttCAFile != nil && !url.tls {
            notes.append(ConfigWarning(variable: "KIOSK_MQTT_CA_FILE", value: c.mqttCAFile!,
                                       reason: "ignored: \(url) is plain MQTT; the CA file is for mqtts://"))
        }
        if let d = c.mqttDiscovery, d == c.mqttTopic || c.mqttTopic.hasPrefix(d + "/") {
            p.contradiction("KIOSK_MQTT_TOPIC", expected: "a prefix outside the discovery prefix \(d)/ (Home Assistant reads everything there as its own)")
        }
    }

    // OSDP's settings that are each fine alone but not together.
    private static func osdpContradictions(_ c: Configuration, _ p: inout Parser, _ notes: inout [ConfigWarning]) {
        guard c.isOSDP else {
            for name in variables where name.hasPrefix("KIOSK_OSDP_") && name != "KIOSK_OSDP_PORT" && p.given.contains(name) {
                notes.append(ConfigWarning(variable: name, value: p.environment[name] ?? "", reason: "ignored: KIOSK_OSDP_PORT is unset, so the kiosk is no OSDP reader"))
            }
            return
        }
        if c.wiegandD0Line != nil || c.wiegandD1Line != nil {
            p.contradiction("KIOSK_OSDP_PORT", expected: "unset while KIOSK_WIEGAND_D0_LINE or D1_LINE is set: OSDP and Wiegand exclude each other (one link to the controller)")
        }
        if c.verdict == .hook {
            p.contradiction("KIOSK_VERDICT", expected: "not hook while KIOSK_OSDP_PORT is set: the access controller decides (its osdp_LED and osdp_OUT drive the LEDs and the strike)")
        }
    }

    /// The credentials' settings do nothing unless `KIOSK_VERDICT=credentials` (a warning). Whether
    /// the trust directory and the TOTP file can be read is checked at start (`run`, `check`).
    private static func credentialContradictions(_ c: Configuration, _ p: inout Parser, _ notes: inout [ConfigWarning]) {
        guard c.verdict == .credentials else {
            for name in credentialVariables where p.given.contains(name) {
                notes.append(ConfigWarning(variable: name, value: p.environment[name] ?? "", reason: "ignored: KIOSK_VERDICT is not credentials"))
            }
            return
        }
        // A bundle is taken only when it can be verified.
        if c.siteKey == nil {
            for name in ["KIOSK_SITE_TOPIC", "KIOSK_BUNDLE_FILE"] where p.given.contains(name) {
                p.contradiction(name, expected: "unset unless KIOSK_SITE_KEY names the site's public key that signs the bundles")
            }
        }
        if c.siteTopic != nil && c.mqttURL == nil {
            notes.append(ConfigWarning(variable: "KIOSK_SITE_TOPIC", value: c.siteTopic!, reason: "ignored: KIOSK_MQTT_URL is unset, so the kiosk talks to no broker"))
        }
    }

    /// The speech settings that mean nothing without `KIOSK_SPEAKER`.
    public static let speechVariables = ["KIOSK_VOICE", "KIOSK_SPEAK", "KIOSK_SPEAK_VOLUME", "KIOSK_SPEAK_QUIET", "KIOSK_PHRASES_FILE"]

    /// The credentials' block's names.
    public static let credentialVariables = ["KIOSK_CREDENTIAL_PREFIX", "KIOSK_TRUST_DIR", "KIOSK_CREDENTIAL_ISSUERS", "KIOSK_CREDENTIAL_AUDIENCE",
                                             "KIOSK_REVOKED_FILE", "KIOSK_TOTP_FILE", "KIOSK_CLOCK_SKEW_S", "KIOSK_ANTIPASSBACK_S",
                                             "KIOSK_REQUIRE_SYNCED_CLOCK", "KIOSK_ACCESS_FILE", "KIOSK_TICKET_ENTRIES",
                                             "KIOSK_SITE_KEY", "KIOSK_SITE_TOPIC", "KIOSK_BUNDLE_FILE",
                                             "KIOSK_HOLDERS_FILE", "KIOSK_PASS_WINDOW_S"]

    /// Printable ASCII or UTF-8 text without spaces or control characters, 1 to `maxBytes` bytes.
    static func isPrintableToken(_ v: String, maxBytes: Int) -> Bool {
        !v.isEmpty && v.utf8.count <= maxBytes && v.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && !($0.value >= 0x80 && $0.value < 0xA0) }
    }

    /// An absolute path without a line break; a file's (`folder` false) does not end in '/'.
    static func isAbsolutePath(_ v: String, folder: Bool) -> Bool {
        v.hasPrefix("/") && (folder || !v.hasSuffix("/")) && !v.contains(where: { $0.isNewline })
    }

    static func flag(_ v: String) -> Bool? {
        switch v { case "0": return false; case "1": return true; default: return nil }
    }

    public static func trim(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    /// The known name nearest to a misspelt one, when it is near enough to be the likely intent.
    static func closestName(to name: String) -> String? {
        let scored = variables.map { ($0, editDistance(Array(name), Array($0))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 3 else { return nil }
        return best.0
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Reads one variable at a time, collecting every error rather than stopping at the first.
private struct Parser {
    let environment: [String: String]
    var errors: [ConfigError] = []
    var given: Set<String> = []
    var effective: [String: String] = [:]

    init(environment: [String: String]) { self.environment = environment }

    /// `apply` stores the value and returns its effective text, or nil when the value is not accepted.
    /// An empty value counts as unset, unless `emptyIsValue` (a pattern given empty: silence).
    mutating func read(_ name: String, _ expected: String, emptyIsValue: Bool = false, _ apply: (String) -> String?) {
        guard let raw = environment[name] else { return }
        let value = raw.trimmedOfBlanks
        guard !value.isEmpty || emptyIsValue else { return }
        given.insert(name)
        if let text = apply(value) {
            effective[name] = text
        } else {
            errors.append(ConfigError(variable: name, value: raw, expected: expected))
        }
    }

    mutating func contradiction(_ name: String, expected: String) {
        errors.append(ConfigError(variable: name, value: environment[name] ?? effective[name] ?? "(default)", expected: expected))
    }
}

/// The pixel format asked for in the configuration.
public enum RequestedPixelFormat: String, CaseIterable {
    /// The first the device offers of GREY, YUYV, NV12, YU12, then anything libv4l converts to one of those (MJPG).
    case auto
    case grey = "GREY"
    case yuyv = "YUYV"
    case nv12 = "NV12"
    case yu12 = "YU12"
    /// MJPG decoded by libv4l into YU12, so luma is still the first plane.
    case mjpg = "MJPG"
}

extension StringProtocol {
    /// Without the spaces and tabs at either end (an environment file's `KIOSK_ROI=0.2, 0.2, ...`).
    var trimmedOfBlanks: String {
        func blank(_ c: Character) -> Bool { c == " " || c == "\t" || (c.isWhitespace && !c.isNewline) }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
