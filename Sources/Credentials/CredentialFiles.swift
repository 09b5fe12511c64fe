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
    /// key and no TOTP secret at all nothing could ever be granted: a problem too. `sources`:
    /// where each kind is read (a site bundle's files in place of the configured ones).
    public static func load(_ c: Configuration, _ environment: [String: String], sources: CredentialSources? = nil) -> (trust: CredentialTrust, problems: [Problem]) {
        let sources = sources ?? CredentialSources(c)
        var problems: [Problem] = []
        var trust = CredentialTrust()
        let totp = totpPath(c, environment)
        let keysDir = sources.trustKeysDir
        let keysVariable = sources.variable(.trustKey, "KIOSK_TRUST_DIR")
        let (keys, list) = TrustDirectory.load(keysDir)
        trust.keys = keys
        // A missing folder is fine when rotating codes are the only credentials.
        let missing = list.count == 1 && list[0].file == keysDir && !Files.exists(keysDir)
        if !list.isEmpty && !(missing && totp != nil) {
            problems += list.map { Problem(variable: keysVariable, value: keysDir, reason: $0.description) }
        }
        // Events' keys for their tickets, in the trust directory's `pretix` folder.
        let (ticketKeys, ticketProblems) = TicketKeys.load(folder: sources.ticketKeysDir)
        trust.ticketKeys = ticketKeys
        problems += ticketProblems.map { Problem(variable: sources.variable(.eventKey, "KIOSK_TRUST_DIR"), value: sources.ticketKeysDir, reason: $0.description) }
        do {
            if let text = try SmallFile.read(sources.revokedFile, limit: 4 << 20) {
                trust.revoked = RevocationList.parse(String(decoding: text, as: UTF8.self))
            } else if sources.fromBundle.contains(.revoked) {
                throw SmallFile.Failure(description: "\(sources.revokedFile): no such file")
            }
        } catch {
            problems.append(Problem(variable: sources.variable(.revoked, "KIOSK_REVOKED_FILE"), value: sources.revokedFile, reason: String(describing: error)))
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
        // The holders of passes; a missing file is none (unless a bundle carries it).
        do {
            if let h = try HolderKeys.load(sources.holdersFile) {
                trust.holders = h
            } else if sources.fromBundle.contains(.holders) {
                throw SmallFile.Failure(description: "\(sources.holdersFile): no such file")
            }
        } catch {
            problems.append(Problem(variable: sources.variable(.holders, "KIOSK_HOLDERS_FILE"), value: sources.holdersFile, reason: String(describing: error)))
        }
        if let path = sources.accessFile {
            do {
                trust.access = try DoorRules.load(path, holidaysFile: sources.holidaysFile)
            } catch {
                problems.append(Problem(variable: sources.variable(.access, "KIOSK_ACCESS_FILE"), value: path, reason: String(describing: error)))
            }
        }
        if problems.isEmpty && trust.keys.isEmpty && trust.secrets.isEmpty && trust.ticketKeys.isEmpty && trust.holders.count == 0 {
            problems.append(Problem(variable: keysVariable, value: keysDir,
                                    reason: "no issuer key (KID.pem) there, no event's key (pretix/NAME.pem) and no TOTP secret: no credential could be granted"))
        }
        return (trust, problems)
    }
}

/// Where the credentials' files are read from: the configured ones, each kind a site
/// bundle carries replaced by the bundle's (`trust/*.pem` replaces the trust directory's keys as a
/// set, `trust/pretix/*.pem` the events' keys, `access` KIOSK_ACCESS_FILE, `holidays.ics` what
/// a `holidays` line reads, `revoked` KIOSK_REVOKED_FILE); kinds it does not carry stay as configured.
public struct CredentialSources: Equatable, Sendable {
    public var trustKeysDir: String
    public var ticketKeysDir: String
    public var revokedFile: String
    /// `KIOSK_HOLDERS_FILE`, or the bundle's `holders`.
    public var holdersFile: String
    /// `KIOSK_PINS_FILE`, or the bundle's `pins`.
    public var pinsFile: String
    public var accessFile: String?
    /// Read in place of the file a `holidays` line names; nil: the line's own.
    public var holidaysFile: String?
    /// The bundle in force (nil: none) and the kinds it carries.
    public var bundleVersion: UInt64?
    /// Its `issued` time (a source of the clock's floor).
    public var bundleIssued: Int64?
    public var bundleFolder: String?
    public var fromBundle: Set<SiteBundle.Kind> = []

    /// The configured files.
    public init(_ c: Configuration) {
        trustKeysDir = c.trustDir
        ticketKeysDir = TicketKeys.folder(trustDir: c.trustDir)
        revokedFile = c.revokedFile
        holdersFile = c.holdersFile
        pinsFile = c.pinsFile
        accessFile = c.accessFile
    }

    /// The configured files, the kinds `bundle` carries read from its `folder` instead.
    public init(_ c: Configuration, bundle: SiteBundle, folder: String) {
        self.init(c)
        bundleVersion = bundle.version
        bundleIssued = bundle.issued
        bundleFolder = folder
        fromBundle = Set(bundle.files.map(\.kind))
        if fromBundle.contains(.trustKey) { trustKeysDir = folder + "/trust" }
        if fromBundle.contains(.eventKey) { ticketKeysDir = folder + "/trust/" + TicketKeys.folderName }
        if fromBundle.contains(.revoked) { revokedFile = folder + "/revoked" }
        if fromBundle.contains(.holders) { holdersFile = folder + "/holders" }
        if fromBundle.contains(.pins) { pinsFile = folder + "/pins" }
        if fromBundle.contains(.access) { accessFile = folder + "/access" }
        if fromBundle.contains(.holidays) { holidaysFile = folder + "/holidays.ics" }
    }

    /// The name a problem is said under: the variable, or `bundle vN` for the bundle's files.
    func variable(_ kind: SiteBundle.Kind, _ configured: String) -> String {
        guard fromBundle.contains(kind), let v = bundleVersion else { return configured }
        return "bundle v\(v)"
    }

    /// For `check` and `doctor`: each kind and where it is read from.
    public var inForce: [(kind: String, path: String, bundle: UInt64?)] {
        func from(_ k: SiteBundle.Kind) -> UInt64? { fromBundle.contains(k) ? bundleVersion : nil }
        var out: [(String, String, UInt64?)] = [("keys", trustKeysDir, from(.trustKey)), ("event keys", ticketKeysDir, from(.eventKey)),
                                                ("revoked", revokedFile, from(.revoked)), ("holders", holdersFile, from(.holders)),
                                                ("pins", pinsFile, from(.pins))]
        if let a = accessFile { out.append(("access", a, from(.access))) }
        if let h = holidaysFile { out.append(("holidays", h, from(.holidays))) }
        return out
    }
}
