// SPDX-License-Identifier: Apache-2.0
/// pretix's signed ticket secret, `pretix_sig1` (pretix `src/pretix/base/secrets.py`,
/// `Sig1TicketSecretGenerator`): the QR code's text is standard base64 (RFC 4648 4, padded) of
///
///     0x01 | payload length (2 bytes, big-endian) | signature length (2 bytes) | payload | signature
///
/// written backwards (pretix reverses it so that secrets do not all start alike: a secret ends in
/// `A`, the version byte's first six bits, and may start with `=`). The signature is Ed25519 over
/// exactly the payload bytes. This is only the framing, read strictly: the signature is checked
/// before the payload (`PretixTicket`) is read.
public struct PretixSecret: Equatable, Sendable {
    public static let version: UInt8 = 1
    /// Ed25519's signature.
    public static let signatureBytes = 64
    /// A secret of pretix is about 120 characters (a 9-character seed, three ids, two times); a
    /// longer text is not one (a QR code can hold 4 kB: nothing larger is decoded).
    public static let maxTextBytes = 1024

    public let payload: [UInt8]
    public let signature: [UInt8]

    /// Nil unless `text` is exactly a pretix_sig1 secret's form: 8 to 1024 characters of the
    /// base64 alphabet, padded, canonical (the text pretix would write for these bytes: the unused
    /// bits of the last character zero, so one ticket has one text and a revoked secret cannot
    /// come back spelled another way); version 1; the two lengths (plain big-endian 16-bit
    /// numbers) adding up to what follows, not a byte more or less; a 64-byte signature and a
    /// payload of at least one byte.
    public init?<C: Collection>(_ text: C) where C.Element == UInt8 {
        let count = text.count
        guard count >= 8, count <= PretixSecret.maxTextBytes, count % 4 == 0 else { return nil }
        let forwards = Array(text.reversed())
        guard forwards.first == UInt8(ascii: "A"), let raw = Base64.decode(forwards), raw.count >= 5 + 1 + PretixSecret.signatureBytes,
              Array(Base64.encode(raw).utf8) == forwards else { return nil }
        guard raw[0] == PretixSecret.version else { return nil }
        let payloadLength = Int(raw[1]) << 8 | Int(raw[2])
        let signatureLength = Int(raw[3]) << 8 | Int(raw[4])
        guard payloadLength >= 1, signatureLength == PretixSecret.signatureBytes, 5 + payloadLength + signatureLength == raw.count else {
            return nil
        }
        payload = Array(raw[5..<(5 + payloadLength)])
        signature = Array(raw[(5 + payloadLength)...])
    }

    /// The text pretix writes for these bytes (the tests' and the fuzzer's round trip).
    public static func text(payload: [UInt8], signature: [UInt8]) -> String {
        let raw = [version, UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff),
                   UInt8(signature.count >> 8 & 0xff), UInt8(signature.count & 0xff)] + payload + signature
        return String(Base64.encode(raw).reversed())
    }
}

/// Why a signed payload is not a ticket (the verifier says `malformed`; the tests say which).
public struct PretixTicketError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The payload of a pretix_sig1 secret once its signature has verified: the protobuf message
/// `Ticket` of pretix's `secretgenerators/pretix_sig1.proto` (proto3):
///
///     string seed = 1; int64 item = 2; int64 variation = 3; int64 subevent = 4;
///     optional int64 validFromUnixTime = 5; optional int64 validUntilUnixTime = 6;
///
/// read by a small strict reader: each known field at most once and with its own wire type
/// (varint for the numbers, length-delimited for the seed, which must be UTF-8), unknown fields
/// of the four defined wire types skipped, groups refused, a varint longer than 10 bytes or
/// beyond 64 bits refused, every length checked against what is left.
public struct PretixTicket: Equatable, Sendable {
    /// pretix's random part (9 characters); nobody reads it but the store's key includes it.
    public var seed: String
    /// The product's id (pretix's `item.pk`): always set.
    public var item: UInt64
    /// 0: the product has no variations.
    public var variation: UInt64
    /// The date of an event series (pretix's `subevent.pk`); 0: not a series.
    public var subevent: UInt64
    /// Unix seconds; nil: not set (pretix writes 0 for none, as its own scanners read it).
    public var validFrom: Int64?
    public var validUntil: Int64?

    public init(seed: String = "", item: UInt64, variation: UInt64 = 0, subevent: UInt64 = 0, validFrom: Int64? = nil, validUntil: Int64? = nil) {
        self.seed = seed; self.item = item; self.variation = variation; self.subevent = subevent
        self.validFrom = validFrom; self.validUntil = validUntil
    }

    /// A payload is a few dozen bytes; this bounds the reader's work whatever the framing allows.
    public static let maxPayloadBytes = 512

    public init(payload: [UInt8]) throws(PretixTicketError) {
        guard payload.count <= PretixTicket.maxPayloadBytes else { throw PretixTicketError("a payload of more than \(PretixTicket.maxPayloadBytes) bytes") }
        var reader = ProtobufReader(payload)
        var seen: UInt8 = 0
        var seed = "", item: UInt64 = 0, variation: UInt64 = 0, subevent: UInt64 = 0, from: Int64 = 0, until: Int64 = 0
        while !reader.atEnd {
            let (field, wire) = try reader.tag()
            if (1...6).contains(field) {
                let bit = UInt8(1) << UInt8(field - 1)
                guard seen & bit == 0 else { throw PretixTicketError("field \(field) twice") }
                seen |= bit
                let wanted: ProtobufReader.WireType = field == 1 ? .lengthDelimited : .varint
                guard wire == wanted else { throw PretixTicketError("field \(field) with wire type \(wire.rawValue), not \(wanted.rawValue)") }
            }
            switch field {
            case 1:
                guard let text = String(validating: try reader.bytes(), as: UTF8.self) else { throw PretixTicketError("a seed that is not UTF-8") }
                seed = text
            case 2: item = try reader.varint()
            case 3: variation = try reader.varint()
            case 4: subevent = try reader.varint()
            case 5: from = Int64(bitPattern: try reader.varint())
            case 6: until = Int64(bitPattern: try reader.varint())
            default: try reader.skip(wire)
            }
        }
        // Ids are positive (a negative int64 is a 10-byte varint with the top bit set); a time
        // before 1970 is no ticket's.
        for (name, v) in [("item", item), ("variation", variation), ("subevent", subevent)] where v > UInt64(Int64.max) {
            throw PretixTicketError("a negative \(name)")
        }
        guard item > 0 else { throw PretixTicketError("no item") }
        guard from >= 0, until >= 0 else { throw PretixTicketError("a validity before 1970") }
        self.init(seed: seed, item: item, variation: variation, subevent: subevent,
                  validFrom: from > 0 ? from : nil, validUntil: until > 0 ? until : nil)
    }
}

/// The bounded protobuf wire-format reader `PretixTicket` needs (protobuf.dev, "Encoding"): tags,
/// varints, length-delimited bytes, and skipping what it does not know. Never reads past the end.
public struct ProtobufReader {
    public enum WireType: UInt8, Sendable {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, startGroup = 3, endGroup = 4, fixed32 = 5
    }

    private let data: [UInt8]
    private var at = 0

    public init(_ data: [UInt8]) { self.data = data }

    public var atEnd: Bool { at >= data.count }

    /// A varint of at most 10 bytes whose value fits 64 bits: the 10th byte, if any, is 0 or 1
    /// (anything else is a bit beyond the 64th, or an 11th byte to come).
    public mutating func varint() throws(PretixTicketError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < data.count else { throw PretixTicketError("a varint cut short") }
            let b = data[at]
            at += 1
            guard shift < 63 || b <= 1 else { throw PretixTicketError("a varint beyond 64 bits or 10 bytes") }
            value |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A field's number (1 to 2^29 - 1) and wire type; groups (deprecated) and the undefined wire
    /// types 6 and 7 are refused.
    public mutating func tag() throws(PretixTicketError) -> (field: UInt32, wire: WireType) {
        let t = try varint()
        guard t <= UInt64(UInt32.max) else { throw PretixTicketError("a tag beyond 32 bits") }
        let field = UInt32(t >> 3)
        guard field >= 1 else { throw PretixTicketError("field number 0") }
        guard let wire = WireType(rawValue: UInt8(t & 7)) else { throw PretixTicketError("wire type \(t & 7)") }
        guard wire != .startGroup, wire != .endGroup else { throw PretixTicketError("a group (wire type \(wire.rawValue))") }
        return (field, wire)
    }

    /// A length-delimited field's bytes (its length no more than what is left).
    public mutating func bytes() throws(PretixTicketError) -> ArraySlice<UInt8> {
        let n = try varint()
        guard n <= UInt64(data.count - at) else { throw PretixTicketError("a length of \(n) with \(data.count - at) bytes left") }
        let start = at
        at += Int(n)
        return data[start..<at]
    }

    /// Steps over a field of a type the reader does not know.
    public mutating func skip(_ wire: WireType) throws(PretixTicketError) {
        switch wire {
        case .varint: _ = try varint()
        case .lengthDelimited: _ = try bytes()
        case .fixed64, .fixed32:
            let n = wire == .fixed64 ? 8 : 4
            guard data.count - at >= n else { throw PretixTicketError("a fixed field cut short") }
            at += n
        case .startGroup, .endGroup: throw PretixTicketError("a group")
        }
    }
}

/// The checks of a ticket once its signature has verified and its payload is read, in the
/// order of a signed credential's: revoked, then the time when the ticket has one (with the
/// clock's state and the skew). Entries and antipassback need state (the verifier).
public enum TicketCheck {
    public static func ticket(_ t: PretixTicket, rules: CredentialRules, now: Int64, clockSynced: Bool, revoked: Bool) -> CredentialReason {
        if revoked { return .revoked }
        if t.validFrom != nil || t.validUntil != nil {
            if rules.requireSyncedClock && !clockSynced { return .clockNotSynchronized }
            if let from = t.validFrom, now < from &- rules.skewSeconds { return .notYetValid }
            if let until = t.validUntil, now > until &+ rules.skewSeconds { return .expired }
        }
        return .valid
    }
}
