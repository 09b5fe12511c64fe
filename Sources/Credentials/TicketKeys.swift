// SPDX-License-Identifier: Apache-2.0
import Crypto
import Platform
import Policy

/// An event's public key for its pretix_sig1 tickets, from `$KIOSK_TRUST_DIR/pretix/`.
public struct TicketKey: @unchecked Sendable {
    /// The event's name at this door: the file's name without `.pem` (and a rotation's `.N`). The
    /// log calls a ticket `pretix:NAME:ITEM`.
    public let name: String
    public let key: PublicKey
    /// The file's name in the folder.
    public let file: String
    /// How the file holds the key: `PEM`, or `base64 of PEM` (pretix's API's `valid_keys`).
    public let form: String

    public init(name: String, key: PublicKey, file: String, form: String = "PEM") {
        self.name = name
        self.key = key
        self.file = file
        self.form = form
    }
}

/// `$KIOSK_TRUST_DIR/pretix/NAME.pem`: one Ed25519 public key a file, as PEM or as the base64 of
/// the PEM that pretix's REST API gives in an event's `valid_keys.pretix_sig1` (and keeps in its
/// settings). Several keys of one event (pretix rotates them): `NAME.pem`, `NAME.2.pem`, ... as in
/// the trust directory. Files not ending in `.pem` and hidden files are ignored; no folder: no
/// event tickets. Any other problem (not a key, not Ed25519, a name the log could not show) is
/// said for its file, as the trust directory's are.
public enum TicketKeys {
    public static let folderName = "pretix"

    public static func folder(trustDir: String) -> String { trustDir + "/" + folderName }

    public static func load(trustDir: String) -> (keys: [TicketKey], problems: [TrustDirectory.Problem]) {
        load(folder: folder(trustDir: trustDir))
    }

    /// The keys of the folder `dir` itself (a site bundle's `trust/pretix`).
    public static func load(folder dir: String) -> (keys: [TicketKey], problems: [TrustDirectory.Problem]) {
        guard let names = Files.names(in: dir) else {
            return Files.exists(dir) ? ([], [TrustDirectory.Problem(file: dir, reason: "cannot read the folder")]) : ([], [])
        }
        var keys: [TicketKey] = []
        var problems: [TrustDirectory.Problem] = []
        for file in names.sorted() where file.hasSuffix(".pem") && !file.hasPrefix(".") {
            let shown = folderName + "/" + file
            guard let name = name(fromFileName: file) else {
                problems.append(TrustDirectory.Problem(file: shown, reason: "a NAME.pem of 1-64 letters, digits, '-', '_' or '.'"))
                continue
            }
            do {
                guard let bytes = try SmallFile.read(dir + "/" + file, limit: 65_536) else { continue }
                guard let (pem, form) = pem(bytes) else {
                    problems.append(TrustDirectory.Problem(file: shown, reason: "neither a PEM public key nor the base64 of one (pretix's valid_keys)"))
                    continue
                }
                let key = try PublicKey(pem: pem)
                guard key.kind == .ed25519 else {
                    problems.append(TrustDirectory.Problem(file: shown, reason: "a \(key.kind.rawValue) key: pretix_sig1 tickets are signed with Ed25519"))
                    continue
                }
                keys.append(TicketKey(name: name, key: key, file: file, form: form))
            } catch {
                problems.append(TrustDirectory.Problem(file: shown, reason: String(describing: error)))
            }
        }
        return (keys, problems)
    }

    /// `NAME.pem` or `NAME.N.pem`: NAME, when it is a name the log can show as it is.
    public static func name(fromFileName file: String) -> String? {
        var stem = Substring(file.dropLast(4))
        if let dot = stem.lastIndex(of: "."), stem.index(after: dot) < stem.endIndex,
           stem[stem.index(after: dot)...].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            stem = stem[..<dot]
        }
        return AccessRules.isGroup(stem) ? String(stem) : nil
    }

    /// The PEM a file holds: itself, or the base64 it is of (blanks and line breaks around and
    /// inside the base64 are allowed: an API's answer pasted with a line break).
    static func pem(_ bytes: [UInt8]) -> ([UInt8], String)? {
        let isBlank = { (b: UInt8) in b == 0x20 || b == 0x09 || b == 0x0a || b == 0x0d }
        let text = bytes.filter { !isBlank($0) }
        let begin = Array("-----BEGIN".utf8)
        if text.starts(with: begin) { return (bytes, "PEM") }
        guard let decoded = Base64.decode(text), decoded.starts(with: begin) else { return nil }
        return (decoded, "base64 of PEM")
    }
}
