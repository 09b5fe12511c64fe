// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// Bytes from the RS-485 bus: the framer and the peripheral's state machine take any
/// stream without a crash; every reply they make parses as a packet; a PD that requires the
/// Secure Channel and has no key never drives a line, whatever it is sent.
struct XorCipher: OSDPCipher {
    func encrypt(key: [UInt8], iv: [UInt8]?, _ data: [UInt8]) throws -> [UInt8] {
        data.enumerated().map { $1 ^ key[$0 % 16] ^ (iv?[$0 % 16] ?? 0) }
    }
    func decrypt(key: [UInt8], iv: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        data.enumerated().map { $1 ^ key[$0 % 16] ^ iv[$0 % 16] }
    }
    func random(_ count: Int) throws -> [UInt8] { [UInt8](repeating: 7, count: count) }
}

struct NoKeeper: OSDPKeeper {
    func keep(key: [UInt8]) -> Bool { true }
    func keep(address: Int, baud: Int) -> Bool { true }
}

let identity = OSDPIdentity(vendorCode: 1, model: 1, version: 1, serial: 1, firmware: (0, 1, 0))

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var locked = OSDPPeripheral(settings: .init(address: 0, identity: identity, key: nil, installMode: false, requireSecure: true,
                                                hasBuzzer: true, hasLED: true, hasOutput: true), cipher: XorCipher(), keeper: NoKeeper())
    var open = OSDPPeripheral(settings: .init(address: 0, identity: identity, key: Array(0..<16), installMode: true, requireSecure: false,
                                              hasBuzzer: true, hasLED: true, hasOutput: true), cipher: XorCipher(), keeper: NoKeeper())
    var framer = OSDPFramer()
    var now: UInt64 = 0
    // The first byte picks the chunk size, so that packets split across reads are covered.
    let chunk = max(1, Int(bytes.first ?? 1) % 17)
    var i = bytes.isEmpty ? 0 : 1
    while i < bytes.count {
        let piece = bytes[i..<min(bytes.count, i + chunk)]
        i += chunk
        now += 3_000_000
        var outputs = framer.feed(piece, at: now)
        outputs += framer.expire(at: now, timeoutNs: 200_000_000)
        for output in outputs {
            guard case .packet(let packet) = output else { continue }
            precondition(packet.count <= OSDPPacket.maxLength && packet.first == OSDPPacket.startOfMessage)
            for action in locked.received(packet, at: now) {
                switch action {
                case .led, .buzzer, .output, .switchBaud:
                    preconditionFailure("a command carried out without a Secure Channel: \(action)")
                case .send(let reply):
                    guard case .success = OSDPPacket.parse(reply) else { preconditionFailure("a reply that does not parse") }
                default: break
                }
            }
            for action in open.received(packet, at: now) {
                if case .send(let reply) = action, case .failure = OSDPPacket.parse(reply) { preconditionFailure("a reply that does not parse") }
            }
            _ = locked.tick(at: now)
            _ = open.tick(at: now)
        }
    }
    return 0
}

@_cdecl("FuzzOSDP_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
