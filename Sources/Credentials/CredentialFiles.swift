// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy

/// Reads what `CredentialTrust` holds from the files the configuration names: at start (a
/// problem stops the kiosk, exit 78) and on SIGHUP (a problem keeps what was trusted before).
public enum CredentialFiles {
    /// The credential name systemd's `LoadCredential=` gives the TOTP secrets under.
    public static let totpCredentialName = "totp-secrets"

    public struct Problem: Error, CustomStringConvertible {
        public let variable: String
        public let value: String
        public let reason: String
        public var description: String { "\(variable)=\(value): \(reason)" }
    }

    /// How many values the revocation list holds; nil: no such file (nothing revoked).
    public static func revokedCount(_ path: String) throws -> Int? {
        guard let text = try SmallFile.read(path, limit: 4 << 20) else { return nil }
        return RevocationList.parse(String(decoding: text, as: UTF8.self)).count
    }

    /// `KIOSK_TOTP_FILE`, else `$CREDENTIALS_DIRECTORY/totp-secrets` when that exists.
    public static func totpPath(_ c: Configuration, _ environment: [String: String]) -> String? {
        if let f = c.totpFile { return f }
        guard let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty else { return nil }
        let p = dir + "/" + totpCredentialName
        return (try? SmallFile.read(p, limit: 1 << 20)) != nil ? p : nil
    }

    /// Everything, or the problems: a trust directory that cannot be read or holds a file that
    /// is not a key (its `pretix` folder too: an event's key that is not Ed25519), a TOTP file that cannot be read or has a bad line (its number, never its
    /// secret), a revocation file that cannot be read (missing is fine: none revoked). With no
    /// key and no TOTP secret at all nothing could ever be granted: a problem too.
    public static func load(_ c: Configuration, _ environment: [String: String]) -> (trust: CredentialTrust, problems: [Problem]) {
        var problems: [Problem] = []
        var trust = CredentialTrust()
        let totp = totpPath(c, environment)
        let (keys, list) = TrustDirectory.load(c.trustDir)
        trust.keys = keys
        // A missing folder is fine when rotating codes are the only credentials.
        let missing = list.count == 1 && list[0].file == c.trustDir && !Files.exists(c.trustDir)
        if !list.isEmpty && !(missing && totp != nil) {
            problems += list.map { Problem(variable: "KIOSK_TRUST_DIR", value: c.trustDir, reason: $0.description) }
        }
        // issue 34: events' keys for their tickets, in the trust directory's `pretix` folder.
        let (ticketKeys, ticketProblems) = TicketKeys.load(trustDir: c.trustDir)
        trust.ticketKeys = ticketKeys
        problems += ticketProblems.map { Problem(variable: "KIOSK_TRUST_DIR", value: c.trustDir, reason: $0.description) }
        do {
            if let text = try SmallFile.read(c.revokedFile, limit: 4 << 20) {
                trust.revoked = RevocationList.parse(String(decoding: text, as: UTF8.self))
            }
        } catch {
            problems.append(Problem(variable: "KIOSK_REVOKED_FILE", value: c.revokedFile, reason: String(describing: error)))
        }
        if let totp {
            do {
                guard let bytes = try SmallFile.read(totp, limit: 1 << 20) else { throw SmallFile.Failure(description: "\(totp): no such file") }
                switch TOTPSecret.parseFile(String(decoding: bytes, as: UTF8.self)) {
                case .success(let s): trust.secrets = s
                case .failure(let e): problems.append(Problem(variable: "KIOSK_TOTP_FILE", value: totp, reason: e.description))
                }
            } catch {
                problems.append(Problem(variable: "KIOSK_TOTP_FILE", value: totp, reason: String(describing: error)))
            }
        }
        if let path = c.accessFile {
            do {
                trust.access = try DoorRules.load(path)
            } catch {
                problems.append(Problem(variable: "KIOSK_ACCESS_FILE", value: path, reason: String(describing: error)))
            }
        }
        if problems.isEmpty && trust.keys.isEmpty && trust.secrets.isEmpty && trust.ticketKeys.isEmpty {
            problems.append(Problem(variable: "KIOSK_TRUST_DIR", value: c.trustDir,
                                    reason: "no issuer key (KID.pem) there, no event's key (pretix/NAME.pem) and no TOTP secret: no credential could be granted"))
        }
        return (trust, problems)
    }
}
