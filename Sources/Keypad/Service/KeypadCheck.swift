// SPDX-License-Identifier: Apache-2.0
import Credentials
import Glibc
import Keypad
import Platform
import Policy

/// What `kiosk check` and `kiosk doctor` say of the keypad (`KIOSK_KEYPAD`: its kind, its path or
/// lines, whether the device is there and readable, what it is for) and of the pins file in force
/// (`KIOSK_PINS_FILE` or a site bundle's `pins`: its subjects, how it is kept). Never a hash.
public enum KeypadCheck {
    /// A doctor's line: `PASS`, `WARN` or `FAIL`, its subject and what to do.
    public struct Finding: Equatable {
        public enum Verdict: String { case pass = "PASS", warn = "WARN", fail = "FAIL" }
        public var verdict: Verdict
        public var subject: String
        public var detail: String
    }

    /// What opening an input-event keypad for a moment found (doctor's; tests pass their own).
    public typealias Probe = EvdevKeypad.Probe

    /// Whether the kiosk checks PINs itself (credentials mode, not OSDP).
    static func checksPINs(_ c: Configuration) -> Bool { c.verdict == .credentials && !c.isOSDP }

    /// What the keypad is for in this configuration.
    static func role(_ c: Configuration) -> String {
        if c.isOSDP { return "its digits go to the access controller (osdp_KEYPAD)" }
        if checksPINs(c) { return "PINs are checked here: a window of \(c.pinWindowS) s, duress code \(c.duressCode.rawValue)" }
        return "unused: a PIN is checked only with KIOSK_VERDICT=credentials"
    }

    /// The keypad as configured, without opening it: its kind and where it is.
    static func keypadText(_ c: Configuration, _ k: KeypadSetting) -> String {
        switch k {
        case .wiegand(let d0, let d1):
            let chip = c.isSimulatedGPIO ? "the simulated chip" : "chip \(c.gpioChip)"
            return "\(k): a Wiegand keypad, D0 on input line \(d0) and D1 on input line \(d1) of \(chip) (4-bit and 8-bit key bursts)"
        case .evdev(let path):
            var st = stat()
            guard stat(path, &st) == 0 else {
                return "\(k): an input-event keypad, not there now (\(Errno.current.message)): the kiosk looks for it again every second"
            }
            let readable = access(path, R_OK) == 0 ? "readable by this user" : "not readable by this user (\(EvdevKeypad.accessAdvice(path)))"
            return "\(k): an input-event keypad, there (\(resolved(path))), \(readable)"
        }
    }

    /// A by-id path's device (`/dev/input/event3`), else the path itself.
    static func resolved(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }

    /// The pins file the kiosk would use: a kept site bundle's `pins`, else `KIOSK_PINS_FILE`.
    static func pinsPath(_ c: Configuration, _ environment: [String: String]) -> String {
        CredentialSetup.bundleSources(c, environment).sources.pinsFile
    }

    /// The pins file read (nil: there is none) with how it is kept, or why it does not read.
    static func pins(_ path: String) -> Result<(file: PinsFile, kept: String, problem: String?)?, ConfigError> {
        let file: PinsFile
        do {
            guard let f = try KeypadSetup.load(path) else { return .success(nil) }
            file = f
        } catch {
            return .failure(ConfigError(variable: "KIOSK_PINS_FILE", value: path, expected: "a pins file that reads: \(error)"))
        }
        var st = stat()
        guard stat(path, &st) == 0 else { return .success((file, "", nil)) }
        let owner = getpwuid(st.st_uid).map { String(cString: $0.pointee.pw_name) } ?? String(st.st_uid)
        let group = getgrgid(st.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(st.st_gid)
        let mode = UInt32(st.st_mode) & 0o777
        return .success((file, "mode 0\(String(mode, radix: 8)), \(owner):\(group)", PinsFileKeeping.problem(mode: mode, owner: owner)))
    }

    static func subjects(_ file: PinsFile) -> String {
        "\(file.count) subject(s), \(file.entries.values.filter { $0.duress != nil }.count) with a duress= hash"
    }

    /// `kiosk check`'s lines (each after `# `), or the pins file refused (exit 78, as at start).
    /// Nothing without a keypad and without a pins file.
    public static func checkLines(_ c: Configuration, _ environment: [String: String]) -> Result<[String], ConfigError> {
        var lines: [String] = []
        if let k = c.keypad { lines.append("keypad: " + keypadText(c, k) + "; " + role(c)) }
        guard checksPINs(c) else { return .success(lines) }
        let path = pinsPath(c, environment)
        switch pins(path) {
        case .failure(let e):
            return .failure(e)
        case .success(nil):
            if c.keypad != nil { lines.append("pins: \(path) is missing: no subject is asked for a PIN but by the rules' pin") }
        case .success(let p?):
            lines.append("pins: \(path): \(subjects(p.file)); \(p.kept)" + (p.problem.map { "; WARNING: \($0) (kept like a key: its hashes can be guessed offline)" } ?? ""))
            if c.keypad == nil { lines.append("pins: no KIOSK_KEYPAD: a subject the file lists is denied `pin required`") }
        }
        return .success(lines)
    }

    /// `kiosk doctor`'s lines: libevdev and the device opened and grabbed for a moment (an
    /// input-event keypad; a Wiegand keypad's lines are among doctor's GPIO inputs), what the
    /// keypad is for, and the pins file.
    public static func doctor(_ c: Configuration, _ environment: [String: String],
                              probe: (String) -> Probe = EvdevKeypad.probe) -> [Finding] {
        var out: [Finding] = []
        func add(_ v: Finding.Verdict, _ subject: String, _ detail: String) { out.append(Finding(verdict: v, subject: subject, detail: detail)) }
        switch c.keypad {
        case .evdev(let path)?:
            if let problem = EvdevKeypad.libraryProblem() {
                add(.fail, "keypad", "\(problem): the keypad cannot be read")
            } else if !Files.exists(path) {
                add(.fail, "keypad", "\(path) is not there: plug the keypad in (ls -l /dev/input/by-id/ lists what is)")
            } else {
                switch probe(path) {
                case .opened(let name, true):
                    add(.pass, "keypad", "\(path) (\(resolved(path)), \"\(name)\") opened and grabbed for a moment; \(role(c))")
                case .opened(let name, false):
                    add(.fail, "keypad", "\(path) (\"\(name)\") has no digit keys: choose the keypad's own event device")
                case .failed(let why, EBUSY):
                    add(.warn, "keypad", "\(why): the kiosk service holds it when it runs")
                case .failed(let why, _):
                    add(.fail, "keypad", why)
                }
            }
        case .wiegand?:
            add(.pass, "keypad", keypadText(c, c.keypad!) + "; " + role(c))
        case nil:
            break
        }
        if c.keypad != nil, !checksPINs(c), !c.isOSDP { add(.warn, "keypad", role(c)) }
        guard checksPINs(c) else { return out }
        let path = pinsPath(c, environment)
        switch pins(path) {
        case .failure(let e):
            add(.fail, "pins", "\(e.value): \(e.expected): the kiosk does not start")
        case .success(nil):
            if c.keypad != nil { add(.warn, "pins", "\(path) is missing: no subject is asked for a PIN but by the rules' pin (deploy/examples/issue-credential pin set writes it)") }
        case .success(let p?):
            add(p.problem == nil ? .pass : .warn, "pins", "\(path): \(subjects(p.file)); \(p.kept)" + (p.problem.map { ": \($0) (its hashes can be guessed offline: keep it like a key)" } ?? ""))
            if c.keypad == nil { add(.warn, "pins", "no KIOSK_KEYPAD: the \(p.file.count) subject(s) listed are denied `pin required`") }
        }
        return out
    }
}
