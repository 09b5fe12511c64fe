// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// A stand-in for AES in the core's tests (the core links no C library): an invertible byte
/// mix in CBC. It checks the state machine's logic; the real cipher and the Secure Channel's
/// arithmetic are checked against libosdp's control panel (KioskTests/OSDPTests).
final class ToyCipher: OSDPCipher {
    var counter: UInt8 = 0
    func block(_ k: [UInt8], _ b: ArraySlice<UInt8>) -> [UInt8] { b.enumerated().map { ($1 ^ k[$0]) &+ UInt8($0) } }
    func unblock(_ k: [UInt8], _ b: ArraySlice<UInt8>) -> [UInt8] { b.enumerated().map { ($1 &- UInt8($0)) ^ k[$0] } }
    func encrypt(key: [UInt8], iv: [UInt8]?, _ data: [UInt8]) throws -> [UInt8] {
        var chain = iv ?? [UInt8](repeating: 0, count: 16), out: [UInt8] = []
        for i in stride(from: 0, to: data.count, by: 16) {
            let x = zip(data[i..<(i + 16)], chain).map { $0 ^ $1 }
            let c = block(key, x[...])
            out += c
            if iv != nil { chain = c }
        }
        return out
    }
    func decrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        var chain = iv, out: [UInt8] = []
        for i in stride(from: 0, to: data.count, by: 16) {
            out += zip(unblock(key, data[i..<(i + 16)]), chain).map { $0 ^ $1 }
            chain = Array(data[i..<(i + 16)])
        }
        return out
    }
    func random(_ count: Int) throws -> [UInt8] { (0..<count).map { _ in counter &+= 1; return counter } }
}

final class MemoryKeeper: OSDPKeeper {
    var keys: [[UInt8]] = []
    var comsets: [(Int, Int)] = []
    var fails = false
    func keep(key: [UInt8]) -> Bool { if !fails { keys.append(key) }; return !fails }
    func keep(address: Int, baud: Int) -> Bool { if !fails { comsets.append((address, baud)) }; return !fails }
}

final class OSDPPacketTests: XCTestCase {
    func testCRC16IsAugCCITT() {
        XCTAssertEqual(OSDPChecks.crc16(Array("123456789".utf8)), 0xE5CC, "CRC-16/AUG-CCITT's check value")
        XCTAssertEqual(OSDPChecks.crc16([]), 0x1D0F)
    }

    func testChecksumMakesTheSumZero() {
        let b: [UInt8] = [0x53, 0x00, 0x07, 0x00, 0x00, 0x60]
        XCTAssertEqual(b.reduce(0) { $0 &+ $1 } &+ OSDPChecks.checksum(b), 0)
    }

    /// A POLL as libosdp's control panel wrote it on the tests' bus (CRC mode, sequence 1).
    func testParsesAControlPanelsPoll() throws {
        let bytes: [UInt8] = OSDPPacket(address: 0, sequence: 1, check: .crc16, body: [0x60]).encoded()
        XCTAssertEqual(bytes.count, 8)
        XCTAssertEqual(Array(bytes[0..<6]), [0x53, 0x00, 0x08, 0x00, 0x05, 0x60])
        let p = try OSDPPacket.parse(bytes).get()
        XCTAssertEqual(p.address, 0)
        XCTAssertEqual(p.sequence, 1)
        XCTAssertEqual(p.check, .crc16)
        XCTAssertEqual(p.body, [0x60])
        XCTAssertNil(p.securityType)
    }

    func testSecurityBlockAndChecksumMode() throws {
        let bytes = OSDPPacket(address: 5, sequence: 2, check: .checksum, securityType: 0x11, securityData: [1], body: [0x76] + Array(repeating: 7, count: 8)).encoded()
        let p = try OSDPPacket.parse(bytes).get()
        XCTAssertEqual(p.securityType, 0x11)
        XCTAssertEqual(p.securityData, [1])
        XCTAssertEqual(p.body.count, 9)
        XCTAssertEqual(p.check, .checksum)
    }

    func testRejectsBadChecksAndLengths() {
        var bytes = OSDPPacket(address: 0, sequence: 1, check: .crc16, body: [0x60]).encoded()
        bytes[6] ^= 1
        XCTAssertEqual(OSDPPacket.parse(bytes), .failure(.check))
        var short = OSDPPacket(address: 0, sequence: 1, check: .crc16, body: [0x60]).encoded()
        short[2] = 9
        XCTAssertEqual(OSDPPacket.parse(short), .failure(.length))
        // A security block longer than the packet.
        var block = OSDPPacket(address: 0, sequence: 1, check: .crc16, securityType: 0x15, securityData: [], body: [0x60]).encoded()
        block[5] = 40
        let crc = OSDPChecks.crc16(block[0..<(block.count - 2)])
        block[block.count - 2] = UInt8(crc & 0xFF)
        block[block.count - 1] = UInt8(crc >> 8)
        XCTAssertEqual(OSDPPacket.parse(block), .failure(.length))
        XCTAssertEqual(OSDPPacket.parse([]), .failure(.length))
    }

    func testFramerCutsPacketsFromNoiseAndResynchronises() {
        var f = OSDPFramer()
        let poll = OSDPPacket(address: 0, sequence: 1, check: .crc16, body: [0x60]).encoded()
        // Noise, the mark byte, a SOM with an impossible length, then a packet in two pieces.
        let stream: [UInt8] = [0x01, 0x02, 0xFF, 0x53, 0x00, 0xFF, 0xFF] + poll
        var out = f.feed(stream.prefix(9), at: 0)
        out += f.feed(stream.dropFirst(9), at: 1)
        XCTAssertEqual(out, [.badLength(0xFFFF), .packet(poll)])
        XCTAssertEqual(f.skipped, 2 + 1, "two noise bytes and the bad SOM's address (0xFF is the mark)")
        // A packet that never completes is dropped after the timeout, and a SOM inside it found.
        var g = OSDPFramer()
        XCTAssertEqual(g.feed([0x53, 0x00, 0x40, 0x00, 0x05] + poll.prefix(3), at: 0), [])
        XCTAssertEqual(g.expire(at: 100, timeoutNs: 200), [])
        XCTAssertEqual(g.expire(at: 300, timeoutNs: 200) + g.feed(poll.dropFirst(3), at: 301), [.packet(poll)])
        XCTAssertFalse(g.isCollecting)
    }

    func testFramerNeverHoldsMoreThanAPacket() {
        var f = OSDPFramer()
        let header: [UInt8] = [0x53, 0x00, 0x00, 0x01]  // 256 bytes: the most it takes
        _ = f.feed(header + [UInt8](repeating: 0, count: 250), at: 0)
        XCTAssertTrue(f.isCollecting)
        XCTAssertEqual(f.feed([0, 0], at: 0).count, 1, "a whole 256-byte packet comes out (its check is the parser's)")
        XCTAssertEqual(f.feed([0x53, 0x00, 0x01, 0x01], at: 0), [.badLength(257)])
    }
}

final class OSDPPeripheralTests: XCTestCase {
    let identity = OSDPIdentity(vendorCode: 0xABCDEF, model: 1, version: 2, serial: 0x11223344, firmware: (0, 1, 0))
    let key: [UInt8] = Array(0..<16)
    var keeper = MemoryKeeper()

    func pd(secure: Bool = false, key: [UInt8]? = nil, install: Bool = false, speaks: Bool = false) -> OSDPPeripheral {
        var settings = OSDPPeripheral.Settings(address: 3, identity: identity, key: key, installMode: install, requireSecure: secure,
                                               hasBuzzer: true, hasLED: true, hasOutput: true)
        settings.speaksText = speaks
        return OSDPPeripheral(settings: settings, cipher: ToyCipher(), keeper: keeper)
    }

    func command(_ seq: UInt8, _ body: [UInt8], address: UInt8 = 3, scb: (UInt8, [UInt8])? = nil) -> [UInt8] {
        OSDPPacket(address: address, sequence: seq, check: .crc16, securityType: scb?.0, securityData: scb?.1 ?? [], body: body).encoded()
    }

    func sent(_ actions: [OSDPPeripheral.Action]) -> [OSDPPacket] {
        actions.compactMap { if case .send(let b) = $0 { return try? OSDPPacket.parse(b).get() } else { return nil } }
    }

    func events(_ actions: [OSDPPeripheral.Action]) -> [OSDPPeripheral.Event] {
        actions.compactMap { if case .event(let e) = $0 { return e } else { return nil } }
    }

    func testIDAnswersPDIDAndTheLinkGoesOnline() throws {
        var p = pd()
        let a = p.received(command(0, [0x61, 0x00]), at: 10)
        XCTAssertEqual(events(a).first, .online)
        let reply = try XCTUnwrap(sent(a).first)
        XCTAssertEqual(reply.address, 0x83, "the reply sets bit 7")
        XCTAssertEqual(reply.sequence, 0, "the command's sequence number")
        XCTAssertEqual(reply.body, [0x45, 0xEF, 0xCD, 0xAB, 1, 2, 0x44, 0x33, 0x22, 0x11, 0, 1, 0])
        XCTAssertTrue(p.online)
    }

    func testSequenceNumbersRetriesAndRestarts() throws {
        var p = pd()
        XCTAssertEqual(sent(p.received(command(1, [0x60]), at: 0)).first?.body, [0x41, 0x04], "a link starts at 0")
        _ = p.received(command(0, [0x60]), at: 1)
        let led = [0x69, 0, 0, 2, 5, 0, 2, 0, 5, 0, 0, 0, 0, 0, 0] as [UInt8]
        let first = p.received(command(1, led), at: 2)
        XCTAssertEqual(first.filter { if case .led = $0 { return true } else { return false } }.count, 1)
        // The same sequence number again: the same bytes, the LED not set a second time.
        let again = p.received(command(1, led), at: 3)
        XCTAssertEqual(again, first.filter { if case .send = $0 { return true } else { return false } })
        // The same number with another command, or a number out of turn: NAK 4.
        XCTAssertEqual(sent(p.received(command(1, [0x60]), at: 4)).first?.body, [0x41, 0x04])
        XCTAssertEqual(sent(p.received(command(3, [0x60]), at: 5)).first?.body, [0x41, 0x04])
        XCTAssertEqual(sent(p.received(command(2, [0x60]), at: 6)).first?.body, [0x40])
        XCTAssertEqual(sent(p.received(command(3, [0x60]), at: 7)).first?.body, [0x40])
        XCTAssertEqual(sent(p.received(command(1, [0x60]), at: 8)).first?.body, [0x40], "3 wraps to 1")
        XCTAssertEqual(sent(p.received(command(0, [0x60]), at: 9)).first?.body, [0x40], "0 restarts at any time")
    }

    func testOtherAddressesAndRepliesAreIgnoredBroadcastAnswered() {
        var p = pd()
        XCTAssertEqual(p.received(command(0, [0x60], address: 4), at: 0), [])
        XCTAssertEqual(p.received(command(0, [0x40], address: 0x83), at: 0), [], "another PD's reply")
        XCTAssertEqual(sent(p.received(command(0, [0x60], address: 0x7F), at: 0)).first?.address, 0xFF)
    }

    func testBadCheckIsSilentWithAnError() {
        var p = pd()
        var b = command(0, [0x60])
        b[5] ^= 0xFF
        let a = p.received(b, at: 0)
        XCTAssertEqual(sent(a), [])
        XCTAssertEqual(events(a), [.error(.crc, "a packet whose check bytes do not match")])
        XCTAssertFalse(p.online, "noise does not bring the link online")
    }

    func testRequireSecureRefusesPlaintextButIDAndCAP() {
        var p = pd(secure: true, key: key)
        XCTAssertEqual(sent(p.received(command(0, [0x61, 0]), at: 0)).first?.body.first, 0x45)
        XCTAssertEqual(sent(p.received(command(1, [0x62, 0]), at: 1)).first?.body.first, 0x46)
        let out = p.received(command(2, [0x68, 0, 2, 0, 0]), at: 2)
        XCTAssertEqual(sent(out).first?.body, [0x41, 0x06])
        XCTAssertFalse(out.contains { if case .output = $0 { return true } else { return false } }, "the strike never moves")
        XCTAssertEqual(sent(p.received(command(3, [0x60]), at: 3)).first?.body, [0x41, 0x06])
    }

    func testCommandsWithWrongLengthsOrUnknownCodes() {
        var p = pd()
        _ = p.received(command(0, [0x60]), at: 0)
        XCTAssertEqual(sent(p.received(command(1, [0x60, 1]), at: 1)).first?.body, [0x41, 0x02])
        XCTAssertEqual(sent(p.received(command(2, [0x69, 0, 0]), at: 2)).first?.body, [0x41, 0x02])
        XCTAssertEqual(sent(p.received(command(3, [0x6B, 0, 0, 0, 0, 0, 1, 0x41]), at: 3)).first?.body, [0x41, 0x03], "TEXT: no display")
        XCTAssertEqual(sent(p.received(command(1, [0x99]), at: 4)).first?.body, [0x41, 0x03])
        XCTAssertEqual(sent(p.received(command(2, [0x68, 1, 2, 0, 0]), at: 5)).first?.body, [0x41, 0x09], "output 1: none")
        XCTAssertEqual(sent(p.received(command(3, [0x6A, 0, 2, 0, 0, 1]), at: 6)).first?.body, [0x41, 0x09], "a tone of 0 ms")
    }

    func testTheControllersTextIsTakenWhenTheKioskSpeaks() {
        var p = pd(speaks: true)
        _ = p.received(command(0, [0x60]), at: 0)
        let text = Array("  Please  wait ".utf8)
        let out = p.received(command(1, [0x6B, 0, 3, 30, 0, 0, UInt8(text.count)] + text), at: 1)
        XCTAssertEqual(sent(out).first?.body, [0x40], "ACK")
        XCTAssertTrue(out.contains(.text("Please wait")), "\(out)")
        XCTAssertEqual(sent(p.received(command(2, [0x6B, 0, 1, 0, 0, 0, 5, 0x41]), at: 2)).first?.body, [0x41, 0x02], "a length that is not the text's")
        XCTAssertEqual(sent(p.received(command(3, [0x6B, 0, 9, 0, 0, 0, 1, 0x41]), at: 3)).first?.body, [0x41, 0x09], "no such text command")
        XCTAssertEqual(sent(p.received(command(1, [0x6B, 0, 1, 0, 0, 0, 2, 0x41, 0x07]), at: 4)).first?.body, [0x41, 0x09], "a control character")
        let blank = p.received(command(2, [0x6B, 0, 1, 0, 0, 0, 1, 0x20]), at: 5)
        XCTAssertEqual(sent(blank).first?.body, [0x40])
        XCTAssertFalse(blank.contains { if case .text = $0 { return true } else { return false } }, "nothing to say")
    }

    func testStatusReplies() {
        var p = pd()
        _ = p.received(command(0, [0x60]), at: 0)
        XCTAssertEqual(sent(p.received(command(1, [0x64]), at: 1)).first?.body, [0x48, 0, 0], "tamper and power normal")
        XCTAssertEqual(sent(p.received(command(2, [0x66]), at: 2)).first?.body, [0x4A, 0])
        XCTAssertEqual(sent(p.received(command(3, [0x65]), at: 3)).first?.body, [0x49], "no inputs (yet)")
        XCTAssertEqual(sent(p.received(command(1, [0x67]), at: 4)).first?.body, [0x4B, 0])
    }

    func testACardGoesOutOnThePollAndOnlyWhileOnline() {
        var p = pd()
        XCTAssertEqual(events(p.report(.raw([1, 2], at: 0))), [.cardDropped("the controller is offline")])
        _ = p.received(command(0, [0x60]), at: 0)
        let bits = Wiegand.frame(payload: Array("18:36963".utf8), defaultFacility: 0, format: .h10301)
        let card = OSDPCardRead.wiegand(try! bits.get().bits, at: 1)
        XCTAssertEqual(card.data, [0x09, 0x48, 0x31, 0xC0])
        XCTAssertEqual(p.report(card), [])
        let a = p.received(command(1, [0x60]), at: 2)
        XCTAssertEqual(sent(a).first?.body, [0x50, 0, 1, 26, 0, 0x09, 0x48, 0x31, 0xC0])
        XCTAssertEqual(events(a), [.cardSent(card)])
        XCTAssertEqual(sent(p.received(command(2, [0x60]), at: 3)).first?.body, [0x40], "sent once")
        // A read the controller does not poll within 5 s is dropped.
        _ = p.report(.raw([7], at: 10))
        XCTAssertEqual(sent(p.received(command(3, [0x60]), at: 5_000_000_011)).first?.body, [0x40])
    }

    func testOfflineAfterSilence() {
        var p = pd()
        _ = p.received(command(0, [0x60]), at: 0)
        XCTAssertEqual(p.tick(at: 1_999_999_999), [])
        XCTAssertEqual(events(p.tick(at: 2_000_000_001)), [.offline])
        XCTAssertFalse(p.online)
    }

    func testChallengeNeedsAKeyAndSCBKDOnlyInInstallMode() throws {
        var p = pd(secure: true)
        let chlng: [UInt8] = [0x76] + Array(1...8)
        XCTAssertEqual(sent(p.received(command(0, chlng, scb: (0x11, [1])), at: 0)).first?.body, [0x41, 0x06], "no key given")
        XCTAssertEqual(sent(p.received(command(0, chlng, scb: (0x11, [0])), at: 0)).first?.body, [0x41, 0x06], "SCBK-D outside install mode")
        var q = pd(secure: true, install: true)
        let reply = try XCTUnwrap(sent(q.received(command(0, chlng, scb: (0x11, [0])), at: 0)).first)
        XCTAssertEqual(reply.securityType, 0x12)
        XCTAssertEqual(reply.securityData, [0], "SCBK-D")
        XCTAssertEqual(reply.body.first, 0x76)
        XCTAssertEqual(Array(reply.body[1...8]), identity.clientUID)
        XCTAssertEqual(reply.body.count, 33)
        // A cryptogram made with another key: NAK 6, no session.
        let a = q.received(command(1, [0x77] + [UInt8](repeating: 9, count: 16), scb: (0x13, [0])), at: 1)
        XCTAssertEqual(sent(a).first?.body, [0x41, 0x06])
        XCTAssertFalse(q.isSecure)
        // SCRYPT without CHLNG: refused.
        XCTAssertEqual(sent(q.received(command(2, [0x77] + [UInt8](repeating: 9, count: 16), scb: (0x13, [0])), at: 2)).first?.body, [0x41, 0x06])
    }

    func testTheWholeHandshakeWithTheToyCipher() throws {
        // The CP's side computed here with the same (toy) cipher, following OSDP 2.2 D.3.
        let c = ToyCipher()
        var p = pd(secure: true, key: key)
        let rndA: [UInt8] = Array(11...18)
        let reply = try XCTUnwrap(sent(p.received(command(0, [0x76] + rndA, scb: (0x11, [1])), at: 0)).first)
        let rndB = Array(reply.body[9...16])
        func derive(_ a: UInt8, _ b: UInt8) throws -> [UInt8] { try c.encrypt(key: key, iv: nil, [a, b] + Array(rndA[0..<6]) + [UInt8](repeating: 0, count: 8)) }
        let enc = try derive(0x01, 0x82), mac1 = try derive(0x01, 0x01), mac2 = try derive(0x01, 0x02)
        XCTAssertEqual(Array(reply.body[17...32]), try c.encrypt(key: enc, iv: nil, rndA + rndB), "the PD's cryptogram")
        let clientCryptogram = try c.encrypt(key: enc, iv: nil, rndB + rndA)
        let rmac = try XCTUnwrap(sent(p.received(command(1, [0x77] + clientCryptogram, scb: (0x13, [1])), at: 1)).first)
        XCTAssertEqual(rmac.securityType, 0x14)
        XCTAssertEqual(Array(rmac.body.dropFirst()), try c.encrypt(key: mac2, iv: nil, try c.encrypt(key: mac1, iv: nil, clientCryptogram)))
        XCTAssertTrue(p.isSecure)
        // The MAC (D.5): CBC with S-MAC1 over all blocks but the last, S-MAC2 on the last, 0x80 padding.
        func mac(_ m: [UInt8], iv: [UInt8]) throws -> [UInt8] {
            var padded = m
            if padded.count % 16 != 0 { padded.append(0x80); while padded.count % 16 != 0 { padded.append(0) } }
            var chain = iv
            if padded.count > 16 { chain = Array(try c.encrypt(key: mac1, iv: iv, Array(padded.prefix(padded.count - 16))).suffix(16)) }
            return try c.encrypt(key: mac2, iv: chain, Array(padded.suffix(16)))
        }
        func secured(_ seq: UInt8, _ body: [UInt8], rMac: [UInt8], spoil: Bool = false) throws -> (bytes: [UInt8], cMac: [UInt8]) {
            var b: [UInt8] = [0x53, 3, 0, 0, seq | 0x0C, 2, 0x15] + body
            let total = b.count + 4 + 2
            b[2] = UInt8(total); b[3] = 0
            let cMac = try mac(b, iv: rMac)
            b += cMac.prefix(4).map { spoil ? $0 ^ 1 : $0 }
            let crc = OSDPChecks.crc16(b)
            return (b + [UInt8(crc & 0xFF), UInt8(crc >> 8)], cMac)
        }
        var rMac = Array(rmac.body.dropFirst())
        // A POLL with its MAC: an ACK in the session (SCS_16), whose MAC chains from the command's.
        let poll = try secured(2, [0x60], rMac: rMac)
        let ackBytes = try XCTUnwrap(p.received(poll.bytes, at: 2).compactMap { if case .send(let b) = $0 { return b } else { return nil } }.first)
        let ack = try OSDPPacket.parse(ackBytes).get()
        XCTAssertEqual(ack.securityType, 0x16)
        XCTAssertEqual(ack.body.first, 0x40)
        rMac = try mac(Array(ackBytes.prefix(ackBytes.count - 6)), iv: poll.cMac)
        XCTAssertEqual(Array(ackBytes[(ackBytes.count - 6)..<(ackBytes.count - 2)]), Array(rMac.prefix(4)), "the reply's MAC")
        // The same POLL again with the next sequence number (a replay): its MAC no longer chains. NAK 6, session over.
        var replay = poll.bytes
        replay[4] = 3 | 0x0C
        let crc = OSDPChecks.crc16(replay.prefix(replay.count - 2))
        replay[replay.count - 2] = UInt8(crc & 0xFF); replay[replay.count - 1] = UInt8(crc >> 8)
        let refused = p.received(replay, at: 3)
        XCTAssertEqual(sent(refused).first?.body, [0x41, 0x06])
        XCTAssertEqual(sent(refused).first?.securityType, nil, "a plaintext NAK: the session is gone")
        XCTAssertFalse(p.isSecure)
        XCTAssertTrue(events(refused).contains(.error(.mac, "a command whose MAC does not match")))
        return
    }

    func testAPlaintextCommandEndsASession() throws {
        let c = ToyCipher()
        var p = pd(secure: true, key: key)
        let rndA: [UInt8] = Array(11...18)
        let reply = try XCTUnwrap(sent(p.received(command(0, [0x76] + rndA, scb: (0x11, [1])), at: 0)).first)
        let rndB = Array(reply.body[9...16])
        let enc = try c.encrypt(key: key, iv: nil, [0x01, 0x82] + Array(rndA[0..<6]) + [UInt8](repeating: 0, count: 8))
        _ = p.received(command(1, [0x77] + (try c.encrypt(key: enc, iv: nil, rndB + rndA)), scb: (0x13, [1])), at: 1)
        XCTAssertTrue(p.isSecure)
        // A plaintext command now ends the session with a plaintext NAK 6.
        let plain = p.received(command(2, [0x60]), at: 2)
        XCTAssertEqual(sent(plain).first?.body, [0x41, 0x06])
        XCTAssertFalse(p.isSecure)
    }

    func testComsetIsKeptThenTheAddressChanges() {
        var p = pd()
        _ = p.received(command(0, [0x60]), at: 0)
        let a = p.received(command(1, [0x6E, 9, 0x00, 0xC2, 0x01, 0x00]), at: 1)  // 115200
        XCTAssertEqual(sent(a).first?.body, [0x54, 9, 0x00, 0xC2, 0x01, 0x00])
        XCTAssertEqual(sent(a).first?.address, 0x83, "answered from the old address")
        XCTAssertTrue(a.contains(.switchBaud(115_200)))
        XCTAssertEqual(keeper.comsets.map { $0.0 }, [9])
        XCTAssertEqual(p.settings.address, 9)
        XCTAssertEqual(sent(p.received(command(2, [0x6E, 9, 0x01, 0, 0, 0]), at: 2)).first?.body, nil, "to 3: not ours any more")
        XCTAssertEqual(sent(p.received(command(2, [0x6E, 9, 0x01, 0, 0, 0], address: 9), at: 2)).first?.body, [0x41, 0x09], "257 baud")
    }

    func testKeysetOnlyInsideASession() {
        var p = pd(secure: false, key: key)
        _ = p.received(command(0, [0x60]), at: 0)
        XCTAssertEqual(sent(p.received(command(1, [0x75, 1, 16] + key), at: 1)).first?.body, [0x41, 0x06])
        XCTAssertEqual(keeper.keys.count, 0)
    }
}

final class OSDPCommandTests: XCTestCase {
    func record(temporary: (UInt8, UInt8, UInt8, UInt8, UInt8), timer: UInt16, permanent: (UInt8, UInt8, UInt8, UInt8, UInt8)) -> OSDPLEDRecord {
        let t = temporary, q = permanent
        return OSDPLEDRecord([0, 0, t.0, t.1, t.2, t.3, t.4, UInt8(timer & 0xFF), UInt8(timer >> 8), q.0, q.1, q.2, q.3, q.4][...])!
    }

    func testLEDTemporaryBlinkThenPermanent() {
        var plan = OSDPLEDPlan()
        // Permanent red; temporary green 200 ms on / 100 ms off for 1 s.
        plan.apply(record(temporary: (2, 2, 1, 2, 0), timer: 10, permanent: (1, 1, 0, 1, 0)), at: 0)
        let ms: UInt64 = 1_000_000
        XCTAssertEqual(plan.color(at: 0).color, 2)
        XCTAssertEqual(plan.color(at: 0).nextNs, 200 * ms)
        XCTAssertEqual(plan.color(at: 250 * ms).color, 0)
        XCTAssertEqual(plan.color(at: 250 * ms).nextNs, 300 * ms)
        XCTAssertEqual(plan.color(at: 950 * ms).nextNs, 1000 * ms, "the temporary state ends on time")
        XCTAssertEqual(plan.color(at: 1000 * ms).color, 1)
        XCTAssertNil(plan.color(at: 1000 * ms).nextNs)
        // Cancel the temporary state: the permanent one at once.
        plan.apply(record(temporary: (2, 5, 0, 2, 0), timer: 50, permanent: (0, 0, 0, 0, 0)), at: 2000 * ms)
        XCTAssertEqual(plan.color(at: 2000 * ms).color, 2)
        plan.apply(record(temporary: (1, 0, 0, 0, 0), timer: 0, permanent: (0, 0, 0, 0, 0)), at: 2100 * ms)
        XCTAssertEqual(plan.color(at: 2100 * ms).color, 1)
        XCTAssertEqual(OSDPColor.lamps(3).green && OSDPColor.lamps(3).red, true, "amber: both")
        XCTAssertTrue(OSDPColor.lamps(2).green && !OSDPColor.lamps(2).red, "green: the granted LED")
        XCTAssertTrue(!OSDPColor.lamps(1).green && OSDPColor.lamps(1).red, "red: the denied LED")
        XCTAssertTrue(!OSDPColor.lamps(4).green && !OSDPColor.lamps(4).red, "blue: neither")
        XCTAssertFalse(record(temporary: (2, 0, 0, 2, 0), timer: 5, permanent: (0, 0, 0, 0, 0)).isValid, "on and off both 0")
    }

    func testOutputTimedAndPermanent() {
        let ms: UInt64 = 1_000_000
        var plan = OSDPOutputPlan()
        plan.apply(OSDPOutputRecord([0, 5, 7, 0][...])!, at: 0)
        XCTAssertTrue(plan.level(at: 0).on)
        XCTAssertEqual(plan.level(at: 0).nextNs, 700 * ms)
        XCTAssertFalse(plan.level(at: 700 * ms).on)
        plan.apply(OSDPOutputRecord([0, 2, 0, 0][...])!, at: 800 * ms)
        XCTAssertTrue(plan.level(at: 900 * ms).on)
        plan.apply(OSDPOutputRecord([0, 6, 3, 0][...])!, at: 1000 * ms)
        XCTAssertFalse(plan.level(at: 1100 * ms).on, "off for the timer")
        XCTAssertTrue(plan.level(at: 1300 * ms).on, "then back to permanent on")
        XCTAssertFalse(OSDPOutputRecord([0, 5, 0, 0][...])!.isValid, "a timed state of 0 ms")
        XCTAssertFalse(OSDPOutputRecord([0, 7, 0, 0][...])!.isValid)
    }

    func testBuzzerPatterns() {
        XCTAssertEqual(OSDPBuzzerRecord([0, 2, 2, 1, 2][...])!.pattern, [200, 100, 200])
        XCTAssertEqual(OSDPBuzzerRecord([0, 1, 2, 1, 2][...])!.pattern, [], "tone 1: off")
        XCTAssertEqual(OSDPBuzzerRecord([0, 2, 3, 0, 2][...])!.pattern, [600], "no off time: one long tone")
        XCTAssertEqual(OSDPBuzzerRecord([0, 2, 1, 1, 0][...])!.pattern.count, 2 * OSDPBuzzerRecord.repeatLimit - 1)
    }

    func testCardFormats() throws {
        let w34 = try OSDPCardFormat.wiegand34.card(payload: Array("1000:2000".utf8), defaultFacility: 0, at: 0).get()
        XCTAssertEqual(w34.bitCount, 34)
        XCTAssertEqual(w34.format, 1)
        let raw = try OSDPCardFormat.raw.card(payload: [0x41, 0x00, 0xFF], defaultFacility: 0, at: 0).get()
        XCTAssertEqual(raw, OSDPCardRead(format: 0, bitCount: 24, data: [0x41, 0x00, 0xFF], atNs: 0))
        XCTAssertThrowsError(try OSDPCardFormat.wiegand26.card(payload: Array("HELLO".utf8), defaultFacility: 0, at: 0).get())
        XCTAssertThrowsError(try OSDPCardFormat.raw.card(payload: [UInt8](repeating: 1, count: 129), defaultFacility: 0, at: 0).get())
    }
}
