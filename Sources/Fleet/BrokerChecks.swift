// SPDX-License-Identifier: Apache-2.0
import CMosquitto
import Glibc
import Platform
import Policy

/// One line of `kiosk doctor` about the broker.
public struct BrokerCheck: Equatable, Sendable {
    public enum Verdict: String, Sendable { case pass = "PASS", warn = "WARN", fail = "FAIL" }
    /// `dns`, `tcp`, `tls`, `login`.
    public var name: String
    public var verdict: Verdict
    public var detail: String

    public init(_ name: String, _ verdict: Verdict, _ detail: String) {
        self.name = name
        self.verdict = verdict
        self.detail = detail
    }
}

/// What doctor asks of the broker, each step on its own: the name resolves, a TCP connection
/// opens, the TLS handshake verifies the broker's certificate and name, the broker accepts the
/// login. A later step that could not be tried says so (WARN, "not tried"). The login uses the
/// client id with `-doctor` after it, so that the running kiosk is not pushed off the broker
/// (a broker drops the older of two connections with one id), and sets no will.
public enum BrokerChecks {
    public static func run(_ settings: BrokerSettings, timeoutNs: UInt64 = 5_000_000_000) -> [BrokerCheck] {
        let host = settings.address.host
        let (dnsCheck, addresses) = dns(host: host, port: settings.address.port)
        var out = [dnsCheck]
        guard !addresses.isEmpty else {
            return out + [BrokerCheck("tcp", .warn, "not tried: \(host) does not resolve"), BrokerCheck("tls", .warn, "not tried"),
                          BrokerCheck("login", .warn, "not tried")]
        }
        let tcpCheck = tcp(addresses, timeoutNs: timeoutNs)
        out.append(tcpCheck)
        guard tcpCheck.verdict == .pass else {
            return out + [BrokerCheck("tls", .warn, "not tried: no TCP connection"), BrokerCheck("login", .warn, "not tried: no TCP connection")]
        }
        return out + session(settings, timeoutNs: timeoutNs)
    }

    /// getaddrinfo; the addresses found (nil-free, as text) for the TCP step.
    static func dns(host: String, port: Int) -> (BrokerCheck, [(text: String, address: [UInt8], family: Int32)]) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let started = monotonicNanoseconds()
        let rc = getaddrinfo(host, String(port), &hints, &list)
        let ms = (monotonicNanoseconds() - started) / 1_000_000
        guard rc == 0, let first = list else {
            return (BrokerCheck("dns", .fail, "\(host) does not resolve: \(String(cString: gai_strerror(rc)))"), [])
        }
        defer { freeaddrinfo(list) }
        var found: [(String, [UInt8], Int32)] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            let bytes = Array(UnsafeRawBufferPointer(start: ai.pointee.ai_addr, count: Int(ai.pointee.ai_addrlen)))
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let family = ai.pointee.ai_family
            ai.pointee.ai_addr.withMemoryRebound(to: UInt8.self, capacity: Int(ai.pointee.ai_addrlen)) { raw in
                if family == AF_INET {
                    raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { var a = $0.pointee.sin_addr; _ = inet_ntop(AF_INET, &a, &text, socklen_t(text.count)) }
                } else if family == AF_INET6 {
                    raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { var a = $0.pointee.sin6_addr; _ = inet_ntop(AF_INET6, &a, &text, socklen_t(text.count)) }
                }
            }
            let s = String(cString: text)
            if !found.contains(where: { $0.0 == s }) { found.append((s, bytes, family)) }
            p = ai.pointee.ai_next
        }
        let isLiteral = found.count == 1 && found[0].0 == host
        let detail = isLiteral ? "\(host): an address, nothing to look up" : "\(host) is \(found.map(\.0).joined(separator: ", ")) (\(ms) ms)"
        return (BrokerCheck("dns", .pass, detail), found)
    }

    /// A TCP connection to each address in turn, until one opens.
    static func tcp(_ addresses: [(text: String, address: [UInt8], family: Int32)], timeoutNs: UInt64) -> BrokerCheck {
        var failures: [String] = []
        for a in addresses {
            let fd = socket(a.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { failures.append("\(a.text): \(Errno.current.message)"); continue }
            defer { close(fd) }
            let started = monotonicNanoseconds()
            var rc = a.address.withUnsafeBytes { connect(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count)) }
            var error = errno
            if rc != 0 && error == EINPROGRESS {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, Int32(timeoutNs / 1_000_000)) == 1 {
                    var soError: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
                    rc = soError == 0 ? 0 : -1
                    error = soError
                } else {
                    error = ETIMEDOUT
                }
            }
            if rc == 0 {
                let port = a.family == AF_INET6 ? "[\(a.text)]" : a.text
                return BrokerCheck("tcp", .pass, "\(port) accepts a connection (\((monotonicNanoseconds() - started) / 1_000_000) ms)")
            }
            failures.append("\(a.text): \(Errno(error).message)")
        }
        return BrokerCheck("tcp", .fail, failures.joined(separator: "; "))
    }

    /// A session as the kiosk makes it, up to CONNACK: the TLS and login lines.
    static func session(_ settings: BrokerSettings, timeoutNs: UInt64) -> [BrokerCheck] {
        _ = BrokerLink.libraryVersion
        let tls = settings.address.tls
        let plainTLS = settings.password != nil
            ? BrokerCheck("tls", .warn, "mqtt:// without TLS: the password and the scans cross the network in clear (mqtts:// with KIOSK_MQTT_CA_FILE)")
            : BrokerCheck("tls", .warn, "mqtt:// without TLS: the scans cross the network in clear")
        final class Outcome { var connack: Int32?; var lastError: String? }
        let outcome = Outcome()
        guard let s = mosquitto_new(settings.clientID + "-doctor", true, Unmanaged.passUnretained(outcome).toOpaque()) else {
            return [tls ? BrokerCheck("tls", .fail, "mosquitto_new failed") : plainTLS, BrokerCheck("login", .warn, "not tried")]
        }
        defer { mosquitto_destroy(s) }
        mosquitto_connect_callback_set(s) { _, context, rc in
            Unmanaged<Outcome>.fromOpaque(context!).takeUnretainedValue().connack = rc
        }
        mosquitto_log_callback_set(s) { _, context, level, text in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text else { return }
            Unmanaged<Outcome>.fromOpaque(context!).takeUnretainedValue().lastError = String(cString: text)
        }
        if let user = settings.user { mosquitto_username_pw_set(s, user, settings.password?.text) }
        if tls {
            let rc = settings.caFile.map { mosquitto_tls_set(s, $0, nil, nil, nil, nil) } ?? mosquitto_int_option(s, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                return [BrokerCheck("tls", .fail, "the CA file \(settings.caFile ?? "(system)"): \(mosquittoErrorText(rc, errno: errno, host: settings.address.host, detail: outcome.lastError))"),
                        BrokerCheck("login", .warn, "not tried: TLS not set up")]
            }
            mosquitto_tls_insecure_set(s, false)
        }
        var rc = mosquitto_connect(s, settings.address.host, Int32(settings.address.port), settings.keepaliveSeconds)
        let deadline = monotonicNanoseconds() + timeoutNs
        while rc == MOSQ_ERR_SUCCESS.rawValue && outcome.connack == nil && monotonicNanoseconds() < deadline {
            rc = mosquitto_loop(s, 100, 1)
        }
        let failure = rc == MOSQ_ERR_SUCCESS.rawValue ? nil : mosquittoErrorText(rc, errno: errno, host: settings.address.host, detail: outcome.lastError)
        let caText = settings.caFile.map { "the CA in \($0)" } ?? "the system's CAs"
        let who = settings.user.map { "as \($0)" } ?? "anonymously"
        var tlsCheck = plainTLS
        if tls {
            tlsCheck = outcome.connack != nil
                ? BrokerCheck("tls", .pass, "the certificate of \(settings.address.host) is valid for that name and signed by \(caText)")
                : BrokerCheck("tls", .fail, failure ?? "no answer within \(timeoutNs / 1_000_000_000) s")
        }
        guard let connack = outcome.connack else {
            return [tlsCheck, BrokerCheck("login", tls ? .warn : .fail,
                                          (tls ? "not tried: " : "") + (failure ?? "no CONNACK within \(timeoutNs / 1_000_000_000) s"))]
        }
        if connack == 0 {
            mosquitto_disconnect(s)
            _ = mosquitto_loop(s, 100, 1)
            return [tlsCheck, BrokerCheck("login", .pass, "accepted \(who)")]
        }
        return [tlsCheck, BrokerCheck("login", .fail, "\(ConnackReason.text(Int(connack))) (\(who))")]
    }
}

/// A libmosquitto result in words, with the library's last complaint (OpenSSL's reason, say).
func mosquittoErrorText(_ rc: Int32, errno e: Int32, host: String, detail: String?) -> String {
    var text: String
    switch rc {
    case MOSQ_ERR_ERRNO.rawValue: text = String(cString: strerror(e))
    case MOSQ_ERR_CONN_LOST.rawValue: text = "connection lost"
    case MOSQ_ERR_KEEPALIVE.rawValue: text = "no answer from the broker within the keepalive"
    case MOSQ_ERR_EAI.rawValue: text = "cannot resolve \(host)"
    case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue: text = "TLS failed"
    case MOSQ_ERR_NO_CONN.rawValue: text = "not connected"
    default: text = String(cString: mosquitto_strerror(rc))
    }
    // libmosquitto 2.0.21 (trixie) reports a failed handshake as MOSQ_ERR_ERRNO with EPROTO
    // ("Protocol error"), OpenSSL's reason being its last complaint: a TLS failure all the same.
    if rc == MOSQ_ERR_ERRNO.rawValue, e == EPROTO, detail.map({ mentions($0, "OpenSSL") }) == true { text = "TLS failed" }
    if let detail, rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_CONN_LOST.rawValue { text += " (\(detail))" }
    return text
}
