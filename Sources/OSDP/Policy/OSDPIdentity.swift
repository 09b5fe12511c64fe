// SPDX-License-Identifier: Apache-2.0

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
