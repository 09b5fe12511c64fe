// SPDX-License-Identifier: Apache-2.0
/// A CBOR data item (RFC 8949) as the credentials use them: no floats, no indefinite lengths.
public indirect enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    /// The integer -1 - n (major type 1).
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Pairs in the order encoded; keys are unique (the reader refuses a repeated one).
    case map([CBORPair])
    case tagged(UInt64, CBOR)
    case bool(Bool)
    case null
    case undefined

    /// The value as an Int when it is an integer that fits.
    public var int: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    /// The value of `key` in a map (nil: not a map, or no such key).
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }
}

public struct CBORPair: Equatable, Sendable {
    public var key: CBOR
    public var value: CBOR
    public init(_ key: CBOR, _ value: CBOR) {
        self.key = key
        self.value = value
    }
}

public struct CBORError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ d: String) { description = d }
}

/// A strict reader of untrusted CBOR: definite lengths only, integers and lengths in their
/// shortest form (RFC 8949 4.2.1's preferred serialization), no floats, no simple values but
/// false/true/null/undefined, text that is UTF-8, no repeated map key, nesting at most `maxDepth`,
/// at most `maxItems` items in all, every length checked against the bytes left before anything
/// is allocated, and nothing after the item.
public struct CBORReader {
    public static let defaultMaxDepth = 8
    public static let defaultMaxItems = 2048

    private let bytes: [UInt8]
    private var offset = 0
    private var items = 0
    private let maxDepth: Int
    private let maxItems: Int

    /// The one item `bytes` holds.
    public static func decode(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth, maxItems: Int = defaultMaxItems) throws -> CBOR {
        var r = CBORReader(bytes: bytes, maxDepth: maxDepth, maxItems: maxItems)
        let item = try r.item(depth: 0)
        guard r.offset == bytes.count else { throw CBORError("\(bytes.count - r.offset) bytes after the item") }
        return item
    }

    private init(bytes: [UInt8], maxDepth: Int, maxItems: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxItems = maxItems
    }

    private var remaining: Int { bytes.count - offset }

    private mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw CBORError("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The argument of a head (RFC 8949 3), refused unless in its shortest form.
    private mutating func argument(_ info: UInt8) throws -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24...27:
            let size = 1 << Int(info - 24)
            guard remaining >= size else { throw CBORError("truncated") }
            var v: UInt64 = 0
            for _ in 0..<size { v = v << 8 | UInt64(try byte()) }
            let shortest: UInt64 = info == 24 ? 24 : info == 25 ? 0x100 : info == 26 ? 0x1_0000 : 0x1_0000_0000
            guard v >= shortest else { throw CBORError("an argument not in its shortest form") }
            return v
        case 31: throw CBORError("an indefinite length")
        default: throw CBORError("a reserved additional information value \(info)")
        }
    }

    private mutating func length(_ info: UInt8) throws -> Int {
        let n = try argument(info)
        // Each byte of a string is a byte; each element at least one: more than is left is a lie.
        guard n <= UInt64(remaining) else { throw CBORError("a length of \(n) with \(remaining) bytes left") }
        return Int(n)
    }

    private mutating func item(depth: Int) throws -> CBOR {
        guard depth <= maxDepth else { throw CBORError("nested deeper than \(maxDepth)") }
        items += 1
        guard items <= maxItems else { throw CBORError("more than \(maxItems) items") }
        let head = try byte()
        let major = head >> 5, info = head & 0x1f
        switch major {
        case 0: return .unsigned(try argument(info))
        case 1: return .negative(try argument(info))
        case 2:
            let n = try length(info)
            defer { offset += n }
            return .bytes(Array(bytes[offset..<offset + n]))
        case 3:
            let n = try length(info)
            defer { offset += n }
            guard let s = String(validating: bytes[offset..<offset + n], as: UTF8.self) else { throw CBORError("text that is not UTF-8") }
            return .text(s)
        case 4:
            let n = try length(info)
            var elements: [CBOR] = []
            elements.reserveCapacity(n)
            for _ in 0..<n { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            let n = try length(info)
            guard n * 2 <= remaining else { throw CBORError("a map of \(n) pairs with \(remaining) bytes left") }
            var pairs: [CBORPair] = []
            var seen: [ArraySlice<UInt8>] = []
            for _ in 0..<n {
                let start = offset
                let key = try item(depth: depth + 1)
                let encoded = bytes[start..<offset]
                guard !seen.contains(encoded) else { throw CBORError("a repeated map key") }
                seen.append(encoded)
                pairs.append(CBORPair(key, try item(depth: depth + 1)))
            }
            return .map(pairs)
        case 6:
            let tag = try argument(info)
            return .tagged(tag, try item(depth: depth + 1))
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 25, 26, 27: throw CBORError("a floating-point number")
            default: throw CBORError("a simple value \(info)")
            }
        }
    }
}

/// The few CBOR encodings the kiosk writes: COSE's Sig_structure (RFC 9052 4.4), and items for
/// the tests.
public enum CBOREncoder {
    public static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let m = major << 5
        switch value {
        case 0..<24: return [m | UInt8(value)]
        case 24..<0x100: return [m | 24, UInt8(value)]
        case 0x100..<0x1_0000: return [m | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        case 0x1_0000..<0x1_0000_0000: return [m | 26] + (0..<4).reversed().map { UInt8((value >> (8 * UInt64($0))) & 0xff) }
        default: return [m | 27] + (0..<8).reversed().map { UInt8((value >> (8 * UInt64($0))) & 0xff) }
        }
    }

    public static func encode(_ item: CBOR) -> [UInt8] {
        switch item {
        case .unsigned(let n): return head(0, n)
        case .negative(let n): return head(1, n)
        case .bytes(let b): return head(2, UInt64(b.count)) + b
        case .text(let s): return head(3, UInt64(s.utf8.count)) + Array(s.utf8)
        case .array(let a): return a.reduce(head(4, UInt64(a.count))) { $0 + encode($1) }
        case .map(let m): return m.reduce(head(5, UInt64(m.count))) { $0 + encode($1.key) + encode($1.value) }
        case .tagged(let t, let v): return head(6, t) + encode(v)
        case .bool(let b): return [b ? 0xf5 : 0xf4]
        case .null: return [0xf6]
        case .undefined: return [0xf7]
        }
    }

    public static func int(_ v: Int64) -> CBOR { v >= 0 ? .unsigned(UInt64(v)) : .negative(UInt64(-1 - v)) }
}
