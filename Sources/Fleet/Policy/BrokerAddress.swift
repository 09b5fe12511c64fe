// SPDX-License-Identifier: Apache-2.0
/// Where the building's broker is: `KIOSK_MQTT_URL`, `mqtt://host[:port]` or `mqtts://host[:port]`.
public struct BrokerAddress: Equatable, Sendable, CustomStringConvertible {
    /// A name, an IPv4 address, or an IPv6 address without its brackets.
    public var host: String
    public var port: Int
    /// mqtts: TLS, the broker's certificate checked against a CA and its name against `host`.
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// The `expected` text of a `config_error` for `KIOSK_MQTT_URL`.
    public static let expected = "mqtt://host[:port] or mqtts://host[:port] (ports 1-65535; an IPv6 address in brackets, [::1]:1883)"

    /// The address a URL names, nil when it is not one of the two forms (no path, no user in it:
    /// the login has variables of its own, and a password never sits in a URL).
    public static func parse(_ url: String) -> BrokerAddress? {
        let tls: Bool
        var rest: Substring
        if url.hasPrefix("mqtt://") { tls = false; rest = url.dropFirst(7) }
        else if url.hasPrefix("mqtts://") { tls = true; rest = url.dropFirst(8) }
        else { return nil }
        if rest.hasSuffix("/") { rest = rest.dropLast() }  // mqtt://broker/ is a common way to write it
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }), host.contains(":") else { return nil }
        } else {
            if let colon = rest.firstIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            // A DNS name or an IPv4 address: letters, digits, '-', '.', '_' (some sites name hosts so).
            guard !host.isEmpty, host.utf8.allSatisfy({ c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F
            }) else { return nil }
        }
        var port = tls ? 8883 : 1883
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let p = Int(portText), (1...65535).contains(p) else { return nil }
            port = p
        }
        return BrokerAddress(host: String(host), port: port, tls: tls)
    }

    /// As a URL again: `mqtts://[::1]:8883`.
    public var description: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

/// The topics of one kiosk under its prefix (`KIOSK_MQTT_TOPIC`, default `kiosk/<hostname>`).
public struct FleetTopics: Equatable, Sendable {
    public var prefix: String

    public init(prefix: String) { self.prefix = prefix }

    /// `kiosk/<hostname>`, the hostname cut at its first dot and made safe for a topic level.
    public static func defaultPrefix(hostname: String) -> String {
        "kiosk/" + topicLevel(hostname)
    }

    /// A hostname as one topic level and a Home Assistant node id: the short name (up to the
    /// first dot), lowercase, with anything but letters, digits, '-' and '_' made '_'.
    public static func topicLevel(_ hostname: String) -> String {
        let short = hostname.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
        let level = String(short.lowercased().unicodeScalars.map { s -> Character in
            let c = s.value
            return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F ? Character(s) : "_"
        })
        return level.isEmpty ? "kiosk" : level
    }

    /// The client id by default: the prefix's last level (`kiosk/door-3` gives `door-3`).
    public static func defaultClientID(prefix: String) -> String {
        prefix.split(separator: "/").last.map(String.init) ?? "kiosk"
    }

    /// Why a prefix cannot be used (MQTT topic rules: no wildcards, no NUL, not empty, no empty
    /// level at either end), nil when it can. The `expected` text of a `config_error`.
    public static func problem(with prefix: String) -> String? {
        if prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "a topic prefix such as kiosk/door-3 (levels separated by '/', none empty)"
        }
        if prefix.contains("+") || prefix.contains("#") || prefix.utf8.contains(0) || prefix.hasPrefix("$") {
            return "a topic prefix without '+', '#', NUL or a leading '$'"
        }
        if prefix.utf8.count > 200 { return "a topic prefix of at most 200 bytes" }
        return nil
    }

    public var status: String { prefix + "/status" }
    public var scan: String { prefix + "/scan" }
    public var state: String { prefix + "/state" }
    public var stats: String { prefix + "/stats" }
    // The door's state (retained), its alarms, the building's commands and their answers.
    public var door: String { prefix + "/door" }
    public var alarm: String { prefix + "/alarm" }
    public var command: String { prefix + "/command" }
    public var commandResult: String { prefix + "/command/result" }
    // The door's mode (retained).
    public var mode: String { prefix + "/mode" }
}

/// The broker's answer to CONNECT, in words (MQTT 3.1.1 section 3.2.2.3; MQTT 5's reason codes
/// for the same refusals): what `mqtt_disconnected reason=` says.
public enum ConnackReason {
    public static func text(_ code: Int) -> String {
        switch code {
        case 0: return "accepted"
        case 1: return "refused: unacceptable protocol version"
        case 2: return "refused: client identifier rejected"
        case 3: return "refused: server unavailable"
        case 4: return "refused: bad user name or password"
        case 5: return "refused: not authorised"
        case 0x84: return "refused: unsupported protocol version"
        case 0x85: return "refused: client identifier not valid"
        case 0x86: return "refused: bad user name or password"
        case 0x87: return "refused: not authorised"
        case 0x88: return "refused: server unavailable"
        case 0x89: return "refused: server busy"
        case 0x8A: return "refused: banned"
        default: return "refused: reason \(code)"
        }
    }
}
