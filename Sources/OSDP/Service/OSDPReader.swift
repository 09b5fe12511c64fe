// SPDX-License-Identifier: Apache-2.0
import Camera
import Credentials
import Glibc
import OSDP
import Platform
import Policy
import Reader

/// The kiosk as the access controller's OSDP reader, wired: the key and the kept bus
/// settings (`OSDPStore`), the link's thread (`OSDPLink`), the controller's commands on the lines
/// (`OSDPLines`), and the link's events in the log.
///
/// What the controller decides, the kiosk does: each reported code goes to it as osdp_RAW
/// (`reported(payload:)`, or `report(_:)` with a card read made elsewhere: in credentials mode
/// the credential's subject, never its token); its osdp_LED, osdp_BUZ and osdp_OUT drive the
/// LEDs, the buzzer and the strike.
public final class OSDPReader: @unchecked Sendable {
    let link: OSDPLink
    let lines: OSDPLines
    /// Says the controller's osdp_TEXT, when the kiosk has a speaker.
    let speech: DoorSpeech?
    let format: OSDPCardFormat
    let facility: Int
    let logger: Logger
    let statusFile: String?
    /// In credentials mode a payload is a token: only a granted credential's subject goes.
    let sendsCodes: Bool
    private var errorLimit = RateLimit(intervalNs: 1_000_000_000)
    private let lock = Lock()

    enum Failure: Error {
        /// A `config_error` was logged (exit 78).
        case configuration
        /// The port or libcrypto could not be had (exit 69); logged.
        case unavailable
    }

    /// The serial number in PDID and the Secure Channel's cUID: from /etc/machine-id, so that it
    /// stays the same across restarts and differs between kiosks.
    public static func serialNumber() -> UInt32 {
        guard let bytes = readFile("/etc/machine-id", limit: 64), bytes.count >= 8,
              let v = Hex.value(bytes.prefix(8)) else { return 1 }
        return UInt32(v)
    }

    public static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var b = [UInt8](repeating: 0, count: limit)
        let n = b.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? Array(b[0..<n]) : nil
    }

    /// The Secure Channel key and its source, nil for none; a `config_error` when a key file is
    /// no key, or when with no key the kiosk could answer nothing (`kiosk check` and `run` alike).
    public static func key(_ config: Configuration, _ store: OSDPStore) -> Result<(key: [UInt8], source: String)?, ConfigError> {
        let loaded: (key: [UInt8], source: String)?
        do { loaded = try store.loadKey() } catch {
            return .failure(ConfigError(variable: "KIOSK_OSDP_KEY_FILE", value: config.osdpKeyFile ?? "unset",
                                        expected: "\(error); a file of 32 hex digits"))
        }
        if loaded == nil && !config.osdpInstallMode && config.osdpRequireSecure {
            return .failure(ConfigError(variable: "KIOSK_OSDP_KEY_FILE", value: config.osdpKeyFile ?? "unset",
                                        expected: "a Secure Channel key (a file of 32 hex digits, or the credential osdp-scbk), KIOSK_OSDP_INSTALL_MODE=1 to take one from the controller, or KIOSK_OSDP_REQUIRE_SECURE=0: with none, the kiosk could answer no command"))
        }
        return .success(loaded)
    }

    /// `kiosk check`'s last line with OSDP: what a sample card becomes, and where the key comes from.
    public static func checkNote(_ config: Configuration, keySource: String?) -> String {
        let sample: String
        switch config.osdpCardFormat.card(payload: Array("18:36963".utf8), defaultFacility: config.wiegandFacility, at: 0) {
        case .success(let card) where card.format == 1:
            sample = "the code 18:36963 is sent as osdp_RAW, Wiegand, \(card.bitCount) bits: " + card.data.map { hexByte($0) }.joined()
        case .success:
            sample = "a code is sent as osdp_RAW with its bytes (format unspecified)"
        case .failure(let skip):
            sample = "the code 18:36963 is not sent: \(skip.reason)"
        }
        let key = keySource.map { "the Secure Channel key comes from \($0)" }
            ?? (config.osdpInstallMode ? "no key yet: install mode takes the controller's" : "no key: plaintext only")
        return sample + "; " + key
    }

    public static func hexByte(_ b: UInt8) -> String {
        let d = Array("0123456789abcdef")
        return String([d[Int(b >> 4)], d[Int(b & 0xF)]])
    }

    static var identity: OSDPIdentity {
        let v: [UInt8] = kioskVersion.split(separator: ".").map { UInt8($0) ?? 0 } + [0, 0, 0]
        // No IEEE OUI of its own: vendor code 0 (the controller lists it as unknown).
        return OSDPIdentity(vendorCode: 0, model: 1, version: 1, serial: serialNumber(), firmware: (v[0], v[1], v[2]))
    }

    /// Where the link's status goes for `kiosk doctor` (`$RUNTIME_DIRECTORY/osdp-status`, in RAM:
    /// rewritten each second); nil without a runtime directory.
    public static func statusPath(_ environment: [String: String]) -> String? {
        environment["RUNTIME_DIRECTORY"].flatMap { $0.split(separator: ":").first.map { String($0) + "/osdp-status" } }
    }

    /// The access controller's reader on its own thread (`KIOSK_OSDP_PORT`), shut before the lines.
    static func assemble(_ a: Assembly, door: DoorReader, speech: DoorSpeech?) throws -> OSDPReader? {
        guard a.config.isOSDP else { return nil }
        let osdp: OSDPReader
        do {
            osdp = try OSDPReader(config: a.config, environment: a.environment, door: door, logger: a.logger, clock: a.clock, speech: speech)
        } catch Failure.configuration {
            throw ServiceExit(ExitStatus.config)
        } catch {
            throw ServiceExit(ExitStatus.unavailable)
        }
        osdp.start()
        return osdp
    }

    init(config: Configuration, environment: [String: String], door: DoorReader, logger: Logger, clock: Clock, speech: DoorSpeech? = nil) throws {
        self.speech = speech
        self.logger = logger
        format = config.osdpCardFormat
        facility = config.wiegandFacility
        statusFile = OSDPReader.statusPath(environment)
        sendsCodes = config.verdict != .credentials
        let store = OSDPStore(environment: environment, keyFile: config.osdpKeyFile)
        let loaded: (key: [UInt8], source: String)?
        switch OSDPReader.key(config, store) {
        case .success(let k): loaded = k
        case .failure(let e):
            logger.configError(e)
            throw Failure.configuration
        }
        let kept = store.loadComset()
        // A key kept from the controller's KEYSET ends install mode: SCBK-D is never taken again
        // (delete the kept key to provision the kiosk anew).
        let installMode = config.osdpInstallMode && !(loaded?.source.hasPrefix("kept") ?? false)
        if loaded != nil || installMode {
            do { try OpenSSLCipher.load() } catch {
                logger.error("osdp_unavailable", ["error": .text(String(describing: error)), "hint": "the Secure Channel needs OpenSSL's libcrypto.so.3 (libssl3)"])
                throw Failure.unavailable
            }
        }
        lines = OSDPLines(door: door, clock: clock, logger: logger)
        let address = kept?.address ?? config.osdpAddress
        let baud = kept?.baud ?? config.osdpBaud
        var settings = OSDPPeripheral.Settings(address: UInt8(address), identity: OSDPReader.identity, key: loaded?.key,
                                               installMode: installMode, requireSecure: config.osdpRequireSecure,
                                               hasBuzzer: lines.hasBuzzer, hasLED: lines.hasLED, hasOutput: lines.hasOutput)
        settings.cardQueueLimit = 8
        // With a speaker the controller's text is taken and said, as a reader with a display shows it.
        settings.speaksText = speech != nil
        let peripheral = OSDPPeripheral(settings: settings, cipher: OpenSSLCipher(), keeper: store)
        do {
            link = try OSDPLink(path: config.osdpPort!, baud: baud, peripheral: peripheral, clock: clock)
        } catch {
            logger.error("osdp_unavailable", ["port": .text(config.osdpPort!), "error": .text(String(describing: error))])
            throw Failure.unavailable
        }
        logger.info("osdp_start", [
            "port": .text(config.osdpPort!), "baud": .int(baud), "address": .int(address),
            "settings": .text(kept == nil ? "environment" : "kept from the controller's COMSET in \(store.comsetPath)"),
            "key": .text(loaded?.source ?? "none"), "install_mode": .bool(installMode), "require_secure": .bool(config.osdpRequireSecure),
            "card_format": .text(format.rawValue),
        ])
        link.onAction = { [weak self] in self?.act($0) }
        link.onPortError = { [weak self] error in
            guard let self else { return }
            if self.lock.withLock({ self.errorLimit.shouldSay(at: monotonicNanoseconds()).say }) {
                self.logger.warning("osdp_port_error", ["port": .text(self.link.path), "error": .text(error)])
            }
        }
    }

    func start() {
        link.start()
        guard let statusFile else { return }
        startThread(name: "kiosk.osdp.status") { [weak self] in
            while let self, !self.isStopped {
                self.writeStatus(statusFile)
                usleep(1_000_000)
            }
        }
    }

    private var stopped = false
    private var isStopped: Bool { lock.withLock { stopped } }

    /// A reported code, as the card format makes it (or `osdp_card_skipped`, with why).
    func reported(payload: [UInt8]) {
        switch format.card(payload: payload, defaultFacility: facility, at: monotonicNanoseconds()) {
        case .success(let card): report(card)
        case .failure(let skip): logger.warning("osdp_card_skipped", ["reason": .text(skip.reason), "format": .text(format.rawValue)])
        }
    }

    /// The entry point for a card read made by the caller (credentials mode: the subject's bytes
    /// or number, never the token).
    func report(_ card: OSDPCardRead) { link.report(card) }

    /// The tamper loop's state (from the door's thread): LSTATR's tamper byte, set on the
    /// peripheral by the link's thread under the link's lock; the controller reads it on its next
    /// osdp_LSTAT.
    func tamper(_ active: Bool) { link.setTamper(active) }

    /// A key of the door's keypad, for the controller's next POLL (osdp_KEYPAD): the controller
    /// checks the PIN.
    func keyPressed(_ byte: UInt8) { link.report(.keypad([byte], at: monotonicNanoseconds())) }

    /// The end of a replay: the last reads reach a controller that is polling (at most 2 s).
    func settle() { link.settle(limitNs: 2_000_000_000) }

    func shutDown() {
        lock.withLock { stopped = true }
        lines.shutDown()
        link.shutDown()
        if let statusFile { unlink(statusFile) }
    }

    private func act(_ action: OSDPPeripheral.Action) {
        switch action {
        case .led(let r): lines.led(r)
        case .buzzer(let r): lines.buzzer(r)
        case .output(let r): lines.output(r)
        case .switchBaud(let baud): logger.info("osdp_baud", ["baud": .int(baud)])
        case .text(let text): speech?.speaker.say(text: text)  // rendered and said off this thread
        case .send: break
        case .event(let e): log(e)
        }
    }

    private func log(_ event: OSDPPeripheral.Event) {
        switch event {
        case .online: logger.info("osdp_online", ["port": .text(link.path)])
        case .offline: logger.warning("osdp_offline", ["port": .text(link.path), "reason": "no command from the controller for 2 s"])
        case .secure(let defaultKey):
            logger.log(defaultKey ? .warning : .info, "osdp_secure", ["state": "on", "key": .text(defaultKey ? "SCBK-D (install mode)" : "SCBK")])
        case .secureEnded(let reason): logger.info("osdp_secure", ["state": "off", "reason": .text(reason)])
        case .error(let reason, let detail):
            let (say, suppressed) = lock.withLock { errorLimit.shouldSay(at: monotonicNanoseconds()) }
            guard say else { return }
            var fields: [(String, LogValue)] = [("reason", .text(reason.rawValue)), ("detail", .text(detail))]
            if suppressed > 0 { fields.append(("suppressed", .int(suppressed))) }
            logger.log(.warning, "osdp_error", fields: fields)
        case .cardSent(let card):
            if card.isKeypad {
                logger.debug("osdp_keypad", ["keys": .int(card.data.count)])  // never the keys
            } else if card.format == 1 {
                logger.info("osdp_card", ["bits": .int(card.bitCount), "format": "wiegand"])
            } else {
                logger.info("osdp_card", ["length": .int(card.data.count), "format": "raw"])
            }
        case .cardDropped(let reason): logger.warning("osdp_card_dropped", ["reason": .text(reason)])
        case .keyChanged: logger.warning("osdp_key", ["state": "changed", "by": "the controller's KEYSET", "kept": "yes"])
        case .comset(let address, let baud): logger.warning("osdp_comset", ["address": .int(address), "baud": .int(baud), "kept": "yes"])
        }
    }

    private func writeStatus(_ path: String) {
        let s = link.snapshot
        let age = s.lastCommandNs.map { String((monotonicNanoseconds() &- $0) / 1_000_000) } ?? "none"
        let text = "online=\(s.online ? 1 : 0)\nsecure=\(s.secure ? 1 : 0)\nlast_command_ms_ago=\(age)\nwritten_unix=\(time(nil))\nbaud=\(s.baud)\naddress=\(s.address)\n"
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let whole = (try? Syscall.writeAll(fd, Array(text.utf8))) != nil
        close(fd)
        // A status cut short is not shown: doctor reads the last whole one.
        if whole { rename(tmp, path) } else { unlink(tmp) }
    }
}

/// The controller hears what the door reads: the code itself, except in credentials mode, where
/// only a granted credential's subject goes; at a replay's end the last reads are polled.
extension OSDPReader: ScanListener {
    public func codeReported(_ code: ReportedCode) {
        if sendsCodes { reported(payload: code.bytes) }
    }
    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {
        if verdict.result == .granted, let sub = verdict.credential?.sub { reported(payload: Array(sub.utf8)) }
    }
    public func sourceEnded(unless stop: StopSignal) { settle() }
}
