// SPDX-License-Identifier: Apache-2.0
/// Commands from the building (`KIOSK_MQTT_COMMANDS=1`): `<topic>/command` carries
/// `{"id": TEXT, "command": "open" | "reload", "ms": N, "time": UNIX_SECONDS}`, and
/// `{"id", "command": "mode", "mode": "normal" | "unlock" | "lockdown", "until": UNIX_SECONDS,
/// "time"}` (`until` for `unlock` only, and required there); the answer goes to
/// `<topic>/command/result` as `{"id", "result": "ok" | "refused", "reason"}`.
///
/// What is decided here, before anything is carried out: the payload is one small flat JSON
/// object (hostile bytes are refused, with a reason, never half-read); its `time` is within
/// `KIOSK_COMMAND_MAX_AGE_S` of the kiosk's wall clock (an old command replayed is refused, and
/// so is one from the future by more than that); and each id is carried out once (the ids of the
/// last `remembered` commands carried out are kept: a broker's redelivery or a replay of a recent
/// one is refused as a repeat).
public struct FleetCommandsPolicy: Equatable, Sendable {
    public enum Command: Equatable, Sendable {
        case open(milliseconds: Int)
        case reload
        case mode(DoorModeCommand)

        public var name: String {
            switch self {
            case .open: return "open"
            case .reload: return "reload"
            case .mode: return "mode"
            }
        }
    }

    public enum Decision: Equatable, Sendable {
        /// To be carried out; then `answer(id:..., ok)` with what came of it.
        case carryOut(id: String, command: Command)
        /// Refused before anything was done; `id` and `command` when they could be read.
        case refused(id: String?, command: String?, reason: String)
    }

    public static let maxPayloadBytes = 1024
    public static let maxIDBytes = 128
    public static let openMillisecondsRange = StrikePolicy.openMillisecondsRange
    public static let defaultRemembered = 256

    public let maxAgeMs: Int64
    public let defaultOpenMilliseconds: Int
    public let remembered: Int
    /// The ids carried out, oldest first (bounded by `remembered`).
    public private(set) var recentIDs: [String] = []

    public init(maxAgeSeconds: Int, defaultOpenMilliseconds: Int, remembered: Int = FleetCommandsPolicy.defaultRemembered) {
        maxAgeMs = Int64(maxAgeSeconds) * 1000
        self.defaultOpenMilliseconds = defaultOpenMilliseconds
        self.remembered = max(1, remembered)
    }

    /// A command's payload, received when the wall clock said `nowMs` (ms since the epoch).
    public mutating func receive(_ payload: [UInt8], nowMs: Int64) -> Decision {
        guard payload.count <= FleetCommandsPolicy.maxPayloadBytes else {
            return .refused(id: nil, command: nil, reason: "malformed: longer than \(FleetCommandsPolicy.maxPayloadBytes) bytes")
        }
        let object: [String: FlatJSON.Value]
        switch FlatJSON.object(payload) {
        case .failure(let why): return .refused(id: nil, command: nil, reason: "malformed: \(why.text)")
        case .success(let o): object = o
        }
        guard case .string(let id)? = object["id"] else {
            return .refused(id: nil, command: nil, reason: "malformed: no \"id\" text")
        }
        guard !id.isEmpty, id.utf8.count <= FleetCommandsPolicy.maxIDBytes else {
            return .refused(id: nil, command: nil, reason: "malformed: \"id\" must be 1 to \(FleetCommandsPolicy.maxIDBytes) bytes")
        }
        guard case .string(let name)? = object["command"] else {
            return .refused(id: id, command: nil, reason: "malformed: no \"command\" text")
        }
        let known: Set<String> = ["id", "command", "ms", "time", "mode", "until"]
        if let extra = object.keys.sorted().first(where: { !known.contains($0) }) {
            return .refused(id: id, command: name, reason: "malformed: unknown member \(JSONText.quoted(extra))")
        }
        // Within ±1e11 s (3,000 years) of the epoch: a larger number would not fit the age's Int64.
        guard case .number(let seconds)? = object["time"], seconds.isFinite, abs(seconds) < 1e11 else {
            return .refused(id: id, command: name, reason: "malformed: no \"time\" (Unix seconds)")
        }
        let command: Command
        switch name {
        case "open":
            var ms = defaultOpenMilliseconds
            if let given = object["ms"] {
                guard case .number(let n) = given, n == n.rounded(), n >= Double(FleetCommandsPolicy.openMillisecondsRange.lowerBound),
                      n <= Double(FleetCommandsPolicy.openMillisecondsRange.upperBound) else {
                    return .refused(id: id, command: name, reason: "malformed: \"ms\" must be a whole number from 100 to 60000")
                }
                ms = Int(n)
            }
            command = .open(milliseconds: ms)
        case "reload":
            guard object["ms"] == nil else { return .refused(id: id, command: name, reason: "malformed: \"ms\" is for open") }
            command = .reload
        case "mode":
            guard object["ms"] == nil else { return .refused(id: id, command: name, reason: "malformed: \"ms\" is for open") }
            guard case .string(let mode)? = object["mode"] else {
                return .refused(id: id, command: name, reason: "malformed: no \"mode\" text (normal, unlock or lockdown)")
            }
            switch (mode, object["until"]) {
            case ("normal", nil): command = .mode(.normal)
            case ("lockdown", nil): command = .mode(.lockdown)
            case ("unlock", .number(let until)?) where until == until.rounded() && abs(until) < 1e11:
                command = .mode(.unlock(until: Int64(until)))
            case ("unlock", _):
                return .refused(id: id, command: name, reason: "malformed: unlock needs \"until\" (Unix seconds, at most 24 h ahead)")
            case ("normal", _), ("lockdown", _):
                return .refused(id: id, command: name, reason: "malformed: \"until\" is for unlock")
            default:
                return .refused(id: id, command: name, reason: "unknown mode \(JSONText.quoted(mode)) (normal, unlock or lockdown; emergency comes from the fire panel's input only)")
            }
        default:
            return .refused(id: id, command: name, reason: "unknown command (open, reload or mode)")
        }
        if case .open = command, object["mode"] != nil || object["until"] != nil {
            return .refused(id: id, command: name, reason: "malformed: \"mode\" and \"until\" are for mode")
        }
        if case .reload = command, object["mode"] != nil || object["until"] != nil {
            return .refused(id: id, command: name, reason: "malformed: \"mode\" and \"until\" are for mode")
        }
        let ageMs = nowMs - Int64((seconds * 1000).rounded())
        if ageMs > maxAgeMs { return .refused(id: id, command: name, reason: "stale: \(ageMs / 1000) s old, more than \(maxAgeMs / 1000) s") }
        if -ageMs > maxAgeMs { return .refused(id: id, command: name, reason: "time in the future: \((-ageMs) / 1000) s ahead of the kiosk's clock") }
        if recentIDs.contains(id) { return .refused(id: id, command: name, reason: "repeated id: already carried out") }
        recentIDs.append(id)
        if recentIDs.count > remembered { recentIDs.removeFirst(recentIDs.count - remembered) }
        return .carryOut(id: id, command: command)
    }

    /// `{"id":…,"result":"ok"|"refused","reason":…}`; `id` null when it could not be read.
    public static func resultJSON(id: String?, ok: Bool, reason: String?) -> String {
        let idText = id.map(JSONText.quoted) ?? "null"
        let reasonText = reason.map(JSONText.quoted) ?? "null"
        return "{\"id\":\(idText),\"result\":\"\(ok ? "ok" : "refused")\",\"reason\":\(reasonText)}"
    }
}

/// A strict reader of one flat JSON object (RFC 8259): members whose values are strings, numbers,
/// true, false or null; no nesting (refused), no duplicate names, nothing after the object, at
/// most 32 members. For the building's commands: small, bounded, and never half-accepted.
public enum FlatJSON {
    public enum Value: Equatable, Sendable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    public struct Problem: Error, Equatable {
        public var text: String
    }

    public static func object(_ bytes: [UInt8]) -> Result<[String: Value], Problem> {
        var r = Reader(bytes: bytes)
        do {
            let o = try r.object()
            r.skipSpace()
            guard r.i == bytes.count else { throw Problem(text: "text after the object at byte \(r.i)") }
            return .success(o)
        } catch let p as Problem {
            return .failure(p)
        } catch {
            return .failure(Problem(text: "not JSON"))
        }
    }

    struct Reader {
        let bytes: [UInt8]
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        func fail(_ what: String) -> Problem { Problem(text: "\(what) at byte \(i)") }

        mutating func expect(_ c: UInt8) throws {
            skipSpace()
            guard i < bytes.count, bytes[i] == c else { throw fail("expected '\(Character(Unicode.Scalar(c)))'") }
            i += 1
        }

        mutating func object() throws -> [String: Value] {
            try expect(UInt8(ascii: "{"))
            var out: [String: Value] = [:]
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return out }
            while true {
                skipSpace()
                let name = try string()
                guard out[name] == nil else { throw fail("duplicate member \(JSONText.quoted(name))") }
                try expect(UInt8(ascii: ":"))
                out[name] = try value()
                guard out.count <= 32 else { throw fail("more than 32 members") }
                skipSpace()
                guard i < bytes.count else { throw fail("unterminated object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return out }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func value() throws -> Value {
            skipSpace()
            guard i < bytes.count else { throw fail("missing value") }
            switch bytes[i] {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "{"), UInt8(ascii: "["): throw fail("nested value (only text, numbers, true, false, null)")
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func literal(_ word: String) throws {
            let w = Array(word.utf8)
            guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw fail("not a JSON value") }
            i += w.count
        }

        mutating func number() throws -> Double {
            let start = i
            func digits() -> Int {
                let s = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                return i - s
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let intStart = i
            guard digits() > 0 else { throw fail("not a JSON value") }
            if bytes[intStart] == 0x30, i - intStart > 1 { throw fail("a number with a leading zero") }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { throw fail("a number without digits after '.'") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw fail("a number without an exponent") }
            }
            guard i - start <= 32, let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)), d.isFinite else {
                throw fail("a number out of range")
            }
            return d
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= bytes.count else { throw fail("a short \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard let d = Hex.digit(bytes[i]) else { throw fail("a bad \\u escape") }
                v = v << 4 | UInt32(d)
                i += 1
            }
            return v
        }

        mutating func string() throws -> String {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string") }
            i += 1
            var out: [UInt8] = []
            while true {
                guard i < bytes.count else { throw fail("unterminated string") }
                let c = bytes[i]
                i += 1
                switch c {
                case UInt8(ascii: "\""):
                    // Valid UTF-8 only: a string the log and the answer can carry as it is.
                    guard let s = String(validating: out, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
                    return s
                case UInt8(ascii: "\\"):
                    guard i < bytes.count else { throw fail("unterminated string") }
                    let e = bytes[i]
                    i += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                                throw fail("a lone surrogate")
                            }
                            i += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw fail("a lone surrogate")
                        }
                        out += Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
                    default: throw fail("a bad escape")
                    }
                default:
                    guard c >= 0x20 else { throw fail("a control character in a string") }
                    out.append(c)
                }
            }
        }
    }
}
