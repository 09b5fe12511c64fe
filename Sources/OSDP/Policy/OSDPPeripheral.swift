// SPDX-License-Identifier: Apache-2.0
// The kiosk as an OSDP peripheral device (PD): what it answers to each packet from the control
// panel (CP), its sequence numbers, the Secure Channel (OSDP 2.2, Annex D) and when the link is
// online. Pure: the time comes with each call, AES and random bytes through `OSDPCipher`, what
// must be kept (a new key, new bus settings) through `OSDPKeeper`; the bytes to send and what
// the lines must do come back as actions.

/// AES-128 on whole 16-byte blocks (ECB when `iv` is nil, else CBC), and random bytes: OpenSSL's
/// in the kiosk (Sources/OSDP), never written here.
public protocol OSDPCipher {
    func encrypt(key: [UInt8], iv: [UInt8]?, _ data: [UInt8]) throws -> [UInt8]
    func decrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8]
    func random(_ count: Int) throws -> [UInt8]
}

/// Where a new key (KEYSET) and new bus settings (COMSET) are kept before the kiosk says yes:
/// false when they could not be written (the controller gets a NAK and the old ones stay).
public protocol OSDPKeeper {
    func keep(key: [UInt8]) -> Bool
    func keep(address: Int, baud: Int) -> Bool
}

/// What the PD says about itself in PDID.
public struct OSDPIdentity: Equatable, Sendable {
    /// IEEE OUI, 24 bits.
    public var vendorCode: UInt32
    public var model: UInt8
    public var version: UInt8
    public var serial: UInt32
    public var firmware: (major: UInt8, minor: UInt8, build: UInt8)

    public init(vendorCode: UInt32, model: UInt8, version: UInt8, serial: UInt32, firmware: (UInt8, UInt8, UInt8)) {
        self.vendorCode = vendorCode
        self.model = model
        self.version = version
        self.serial = serial
        self.firmware = firmware
    }

    public static func == (a: OSDPIdentity, b: OSDPIdentity) -> Bool {
        a.vendorCode == b.vendorCode && a.model == b.model && a.version == b.version && a.serial == b.serial
            && a.firmware == b.firmware
    }

    /// The Secure Channel's cUID (8 bytes, as libosdp lays it out from the PDID fields).
    public var clientUID: [UInt8] {
        [UInt8(vendorCode & 0xFF), UInt8(vendorCode >> 8 & 0xFF), model, version,
         UInt8(serial & 0xFF), UInt8(serial >> 8 & 0xFF), UInt8(serial >> 16 & 0xFF), UInt8(serial >> 24 & 0xFF)]
    }
}

/// A card read waiting for the CP's next POLL (osdp_RAW).
public struct OSDPCardRead: Equatable, Sendable {
    /// 0 unspecified (raw bytes), 1 Wiegand (the whole frame, parities included, MSB first).
    public var format: UInt8
    public var bitCount: Int
    public var data: [UInt8]
    public var atNs: UInt64

    public init(format: UInt8, bitCount: Int, data: [UInt8], atNs: UInt64) {
        self.format = format
        self.bitCount = bitCount
        self.data = data
        self.atNs = atNs
    }

    /// A Wiegand frame's bits, packed most significant bit first (the last byte padded with 0s).
    public static func wiegand(_ bits: [Bool], at now: UInt64) -> OSDPCardRead {
        var data = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
        for (i, bit) in bits.enumerated() where bit { data[i / 8] |= 0x80 >> UInt8(i % 8) }
        return OSDPCardRead(format: 1, bitCount: bits.count, data: data, atNs: now)
    }

    /// Bytes sent as they are, format unspecified (the bit count is 8 per byte).
    public static func raw(_ bytes: [UInt8], at now: UInt64) -> OSDPCardRead {
        OSDPCardRead(format: 0, bitCount: bytes.count * 8, data: bytes, atNs: now)
    }
}

public struct OSDPPeripheral {
    public static let defaultKey: [UInt8] = (0x30...0x3F).map { UInt8($0) }
    /// The baud rates the kiosk's port can be set to (interface.md).
    public static let baudRates = [9600, 19200, 38400, 57600, 115200, 230400]

    public struct Settings {
        public var address: UInt8
        public var identity: OSDPIdentity
        /// The Secure Channel base key; nil: none given (only SCBK-D in install mode, or plaintext).
        public var key: [UInt8]?
        /// SCBK-D accepted (and KEYSET expected).
        public var installMode: Bool
        /// Every command but ID and CAP (and the handshake) refused outside a Secure Channel.
        public var requireSecure: Bool
        public var hasBuzzer: Bool
        /// The reader LED: granted and/or denied LED lines.
        public var hasLED: Bool
        /// Output 0: the strike.
        public var hasOutput: Bool
        /// No command for this long and the link counts as offline.
        public var offlineNs: UInt64 = 2_000_000_000
        /// A session with no secure command for this long is over (libosdp: 8 s).
        public var sessionTimeoutNs: UInt64 = 8_000_000_000
        /// A card read not polled for this long is stale: the controller never gets it.
        public var cardTimeoutNs: UInt64 = 5_000_000_000
        public var cardQueueLimit = 8
        /// A speaker says the controller's osdp_TEXT (`KIOSK_SPEAKER`): taken (ACK, `.text`) rather
        /// than refused as by a reader with no display.
        public var speaksText = false

        public init(address: UInt8, identity: OSDPIdentity, key: [UInt8]?, installMode: Bool, requireSecure: Bool,
                    hasBuzzer: Bool, hasLED: Bool, hasOutput: Bool) {
            self.address = address
            self.identity = identity
            self.key = key
            self.installMode = installMode
            self.requireSecure = requireSecure
            self.hasBuzzer = hasBuzzer
            self.hasLED = hasLED
            self.hasOutput = hasOutput
        }
    }

    /// Why an `osdp_error` (interface.md reasons).
    public enum ErrorReason: String, Sendable { case crc, mac, sequence, length, command }

    public enum Event: Equatable, Sendable {
        case online
        case offline
        /// A Secure Channel session began; `defaultKey`: with SCBK-D (install mode).
        case secure(defaultKey: Bool)
        case secureEnded(reason: String)
        case error(ErrorReason, String)
        /// A card read went out in osdp_RAW.
        case cardSent(OSDPCardRead)
        case cardDropped(String)
        /// KEYSET: the new key is kept and used from the next session on.
        case keyChanged
        case comset(address: Int, baud: Int)
    }

    public enum Action: Equatable, Sendable {
        case send([UInt8])
        case led(OSDPLEDRecord)
        case buzzer(OSDPBuzzerRecord)
        case output(OSDPOutputRecord)
        /// After the osdp_COM reply is out: the port's new speed (the address has changed already).
        case switchBaud(Int)
        /// osdp_TEXT's text, to be said (with `Settings.speaksText`): printable ASCII, trimmed.
        case text(String)
        case event(Event)
    }

    private struct SessionKeys {
        var enc: [UInt8]
        var mac1: [UInt8]
        var mac2: [UInt8]
    }

    private struct Handshake {
        var keys: SessionKeys
        var rndA: [UInt8]
        var rndB: [UInt8]
        var defaultKey: Bool
    }

    private struct Session {
        var keys: SessionKeys
        var cMac: [UInt8]
        var rMac: [UInt8]
        var lastNs: UInt64
        var defaultKey: Bool
    }

    private struct LastReply {
        var sequence: UInt8
        var code: UInt8
        var bytes: [UInt8]
    }

    public private(set) var settings: Settings
    private let cipher: OSDPCipher
    private let keeper: OSDPKeeper
    public private(set) var online = false
    public private(set) var lastCommandNs: UInt64?
    private var lastReply: LastReply?
    /// Whether the link was restarted (sequence 0) since the last reply.
    private var linkStarted = false
    private var handshake: Handshake?
    private var session: Session?
    private var cards: [OSDPCardRead] = []
    /// Output 0's last level as told by the shell (OSTATR).
    public var outputOn = false
    /// LSTATR's tamper and power bytes (SIA OSDP 2.2, osdp_LSTATR): tamper 0 normal, 1 tamper (the
    /// tamper loop, `KIOSK_TAMPER_LINE`, set by the link); power 0 normal (no power input).
    public var tamper: UInt8 = 0
    public var power: UInt8 = 0

    public init(settings: Settings, cipher: OSDPCipher, keeper: OSDPKeeper) {
        self.settings = settings
        self.cipher = cipher
        self.keeper = keeper
    }

    public var isSecure: Bool { session != nil }
    public var pendingCards: Int { cards.count }

    /// A code was read: queued for the CP's next POLL; refused (with why) while offline, since a
    /// read delivered late could open a door long after its holder left.
    public mutating func report(_ card: OSDPCardRead) -> [Action] {
        guard online else { return [.event(.cardDropped("the controller is offline"))] }
        if settings.requireSecure && session == nil {
            return [.event(.cardDropped("no Secure Channel session and KIOSK_OSDP_REQUIRE_SECURE=1"))]
        }
        if cards.count >= settings.cardQueueLimit {
            cards.removeFirst()
            cards.append(card)
            return [.event(.cardDropped("the controller has not polled the earlier reads; the oldest was dropped"))]
        }
        cards.append(card)
        return []
    }

    /// The clock moved on: the link goes offline after `offlineNs` without a command, a session
    /// ends after `sessionTimeoutNs` without a secure one.
    public mutating func tick(at now: UInt64) -> [Action] {
        var out: [Action] = []
        if let s = session, now &- s.lastNs > settings.sessionTimeoutNs {
            session = nil
            out.append(.event(.secureEnded(reason: "no secure command for \(settings.sessionTimeoutNs / 1_000_000_000) s")))
        }
        if online, let last = lastCommandNs, now &- last > settings.offlineNs {
            online = false
            cards.removeAll()
            handshake = nil
            out.append(.event(.offline))
        }
        return out
    }

    /// A length field out of bounds (`OSDPFramer.badLength`): counted, never answered.
    public func badLength(_ length: Int) -> [Action] {
        [.event(.error(.length, "a packet length of \(length) bytes (at most \(OSDPPacket.maxLength))"))]
    }

    /// One packet cut by `OSDPFramer`, received at `now`: the reply to send (if any) and what
    /// the lines must do.
    public mutating func received(_ bytes: [UInt8], at now: UInt64) -> [Action] {
        let packet: OSDPPacket
        switch OSDPPacket.parse(bytes) {
        case .success(let p): packet = p
        case .failure(.check): return [.event(.error(.crc, "a packet whose check bytes do not match"))]
        case .failure(.length): return [.event(.error(.length, "a packet whose lengths do not add up"))]
        }
        // A reply (another PD's, bit 7) or a command for another address: not ours.
        guard packet.address & 0x80 == 0,
              packet.address == settings.address || packet.address == OSDPPacket.broadcastAddress else { return [] }
        var out: [Action] = []
        lastCommandNs = now
        if !online {
            online = true
            out.append(.event(.online))
        }
        let code = packet.body[0]
        let reply = Reply(address: (packet.address == OSDPPacket.broadcastAddress ? OSDPPacket.broadcastAddress : settings.address) | 0x80,
                          sequence: packet.sequence, check: packet.check)

        lastSecurityData = packet.securityData
        lastCommandCode = code
        answeringSecured = false

        // Sequence numbers (OSDP 2.2, 5.7): 0 restarts; the same number again is a retry, answered
        // with the same bytes and carried out no second time; else the next of 1, 2, 3.
        if packet.sequence == 0 {
            lastReply = nil
            linkStarted = true
            handshake = nil
            if session != nil {
                session = nil
                out.append(.event(.secureEnded(reason: "the controller restarted the link (sequence 0)")))
            }
        } else if let last = lastReply {
            if last.sequence == packet.sequence {
                guard last.code == code else {
                    return out + nak(.sequence, reply, error: (.sequence, "sequence \(packet.sequence) again with another command"))
                }
                return out + [.send(last.bytes)]
            }
            let expected = last.sequence % 3 + 1
            guard packet.sequence == expected else {
                return out + nak(.sequence, reply, error: (.sequence, "sequence \(packet.sequence), expected \(expected)"))
            }
        } else if !linkStarted {
            return out + nak(.sequence, reply, error: (.sequence, "sequence \(packet.sequence) before the link was started with 0"))
        }

        // The security block: the handshake's two commands, a session's MAC'd commands, or none.
        var data = Array(packet.body.dropFirst())
        var secured = false
        switch packet.securityType {
        case nil:
            if session != nil {
                session = nil
                out.append(.event(.secureEnded(reason: "a plaintext command inside the session")))
                return out + nak(.securityConditions, reply, error: (.mac, "a plaintext command inside a Secure Channel session"))
            }
        case OSDPCode.scs11?, OSDPCode.scs13?:
            let wanted = packet.securityType == OSDPCode.scs11 ? OSDPCode.chlng : OSDPCode.scrypt
            guard code == wanted else {
                return out + nak(.securityConditions, reply, error: (.command, "a handshake security block on command 0x\(hex(code))"))
            }
        case OSDPCode.scs15?, OSDPCode.scs17?:
            guard var s = session else {
                return out + nak(.securityConditions, reply, error: (.mac, "a secured command without a session"))
            }
            guard packet.body.count >= 5 else {
                session = nil
                return out + nak(.securityConditions, reply, error: (.length, "a secured command too short for its MAC"))
            }
            let macStart = packet.wire.count - packet.check.length - 4
            let given = Array(packet.wire[macStart..<(macStart + 4)])
            guard let cMac = try? mac(Array(packet.wire[0..<macStart]), iv: s.rMac, s.keys),
                  constantTimeEqual(Array(cMac.prefix(4)), given) else {
                session = nil
                out.append(.event(.secureEnded(reason: "a command with a wrong MAC")))
                return out + nak(.securityConditions, reply, error: (.mac, "a command whose MAC does not match"))
            }
            s.cMac = cMac
            data = Array(packet.body[1..<(packet.body.count - 4)])
            if packet.securityType == OSDPCode.scs17 {
                guard let plain = decrypt(data, iv: s.rMac.map { ~$0 }, s.keys) else {
                    session = nil
                    out.append(.event(.secureEnded(reason: "a command whose data does not decrypt")))
                    return out + nak(.securityConditions, reply, error: (.mac, "an encrypted data block that does not decrypt"))
                }
                data = plain
            }
            s.lastNs = now
            session = s
            secured = true
            answeringSecured = true
        default:
            return out + nak(.securityConditions, reply, error: (.command, "an unknown security block type 0x\(hex(packet.securityType!))"))
        }

        let open = [OSDPCode.id, OSDPCode.cap, OSDPCode.chlng, OSDPCode.scrypt]
        if settings.requireSecure && !secured && !open.contains(code) {
            return out + nak(.securityConditions, reply,
                             error: (.command, "command 0x\(hex(code)) outside a Secure Channel (KIOSK_OSDP_REQUIRE_SECURE=1)"))
        }
        return out + carryOut(code, data, reply: reply, now: now)
    }

    // MARK: - Commands

    private struct Reply {
        var address: UInt8
        var sequence: UInt8
        var check: OSDPCheck
    }

    private mutating func carryOut(_ code: UInt8, _ data: [UInt8], reply: Reply, now: UInt64) -> [Action] {
        func length(_ ok: Bool) -> [Action]? {
            ok ? nil : nak(.commandLength, reply, error: (.length, "command 0x\(hex(code)) with \(data.count) data bytes"))
        }
        switch code {
        case OSDPCode.poll:
            if let bad = length(data.isEmpty) { return bad }
            cards.removeAll { now &- $0.atNs > settings.cardTimeoutNs }
            guard !cards.isEmpty else { return send(OSDPCode.ack, [], reply) }
            let card = cards.removeFirst()
            let raw = [0, card.format, UInt8(card.bitCount & 0xFF), UInt8(card.bitCount >> 8)] + card.data
            return send(OSDPCode.raw, raw, reply) + [.event(.cardSent(card))]
        case OSDPCode.id:
            if let bad = length(data.count == 1) { return bad }
            let i = settings.identity
            let pdid: [UInt8] = [UInt8(i.vendorCode & 0xFF), UInt8(i.vendorCode >> 8 & 0xFF), UInt8(i.vendorCode >> 16 & 0xFF),
                                 i.model, i.version] + le32(i.serial) + [i.firmware.major, i.firmware.minor, i.firmware.build]
            return send(OSDPCode.pdid, pdid, reply)
        case OSDPCode.cap:
            if let bad = length(data.count == 1) { return bad }
            return send(OSDPCode.pdcap, capabilities.flatMap { [$0.0, $0.1, $0.2] }, reply)
        case OSDPCode.lstat:
            if let bad = length(data.isEmpty) { return bad }
            return send(OSDPCode.lstatr, [tamper, power], reply)
        case OSDPCode.istat:
            if let bad = length(data.isEmpty) { return bad }
            return send(OSDPCode.istatr, [], reply)
        case OSDPCode.ostat:
            if let bad = length(data.isEmpty) { return bad }
            return send(OSDPCode.ostatr, settings.hasOutput ? [outputOn ? 1 : 0] : [], reply)
        case OSDPCode.rstat:
            if let bad = length(data.isEmpty) { return bad }
            return send(OSDPCode.rstatr, [0], reply)
        case OSDPCode.out:
            if let bad = length(!data.isEmpty && data.count % OSDPOutputRecord.length == 0) { return bad }
            let records = stride(from: 0, to: data.count, by: 4).compactMap { OSDPOutputRecord(data[$0..<($0 + 4)]) }
            guard settings.hasOutput, records.allSatisfy({ $0.isValid && $0.output == 0 }) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_OUT for an output the kiosk does not have, or an unknown control code"))
            }
            return send(OSDPCode.ack, [], reply) + records.map { .output($0) }
        case OSDPCode.led:
            if let bad = length(!data.isEmpty && data.count % OSDPLEDRecord.length == 0) { return bad }
            let records = stride(from: 0, to: data.count, by: 14).compactMap { OSDPLEDRecord(data[$0..<($0 + 14)]) }
            guard settings.hasLED, records.allSatisfy({ $0.isValid && $0.led == 0 }) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_LED for an LED the kiosk does not have, or an invalid state"))
            }
            return send(OSDPCode.ack, [], reply) + records.map { .led($0) }
        case OSDPCode.buz:
            if let bad = length(!data.isEmpty && data.count % OSDPBuzzerRecord.length == 0) { return bad }
            let records = stride(from: 0, to: data.count, by: 5).compactMap { OSDPBuzzerRecord(data[$0..<($0 + 5)]) }
            guard settings.hasBuzzer, records.allSatisfy(\.isValid) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_BUZ without a buzzer, or an invalid tone"))
            }
            return send(OSDPCode.ack, [], reply) + records.map { .buzzer($0) }
        case OSDPCode.comset:
            if let bad = length(data.count == 5) { return bad }
            let address = Int(data[0]), baud = Int(data[1]) | Int(data[2]) << 8 | Int(data[3]) << 16 | Int(data[4]) << 24
            guard address <= 126, OSDPPeripheral.baudRates.contains(baud) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_COMSET to address \(address), \(baud) baud"))
            }
            guard keeper.keep(address: address, baud: baud) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_COMSET: the new settings could not be kept"))
            }
            let answer = send(OSDPCode.com, [UInt8(address)] + le32(UInt32(baud)), reply)
            settings.address = UInt8(address)
            return answer + [.switchBaud(baud), .event(.comset(address: address, baud: baud))]
        case OSDPCode.keyset:
            guard session != nil else {
                return nak(.securityConditions, reply, error: (.command, "osdp_KEYSET outside a Secure Channel session"))
            }
            if let bad = length(data.count == 18) { return bad }
            guard data[0] == 1, data[1] == 16 else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_KEYSET of key type \(data[0]), \(data[1]) bytes"))
            }
            let key = Array(data[2..<18])
            guard keeper.keep(key: key) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_KEYSET: the new key could not be kept"))
            }
            // The ACK goes in the old session; the next one uses the new key (libosdp does so too).
            let answer = send(OSDPCode.ack, [], reply)
            settings.key = key
            settings.installMode = false
            session = nil
            return answer + [.event(.keyChanged), .event(.secureEnded(reason: "a new key from the controller"))]
        case OSDPCode.chlng:
            return challenge(data, reply: reply)
        case OSDPCode.scrypt:
            return serverCryptogram(data, reply: reply, now: now)
        case OSDPCode.text:
            guard settings.speaksText else { return nak(.unknownCommand, reply, error: (.command, "osdp_TEXT: the kiosk has no display")) }
            // Reader, text command (1-4: permanent or temporary, wrapped or not), temporary time,
            // row, column, length, then the text: said once whatever the command, row and column.
            if let bad = length(data.count >= 6 && data.count == 6 + Int(data[5])) { return bad }
            let text = data[6...]
            guard (1...4).contains(data[1]), text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                return nak(.unableToProcess, reply, error: (.command, "osdp_TEXT with command \(data[1]) or text that is not printable ASCII"))
            }
            let said = String(decoding: text, as: UTF8.self).split(separator: " ").joined(separator: " ")
            return send(OSDPCode.ack, [], reply) + (said.isEmpty ? [] : [.text(said)])
        default:
            return nak(.unknownCommand, reply, error: (.command, "unknown command 0x\(hex(code))"))
        }
    }

    /// PDCAP: function code, compliance, number of items (OSDP 2.2, Annex B).
    public var capabilities: [(UInt8, UInt8, UInt8)] {
        var caps: [(UInt8, UInt8, UInt8)] = []
        if settings.hasOutput { caps.append((2, 4, 1)) }   // output control: on/off, timed, both
        caps.append((3, 1, 0))                              // card data format: binary
        if settings.hasLED { caps.append((4, 3, 1)) }      // LED: timed, two colours
        if settings.hasBuzzer { caps.append((5, 2, 1)) }   // buzzer: timed
        caps.append((8, 1, 0))                              // CRC-16
        caps.append((9, 1, 0))                              // AES-128 Secure Channel
        let size = OSDPPacket.maxLength
        caps.append((10, UInt8(size & 0xFF), UInt8(size >> 8)))   // receive buffer
        caps.append((11, UInt8(size & 0xFF), UInt8(size >> 8)))   // largest combined message
        return caps
    }

    // MARK: - Secure Channel (OSDP 2.2, Annex D)

    private mutating func challenge(_ data: [UInt8], reply: Reply) -> [Action] {
        guard data.count == 8 else { return nak(.commandLength, reply, error: (.length, "osdp_CHLNG with \(data.count) bytes")) }
        // The CHLNG's security block data byte: 1 the installed key, 0 SCBK-D.
        var out: [Action] = []
        if session != nil {
            session = nil
            out.append(.event(.secureEnded(reason: "the controller began a new session")))
        }
        handshake = nil
        let wantsDefault = lastSecurityData == [0]
        let base: [UInt8]
        if wantsDefault {
            guard settings.installMode else {
                return out + nak(.securityConditions, reply, error: (.mac, "the default key SCBK-D outside install mode"))
            }
            base = OSDPPeripheral.defaultKey
        } else {
            guard let key = settings.key else {
                return out + nak(.securityConditions, reply, error: (.mac, "a session asked for with a key the kiosk has not been given"))
            }
            base = key
        }
        do {
            let rndB = try cipher.random(8)
            func derive(_ a: UInt8, _ b: UInt8) throws -> [UInt8] {
                try cipher.encrypt(key: base, iv: nil, [a, b] + Array(data[0..<6]) + [UInt8](repeating: 0, count: 8))
            }
            let keys = SessionKeys(enc: try derive(0x01, 0x82), mac1: try derive(0x01, 0x01), mac2: try derive(0x01, 0x02))
            let cryptogram = try cipher.encrypt(key: keys.enc, iv: nil, data + rndB)
            handshake = Handshake(keys: keys, rndA: data, rndB: rndB, defaultKey: wantsDefault)
            return out + send(OSDPCode.ccrypt, settings.identity.clientUID + rndB + cryptogram, reply,
                              security: (OSDPCode.scs12, [wantsDefault ? 0 : 1]))
        } catch {
            return out + nak(.securityConditions, reply, error: (.mac, "the cipher failed: \(error)"))
        }
    }

    private mutating func serverCryptogram(_ data: [UInt8], reply: Reply, now: UInt64) -> [Action] {
        guard data.count == 16 else { return nak(.commandLength, reply, error: (.length, "osdp_SCRYPT with \(data.count) bytes")) }
        guard let h = handshake else {
            return nak(.securityConditions, reply, error: (.command, "osdp_SCRYPT without osdp_CHLNG first"))
        }
        handshake = nil
        guard let expected = try? cipher.encrypt(key: h.keys.enc, iv: nil, h.rndB + h.rndA), constantTimeEqual(expected, data),
              let inner = try? cipher.encrypt(key: h.keys.mac1, iv: nil, data),
              let rmacI = try? cipher.encrypt(key: h.keys.mac2, iv: nil, inner) else {
            return nak(.securityConditions, reply,
                       error: (.mac, "the controller's cryptogram does not match: it has another key"))
        }
        let answer = send(OSDPCode.rmacI, rmacI, reply, security: (OSDPCode.scs14, [1]))
        session = Session(keys: h.keys, cMac: [], rMac: rmacI, lastNs: now, defaultKey: h.defaultKey)
        return answer + [.event(.secure(defaultKey: h.defaultKey))]
    }

    /// The last packet's security block data (CHLNG's key selector).
    private var lastSecurityData: [UInt8] = []

    // MARK: - Replies

    private mutating func nak(_ reason: OSDPNak, _ reply: Reply, error: (ErrorReason, String)) -> [Action] {
        // A sequence NAK leaves the count where it was: a stray packet does not move it.
        let kept = lastReply
        let out = send(OSDPCode.nak, [reason.rawValue], reply) + [.event(.error(error.0, error.1))]
        if reason == .sequence { lastReply = kept }
        return out
    }

    /// The reply's bytes: plaintext, with a handshake security block, or in the session (MAC'd,
    /// its data encrypted); kept for a retry of the same sequence number.
    private mutating func send(_ code: UInt8, _ data: [UInt8], _ reply: Reply, security: (UInt8, [UInt8])? = nil) -> [Action] {
        var bytes: [UInt8]
        if let security {
            bytes = OSDPPacket(address: reply.address, sequence: reply.sequence, check: reply.check,
                               securityType: security.0, securityData: security.1, body: [code] + data).encoded()
        } else if answeringSecured, var s = session {
            var out: [UInt8] = [OSDPPacket.startOfMessage, reply.address, 0, 0,
                                (reply.sequence & 3) | (reply.check == .crc16 ? 0x04 : 0) | 0x08,
                                2, data.isEmpty ? OSDPCode.scs16 : OSDPCode.scs18, code]
            if !data.isEmpty {
                var padded = data + [0x80]
                while padded.count % 16 != 0 { padded.append(0) }
                guard let enc = try? cipher.encrypt(key: s.keys.enc, iv: s.cMac.map { ~$0 }, padded) else {
                    session = nil
                    return plainNak(reply)
                }
                out += enc
            }
            let total = out.count + 4 + reply.check.length
            out[2] = UInt8(total & 0xFF)
            out[3] = UInt8(total >> 8)
            guard let rMac = try? mac(out, iv: s.cMac, s.keys) else {
                session = nil
                return plainNak(reply)
            }
            s.rMac = rMac
            session = s
            out += rMac.prefix(4)
            bytes = appendCheck(out, reply.check)
        } else {
            bytes = OSDPPacket(address: reply.address, sequence: reply.sequence, check: reply.check, body: [code] + data).encoded()
        }
        lastReply = LastReply(sequence: reply.sequence, code: lastCommandCode, bytes: bytes)
        return [.send(bytes)]
    }

    private mutating func plainNak(_ reply: Reply) -> [Action] {
        let bytes = OSDPPacket(address: reply.address, sequence: reply.sequence, check: reply.check,
                               body: [OSDPCode.nak, OSDPNak.securityConditions.rawValue]).encoded()
        lastReply = LastReply(sequence: reply.sequence, code: lastCommandCode, bytes: bytes)
        return [.send(bytes), .event(.secureEnded(reason: "the cipher failed"))]
    }

    /// The command being answered (for the retry check).
    private var lastCommandCode: UInt8 = 0
    /// The command being answered came in the session (its MAC checked): so goes the reply.
    private var answeringSecured = false

    private func appendCheck(_ b: [UInt8], _ check: OSDPCheck) -> [UInt8] {
        switch check {
        case .crc16:
            let crc = OSDPChecks.crc16(b)
            return b + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        case .checksum:
            return b + [OSDPChecks.checksum(b)]
        }
    }

    /// The MAC (OSDP 2.2, D.5): CBC with S-MAC1 over all blocks but the last, the last with
    /// S-MAC2; the message padded with 0x80 and zeros when it is not whole blocks.
    private func mac(_ message: [UInt8], iv: [UInt8], _ keys: SessionKeys) throws -> [UInt8] {
        var padded = message
        if padded.count % 16 != 0 {
            padded.append(0x80)
            while padded.count % 16 != 0 { padded.append(0) }
        }
        var chain = iv
        if padded.count > 16 {
            let head = try cipher.encrypt(key: keys.mac1, iv: iv, Array(padded[0..<(padded.count - 16)]))
            chain = Array(head.suffix(16))
        }
        return try cipher.encrypt(key: keys.mac2, iv: chain, Array(padded.suffix(16)))
    }

    /// The data block of an SCS_17 command: whole blocks, padded with 0x80 then zeros.
    private func decrypt(_ data: [UInt8], iv: [UInt8], _ keys: SessionKeys) -> [UInt8]? {
        guard !data.isEmpty, data.count % 16 == 0, let plain = try? cipher.decrypt(key: keys.enc, iv: iv, data),
              let marker = plain.lastIndex(where: { $0 != 0 }), plain[marker] == 0x80 else { return nil }
        return Array(plain[0..<marker])
    }

    private func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

private func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
private func hex(_ b: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
}
