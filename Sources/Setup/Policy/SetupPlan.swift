// SPDX-License-Identifier: Apache-2.0
/// What a verified code would change, checked before anything changes: the `env` values and the
/// variables the code's own fields set (the password's file, the pinned site key), with the rest
/// of `/etc/default/kiosk`, read as `kiosk check` reads them (`Configuration.read`). A value it
/// refuses refuses the whole code; so does a name the kiosk does not read, one that names a
/// program (the table's `namesProgram`: `KIOSK_ON_SCAN`), and one the code's fields set.
public struct SetupPlan: Sendable {
    /// Where `kiosk setup --apply` pins the site key and puts the broker's password.
    public static let siteKeyPath = "/etc/kiosk/site-key.pem"
    public static let passwordPath = "/etc/kiosk/mqtt-password"
    /// Set by the code's own fields (`site_key`, `mqtt_password`), never by its `env`.
    public static let setByFields: Set<String> = ["KIOSK_SITE_KEY", "KIOSK_MQTT_PASSWORD_FILE"]

    public let payload: SetupPayload
    /// The lines `/etc/default/kiosk` gets, in order.
    public let variables: [(name: String, value: String)]
    /// Whether the code's site key is pinned (a door with none).
    public let pinsSiteKey: Bool

    /// The names a code sets (the `setup` event's `changed`): variables, and `wifi`, `tz`, `ntp`,
    /// `mqtt_password`; never a value.
    public var changed: [String] {
        var names = variables.map(\.name)
        if payload.wifi != nil { names.append("wifi") }
        if payload.tz != nil { names.append("tz") }
        if !payload.ntp.isEmpty { names.append("ntp") }
        if payload.mqttPassword != nil { names.append("mqtt_password") }
        return names
    }

    /// `current`: the variables `/etc/default/kiosk` sets now. `isExecutableFile` as for `kiosk check`.
    public init(_ payload: SetupPayload, current: [String: String], pinsSiteKey: Bool,
                isExecutableFile: (String) -> Bool) throws(SetupRefusal) {
        let known = Dictionary(Configuration.table.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var variables: [(name: String, value: String)] = []
        for (name, value) in payload.env {
            guard let v = known[name] else { throw SetupRefusal(.refused(name), "not a variable the kiosk reads") }
            guard !v.namesProgram else { throw SetupRefusal(.refused(name), "it names a program the kiosk runs: set it over SSH") }
            guard !SetupPlan.setByFields.contains(name) else {
                throw SetupRefusal(.refused(name), "set by the code's site_key or mqtt_password, not its env")
            }
            guard !variables.contains(where: { $0.name == name }) else { throw SetupRefusal(.malformed, "\(name) twice in env") }
            variables.append((name, value))
        }
        if payload.mqttPassword != nil { variables.append(("KIOSK_MQTT_PASSWORD_FILE", SetupPlan.passwordPath)) }
        if pinsSiteKey { variables.append(("KIOSK_SITE_KEY", SetupPlan.siteKeyPath)) }
        var merged = current
        for (name, value) in variables { merged[name] = value }
        let reading = Configuration.read(environment: merged, isExecutableFile: isExecutableFile)
        if let e = reading.errors.first(where: { e in variables.contains { $0.name == e.variable } }) ?? reading.errors.first {
            let ours = variables.contains { $0.name == e.variable }
            throw SetupRefusal(.refused(e.variable), ours ? "expected \(e.expected)" : "/etc/default/kiosk would not pass kiosk check: \(e.variable): expected \(e.expected)")
        }
        self.payload = payload
        self.variables = variables
        self.pinsSiteKey = pinsSiteKey
    }

    /// What `--show` and `--apply` say a code changes, one line each, secrets hidden.
    public var lines: [String] {
        var out = variables.map { "\($0.name)=\($0.value)" }
        if let w = payload.wifi { out.append("wifi: \(w.ssid) (\(w.psk == nil ? "open" : "WPA-PSK, key hidden"))") }
        if let tz = payload.tz { out.append("tz: \(tz)") }
        if !payload.ntp.isEmpty { out.append("ntp: \(payload.ntp.joined(separator: " "))") }
        if payload.mqttPassword != nil { out.append("mqtt_password: (hidden) to \(SetupPlan.passwordPath)") }
        if pinsSiteKey { out.append("site_key: pinned in \(SetupPlan.siteKeyPath)") }
        return out
    }
}
