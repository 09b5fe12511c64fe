// SPDX-License-Identifier: Apache-2.0
import Glibc
import Kiosk
import OSDP
import Platform
import Policy

// `kiosk doctor` on the OSDP reader: the port (there, a serial device, who holds it,
// how it is set, not the kernel's console), the key's source (never the key), what the running
// service last said about the link (its status file).
extension Doctor {
    func osdp() -> [Check] {
        let c = configuration
        guard let port = c.osdpPort else { return [] }
        var checks: [Check] = []
        var st = stat()
        guard stat(port, &st) == 0 else {
            let present = (Files.names(in: "/dev") ?? []).filter { $0.hasPrefix("ttyUSB") || $0.hasPrefix("ttyACM") || $0.hasPrefix("ttyAMA") || $0.hasPrefix("ttyS0") || $0 == "serial0" }
                .sorted().map { "/dev/" + $0 }.joined(separator: " ")
            return [Check(verdict: .fail, subject: "osdp port", detail: "\(port) does not exist (serial devices here: \(present.isEmpty ? "none" : present); on a Pi: enable_uart=1 in config.txt)")]
        }
        let real = Doctor.realPath(port) ?? port
        guard st.st_mode & S_IFMT == S_IFCHR else {
            return [Check(verdict: .fail, subject: "osdp port", detail: "\(port) is not a character device")]
        }
        checks.append(access(path: real, st: st, role: "osdp port", group: "dialout"))
        let holders = Doctor.processesHolding(real)
        if holders.isEmpty {
            checks.append(Check(verdict: .pass, subject: "osdp port", detail: "\(real) is held by no process this user can see"))
        } else {
            let kioskHolds = holders.allSatisfy { $0.name == "kiosk" }
            checks.append(Check(verdict: kioskHolds ? .warn : .fail, subject: "osdp port",
                                detail: "\(real) is open in " + holders.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ")
                                    + (kioskHolds ? ": the kiosk service (running)" : ": a second program on the line garbles the bus; stop it (a getty: systemctl disable serial-getty@\(real.split(separator: "/").last ?? ""))")))
        }
        if let cmdline = OSDPReader.readFile("/proc/cmdline", limit: 4096).map({ String(decoding: $0, as: UTF8.self) }) {
            let name = String(real.split(separator: "/").last ?? "")
            let consoles = cmdline.split(separator: " ").filter { $0.hasPrefix("console=") }.map { $0.dropFirst(8).split(separator: ",").first.map(String.init) ?? "" }
            if consoles.contains(name) || (consoles.contains("serial0") && (port.hasSuffix("serial0") || name.hasPrefix("ttyAMA") || name.hasPrefix("ttyS"))) {
                checks.append(Check(verdict: .fail, subject: "osdp port", detail: "the kernel's console is on \(name) (/proc/cmdline): remove console=serial0,... from cmdline.txt (raspi-config: Interface Options, Serial Port: login shell no, hardware yes)"))
            }
        }
        let fd = open(real, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        if fd >= 0 {
            var t = termios()
            if tcgetattr(fd, &t) == 0 {
                checks.append(Check(verdict: .pass, subject: "osdp port", detail: "a serial device, now at \(Doctor.baudName(cfgetospeed(&t))) (the kiosk sets \(c.osdpBaud) 8N1 raw; a COMSET the controller sent wins)"))
            } else {
                checks.append(Check(verdict: .fail, subject: "osdp port", detail: "\(real) is no serial device: \(Errno.current.message)"))
            }
            close(fd)
        }
        // The key: where it would come from (a kept KEYSET first), never what it is.
        let store = OSDPStore(environment: environment, keyFile: c.osdpKeyFile)
        do {
            if let loaded = try store.loadKey() {
                checks.append(Check(verdict: .pass, subject: "osdp key", detail: "the Secure Channel key comes from \(loaded.source)\(c.osdpInstallMode && loaded.source.hasPrefix("kept") ? "; install mode is over (SCBK-D refused)" : "")"))
            } else if c.osdpInstallMode {
                checks.append(Check(verdict: .warn, subject: "osdp key", detail: "no key yet: install mode accepts SCBK-D until the controller's KEYSET (kept in \(store.keptKeyPath))"))
            } else if c.osdpRequireSecure {
                checks.append(Check(verdict: .fail, subject: "osdp key", detail: "no key (KIOSK_OSDP_KEY_FILE, the credential osdp-scbk or a kept KEYSET) and no install mode: the kiosk will not start"))
            } else {
                checks.append(Check(verdict: .warn, subject: "osdp key", detail: "no key: plaintext only (KIOSK_OSDP_REQUIRE_SECURE=0); anyone on the bus can read and forge the cards"))
            }
        } catch {
            checks.append(Check(verdict: .fail, subject: "osdp key", detail: "\(error)"))
        }
        if let kept = store.loadComset() {
            checks.append(Check(verdict: .pass, subject: "osdp settings", detail: "address \(kept.address) at \(kept.baud) baud, kept from the controller's COMSET in \(store.comsetPath) (they win over KIOSK_OSDP_ADDRESS/BAUD)"))
        }
        // What the running service says about the link.
        let statusPath = OSDPReader.statusPath(environment) ?? "/run/kiosk/osdp-status"
        if let bytes = OSDPReader.readFile(statusPath, limit: 1024) {
            var f: [String: String] = [:]
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let kv = line.split(separator: "=", maxSplits: 1)
                if kv.count == 2 { f[String(kv[0])] = String(kv[1]) }
            }
            let written = Int(f["written_unix"] ?? "") ?? 0
            let stale = Int(time(nil)) - written > 5
            let online = f["online"] == "1", secure = f["secure"] == "1"
            let age = f["last_command_ms_ago"].map { $0 == "none" ? "never" : "\($0) ms ago" } ?? "?"
            let verdict: Verdict = stale ? .warn : online && (secure || !c.osdpRequireSecure) ? .pass : .fail
            checks.append(Check(verdict: verdict, subject: "osdp link",
                                detail: stale ? "the status in \(statusPath) is \(Int(time(nil)) - written) s old: the service is not running"
                                    : "\(online ? "online" : "offline"), \(secure ? "Secure Channel" : "no Secure Channel"), last command from the controller \(age) (address \(f["address"] ?? "?"), \(f["baud"] ?? "?") baud)"))
        } else {
            checks.append(Check(verdict: .warn, subject: "osdp link", detail: "no status in \(statusPath): the service is not running (it writes it each second under systemd's RuntimeDirectory=kiosk)"))
        }
        return checks
    }

    static func realPath(_ path: String) -> String? {
        guard let r = realpath(path, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }

    /// Processes with `device` open, from /proc/*/fd (only those this user may look into).
    static func processesHolding(_ device: String) -> [(pid: Int, name: String)] {
        var out: [(Int, String)] = []
        for entry in Files.names(in: "/proc") ?? [] {
            guard let pid = Int(entry), pid != Int(getpid()) else { continue }
            for fd in Files.names(in: "/proc/\(pid)/fd") ?? [] {
                var buffer = [CChar](repeating: 0, count: 256)
                let n = readlink("/proc/\(pid)/fd/\(fd)", &buffer, buffer.count - 1)
                guard n > 0 else { continue }
                if String(cString: buffer) == device {
                    let comm = OSDPReader.readFile("/proc/\(pid)/comm", limit: 64).map { String(decoding: $0, as: UTF8.self).trimmingNewline } ?? "?"
                    out.append((pid, comm))
                    break
                }
            }
        }
        return out
    }

    static func baudName(_ s: speed_t) -> String {
        let table: [(Int32, String)] = [(B9600, "9600"), (B19200, "19200"), (B38400, "38400"), (B57600, "57600"),
                                        (B115200, "115200"), (B230400, "230400")]
        return table.first { speed_t($0.0) == s }.map { "\($0.1) baud" } ?? "another speed"
    }
}

private extension String {
    var trimmingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
