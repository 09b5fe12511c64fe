// SPDX-License-Identifier: Apache-2.0
// The peripheral's Secure Channel (OSDP 2.2, Annex D): the session keys, the handshake
// (osdp_CHLNG, osdp_SCRYPT) that begins a session, and the MAC and the data blocks' decryption
// of a session's commands, all through `OSDPCipher`.

extension OSDPPeripheral {
    struct SessionKeys {
        var enc: [UInt8]
        var mac1: [UInt8]
        var mac2: [UInt8]
    }

    struct Handshake {
        var keys: SessionKeys
        var rndA: [UInt8]
        var rndB: [UInt8]
        var defaultKey: Bool
    }

    struct Session {
        var keys: SessionKeys
        var cMac: [UInt8]
        var rMac: [UInt8]
        var lastNs: UInt64
        var defaultKey: Bool
    }

    mutating func challenge(_ data: [UInt8], reply: Reply) -> [Action] {
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

    mutating func serverCryptogram(_ data: [UInt8], reply: Reply, now: UInt64) -> [Action] {
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

    /// The MAC (OSDP 2.2, D.5): CBC with S-MAC1 over all blocks but the last, the last with
    /// S-MAC2; the message padded with 0x80 and zeros when it is not whole blocks.
    func mac(_ message: [UInt8], iv: [UInt8], _ keys: SessionKeys) throws -> [UInt8] {
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
    func decrypt(_ data: [UInt8], iv: [UInt8], _ keys: SessionKeys) -> [UInt8]? {
        guard !data.isEmpty, data.count % 16 == 0, let plain = try? cipher.decrypt(key: keys.enc, iv: iv, data),
              let marker = plain.lastIndex(where: { $0 != 0 }), plain[marker] == 0x80 else { return nil }
        return Array(plain[0..<marker])
    }

    func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
