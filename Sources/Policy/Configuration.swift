// SPDX-License-Identifier: Apache-2.0

/// Where the frames come from.
public enum CameraSetting: Equatable, CustomStringConvertible {
    case device(String)
    case replay(folder: String)

    public var description: String {
        switch self {
        case .device(let path): return path
        case .replay(let folder): return "replay:\(folder)"
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
    public var mount = Mount()
    public var uprightROI = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
    /// What a door is shown (README "How it reads codes": tickets, boarding passes, IDs, parcels),
    /// chosen by measurement (README "Performance").
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

    public init() {}

    public var isSimulatedGPIO: Bool { gpioChip == "sim" }
}

/// A value that was given but cannot be used: what the `config_error` event says.
public struct ConfigError: Error, Equatable {
    public var variable: String
    public var value: String
    public var expected: String
}

/// A `KIOSK_*` name the kiosk does not know: probably a typo, so it is said, not ignored.
public struct ConfigWarning: Equatable {
    public var variable: String
    public var value: String
    public var suggestion: String?
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
    let parse: @Sendable (_ value: String, _ c: inout Configuration, _ isExecutableFile: (String) -> Bool) -> String?
    let shown: @Sendable (Configuration) -> String

    init(_ name: String, _ expected: String, shown: @escaping @Sendable (Configuration) -> String,
         parse: @escaping @Sendable (_ value: String, _ c: inout Configuration, _ isExecutableFile: (String) -> Bool) -> String?) {
        self.name = name
        self.expected = expected
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

    /// `0` or `1`.
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
    /// parsing, `kiosk check`, the unknown-name warnings and the README's list all come from.
    public static let table: [ConfigurationVariable] = [
        ConfigurationVariable("KIOSK_CAMERA", "a V4L2 device path such as /dev/video0, or replay:FOLDER",
                              shown: { $0.camera.description }) { v, c, _ in
            if v.hasPrefix("replay:") {
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
                              shown: { $0.onScan ?? "unset" }) { v, c, isExecutableFile in
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
        ConfigurationVariable("KIOSK_METRICS_FILE", "an absolute file path", shown: { $0.metricsFile ?? "unset" }) { v, c, _ in
            guard v.hasPrefix("/"), !v.hasSuffix("/") else { return nil }
            c.metricsFile = v
            return v
        },
    ]

    /// Every variable's name, in the table's order.
    public static let variables = table.map(\.name)

    /// Names the kiosk itself sets for its `KIOSK_ON_SCAN` program; not typos.
    static let reservedForOnScan: Set<String> = ["KIOSK_CODE", "KIOSK_SYMBOLOGY"]

    /// Reads and validates the whole configuration without touching any device. An empty value
    /// counts as unset (so `KIOSK_TORCH_LINE=` in an environment file means "no torch").
    /// `isExecutableFile` answers whether a path is an executable file (for `KIOSK_ON_SCAN`).
    public static func read(environment: [String: String], isExecutableFile: (String) -> Bool)
        -> ConfigurationReading {
        var c = Configuration()
        var p = Parser(environment: environment)
        for variable in table {
            p.read(variable.name, variable.expected) { variable.parse($0, &c, isExecutableFile) }
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
        if let t = c.torchLine, t == c.buzzerLine {
            p.contradiction("KIOSK_BUZZER_LINE", expected: "a line other than KIOSK_TORCH_LINE (\(t)): one line cannot drive both")
        }

        let known = Set(variables).union(reservedForOnScan)
        let warnings = environment.keys.sorted()
            .filter { $0.hasPrefix("KIOSK_") && !known.contains($0) }
            .map { ConfigWarning(variable: $0, value: environment[$0] ?? "", suggestion: closestName(to: $0)) }

        let defaults = Configuration()
        let settings = table.map { v in
            (variable: v.name, value: p.effective[v.name] ?? v.shown(defaults), fromEnvironment: p.given.contains(v.name))
        }
        return ConfigurationReading(configuration: c, errors: p.errors, warnings: warnings, settings: settings)
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
    mutating func read(_ name: String, _ expected: String, _ apply: (String) -> String?) {
        guard let raw = environment[name] else { return }
        let value = raw.trimmedOfBlanks
        guard !value.isEmpty else { return }
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
