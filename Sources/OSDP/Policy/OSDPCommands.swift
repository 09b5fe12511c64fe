// SPDX-License-Identifier: Apache-2.0
// The controller's output commands (OSDP 2.2, 6.10 osdp_OUT, 6.11 osdp_LED, 6.12 osdp_BUZ) as
// records, and what each means for a line over time: a pure function of the clock, so the kiosk's
// drivers only ask "which level now, and when does it change next".

/// OSDP command and reply codes the kiosk knows (OSDP 2.2, Annex A).
public enum OSDPCode {
    public static let poll: UInt8 = 0x60, id: UInt8 = 0x61, cap: UInt8 = 0x62, lstat: UInt8 = 0x64
    public static let istat: UInt8 = 0x65, ostat: UInt8 = 0x66, rstat: UInt8 = 0x67, out: UInt8 = 0x68
    public static let led: UInt8 = 0x69, buz: UInt8 = 0x6A, text: UInt8 = 0x6B, comset: UInt8 = 0x6E
    public static let keyset: UInt8 = 0x75, chlng: UInt8 = 0x76, scrypt: UInt8 = 0x77

    public static let ack: UInt8 = 0x40, nak: UInt8 = 0x41, pdid: UInt8 = 0x45, pdcap: UInt8 = 0x46
    public static let lstatr: UInt8 = 0x48, istatr: UInt8 = 0x49, ostatr: UInt8 = 0x4A, rstatr: UInt8 = 0x4B
    public static let raw: UInt8 = 0x50, keypad: UInt8 = 0x53, com: UInt8 = 0x54, ccrypt: UInt8 = 0x76, rmacI: UInt8 = 0x78, busy: UInt8 = 0x79

    /// The security block types (OSDP 2.2, Annex D).
    public static let scs11: UInt8 = 0x11, scs12: UInt8 = 0x12, scs13: UInt8 = 0x13, scs14: UInt8 = 0x14
    public static let scs15: UInt8 = 0x15, scs16: UInt8 = 0x16, scs17: UInt8 = 0x17, scs18: UInt8 = 0x18
}

/// osdp_NAK's reasons (OSDP 2.2, 7.3).
public enum OSDPNak: UInt8, Sendable {
    case checkCharacter = 0x01
    case commandLength = 0x02
    case unknownCommand = 0x03
    case sequence = 0x04
    case secureChannelUnsupported = 0x05
    case securityConditions = 0x06
    case unableToProcess = 0x09
}

/// One osdp_LED record (14 bytes); times in 100 ms units as on the wire.
public struct OSDPLEDRecord: Equatable, Sendable {
    public struct State: Equatable, Sendable {
        public var control: UInt8
        public var onTime: UInt8
        public var offTime: UInt8
        public var onColor: UInt8
        public var offColor: UInt8
    }
    public var reader: UInt8
    public var led: UInt8
    public var temporary: State
    /// The temporary state's length, 100 ms units.
    public var timer: UInt16
    public var permanent: State

    public static let length = 14

    public init?(_ b: ArraySlice<UInt8>) {
        guard b.count == Self.length else { return nil }
        let a = Array(b)
        reader = a[0]
        led = a[1]
        temporary = State(control: a[2], onTime: a[3], offTime: a[4], onColor: a[5], offColor: a[6])
        timer = UInt16(a[7]) | UInt16(a[8]) << 8
        permanent = State(control: a[9], onTime: a[10], offTime: a[11], onColor: a[12], offColor: a[13])
    }

    /// Control codes: temporary 0 no change, 1 cancel (show the permanent state), 2 set; permanent
    /// 0 no change, 1 set. A state that is set must light or blink (its on and off times not both 0).
    public var isValid: Bool {
        guard temporary.control <= 2, permanent.control <= 1 else { return false }
        if temporary.control == 2 && temporary.onTime == 0 && temporary.offTime == 0 { return false }
        if permanent.control == 1 && permanent.onTime == 0 && permanent.offTime == 0 { return false }
        return true
    }
}

/// The colours of osdp_LED (OSDP 2.2, 6.11) on the kiosk's two lamps: green on the granted LED,
/// red on the denied LED, amber (red and green) on both; black, blue and the others on neither.
public enum OSDPColor {
    public static func lamps(_ color: UInt8) -> (green: Bool, red: Bool) {
        switch color {
        case 1: return (false, true)
        case 2: return (true, false)
        case 3: return (true, true)
        default: return (false, false)
        }
    }
}

/// A lamp's (or an output's) level over time: a blink of `onMs`/`offMs` from `startNs`
/// (`offMs` 0: steady), with an optional temporary blink until `temporaryEndNs` on top.
public struct OSDPBlink: Equatable, Sendable {
    public var onMs: Int
    public var offMs: Int
    public var onColor: UInt8
    public var offColor: UInt8
    public var startNs: UInt64

    public init(onMs: Int, offMs: Int, onColor: UInt8, offColor: UInt8, startNs: UInt64) {
        self.onMs = onMs
        self.offMs = offMs
        self.onColor = onColor
        self.offColor = offColor
        self.startNs = startNs
    }

    /// All off: the state at start.
    public static let dark = OSDPBlink(onMs: 1, offMs: 0, onColor: 0, offColor: 0, startNs: 0)

    /// The colour at `t`, and when it changes next (nil: never).
    public func color(at t: UInt64) -> (color: UInt8, nextNs: UInt64?) {
        if offMs == 0 || onColor == offColor { return (onColor, nil) }
        if onMs == 0 { return (offColor, nil) }
        let period = UInt64(onMs + offMs) * 1_000_000
        let elapsed = t >= startNs ? t - startNs : 0
        let phase = elapsed % period
        let onNs = UInt64(onMs) * 1_000_000
        let cycleStart = t - phase
        return phase < onNs ? (onColor, cycleStart + onNs) : (offColor, cycleStart + period)
    }
}

/// The reader LED as the controller set it: the permanent state, and a temporary one for its
/// timer's length, after which the permanent one shows again.
public struct OSDPLEDPlan: Equatable, Sendable {
    public var permanent = OSDPBlink.dark
    public var temporary: (blink: OSDPBlink, endNs: UInt64)?

    public init() {}

    public static func == (a: OSDPLEDPlan, b: OSDPLEDPlan) -> Bool {
        a.permanent == b.permanent && a.temporary?.blink == b.temporary?.blink && a.temporary?.endNs == b.temporary?.endNs
    }

    /// Applies one record at `now` (it is valid: `OSDPLEDRecord.isValid`).
    public mutating func apply(_ r: OSDPLEDRecord, at now: UInt64) {
        if r.permanent.control == 1 {
            permanent = OSDPBlink(onMs: Int(r.permanent.onTime) * 100, offMs: Int(r.permanent.offTime) * 100,
                                  onColor: r.permanent.onColor, offColor: r.permanent.offColor, startNs: now)
        }
        switch r.temporary.control {
        case 1: temporary = nil
        case 2:
            let blink = OSDPBlink(onMs: Int(r.temporary.onTime) * 100, offMs: Int(r.temporary.offTime) * 100,
                                  onColor: r.temporary.onColor, offColor: r.temporary.offColor, startNs: now)
            temporary = r.timer == 0 ? nil : (blink, now + UInt64(r.timer) * 100_000_000)
        default: break
        }
    }

    /// The colour shown at `t` and when that may change next.
    public func color(at t: UInt64) -> (color: UInt8, nextNs: UInt64?) {
        if let temporary, t < temporary.endNs {
            let c = temporary.blink.color(at: t)
            return (c.color, min(c.nextNs ?? temporary.endNs, temporary.endNs))
        }
        return permanent.color(at: t)
    }
}

/// One osdp_OUT record (4 bytes).
public struct OSDPOutputRecord: Equatable, Sendable {
    public var output: UInt8
    /// 0 no change; 1 off, 2 on (both cancel a timed state); 3 off, 4 on (after a timed state
    /// ends); 5 on for the timer then back, 6 off for the timer then back.
    public var control: UInt8
    /// 100 ms units.
    public var timer: UInt16
    public static let length = 4

    public init?(_ b: ArraySlice<UInt8>) {
        guard b.count == Self.length else { return nil }
        let a = Array(b)
        output = a[0]
        control = a[1]
        timer = UInt16(a[2]) | UInt16(a[3]) << 8
    }

    public var isValid: Bool { control <= 6 && !((control == 5 || control == 6) && timer == 0) }
}

/// An output's (the strike's) level: permanent on/off, and a timed state on top of it.
public struct OSDPOutputPlan: Equatable, Sendable {
    public var permanent = false
    public var timed: (on: Bool, endNs: UInt64)?

    public init() {}

    public static func == (a: OSDPOutputPlan, b: OSDPOutputPlan) -> Bool {
        a.permanent == b.permanent && a.timed?.on == b.timed?.on && a.timed?.endNs == b.timed?.endNs
    }

    public mutating func apply(_ r: OSDPOutputRecord, at now: UInt64) {
        switch r.control {
        case 1, 2: permanent = r.control == 2; timed = nil
        case 3, 4: permanent = r.control == 4
        case 5, 6: timed = (r.control == 5, now + UInt64(r.timer) * 100_000_000)
        default: break
        }
    }

    public func level(at t: UInt64) -> (on: Bool, nextNs: UInt64?) {
        if let timed, t < timed.endNs { return (timed.on, timed.endNs) }
        return (permanent, nil)
    }
}

/// One osdp_BUZ record (5 bytes): tone 0 or 1 off, 2 the default tone; on and off in 100 ms;
/// count 0 repeats until another command.
public struct OSDPBuzzerRecord: Equatable, Sendable {
    public var reader: UInt8
    public var tone: UInt8
    public var onTime: UInt8
    public var offTime: UInt8
    public var count: UInt8
    public static let length = 5

    public init?(_ b: ArraySlice<UInt8>) {
        guard b.count == Self.length else { return nil }
        let a = Array(b)
        reader = a[0]
        tone = a[1]
        onTime = a[2]
        offTime = a[3]
        count = a[4]
    }

    public var isValid: Bool { tone <= 2 && !(tone == 2 && onTime == 0) }

    /// "Repeat until told otherwise" is bounded: this many cycles (the controller cancels sooner).
    public static let repeatLimit = 600

    /// The buzzer's on,off,... milliseconds (`PatternPlayer`); empty: silence.
    public var pattern: [Int] {
        guard tone == 2, onTime > 0 else { return [] }
        let cycles = count == 0 ? Self.repeatLimit : Int(count)
        guard offTime > 0 else { return [Int(onTime) * 100 * cycles] }
        var steps: [Int] = []
        for i in 0..<cycles {
            steps.append(Int(onTime) * 100)
            if i + 1 < cycles { steps.append(Int(offTime) * 100) }
        }
        return steps
    }
}

/// How a reported code goes to the controller in osdp_RAW (`KIOSK_OSDP_CARD_FORMAT`).
public enum OSDPCardFormat: String, CaseIterable, Sendable {
    case wiegand26, wiegand34, raw
    public static let expected = "wiegand26, wiegand34 (the bits of a FACILITY:CARD or CARD payload) or raw (the payload's bytes)"

    public var wiegand: WiegandFormat? {
        switch self {
        case .wiegand26: return .h10301
        case .wiegand34: return .bits34
        case .raw: return nil
        }
    }

    /// The largest payload sent raw (osdp_RAW in one packet of at most `OSDPPacket.maxLength`).
    public static let rawLimit = 128

    /// What a payload becomes: a Wiegand frame's bits, or its bytes; or why it is not sent.
    public func card(payload: [UInt8], defaultFacility: Int, at now: UInt64) -> Result<OSDPCardRead, OSDPCardSkip> {
        guard let format = wiegand else {
            guard payload.count <= OSDPCardFormat.rawLimit, !payload.isEmpty else {
                return .failure(OSDPCardSkip(reason: "a payload of \(payload.count) bytes (raw sends 1 to \(OSDPCardFormat.rawLimit))"))
            }
            return .success(.raw(payload, at: now))
        }
        switch Wiegand.frame(payload: payload, defaultFacility: defaultFacility, format: format) {
        case .success(let f): return .success(.wiegand(f.bits, at: now))
        case .failure(let skip): return .failure(OSDPCardSkip(reason: skip.reason))
        }
    }
}

public struct OSDPCardSkip: Error, Equatable, Sendable {
    public var reason: String
}
