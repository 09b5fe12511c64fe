// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// Where the kiosk's OSDP secrets and settings come from and are kept.
///
/// The Secure Channel base key (SCBK), first found of: the key the controller set with KEYSET
/// (`$STATE_DIRECTORY/osdp-scbk`), `KIOSK_OSDP_KEY_FILE`, systemd's credential `osdp-scbk`
/// (`$CREDENTIALS_DIRECTORY/osdp-scbk`). Each is 32 hex digits (a newline after them allowed).
/// The key itself is never logged, never in an error message: only where it came from.
/// COMSET's address and baud rate are kept in `$STATE_DIRECTORY/osdp-comset` and win over the
/// environment's at the next start (the controller moved the kiosk there).
public struct OSDPStore: OSDPKeeper {
    public let stateDirectory: String
    public let keyFile: String?
    public let credentialsDirectory: String?

    public init(environment: [String: String], keyFile: String?) {
        let state = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
        stateDirectory = state ?? "/var/lib/kiosk"
        self.keyFile = keyFile
        credentialsDirectory = environment["CREDENTIALS_DIRECTORY"]
    }

    public var keptKeyPath: String { stateDirectory + "/osdp-scbk" }
    public var comsetPath: String { stateDirectory + "/osdp-comset" }
    public var credentialPath: String? { credentialsDirectory.map { $0 + "/osdp-scbk" } }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The key and where it came from ("kept from the controller's KEYSET in ...", ...); nil when
    /// there is none. Throws when a source exists but is not a key (the message names the file,
    /// never its content).
    public func loadKey() throws -> (key: [UInt8], source: String)? {
        var candidates: [(String, String)] = [(keptKeyPath, "kept from the controller's KEYSET in \(keptKeyPath)")]
        if let keyFile { candidates.append((keyFile, "KIOSK_OSDP_KEY_FILE \(keyFile)")) }
        if let credentialPath { candidates.append((credentialPath, "systemd credential osdp-scbk")) }
        for (path, source) in candidates {
            guard let bytes = OSDPStore.readSmallFile(path) else {
                if path != keptKeyPath && (path == keyFile) {
                    throw Failure(description: "\(path): cannot be read")
                }
                continue
            }
            guard let key = OSDPStore.parseKey(bytes) else {
                throw Failure(description: "\(path): not a key (32 hex digits expected)")
            }
            return (key, source)
        }
        return nil
    }

    /// 32 hex digits, an optional newline after them.
    public static func parseKey(_ bytes: [UInt8]) -> [UInt8]? {
        var text = bytes
        if text.last == 0x0A { text.removeLast() }
        if text.last == 0x0D { text.removeLast() }
        guard text.count == 32 else { return nil }
        return Hex.bytes(text)
    }

    /// The kept COMSET settings, if any (a torn or foreign file counts as none, and says so).
    public func loadComset() -> (address: Int, baud: Int)? {
        guard let bytes = OSDPStore.readSmallFile(comsetPath) else { return nil }
        let words = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count == 2, let a = Int(words[0]), let b = Int(words[1]), (0...126).contains(a),
              OSDPPeripheral.baudRates.contains(b) else { return nil }
        return (a, b)
    }

    public func keep(key: [UInt8]) -> Bool {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for b in key { text += [digits[Int(b >> 4)], digits[Int(b & 0xF)]] }
        text.append(0x0A)
        defer { for i in text.indices { text[i] = 0 } }
        return OSDPStore.writeDurably(text, to: keptKeyPath)
    }

    public func keep(address: Int, baud: Int) -> Bool {
        OSDPStore.writeDurably(Array("\(address) \(baud)\n".utf8), to: comsetPath)
    }

    static func readSmallFile(_ path: String) -> [UInt8]? {
        (try? SmallFile.read(path, limit: 128)) ?? nil
    }

    /// Mode 0600, durably (`SmallFile.replace`): after a power cut the file is the old one or the
    /// new one, never torn.
    static func writeDurably(_ bytes: [UInt8], to path: String) -> Bool {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        _ = mkdir(directory, 0o700)
        do {
            try SmallFile.replace(path, with: bytes, mode: 0o600)
            return true
        } catch {
            return false
        }
    }
}
