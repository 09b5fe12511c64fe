// SPDX-License-Identifier: Apache-2.0
import Commands
import Glibc
import OSDP
import Platform
import Policy

/// `kiosk-dev osdp-reply`: how long the kiosk's OSDP link takes to answer a POLL, from
/// the command's last byte written to the reply's last byte read, through the link's own thread
/// (`OSDPLink`, as the kiosk runs it) on a pseudo-terminal, in plaintext and in a Secure Channel
/// (OpenSSL's AES; the control panel's side of the session is computed here). A pseudo-terminal
/// does not enforce the baud rate: the time the bytes take on a real wire at that speed (10 bits a
/// byte) is computed and printed beside the measured figures, not measured.
enum OSDPReplyBench {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func main(_ args: [String]) -> Int32 {
        var polls = 2000
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--polls" where i + 1 < args.count && Int(args[i + 1]).map({ (10...1_000_000).contains($0) }) == true:
                polls = Int(args[i + 1])!
                i += 2
            default:
                return DevCommand.usageError("osdp-reply: [--polls N] (got \(args[i]))")
            }
        }
        print("OSDP POLL reply time through OSDPLink on a pseudo-terminal, \(polls) polls a run (kiosk-dev osdp-reply)")
        for baud in [9600, 115_200] {
            for secure in [false, true] {
                do {
                    let r = try run(baud: baud, secure: secure, polls: polls)
                    let wire = Double((secure ? 14 + 14 : 8 + 8) * 10) / Double(baud) * 1000
                    print(String(format: "%6d baud, %@: median %.3f ms, p99 %.3f ms, max %.3f ms; + wire time of POLL and ACK at this speed %.2f ms (computed)",
                                 baud, secure ? "Secure Channel" : "plaintext     ", r.median, r.p99, r.max, wire))
                } catch {
                    DevCommand.printError("osdp-reply: \(error)")
                    return 1
                }
            }
        }
        return 0
    }

    struct NoKeeper: OSDPKeeper {
        func keep(key: [UInt8]) -> Bool { false }
        func keep(address: Int, baud: Int) -> Bool { false }
    }

    static func run(baud: Int, secure: Bool, polls: Int) throws -> (median: Double, p99: Double, max: Double) {
        let (master, slave) = try PseudoTerminal.open()
        defer { close(master) }
        let key: [UInt8] = Array(0..<16)
        let settings = OSDPPeripheral.Settings(address: 0, identity: OSDPIdentity(vendorCode: 0, model: 1, version: 1, serial: 1, firmware: (0, 1, 0)),
                                               key: key, installMode: false, requireSecure: secure, hasBuzzer: false, hasLED: false, hasOutput: false)
        let link = try OSDPLink(path: slave, baud: baud, peripheral: OSDPPeripheral(settings: settings, cipher: OpenSSLCipher(), keeper: NoKeeper()), clock: MonotonicClock())
        link.start()
        defer { link.shutDown() }
        var framer = OSDPFramer()
        var sequence: UInt8 = 0
        func exchange(_ bytes: [UInt8]) throws -> (reply: [UInt8], ms: Double) {
            let start = monotonicNanoseconds()
            do throws(Errno) { try Syscall.writeAll(master, bytes) } catch { throw Failure(description: "write: \(error)") }
            var buffer = [UInt8](repeating: 0, count: 512)
            while monotonicNanoseconds() - start < 1_000_000_000 {
                var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 100) > 0 else { continue }
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                guard n > 0 else { continue }
                for case .packet(let reply) in framer.feed(buffer[0..<n], at: 0) {
                    guard reply[4] & 3 == bytes[4] & 3 else { throw Failure(description: "a reply to another command") }
                    return (reply, Double(monotonicNanoseconds() - start) / 1e6)
                }
            }
            throw Failure(description: "no reply within a second")
        }
        func next() -> UInt8 {
            defer { sequence = sequence % 3 + 1 }
            return sequence
        }
        let cipher = OpenSSLCipher()
        var session: (enc: [UInt8], mac1: [UInt8], mac2: [UInt8], rMac: [UInt8])?
        func mac(_ m: [UInt8], iv: [UInt8], _ k1: [UInt8], _ k2: [UInt8]) throws -> [UInt8] {
            var p = m
            if p.count % 16 != 0 { p.append(0x80); while p.count % 16 != 0 { p.append(0) } }
            var chain = iv
            if p.count > 16 { chain = Array(try cipher.encrypt(key: k1, iv: iv, Array(p.prefix(p.count - 16))).suffix(16)) }
            return try cipher.encrypt(key: k2, iv: chain, Array(p.suffix(16)))
        }
        if secure {
            // The control panel's side of OSDP 2.2 Annex D, just enough to hold a session.
            let rndA = try cipher.random(8)
            let ccrypt = try exchange(OSDPPacket(address: 0, sequence: next(), check: .crc16, securityType: 0x11, securityData: [1], body: [0x76] + rndA).encoded()).reply
            let p = try OSDPPacket.parse(ccrypt).get()
            guard p.body.count == 33 else { throw Failure(description: "no osdp_CCRYPT: \(p.body)") }
            let rndB = Array(p.body[9...16])
            func derive(_ a: UInt8, _ b: UInt8) throws -> [UInt8] { try cipher.encrypt(key: key, iv: nil, [a, b] + Array(rndA[0..<6]) + [UInt8](repeating: 0, count: 8)) }
            let enc = try derive(1, 0x82), mac1 = try derive(1, 1), mac2 = try derive(1, 2)
            let clientCryptogram = try cipher.encrypt(key: enc, iv: nil, rndB + rndA)
            let rmac = try OSDPPacket.parse(try exchange(OSDPPacket(address: 0, sequence: next(), check: .crc16, securityType: 0x13, securityData: [1], body: [0x77] + clientCryptogram).encoded()).reply).get()
            guard rmac.body.count == 17 else { throw Failure(description: "no osdp_RMAC_I: the session did not start") }
            session = (enc, mac1, mac2, Array(rmac.body.dropFirst()))
        } else {
            _ = try exchange(OSDPPacket(address: 0, sequence: next(), check: .crc16, body: [0x61, 0]).encoded())
        }
        var times: [Double] = []
        for _ in 0..<polls {
            var command: [UInt8]
            var cMac: [UInt8] = []
            if let s = session {
                command = [0x53, 0, 14, 0, next() | 0x04 | 0x08, 2, 0x15, 0x60]
                cMac = try mac(command, iv: s.rMac, s.mac1, s.mac2)
                command += cMac.prefix(4)
                let crc = OSDPChecks.crc16(command)
                command += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
            } else {
                command = OSDPPacket(address: 0, sequence: next(), check: .crc16, body: [0x60]).encoded()
            }
            let (reply, ms) = try exchange(command)
            times.append(ms)
            if var s = session {
                guard reply.count == 14 else { throw Failure(description: "the session broke: \(reply)") }
                s.rMac = try mac(Array(reply.prefix(reply.count - 6)), iv: cMac, s.mac1, s.mac2)
                guard Array(s.rMac.prefix(4)) == Array(reply[(reply.count - 6)..<(reply.count - 2)]) else {
                    throw Failure(description: "the reply's MAC does not match")
                }
                session = s
            } else {
                guard reply.count == 8, reply[5] == 0x40 else { throw Failure(description: "no osdp_ACK: \(reply)") }
            }
        }
        times.sort()
        return (times[times.count / 2], times[min(times.count - 1, times.count * 99 / 100)], times.last!)
    }
}
