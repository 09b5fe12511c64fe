// SPDX-License-Identifier: Apache-2.0
// The peripheral's replies: where each goes (`Reply`), its bytes (plaintext, with a handshake
// security block, or in the session: MAC'd, its data encrypted), the NAKs, and the last reply
// kept for a retry of the same sequence number.

extension OSDPPeripheral {
    struct Reply {
        var address: UInt8
        var sequence: UInt8
        var check: OSDPCheck
    }

    struct LastReply {
        var sequence: UInt8
        var code: UInt8
        var bytes: [UInt8]
    }

    mutating func nak(_ reason: OSDPNak, _ reply: Reply, error: (ErrorReason, String)) -> [Action] {
        // A sequence NAK leaves the count where it was: a stray packet does not move it.
        let kept = lastReply
        let out = send(OSDPCode.nak, [reason.rawValue], reply) + [.event(.error(error.0, error.1))]
        if reason == .sequence { lastReply = kept }
        return out
    }

    /// The reply's bytes: plaintext, with a handshake security block, or in the session (MAC'd,
    /// its data encrypted); kept for a retry of the same sequence number.
    mutating func send(_ code: UInt8, _ data: [UInt8], _ reply: Reply, security: (UInt8, [UInt8])? = nil) -> [Action] {
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

    private func appendCheck(_ b: [UInt8], _ check: OSDPCheck) -> [UInt8] {
        switch check {
        case .crc16:
            let crc = OSDPChecks.crc16(b)
            return b + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        case .checksum:
            return b + [OSDPChecks.checksum(b)]
        }
    }
}
