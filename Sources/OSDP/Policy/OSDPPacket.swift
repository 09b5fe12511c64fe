// SPDX-License-Identifier: Apache-2.0
// OSDP's packets (SIA OSDP 2.2, section 5: "Packet structure"), read from untrusted bus bytes:
// small, strict and bounded. No cryptography here: the Secure Channel's MAC and encryption are
// checked by `OSDPPeripheral` through its cipher.

/// The two check modes of the packet's last bytes (control bit 2).
public enum OSDPCheck: Equatable, Sendable {
    /// One byte: the two's complement of the sum of every earlier byte.
    case checksum
    /// Two bytes, least significant first: CRC-16/AUG-CCITT (polynomial 0x1021, initial 0x1D0F).
    case crc16

    public var length: Int { self == .crc16 ? 2 : 1 }
}

public enum OSDPChecks {
    /// CRC-16/AUG-CCITT: polynomial 0x1021, initial value 0x1D0F, no reflection, no final XOR
    /// (the OSDP specification's Annex; "123456789" gives 0xE5CC).
    public static func crc16(_ bytes: some Collection<UInt8>) -> UInt16 {
        var crc: UInt16 = 0x1D0F
        for b in bytes {
            crc ^= UInt16(b) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    /// The 8-bit checksum: what makes the sum of all the packet's bytes 0 (mod 256).
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt8 {
        var sum: UInt8 = 0
        for b in bytes { sum &+= b }
        return 0 &- sum
    }
}

/// One packet as it is on the wire, its check verified: the header's fields, the security block
/// (when control bit 3 is set), and what follows it up to the check bytes (the command or reply
/// code, its data, and in a Secure Channel session the 4 MAC bytes).
public struct OSDPPacket: Equatable, Sendable {
    public static let startOfMessage: UInt8 = 0x53
    /// An optional byte before SOM (OSDP 2.2 "mark"); libosdp's control panel sends it.
    public static let mark: UInt8 = 0xFF
    public static let broadcastAddress: UInt8 = 0x7F
    /// SOM, address, length (2), control.
    public static let headerLength = 5
    /// The largest packet the kiosk takes (and says so in its PDCAP receive buffer size): a
    /// command never needs more than a few dozen bytes; anything longer is refused unread.
    public static let maxLength = 256

    /// 0-126, or 0x7F (broadcast); a reply sets bit 7.
    public var address: UInt8
    /// 0-3 (control bits 0-1); 0 restarts the link.
    public var sequence: UInt8
    public var check: OSDPCheck
    /// The security block: its type (SCS_11 ... SCS_18) and data, nil when control bit 3 is clear.
    public var securityType: UInt8?
    public var securityData: [UInt8]
    /// From the command/reply code to the last byte before the check (MAC included).
    public var body: [UInt8]
    /// Bytes covered by the MAC: the packet from SOM up to the body's last `macLength` bytes.
    public var wire: [UInt8]

    public init(address: UInt8, sequence: UInt8, check: OSDPCheck, securityType: UInt8? = nil,
                securityData: [UInt8] = [], body: [UInt8]) {
        self.address = address
        self.sequence = sequence & 0x03
        self.check = check
        self.securityType = securityType
        self.securityData = securityData
        self.body = body
        wire = []
        wire = encoded()
    }

    /// The packet's bytes, SOM to check (no mark).
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [OSDPPacket.startOfMessage, address, 0, 0]
        var control = sequence & 0x03
        if check == .crc16 { control |= 0x04 }
        if securityType != nil { control |= 0x08 }
        out.append(control)
        if let securityType {
            out.append(UInt8(2 + securityData.count))
            out.append(securityType)
            out += securityData
        }
        out += body
        let total = out.count + check.length
        out[2] = UInt8(total & 0xFF)
        out[3] = UInt8(total >> 8)
        switch check {
        case .crc16:
            let crc = OSDPChecks.crc16(out)
            out += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        case .checksum:
            out.append(OSDPChecks.checksum(out))
        }
        return out
    }

    /// What is wrong with a packet whose length and framing were right.
    public enum Problem: Error, Equatable, Sendable {
        /// The CRC or checksum does not match.
        case check
        /// A length inside the packet does not add up (the security block's, an empty body).
        case length
    }

    /// Parses one whole packet (`bytes` is exactly SOM ... check, as `OSDPFramer` cut it).
    public static func parse(_ bytes: [UInt8]) -> Result<OSDPPacket, Problem> {
        guard bytes.count >= headerLength + 2, bytes.count <= maxLength, bytes[0] == startOfMessage,
              Int(bytes[2]) | Int(bytes[3]) << 8 == bytes.count else { return .failure(.length) }
        let control = bytes[4]
        let check: OSDPCheck = control & 0x04 != 0 ? .crc16 : .checksum
        let end = bytes.count - check.length
        guard end > headerLength else { return .failure(.length) }
        switch check {
        case .crc16:
            let given = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
            guard OSDPChecks.crc16(bytes[0..<end]) == given else { return .failure(.check) }
        case .checksum:
            guard OSDPChecks.checksum(bytes[0..<end]) == bytes[end] else { return .failure(.check) }
        }
        var i = headerLength
        var securityType: UInt8?
        var securityData: [UInt8] = []
        if control & 0x08 != 0 {
            let blockLength = Int(bytes[i])
            guard blockLength >= 2, i + blockLength < end else { return .failure(.length) }
            securityType = bytes[i + 1]
            securityData = Array(bytes[(i + 2)..<(i + blockLength)])
            i += blockLength
        }
        guard i < end else { return .failure(.length) }
        var p = OSDPPacket(address: bytes[1], sequence: control & 0x03, check: check, securityType: securityType,
                           securityData: securityData, body: Array(bytes[i..<end]))
        p.wire = bytes
        return .success(p)
    }
}

/// Cuts the byte stream of a serial port into packets: looks for SOM, reads the length, waits
/// for the rest. A length that cannot be (shorter than a header, longer than `OSDPPacket.maxLength`)
/// drops that SOM and looks for the next; so does a packet that never completes (`expire`).
/// Never holds more than `maxLength` bytes.
public struct OSDPFramer: Sendable {
    public enum Output: Equatable, Sendable {
        /// SOM ... check, as many bytes as its length field says.
        case packet([UInt8])
        /// A SOM whose length field was out of bounds (the `length` error).
        case badLength(Int)
    }

    private var buffer: [UInt8] = []
    /// When the packet being collected began (for `expire`).
    public private(set) var startedNs: UInt64?
    /// Bytes thrown away while looking for SOM (noise between packets).
    public private(set) var skipped = 0

    public init() {}

    public var isCollecting: Bool { !buffer.isEmpty }

    /// Feeds bytes read at `now`; returns the packets (and bad lengths) they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>, at now: UInt64) -> [Output] {
        run(Array(bytes), at: now)
    }

    /// A packet still incomplete `timeoutNs` after its SOM is dropped (the CP gave up on it, or
    /// the SOM was noise): the bytes after that SOM are scanned again for another.
    public mutating func expire(at now: UInt64, timeoutNs: UInt64) -> [Output] {
        guard let startedNs, now &- startedNs > timeoutNs else { return [] }
        let rest = Array(buffer.dropFirst())
        reset()
        return run(rest, at: now)
    }

    private mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        startedNs = nil
    }

    private mutating func run(_ input: [UInt8], at now: UInt64) -> [Output] {
        var out: [Output] = []
        var queue = input
        var i = 0
        while i < queue.count {
            let b = queue[i]
            i += 1
            if buffer.isEmpty {
                guard b == OSDPPacket.startOfMessage else {
                    if b != OSDPPacket.mark { skipped += 1 }
                    continue
                }
                startedNs = now
            }
            buffer.append(b)
            guard buffer.count >= 4 else { continue }
            let length = Int(buffer[2]) | Int(buffer[3]) << 8
            if length < OSDPPacket.headerLength + 2 || length > OSDPPacket.maxLength {
                out.append(.badLength(length))
                // That SOM was no packet's: what followed it is looked at again.
                let rest = buffer.dropFirst()
                reset()
                queue = Array(rest) + queue[i...]
                i = 0
                continue
            }
            if buffer.count == length {
                out.append(.packet(buffer))
                reset()
            }
        }
        return out
    }
}
