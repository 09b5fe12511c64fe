// SPDX-License-Identifier: Apache-2.0
/// The Wiegand frame formats an access controller takes from a card reader
/// (`KIOSK_WIEGAND_FORMAT`).
///
/// Both are: one even-parity bit, the facility code, the card number, one odd-parity bit, most
/// significant bit first. The leading parity bit makes the number of ones in itself and the first
/// half of the data even; the trailing one makes the ones in the second half and itself odd.
/// - 26 bits, HID's H10301: bit 1 even parity over bits 2-13, bits 2-9 the facility (8 bits),
///   bits 10-25 the card (16 bits), bit 26 odd parity over bits 14-25.
/// - 34 bits: bit 1 even parity over bits 2-17, bits 2-17 the facility (16 bits), bits 18-33 the
///   card (16 bits), bit 34 odd parity over bits 18-33.
public enum WiegandFormat: Int, CaseIterable, Sendable {
    case h10301 = 26
    case bits34 = 34

    public static let expected = "26 or 34"

    public var bitCount: Int { rawValue }
    public var facilityBits: Int { self == .h10301 ? 8 : 16 }
    public var cardBits: Int { 16 }
    public var facilityRange: ClosedRange<Int> { 0...((1 << facilityBits) - 1) }
    public var cardRange: ClosedRange<Int> { 0...((1 << cardBits) - 1) }
    /// What the `config_error` event says `KIOSK_WIEGAND_FACILITY` accepts in this format.
    public var facilityExpected: String { "a decimal facility code from 0 to \(facilityRange.upperBound) (\(facilityBits) bits in the \(rawValue)-bit format)" }
}

/// `KIOSK_WIEGAND_PULSE_US` and `KIOSK_WIEGAND_INTERVAL_US`: what controllers take. Readers send
/// pulses of 20-100 us (50 is usual) and start a bit every 200 us to 20 ms (2 ms is usual).
public enum WiegandTiming {
    public static let defaultPulseMicroseconds = 50
    public static let pulseRange: ClosedRange<Int> = 20...100
    public static let pulseExpected = "a whole number of microseconds from 20 to 100"
    public static let defaultIntervalMicroseconds = 2000
    public static let intervalRange: ClosedRange<Int> = 200...20_000
    public static let intervalExpected = "a whole number of microseconds from 200 to 20000"
}

/// The facility code and card number a code's payload stands for.
public struct WiegandCredential: Equatable, Sendable {
    public var facility: Int
    public var card: Int

    public init(facility: Int, card: Int) {
        self.facility = facility
        self.card = card
    }
}

/// Why a code's payload is not sent (the `wiegand_skipped` event's `reason`).
public enum WiegandSkip: Error, Equatable, Sendable {
    /// Not `CARD` or `FACILITY:CARD` in decimal digits.
    case notANumber
    case facilityTooBig(facility: String, format: WiegandFormat)
    case cardTooBig(card: String, format: WiegandFormat)

    public var reason: String {
        switch self {
        case .notANumber:
            return "the payload is not a decimal card number (CARD or FACILITY:CARD, digits only)"
        case .facilityTooBig(let f, let format):
            return "facility \(f) does not fit the \(format.rawValue)-bit format (\(format.facilityBits) bits: 0-\(format.facilityRange.upperBound))"
        case .cardTooBig(let c, let format):
            return "card \(c) does not fit the \(format.rawValue)-bit format (\(format.cardBits) bits: 0-\(format.cardRange.upperBound))"
        }
    }
}

/// A frame ready for the wire: its bits, parities included, first bit first.
public struct WiegandFrame: Equatable, Sendable, CustomStringConvertible {
    public let format: WiegandFormat
    public let credential: WiegandCredential
    public let bits: [Bool]

    /// Builds the frame of a credential that fits the format (nil when it does not).
    public init?(_ credential: WiegandCredential, format: WiegandFormat) {
        guard format.facilityRange.contains(credential.facility), format.cardRange.contains(credential.card) else { return nil }
        self.format = format
        self.credential = credential
        var data: [Bool] = []
        for i in stride(from: format.facilityBits - 1, through: 0, by: -1) { data.append(credential.facility >> i & 1 == 1) }
        for i in stride(from: format.cardBits - 1, through: 0, by: -1) { data.append(credential.card >> i & 1 == 1) }
        let half = data.count / 2
        let onesFirst = data[..<half].filter { $0 }.count
        let onesSecond = data[half...].filter { $0 }.count
        bits = [onesFirst % 2 == 1] + data + [onesSecond % 2 == 0]
    }

    /// "0 00010010 1001000001100011 1": parity, facility, card, parity (for `kiosk check` and
    /// `kiosk doctor`).
    public var grouped: String {
        let text = bits.map { $0 ? "1" : "0" }
        let f = format.facilityBits
        return [text[0], text[1...f].joined(), text[(f + 1)...(f + format.cardBits)].joined(), text[bits.count - 1]]
            .joined(separator: " ")
    }

    public var description: String { bits.map { $0 ? "1" : "0" }.joined() }
}

public enum Wiegand {
    /// Reads a code's payload as `CARD` or `FACILITY:CARD` (decimal digits, leading zeros
    /// allowed; no sign, no blank, nothing else), with `defaultFacility` for a bare card number,
    /// and checks that both fit `format`. The payload is a stranger's: anything else is skipped,
    /// never guessed at.
    public static func credential(payload: [UInt8], defaultFacility: Int,
                                  format: WiegandFormat) -> Result<WiegandCredential, WiegandSkip> {
        let parts = payload.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return .failure(.notANumber) }
        guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }) else { return .failure(.notANumber) }
        let cardDigits = parts[parts.count - 1]
        let facilityText = parts.count == 2 ? digitsText(parts[0]) : String(defaultFacility)
        let cardText = digitsText(cardDigits)
        let facility = parts.count == 2 ? value(parts[0]) : defaultFacility
        let card = value(cardDigits)
        guard format.facilityRange.contains(facility) else { return .failure(.facilityTooBig(facility: facilityText, format: format)) }
        guard format.cardRange.contains(card) else { return .failure(.cardTooBig(card: cardText, format: format)) }
        return .success(WiegandCredential(facility: facility, card: card))
    }

    /// The frame for a payload, or why it is not sent.
    public static func frame(payload: [UInt8], defaultFacility: Int, format: WiegandFormat) -> Result<WiegandFrame, WiegandSkip> {
        credential(payload: payload, defaultFacility: defaultFacility, format: format).map { WiegandFrame($0, format: format)! }
    }

    /// The digits as given, shortened for the log when a stranger's payload is very long.
    private static func digitsText(_ digits: ArraySlice<UInt8>) -> String {
        let text = String(decoding: digits.prefix(24), as: UTF8.self)
        return digits.count > 24 ? text + "..." : text
    }

    /// Capped, so that any run of digits is a number that can only be too big, never an overflow.
    private static func value(_ digits: ArraySlice<UInt8>) -> Int {
        digits.reduce(0) { min($0 * 10 + Int($1 - 0x30), 1 << 40) }
    }
}
