// SPDX-License-Identifier: Apache-2.0
/// A PIN's hash as the pins file holds it: `scrypt$LOGN$R$P$SALT$KEY`, SALT and KEY base64url
/// without padding (interface.md 0.6). The bounds keep a hostile file from asking for a check
/// that takes minutes or gigabytes: LOGN 10-20, r 1-16, p 1-4, a salt of 8-64 bytes, a key of
/// 16-64.
public struct PINHash: Equatable, Sendable {
    public static let logNRange: ClosedRange<Int> = 10...20
    public static let rRange: ClosedRange<Int> = 1...16
    public static let pRange: ClosedRange<Int> = 1...4
    public static let saltRange: ClosedRange<Int> = 8...64
    public static let keyRange: ClosedRange<Int> = 16...64
    public static let form = "scrypt$LOGN$R$P$SALT$KEY (LOGN 10-20, R 1-16, P 1-4; SALT 8-64 bytes and KEY 16-64 bytes in base64url without padding)"

    public var logN: Int
    public var r: Int
    public var p: Int
    public var salt: [UInt8]
    public var key: [UInt8]

    public init(logN: Int, r: Int, p: Int, salt: [UInt8], key: [UInt8]) {
        self.logN = logN; self.r = r; self.p = p; self.salt = salt; self.key = key
    }

    public init?<S: StringProtocol>(_ text: S) {
        // Split on the scalar `$`, not on characters: a `$` a combining mark follows is still one.
        let f = String(text).unicodeScalars.split(separator: "$", omittingEmptySubsequences: false).map { Substring($0) }
        guard f.count == 6, f[0] == "scrypt",
              let logN = PINHash.small(f[1]), PINHash.logNRange.contains(logN),
              let r = PINHash.small(f[2]), PINHash.rRange.contains(r),
              let p = PINHash.small(f[3]), PINHash.pRange.contains(p),
              let salt = Base64URL.decode(f[4]), PINHash.saltRange.contains(salt.count),
              let key = Base64URL.decode(f[5]), PINHash.keyRange.contains(key.count) else { return nil }
        self.init(logN: logN, r: r, p: p, salt: salt, key: key)
    }

    public var text: String { "scrypt$\(logN)$\(r)$\(p)$\(Base64URL.encode(salt))$\(Base64URL.encode(key))" }

    static func small(_ s: Substring) -> Int? {
        guard (1...2).contains(s.utf8.count), s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), s.first != "0" else { return nil }
        return Int(s)
    }
}

/// A subject's line: its PIN's hash, and perhaps its duress code's.
public struct PinsEntry: Equatable, Sendable {
    public var subject: String
    public var hash: PINHash
    public var duress: PINHash?
    public var line: Int
    public init(subject: String, hash: PINHash, duress: PINHash? = nil, line: Int) {
        self.subject = subject; self.hash = hash; self.duress = duress; self.line = line
    }
}

/// A bad line of the pins file: its number and what the line may be (never the line itself: it
/// holds a hash).
public struct PinsFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// The pins file (`KIOSK_PINS_FILE`, interface.md 0.6): `SUBJECT HASH [duress=HASH]` a line, `#`
/// comments and blank lines; read whole or not at all. Lines and words are cut on Unicode scalars,
/// not characters: Swift's `"\r\n"` is one character (a file saved on Windows would be one line),
/// and a space after some scalars (U+0600) joins them into one character (the words would not part).
public struct PinsFile: Equatable, Sendable {
    public static let maxBytes = 1 << 20
    public static let maxSubjectBytes = 200

    public private(set) var entries: [String: PinsEntry] = [:]
    public init() {}

    public var count: Int { entries.count }
    public func entry(for subject: String) -> PinsEntry? { entries[subject] }

    public static func parse(_ text: String) throws(PinsFileError) -> PinsFile {
        guard text.utf8.count <= maxBytes else { throw PinsFileError(line: 0, reason: "a file of at most \(maxBytes) bytes") }
        var file = PinsFile()
        var number = 0
        for raw in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let words = raw.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map { Substring($0) }
            guard let first = words.first, first.unicodeScalars.first != "#" else { continue }
            func fail(_ why: String) -> PinsFileError { PinsFileError(line: number, reason: why) }
            guard (2...3).contains(words.count) else { throw fail("expected SUBJECT HASH [duress=HASH]") }
            let subject = String(first)
            guard subject.utf8.count <= maxSubjectBytes, subject.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                throw fail("a SUBJECT of at most \(maxSubjectBytes) bytes without control characters")
            }
            guard let hash = PINHash(words[1]) else { throw fail("the HASH as \(PINHash.form)") }
            var duress: PINHash?
            if words.count == 3 {
                guard words[2].hasPrefix("duress="), let d = PINHash(words[2].dropFirst(7)) else {
                    throw fail("the third word as duress=HASH, the HASH as \(PINHash.form)")
                }
                duress = d
            }
            if let earlier = file.entries[subject] { throw fail("the subject of line \(earlier.line) again") }
            file.entries[subject] = PinsEntry(subject: subject, hash: hash, duress: duress, line: number)
        }
        return file
    }
}

/// How the pins file is kept (interface.md 0.6): its hashes can be guessed offline with time, so
/// it is kept like a key: read by its owner and the kiosk's group only, written by its owner only,
/// and that owner root or the kiosk's user (`pin set` writes it 0600).
public enum PinsFileKeeping {
    /// What is wrong with a file of `mode` (its permission bits) owned by `owner`; nil: nothing.
    public static func problem(mode: UInt32, owner: String) -> String? {
        var problems: [String] = []
        let octal = "0" + String(mode & 0o777, radix: 8)
        if mode & 0o007 != 0 { problems.append("others may read it (mode \(octal)): chmod o-rwx") }
        if mode & 0o020 != 0 { problems.append("its group may write it (mode \(octal)): chmod g-w") }
        if owner != "root" && owner != "kiosk" { problems.append("it belongs to \(owner): chown root:kiosk") }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}
