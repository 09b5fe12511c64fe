// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// A password, kept out of every description: printing settings, an error or a test's failure
/// message never shows it.
public struct BrokerPassword: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let text: String
    public init(_ text: String) { self.text = text }
    public var description: String { "(hidden)" }
    public var debugDescription: String { "(hidden)" }

    /// The password in `path`: the file's first line without its line end (as `LoadCredential=`
    /// and `echo pw > file` leave it). The error names the file, never what it holds.
    public static func read(file path: String) throws -> BrokerPassword {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PasswordFileError(path: path, errno: Errno.current) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while bytes.count < 65536 {
            let n: Int
            do throws(Errno) { n = try Syscall.retryingEINTR { Glibc.read(fd, &buffer, buffer.count) } } catch {
                throw PasswordFileError(path: path, errno: error)
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        let line = bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        var text = Array(line)
        if text.last == 0x0D { text.removeLast() }
        return BrokerPassword(String(decoding: text, as: UTF8.self))
    }

    /// Which file holds the password: `KIOSK_MQTT_PASSWORD_FILE` when given, else the credential
    /// `name` that systemd's `LoadCredential=` put in `$CREDENTIALS_DIRECTORY`, else none.
    public static func file(explicit: String?, credentialsDirectory: String?, name: String) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        guard let dir = credentialsDirectory, !dir.isEmpty else { return nil }
        let path = dir + "/" + name
        return Files.exists(path) ? path : nil
    }
}

public struct PasswordFileError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Errno
    public var description: String { "cannot read the password file \(path): \(errno.message)" }
}

/// Everything the link to the building's broker needs, as the configuration gave it.
public struct BrokerSettings: Sendable {
    public var address: BrokerAddress
    public var topics: FleetTopics
    public var clientID: String
    public var user: String?
    public var password: BrokerPassword?
    /// For mqtts://: the CA that signed the broker's certificate; nil: the system's CAs.
    public var caFile: String?
    /// Home Assistant's discovery prefix; nil: no discovery.
    public var discoveryPrefix: String?
    /// The kiosk's version, as the discovered device shows it.
    public var version: String
    public var keepaliveSeconds: Int32 = 30
    /// Between two attempts to connect: 0.5 s doubling to 30 s (Policy's `Backoff`).
    public var backoffInitialNs: UInt64 = 500_000_000
    public var backoffCapNs: UInt64 = 30_000_000_000
    /// From the TCP connection to the broker's CONNACK.
    public var connectTimeoutNs: UInt64 = 10_000_000_000
    /// Scans sent and not yet acknowledged at most.
    public var window = 16
    /// Subscribe to `<topic>/command` (`KIOSK_MQTT_COMMANDS=1`); never otherwise.
    public var commands = false
    /// The site's bundles' topic (`KIOSK_SITE_TOPIC`), subscribed at each connection.
    public var siteTopic: String?
    /// The door contact and the tamper loop are watched (their discovery entities).
    public var door = false
    public var tamper = false
    /// Credentials mode: the clock's sensor (`clock` in `<topic>/state`).
    public var clock = false
    /// A keypad with a duress code (credentials mode): the duress alarm's event entity.
    public var duress = false

    public init(address: BrokerAddress, topics: FleetTopics, clientID: String, user: String? = nil,
                password: BrokerPassword? = nil, caFile: String? = nil, discoveryPrefix: String? = "homeassistant",
                version: String) {
        self.address = address
        self.topics = topics
        self.clientID = clientID
        self.user = user
        self.password = password
        self.caFile = caFile
        self.discoveryPrefix = discoveryPrefix
        self.version = version
    }
}
