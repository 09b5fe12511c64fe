// SPDX-License-Identifier: Apache-2.0
// The kiosk as an OSDP peripheral device (PD): what it answers to each packet from the control
// panel (CP), its sequence numbers, the Secure Channel (OSDP 2.2, Annex D) and when the link is
// online. Pure: the time comes with each call, AES and random bytes through `OSDPCipher`, what
// must be kept (a new key, new bus settings) through `OSDPKeeper`; the bytes to send and what
// the lines must do come back as actions.
//
// This file: the peripheral's settings, state and actions, and each packet's reception (the
// address, the sequence number, the security block); what each command does is in
// OSDPCommandAnswers.swift, the Secure Channel's handshake and MAC in OSDPSecureChannel.swift,
// the replies' bytes in OSDPReplies.swift.

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

    public internal(set) var settings: Settings
    let cipher: OSDPCipher
    let keeper: OSDPKeeper
    public private(set) var online = false
    public private(set) var lastCommandNs: UInt64?
    var lastReply: LastReply?
    /// Whether the link was restarted (sequence 0) since the last reply.
    private var linkStarted = false
    var handshake: Handshake?
    var session: Session?
    var cards: [OSDPCardRead] = []
    /// The last packet's security block data (CHLNG's key selector).
    var lastSecurityData: [UInt8] = []
    /// The command being answered (for the retry check).
    var lastCommandCode: UInt8 = 0
    /// The command being answered came in the session (its MAC checked): so goes the reply.
    var answeringSecured = false
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
}

/// A byte as two hex digits, for the error messages.
func hex(_ b: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
}
