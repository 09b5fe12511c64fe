// SPDX-License-Identifier: Apache-2.0

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

    /// Keys of the door's keypad (osdp_KEYPAD, SIA OSDP 2.2 7.12): their bytes as OSDP gives them
    /// (`KeypadKey.osdpByte`); the controller checks the PIN.
    public var isKeypad: Bool { format == OSDPCardRead.keypadFormat }
    static let keypadFormat: UInt8 = 0xFF

    public static func keypad(_ bytes: [UInt8], at now: UInt64) -> OSDPCardRead {
        OSDPCardRead(format: keypadFormat, bitCount: bytes.count * 8, data: bytes, atNs: now)
    }

    /// Bytes sent as they are, format unspecified (the bit count is 8 per byte).
    public static func raw(_ bytes: [UInt8], at now: UInt64) -> OSDPCardRead {
        OSDPCardRead(format: 0, bitCount: bytes.count * 8, data: bytes, atNs: now)
    }
}
