// SPDX-License-Identifier: Apache-2.0
/// What a kiosk publishes to a building's broker (interface.md, "A building of kiosks"), as the
/// payloads' text. The MQTT module sends them; nothing here knows the network.

/// One reported code, as `<topic>/scan` carries it: one JSON object a code, QoS 1, not retained.
public struct ScanMessage: Equatable, Sendable {
    /// Unique among every kiosk's scans: the run's random part and a counter (`ScanID`).
    public var id: String
    /// As the `scan` log line names it (`QR-Code`, `EAN-13`).
    public var symbology: String
    /// The payload's bytes exactly as the symbol held them.
    public var bytes: [UInt8]
    /// Wall clock, milliseconds since the Unix epoch.
    public var timeMs: Int64
    public var frame: Int
    public var latencyMs: Double
    /// The door's verdict (`granted`, `denied`, ...) when verdicts are on.
    public var verdict: String?
    /// A credential: the message then carries this instead of the payload.
    public var credential: ScanCredential?

    public init(id: String, symbology: String, bytes: [UInt8], timeMs: Int64, frame: Int, latencyMs: Double, verdict: String? = nil,
                credential: ScanCredential? = nil) {
        self.credential = credential
        self.id = id
        self.symbology = symbology
        self.bytes = bytes
        self.timeMs = timeMs
        self.frame = frame
        self.latencyMs = latencyMs
        self.verdict = verdict
    }

    /// `{"id":…,"symbology":…,"data":…,"time":…,"frame":…,"latency_ms":…}`: `data` when the bytes
    /// are valid UTF-8 (the exact text, a NUL included), else `data_base64` with the bytes; then
    /// `verdict` when there is one.
    public var json: String {
        var out = "{\"id\":\(JSONText.quoted(id)),\"symbology\":\(JSONText.quoted(symbology)),"
        if let credential {
            // Never the token: who (once verified), the payload's short hash, why.
            out += "\"credential\":\(credential.subject.map(JSONText.quoted) ?? "null"),\"hash\":\(JSONText.quoted(credential.hash)),"
            out += "\"reason\":\(JSONText.quoted(credential.reason)),"
        } else if let text = JSONText.utf8Text(bytes) {
            out += "\"data\":\(JSONText.quoted(text)),"
        } else {
            out += "\"data_base64\":\"\(Base64.encode(bytes))\","
        }
        out += "\"time\":\"\(RFC3339.utc(millisecondsSinceEpoch: timeMs))\",\"frame\":\(frame),"
        out += "\"latency_ms\":\(latencyMs.isFinite ? Format.fixed(max(0, latencyMs), 1) : "null")"
        if let verdict { out += ",\"verdict\":\(JSONText.quoted(verdict))" }
        return out + "}"
    }
}

/// What a scan message says of a credential instead of its payload.
public struct ScanCredential: Equatable, Sendable {
    /// The verified subject; nil when nothing verified.
    public var subject: String?
    /// The first 8 bytes of the payload's SHA-256, hex.
    public var hash: String
    /// The verifier's reason (`valid`, `expired`, ...).
    public var reason: String
    public init(subject: String?, hash: String, reason: String) {
        self.subject = subject
        self.hash = hash
        self.reason = reason
    }
}

/// A scan's `id`: the run's part (random, drawn once at start, so two kiosks or two runs of one
/// never collide) and the scan's number within the run: `3f9a0c1d2e4b5a69-17`.
public struct ScanID: Sendable {
    public let run: String
    public private(set) var last: UInt64 = 0

    /// `random` is 8 bytes from the system's random source.
    public init(random: [UInt8]) { run = PayloadBytes.hex(random) }

    public mutating func next() -> String {
        last += 1
        return "\(run)-\(last)"
    }
}

/// What `<topic>/state` says (retained, published when it changes): the torch, the camera and
/// the last scan's time.
public struct KioskState: Equatable, Sendable {
    /// nil: no torch line configured.
    public var torchOn: Bool?
    public var cameraOK: Bool
    /// Wall clock of the last scan, milliseconds since the epoch; nil before the first.
    public var lastScanMs: Int64?
    /// The tamper loop (true: tampered); nil: no tamper line, and no `tamper` member.
    public var tamper: Bool?
    /// The site bundles (nil: no site key, and no `bundle` member).
    public var bundle: BundleStanding?
    /// The clock's source (`ntp`, `rtc`, `none`) or `behind` (nil: not credentials mode,
    /// and no `clock` member).
    public var clock: String?

    /// The site bundle in force at this door, and the newest one it was given, verified, and
    /// could not take (a door behind the site shows it).
    public struct BundleStanding: Equatable, Sendable {
        public var inForce: UInt64?
        public var refused: UInt64?
        public init(inForce: UInt64? = nil, refused: UInt64? = nil) {
            self.inForce = inForce
            self.refused = refused
        }
    }

    public init(torchOn: Bool? = nil, cameraOK: Bool = true, lastScanMs: Int64? = nil, tamper: Bool? = nil, bundle: BundleStanding? = nil) {
        self.torchOn = torchOn
        self.cameraOK = cameraOK
        self.lastScanMs = lastScanMs
        self.tamper = tamper
        self.bundle = bundle
    }

    /// `{"torch":"on"|"off"|"none","camera":"ok"|"lost","last_scan":"…"|null}`, then
    /// `"tamper":"alarm"|"ok"` with a tamper line, then `"bundle":N|null,"bundle_refused":M|null`
    /// with a site key, then `"clock":"ntp"|"rtc"|"none"|"behind"` in credentials mode.
    public var json: String {
        let torch = torchOn.map { $0 ? "on" : "off" } ?? "none"
        let last = lastScanMs.map { "\"\(RFC3339.utc(millisecondsSinceEpoch: $0))\"" } ?? "null"
        let tamperText = tamper.map { ",\"tamper\":\"\($0 ? "alarm" : "ok")\"" } ?? ""
        let bundleText = bundle.map { ",\"bundle\":\($0.inForce.map(String.init) ?? "null"),\"bundle_refused\":\($0.refused.map(String.init) ?? "null")" } ?? ""
        let clockText = clock.map { ",\"clock\":\(JSONText.quoted($0))" } ?? ""
        return "{\"torch\":\"\(torch)\",\"camera\":\"\(cameraOK ? "ok" : "lost")\",\"last_scan\":\(last)\(tamperText)\(bundleText)\(clockText)}"
    }
}

/// The `stats` event's fields as one JSON object for `<topic>/stats` (the fields the caller
/// gives, in its order: numbers as the log prints them, text as JSON strings).
public enum StatsMessage {
    public static func json(_ fields: [(String, LogValue)]) -> String {
        "{" + fields.map { "\(JSONText.quoted($0.0)):\(LogEscape.json($0.1))" }.joined(separator: ",") + "}"
    }
}

/// An alarm as `<topic>/alarm` carries it (QoS 1, not retained):
/// `{"event":"door_forced"|"door_held"|"door_alarm_end"|"tamper","state":…|null,"time":"…"}`;
/// `state` is the alarm that ended for `door_alarm_end`, `alarm` or `ok` for `tamper`.
public enum AlarmMessage {
    /// A duress code (interface.md 0.6): `{"type":"duress","subject":"…","time":"…"}`.
    public static func duress(subject: String, timeMs: Int64) -> String {
        "{\"type\":\"duress\",\"subject\":\(JSONText.quoted(subject)),\"time\":\"\(RFC3339.utc(millisecondsSinceEpoch: timeMs))\"}"
    }

    public static func json(event: String, state: String?, timeMs: Int64) -> String {
        "{\"event\":\(JSONText.quoted(event)),\"state\":\(state.map(JSONText.quoted) ?? "null"),"
            + "\"time\":\"\(RFC3339.utc(millisecondsSinceEpoch: timeMs))\"}"
    }
}

/// `<topic>/mode` (retained): `{"mode":"lockdown","reason":"command","until":null,"time":"…"}`;
/// `until` (Unix seconds) while a commanded unlock lasts.
public enum ModeMessage {
    public static func json(mode: DoorMode, reason: DoorModeReason, until: Int64?, timeMs: Int64) -> String {
        "{\"mode\":\"\(mode.rawValue)\",\"reason\":\"\(reason.rawValue)\",\"until\":\(until.map { String($0) } ?? "null"),"
            + "\"time\":\"\(RFC3339.utc(millisecondsSinceEpoch: timeMs))\"}"
    }
}
