// SPDX-License-Identifier: Apache-2.0
/// What a setup code says, read from a payload whose signature has verified: a CBOR map with text
/// keys, each known (a key the door does not know refuses the code: a later version is `KS2:`),
/// each of its type and within its bounds. Secrets (`wifi.psk`, `mqtt_password`) are held here and
/// nowhere else; `description` never shows them.
public struct SetupPayload: Equatable, Sendable, CustomStringConvertible {
    public struct WiFi: Equatable, Sendable {
        /// 1 to 32 bytes (IEEE 802.11's SSID), UTF-8 text without control characters.
        public let ssid: String
        /// WPA2/WPA3-personal: 8-63 printable ASCII characters, or 64 hex digits; nil: an open network.
        public let psk: String?
        public init(ssid: String, psk: String?) {
            self.ssid = ssid
            self.psk = psk
        }
    }

    public let iat: Int64
    public let exp: Int64
    public let cti: [UInt8]
    /// Only the door whose `KIOSK_CREDENTIAL_AUDIENCE` or host name this is.
    public let door: String?
    public let siteKey: SetupSiteKey
    public let wifi: WiFi?
    /// An IANA zone (`Europe/Berlin`).
    public let tz: String?
    /// NTP servers' host names or addresses.
    public let ntp: [String]
    public let mqttPassword: String?
    /// `KIOSK_` names and their values, in the code's order.
    public let env: [(name: String, value: String)]

    public static let maxCTIBytes = 64
    public static let maxDoorBytes = 256
    public static let maxNTPServers = 4
    public static let maxEnv = 32
    public static let maxValueBytes = 512
    public static let maxPasswordBytes = 256
    static let keys: Set<String> = ["iat", "exp", "cti", "door", "site_key", "wifi", "tz", "ntp", "mqtt_password", "env"]

    /// The payload's map, read strictly: text keys only, at most 3 levels, 128 items.
    static func map(_ payload: [UInt8]) throws(SetupRefusal) -> [CBORPair] {
        let item: CBOR
        do { item = try CBORReader.decode(payload, maxDepth: 3, maxItems: 160) } catch { throw SetupRefusal(.malformed, "payload: \(error)") }
        guard case .map(let pairs) = item else { throw SetupRefusal(.malformed, "a payload that is not a map") }
        return pairs
    }

    public init(verifiedPayload payload: [UInt8]) throws(SetupRefusal) {
        let pairs = try SetupPayload.map(payload)
        var fields: [String: CBOR] = [:]
        for p in pairs {
            guard case .text(let k) = p.key, SetupPayload.keys.contains(k) else {
                throw SetupRefusal(.malformed, "a key the door does not know: \(SetupPayload.shown(p.key))")
            }
            fields[k] = p.value
        }
        func bad(_ what: String) -> SetupRefusal { SetupRefusal(.malformed, what) }
        guard let iat = fields["iat"]?.int, let exp = fields["exp"]?.int else { throw bad("no iat and exp as integers (Unix times)") }
        guard exp > iat, exp - iat <= SetupCode.maxLifetimeS else { throw bad("exp not after iat by at most \(SetupCode.maxLifetimeS) s") }
        guard case .bytes(let cti)? = fields["cti"], (1...SetupPayload.maxCTIBytes).contains(cti.count) else {
            throw bad("no cti of 1 to \(SetupPayload.maxCTIBytes) bytes")
        }
        guard let keyItem = fields["site_key"] else { throw bad("no site_key") }
        do { siteKey = try SetupSiteKey(keyItem) } catch { throw bad("site_key: \(error)") }
        self.iat = iat
        self.exp = exp
        self.cti = cti
        door = try fields["door"].map { v throws(SetupRefusal) in
            guard case .text(let d) = v, SetupText.isToken(d, maxBytes: SetupPayload.maxDoorBytes) else { throw bad("a door that is not 1-256 bytes of text without spaces") }
            return d
        }
        wifi = try fields["wifi"].map(SetupPayload.wifi)
        tz = try fields["tz"].map { v throws(SetupRefusal) in
            guard case .text(let z) = v, SetupText.isZone(z) else { throw bad("a tz that is not an IANA zone name (Area/Place)") }
            return z
        }
        if let v = fields["ntp"] {
            guard case .array(let items) = v, (1...SetupPayload.maxNTPServers).contains(items.count) else {
                throw bad("an ntp that is not an array of 1 to \(SetupPayload.maxNTPServers) host names")
            }
            ntp = try items.map { v throws(SetupRefusal) in
                guard case .text(let h) = v, SetupText.isHost(h) else { throw bad("an ntp server that is not a host name or address") }
                return h
            }
        } else {
            ntp = []
        }
        mqttPassword = try fields["mqtt_password"].map { v throws(SetupRefusal) in
            guard case .text(let p) = v, !p.isEmpty, p.utf8.count <= SetupPayload.maxPasswordBytes, !SetupText.hasControl(p) else {
                throw bad("an mqtt_password that is not 1-\(SetupPayload.maxPasswordBytes) bytes of text on one line")
            }
            return p
        }
        if let v = fields["env"] {
            guard case .map(let items) = v, items.count <= SetupPayload.maxEnv else { throw bad("an env that is not a map of at most \(SetupPayload.maxEnv)") }
            env = try items.map { p throws(SetupRefusal) in
                guard case .text(let name) = p.key, SetupText.isKioskName(name) else { throw bad("an env name that is not KIOSK_ and capitals, digits, '_'") }
                guard case .text(let value) = p.value, value.utf8.count <= SetupPayload.maxValueBytes, !SetupText.hasControl(value) else {
                    throw SetupRefusal(.refused(name), "a value that is not text of at most \(SetupPayload.maxValueBytes) bytes on one line")
                }
                return (name, value)
            }
        } else {
            env = []
        }
    }

    private static func wifi(_ v: CBOR) throws(SetupRefusal) -> WiFi {
        guard case .map(let pairs) = v, pairs.allSatisfy({ $0.key == .text("ssid") || $0.key == .text("psk") }) else {
            throw SetupRefusal(.malformed, "a wifi that is not {\"ssid\": text, \"psk\": text}")
        }
        guard case .text(let ssid)? = v[.text("ssid")], (1...32).contains(ssid.utf8.count), !SetupText.hasControl(ssid) else {
            throw SetupRefusal(.malformed, "a wifi ssid that is not 1-32 bytes of text")
        }
        var psk: String?
        if let p = v[.text("psk")] {
            guard case .text(let k) = p, SetupText.isPSK(k) else {
                throw SetupRefusal(.malformed, "a wifi psk that is not 8-63 printable ASCII characters or 64 hex digits")
            }
            psk = k
        }
        return WiFi(ssid: ssid, psk: psk)
    }

    /// A key as the refusal shows it (a stranger's text, bounded; the log escapes it).
    static func shown(_ key: CBOR) -> String {
        if case .text(let t) = key { return String(t.prefix(40)) }
        return "a key that is not text"
    }

    public static func == (a: SetupPayload, b: SetupPayload) -> Bool {
        a.iat == b.iat && a.exp == b.exp && a.cti == b.cti && a.door == b.door && a.siteKey == b.siteKey && a.wifi == b.wifi
            && a.tz == b.tz && a.ntp == b.ntp && a.mqttPassword == b.mqttPassword
            && a.env.map(\.name) == b.env.map(\.name) && a.env.map(\.value) == b.env.map(\.value)
    }

    /// What the code holds, its secrets as `(hidden)`.
    public var description: String {
        var parts = ["iat=\(iat)", "exp=\(exp)", "cti=\(PayloadBytes.hex(cti))"]
        if let door { parts.append("door=\(door)") }
        if let wifi { parts.append("wifi.ssid=\(wifi.ssid)" + (wifi.psk == nil ? " (open)" : " wifi.psk=(hidden)")) }
        if let tz { parts.append("tz=\(tz)") }
        if !ntp.isEmpty { parts.append("ntp=\(ntp.joined(separator: ","))") }
        if mqttPassword != nil { parts.append("mqtt_password=(hidden)") }
        return parts.joined(separator: " ")
    }

    /// Whether the code is in date at `now` (Unix seconds): before `exp`. Its `iat` is not held
    /// against a door whose clock is behind: a new Pi has no real-time clock and no network yet.
    public func isInDate(now: Int64) -> Bool { now < exp }

    /// Whether the code is for this door: it names none, or the audience or host name given.
    public func isFor(audience: String?, hostname: String) -> Bool {
        guard let door else { return true }
        return door == audience || door == hostname
    }

    /// The used-token store's key of the code's `cti`, taken once: `c:5:` and the cti (a signed
    /// credential's `c:` and its own hex have no second colon), kept as durably as a credential's.
    public var usedKey: String { "c:5:" + PayloadBytes.hex(cti) }
}

/// The shapes of a code's text values.
enum SetupText {
    static func hasControl(_ s: String) -> Bool {
        s.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || ($0.value >= 0x80 && $0.value < 0xA0) }
    }

    static func isToken(_ s: String, maxBytes: Int) -> Bool {
        !s.isEmpty && s.utf8.count <= maxBytes && !hasControl(s) && !s.contains(" ")
    }

    /// `Area/Place[/More]` or `UTC`: letters, digits, `_`, `-`, `+`, no `.` part, at most 64 bytes.
    static func isZone(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= 64, !s.hasPrefix("/"), !s.hasSuffix("/") else { return false }
        let parts = s.split(separator: "/", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part.first != "." && part.first != "-"
                && part.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
        }
    }

    /// A host name (letters, digits, `-`, `.`), an IPv4 or an IPv6 address: at most 253 bytes,
    /// not beginning with `-` (it must never read as an option).
    static func isHost(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 253 && s.first != "-" && s.first != "."
            && s.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") }
    }

    static func isPSK(_ s: String) -> Bool {
        let b = Array(s.utf8)
        if b.count == 64 { return Hex.bytes(b) != nil }
        return (8...63).contains(b.count) && b.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    static func isKioskName(_ s: String) -> Bool {
        s.hasPrefix("KIOSK_") && s.utf8.count <= 64 && s.utf8.count > 6
            && s.utf8.allSatisfy { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") }
    }

    static func isAlnum(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
    }
}
