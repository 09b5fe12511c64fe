// SPDX-License-Identifier: Apache-2.0
import Crypto
import Platform
import Policy

/// An issuer's public key from the trust directory, with the kid it is trusted for.
public struct TrustedKey: @unchecked Sendable {
    public let kid: [UInt8]
    public let key: PublicKey
    /// The file's name in the trust directory.
    public let file: String

    public init(kid: [UInt8], key: PublicKey, file: String) {
        self.kid = kid
        self.key = key
        self.file = file
    }

    /// The kid as the `credential` event shows it: the text when printable, else `hex-HEX`.
    public var kidText: String { TrustDirectory.kidText(kid) }
}

/// `KIOSK_TRUST_DIR`: one PEM public key (EC P-256 or Ed25519) a file. `KID.pem` trusts the key
/// for the kid KID (its UTF-8 bytes); `hex-HEX.pem` for a binary kid. Several keys may share a
/// kid (a rotation): `KID.pem`, `KID.2.pem`, `KID.3.pem`, ... (a name ending in `.DIGITS` before
/// `.pem` drops that part; a kid that itself ends so is written in hex). Files not ending in
/// `.pem` and hidden files are ignored.
public enum TrustDirectory {
    public struct Problem: Error, CustomStringConvertible {
        public let file: String
        public let reason: String
        public var description: String { "\(file): \(reason)" }
    }

    /// The keys, or every file that could not be read as one (a directory that cannot be read is
    /// one problem naming it).
    public static func load(_ folder: String) -> (keys: [TrustedKey], problems: [Problem]) {
        guard let names = Files.names(in: folder) else {
            return ([], [Problem(file: folder, reason: "cannot read the folder")])
        }
        var keys: [TrustedKey] = []
        var problems: [Problem] = []
        for name in names.sorted() where name.hasSuffix(".pem") && !name.hasPrefix(".") {
            guard let kid = kid(fromFileName: name) else {
                problems.append(Problem(file: name, reason: "a hex- name that is not an even number of hex digits"))
                continue
            }
            do {
                guard let pem = try SmallFile.read(folder + "/" + name, limit: 65_536) else { continue }
                keys.append(TrustedKey(kid: kid, key: try PublicKey(pem: pem), file: name))
            } catch {
                problems.append(Problem(file: name, reason: String(describing: error)))
            }
        }
        return (keys, problems)
    }

    public static func kid(fromFileName name: String) -> [UInt8]? {
        var stem = Substring(name.dropLast(4))
        if let dot = stem.lastIndex(of: "."), stem[stem.index(after: dot)...].allSatisfy({ $0.isASCII && $0.isNumber }),
           stem.index(after: dot) < stem.endIndex {
            stem = stem[..<dot]
        }
        guard stem.hasPrefix("hex-") else { return stem.isEmpty ? nil : Array(stem.utf8) }
        guard let kid = Hex.bytes(Array(stem.dropFirst(4).utf8)), !kid.isEmpty else { return nil }
        return kid
    }

    public static func kidText(_ kid: [UInt8]) -> String {
        if !kid.isEmpty, kid.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) { return String(decoding: kid, as: UTF8.self) }
        return "hex-" + PayloadBytes.hex(kid)
    }
}
