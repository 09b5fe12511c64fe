// SPDX-License-Identifier: Apache-2.0
// What the peripheral does for each command from the controller (OSDP 2.2, section 6): the
// POLL's card reads, its identity and capabilities, its status, the outputs, LED and buzzer for
// the lines, new bus settings and a new key; a command it cannot do gets a NAK.

extension OSDPPeripheral {
    mutating func carryOut(_ code: UInt8, _ data: [UInt8], reply: Reply, now: UInt64) -> [Action] {
        func length(_ ok: Bool) -> [Action]? {
            ok ? nil : nak(.commandLength, reply, error: (.length, "command 0x\(hex(code)) with \(data.count) data bytes"))
        }
        switch code {
        case OSDPCode.poll:
            if let bad = length(data.isEmpty) { return bad }
            cards.removeAll { now &- $0.atNs > settings.cardTimeoutNs }
            guard !cards.isEmpty else { return send(OSDPCode.ack, [], reply) }
            let card = cards.removeFirst()
            // osdp_KEYPAD: the reader (0), the count of keys, their bytes.
            if card.isKeypad { return send(OSDPCode.keypad, [0, UInt8(card.data.count)] + card.data, reply) + [.event(.cardSent(card))] }
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
}

private func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
