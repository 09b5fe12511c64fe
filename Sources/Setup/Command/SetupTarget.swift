// SPDX-License-Identifier: Apache-2.0
import Glibc
import Kiosk
import Platform
import Policy

/// The system a code is applied to: this one (`/`: files, then NetworkManager, timedated,
/// timesyncd or chrony, and the kiosk restarted, each by its own program, never through a
/// shell), or one under `root` (an SD card's: the files only).
struct SetupTarget {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    /// One step of an apply: what it changes (names, for the `setup` event) and how.
    struct Step {
        let name: String
        let changes: [String]
        let run: () -> Result<String, Failure>
    }

    let root: String
    var live: Bool { root == "/" }
    private var base: String { live ? "" : root }
    func path(_ p: String) -> String { base + p }

    var zoneinfo: String {
        live || !Files.exists(path("/usr/share/zoneinfo")) ? "/usr/share/zoneinfo" : path("/usr/share/zoneinfo")
    }
    func hasZone(_ tz: String) -> Bool { Files.exists(zoneinfo + "/" + tz) }

    /// Whether chrony keeps the time (else systemd-timesyncd): running here, or installed under `root`.
    var usesChrony: Bool {
        if live { return programOutput("/usr/bin/systemctl", ["is-active", "chrony.service"])?.hasPrefix("active") == true }
        return Files.exists(path("/etc/chrony/chrony.conf"))
    }

    func steps(for plan: SetupPlan) -> [Step] {
        let p = plan.payload
        var steps: [Step] = []
        if plan.pinsSiteKey {
            steps.append(Step(name: "site_key", changes: ["KIOSK_SITE_KEY"]) {
                write(SetupPlan.siteKeyPath, Array(p.siteKey.pem.utf8), mode: 0o644).map { "pinned the site key in \(SetupPlan.siteKeyPath)" }
            })
        }
        if let password = p.mqttPassword {
            steps.append(Step(name: "mqtt_password", changes: ["mqtt_password"]) {
                let group = kioskGroup()
                return write(SetupPlan.passwordPath, Array((password + "\n").utf8), mode: 0o640, group: group).map {
                    "wrote the broker's password (hidden) to \(SetupPlan.passwordPath), mode 0640 root:\(group.map { _ in "kiosk" } ?? "root")"
                }
            })
        }
        if !plan.variables.isEmpty {
            steps.append(Step(name: "environment", changes: plan.variables.map(\.name)) {
                let old = (try? SmallFile.read(path(SetupDoor.defaultsPath), limit: 1 << 20)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
                let new = EnvironmentFile.rewrite(old, setting: plan.variables)
                return write(SetupDoor.defaultsPath, Array(new.utf8), mode: 0o644).map {
                    "set \(plan.variables.map(\.name).joined(separator: ", ")) in \(SetupDoor.defaultsPath) (every other line kept)"
                }
            })
        }
        // The package's unit allows the kiosk no Internet socket: a broker needs the drop-in that
        // install.sh writes for KIOSK_MQTT_URL (found by the arm64 VM tier: the code's broker was
        // never reached).
        if plan.variables.contains(where: { $0.name == "KIOSK_MQTT_URL" && !$0.value.isEmpty }) {
            steps.append(Step(name: "mqtt_dropin", changes: []) { allowBroker() })
        }
        if let wifi = p.wifi {
            steps.append(Step(name: "wifi", changes: ["wifi"]) { joinNetwork(wifi) })
        }
        if let tz = p.tz {
            steps.append(Step(name: "tz", changes: ["tz"]) { setZone(tz) })
        }
        if !p.ntp.isEmpty {
            steps.append(Step(name: "ntp", changes: ["ntp"]) { setNTP(p.ntp) })
        }
        if live {
            steps.append(Step(name: "restart", changes: []) {
                run("/usr/bin/systemctl", ["--no-block", "restart", "kiosk.service"]).map { "restarted the kiosk (systemctl restart kiosk.service)" }
            })
        }
        return steps
    }

    /// What `--root` leaves for the system's first boot.
    func leftForFirstBoot(_ plan: SetupPlan) -> [String] {
        var left: [String] = []
        if let w = plan.payload.wifi { left.append("NetworkManager joins \(w.ssid) when it starts (\(connectionFile))") }
        if plan.payload.tz != nil { left.append("nothing for the zone: /etc/localtime is the link timedated would make") }
        if !plan.payload.ntp.isEmpty { left.append("the time servers are used once \(usesChrony ? "chrony" : "systemd-timesyncd") starts") }
        if plan.payload.mqttPassword != nil, kioskGroup() == nil {
            left.append("\(SetupPlan.passwordPath) is root:root: no kiosk group under \(root) yet; the package's postinst or chgrp kiosk must give it to the kiosk")
        }
        left.append("the kiosk starts with these settings")
        return left
    }

    /// Where the package (`/usr/share`) or install.sh (`/usr/local/share`) keeps the drop-in that
    /// lets the kiosk open Internet sockets, and where it goes (`deploy/mqtt.conf`).
    static let brokerDropInTemplates = ["/usr/share/kiosk/mqtt.conf", "/usr/local/share/kiosk/mqtt.conf"]
    static let brokerDropIn = "/etc/systemd/system/kiosk.service.d/mqtt.conf"

    /// The broker's drop-in, copied from the installed template; systemd told (`daemon-reload`)
    /// before the kiosk's restart reads it.
    func allowBroker() -> Result<String, Failure> {
        let found = SetupTarget.brokerDropInTemplates.lazy.compactMap { t in
            (try? SmallFile.read(path(t), limit: 65_536)).flatMap { $0 }.map { (t, $0) }
        }.first
        guard let (template, bytes) = found else {
            let templates = SetupTarget.brokerDropInTemplates.joined(separator: " or ")
            // A card whose kiosk is installed at its first boot: install.sh writes the drop-in
            // then, for the KIOSK_MQTT_URL this code set.
            guard live else { return .success("no \(templates) under \(root) yet: \(SetupTarget.brokerDropIn) is left to the kiosk's installation") }
            return .failure(Failure("no \(templates): the kiosk could not reach the broker"))
        }
        if case .failure(let f) = write(SetupTarget.brokerDropIn, bytes, mode: 0o644) { return .failure(f) }
        let said = "let the kiosk reach the broker: \(SetupTarget.brokerDropIn) (from \(template))"
        guard live else { return .success(said) }
        return run("/usr/bin/systemctl", ["daemon-reload"]).map { said + ", systemctl daemon-reload" }
    }

    var connectionFile: String { "/etc/NetworkManager/system-connections/\(SetupCommand.connectionName).nmconnection" }

    /// A NetworkManager keyfile (mode 0600, root's): read by NetworkManager at start, or loaded now
    /// (`nmcli connection load`) and brought up: the key never on a command line.
    func joinNetwork(_ wifi: SetupPayload.WiFi) -> Result<String, Failure> {
        if case .failure(let f) = write(connectionFile, Array(NetworkKeyfile.text(wifi, id: SetupCommand.connectionName).utf8), mode: 0o600) {
            return .failure(f)
        }
        guard live else { return .success("wrote the network \(wifi.ssid) for NetworkManager (\(connectionFile), mode 0600, key hidden)") }
        if case .failure(let f) = run("/usr/bin/nmcli", ["connection", "load", connectionFile]) { return .failure(f) }
        return run("/usr/bin/nmcli", ["--wait", "30", "connection", "up", "id", SetupCommand.connectionName]).map {
            "joined \(wifi.ssid) through NetworkManager (connection \(SetupCommand.connectionName))"
        }
    }

    func setZone(_ tz: String) -> Result<String, Failure> {
        if live { return run("/usr/bin/timedatectl", ["set-timezone", tz]).map { "set the zone to \(tz) (timedatectl)" } }
        let link = path("/etc/localtime")
        unlink(link)
        guard symlink("/usr/share/zoneinfo/" + tz, link) == 0 else { return .failure(Failure("\(link): \(Errno.current.message)")) }
        return write("/etc/timezone", Array((tz + "\n").utf8), mode: 0o644).map { "linked /etc/localtime to /usr/share/zoneinfo/\(tz)" }
    }

    func setNTP(_ servers: [String]) -> Result<String, Failure> {
        if usesChrony {
            let file = "/etc/chrony/sources.d/kiosk-setup.sources"
            if case .failure(let f) = write(file, Array(servers.map { "server \($0) iburst\n" }.joined().utf8), mode: 0o644) { return .failure(f) }
            guard live else { return .success("wrote chrony's sources \(file)") }
            return run("/usr/bin/chronyc", ["reload", "sources"]).map { "gave chrony the time servers (\(file))" }
        }
        let file = "/etc/systemd/timesyncd.conf.d/kiosk-setup.conf"
        let text = "# Written by kiosk setup --apply\n[Time]\nNTP=\(servers.joined(separator: " "))\n"
        if case .failure(let f) = write(file, Array(text.utf8), mode: 0o644) { return .failure(f) }
        guard live else { return .success("wrote the drop-in \(file) for systemd-timesyncd") }
        return run("/usr/bin/systemctl", ["try-restart", "systemd-timesyncd.service"]).map { "gave systemd-timesyncd the time servers (\(file))" }
    }

    /// `--forget-site`: `KIOSK_SITE_KEY` out of `/etc/default/kiosk`, the pinned file removed.
    func forgetSite() -> Result<[String], Failure> {
        let old = (try? SmallFile.read(path(SetupDoor.defaultsPath), limit: 1 << 20)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let named = EnvironmentFile.values(old)["KIOSK_SITE_KEY"]
        var said: [String] = []
        if named != nil {
            if case .failure(let f) = write(SetupDoor.defaultsPath, Array(EnvironmentFile.rewrite(old, setting: [], removing: ["KIOSK_SITE_KEY"]).utf8), mode: 0o644) {
                return .failure(f)
            }
            said.append("removed KIOSK_SITE_KEY from \(SetupDoor.defaultsPath)")
        }
        if unlink(path(SetupPlan.siteKeyPath)) == 0 { said.append("removed \(SetupPlan.siteKeyPath)") }
        if said.isEmpty { said.append("no site key was pinned") }
        if live, named != nil {
            if case .failure(let f) = run("/usr/bin/systemctl", ["--no-block", "try-restart", "kiosk.service"]) { return .failure(f) }
            said.append("restarted the kiosk")
        }
        return .success(said)
    }

    /// `path` under the root, replaced whole (a new file, fsynced, renamed), its folder made.
    func write(_ file: String, _ bytes: [UInt8], mode: mode_t, group: gid_t? = nil) -> Result<Void, Failure> {
        let full = path(file)
        var folder = ""
        for part in full.split(separator: "/").dropLast() {
            folder += "/" + part
            if mkdir(folder, 0o755) != 0 && errno != EEXIST { return .failure(Failure("\(folder): \(Errno.current.message)")) }
        }
        do {
            try SmallFile.replace(full, with: bytes, mode: mode)
        } catch {
            return .failure(Failure("\(error)"))
        }
        // The mode as asked (the umask had its say at creation); the group before anyone reads it.
        if let group, chown(full, 0, group) != 0 { return .failure(Failure("chown \(full): \(Errno.current.message)")) }
        guard chmod(full, mode) == 0 else { return .failure(Failure("chmod \(full): \(Errno.current.message)")) }
        return .success(())
    }

    /// The kiosk's group: this system's, or the one in the root's /etc/group.
    func kioskGroup() -> gid_t? {
        if live { return getgrnam("kiosk").map { $0.pointee.gr_gid } }
        guard let bytes = (try? SmallFile.read(path("/etc/group"), limit: 1 << 20)).flatMap({ $0 }) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: ":", omittingEmptySubsequences: false)
            if f.count >= 3, f[0] == "kiosk", let gid = UInt32(f[2]) { return gid }
        }
        return nil
    }

    /// A program's run: its argv as given, its output in the failure.
    func run(_ program: String, _ args: [String]) -> Result<Void, Failure> {
        guard let r = runProgram(program, args, mergeErrors: true) else { return .failure(Failure("\(program) cannot be started")) }
        let end = ProgramEnd(waitStatus: r.waitStatus)
        guard end == .exited(status: 0) else {
            let said = r.output.split(separator: "\n").last.map { ": " + $0 } ?? ""
            return .failure(Failure("\(program) \(args.first ?? "") ended with \(end.map { "\($0)" } ?? "status \(r.waitStatus)")\(said)"))
        }
        return .success(())
    }
}

/// A NetworkManager connection as a keyfile (nm-settings-keyfile(5)): Wi-Fi, WPA-PSK or open,
/// addresses by DHCP. The SSID as text when it is plain, else as its bytes (`ssid=65;66;`); the
/// key with GKeyFile's escapes.
enum NetworkKeyfile {
    static func text(_ wifi: SetupPayload.WiFi, id: String) -> String {
        let plain = wifi.ssid.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "\\") }
        let ssid = plain ? wifi.ssid : wifi.ssid.utf8.map { "\($0);" }.joined()
        var lines = ["[connection]", "id=\(id)", "type=wifi", "autoconnect=true", "", "[wifi]", "mode=infrastructure", "ssid=\(ssid)", ""]
        if let psk = wifi.psk {
            var escaped = psk.replacingBackslashes
            if escaped.hasPrefix(" ") { escaped = "\\s" + escaped.dropFirst() }
            lines += ["[wifi-security]", "key-mgmt=wpa-psk", "psk=\(escaped)", ""]
        }
        lines += ["[ipv4]", "method=auto", "", "[ipv6]", "method=auto", ""]
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate var replacingBackslashes: String {
        var out = ""
        for c in self { out += c == "\\" ? "\\\\" : String(c) }
        return out
    }
}
