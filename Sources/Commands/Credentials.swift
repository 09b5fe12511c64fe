// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Glibc
import Kiosk
import Platform
import Policy

/// What `run`, `check` and `doctor` make of `KIOSK_VERDICT=credentials` (issue 21): libcrypto
/// loaded, the trust directory, revocations and TOTP secrets read, the used-token store opened.
enum CredentialSetup {
    /// The verifier and its worker, or the exit status after the reasons were logged.
    static func start(_ c: Configuration, _ environment: [String: String], sources: CredentialSources? = nil, clock: ClockSynchronization? = nil,
                      logger: Logger) -> Result<CredentialWorker, ExitCode> {
        do {
            try Crypto.load()
        } catch {
            logger.error("credentials_unavailable", ["error": .text(String(describing: error)),
                                                     "hint": "install libssl3 (libssl3t64 on trixie): OpenSSL's libcrypto checks the signatures"])
            return .failure(ExitCode(ExitStatus.unavailable))
        }
        let (trust, problems) = CredentialFiles.load(c, environment, sources: sources)
        guard problems.isEmpty else {
            for p in problems { logger.error("config_error", ["var": .text(p.variable), "value": .text(p.value), "expected": .text(p.reason)]) }
            return .failure(ExitCode(ExitStatus.config))
        }
        let directory = UsedTokenStore.directory(environment)
        let store = UsedTokenStore(directory: directory)
        if let damage = store.damage {
            // Never a silent grant: the one-time credentials and rotating codes are denied until
            // an operator has looked at the file (and moved it away).
            logger.warning("credential_store_damaged", ["file": .text(store.path), "error": .text(damage),
                                                        "hint": "one-time credentials and rotating codes are denied (store full) until the file is repaired or moved away"])
        } else if let problem = writable(directory) {
            logger.error("credential_store_unavailable", ["directory": .text(directory), "error": .text(problem),
                                                          "hint": "the kiosk keeps used one-time credentials there: set STATE_DIRECTORY (systemd's StateDirectory=kiosk does) or make /var/lib/kiosk writable"])
            return .failure(ExitCode(ExitStatus.unavailable))
        }
        let verifier = CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: c.antipassbackS,
                                          trust: trust, store: store, clock: MonotonicClock(label: "kiosk.credential"),
                                          synchronization: clock ?? KernelClockSynchronization())
        logReloaded(trust, store: store, logger: logger, reason: "start")
        return .success(CredentialWorker(verifier: verifier))
    }

    struct ExitCode: Error {
        let status: Int32
        init(_ s: Int32) { status = s }
    }

    /// The reload step (SIGHUP): the files read again; on a problem what was trusted stays.
    static func reloadStep(_ c: Configuration, _ environment: [String: String], verifier: CredentialVerifier, logger: Logger,
                           sources: @escaping @Sendable () -> CredentialSources? = { nil })
        -> @Sendable () throws -> String {
        // Read-only after start: the configuration is never changed once the kiosk runs.
        nonisolated(unsafe) let c = c
        return {
            let (trust, problems) = CredentialFiles.load(c, environment, sources: sources())
            guard problems.isEmpty else {
                for p in problems {
                    logger.warning("credentials_reload_failed", ["var": .text(p.variable), "value": .text(p.value), "error": .text(p.reason),
                                                                 "kept": "the keys, revocations, secrets and rules read before"])
                }
                throw CredentialReloadFailure(problems.map { "\($0.variable): \($0.reason)" }.joined(separator: "; "))
            }
            verifier.reload(trust)
            logReloaded(trust, store: verifier.store, logger: logger, reason: "reload")
            return "keys=\(trust.keys.count) ticket_keys=\(trust.ticketKeys.count) revoked=\(trust.revoked.count) holders=\(trust.secrets.count)"
                + (trust.access.map { " " + $0.summary } ?? "")
        }
    }

    static func logReloaded(_ trust: CredentialTrust, store: UsedTokenStore, logger: Logger, reason: String) {
        logger.info("credentials_reloaded", ["keys": .int(trust.keys.count), "ticket_keys": .int(trust.ticketKeys.count), "revoked": .int(trust.revoked.count),
                                             "holders": .int(trust.secrets.count), "store": .int(store.count), "reason": .text(reason),
                                             "rules": .text(trust.access.map(\.summary) ?? "none")])
    }

    /// issue 35: where the credentials' files are read (a kept bundle verified again with the site
    /// key, as `run` does at start), and for `check` and `doctor` what is in force: the bundle
    /// (nil: none), why a kept one is not used, or why the site key cannot be read.
    static func bundleSources(_ c: Configuration, _ environment: [String: String])
        -> (sources: CredentialSources, bundle: SiteBundleStore.Kept?, problem: String?, keyProblem: String?) {
        guard let path = c.siteKey else { return (CredentialSources(c), nil, nil, nil) }
        let key: SiteKey
        do { key = try SiteKey(path: path) } catch { return (CredentialSources(c), nil, nil, "\(path): \(error)") }
        let (kept, problem) = SiteBundleStore(directory: UsedTokenStore.directory(environment)).loadKept(key: key)
        let sources = kept.map { CredentialSources(c, bundle: $0.bundle, folder: $0.folder) } ?? CredentialSources(c)
        return (sources, kept, problem, nil)
    }

    /// `kind: path (bundle vN)` or `(configured)`, a line each.
    static func inForceLines(_ sources: CredentialSources) -> [String] {
        sources.inForce.map { "\($0.kind): \($0.path) " + ($0.bundle.map { "(bundle v\($0))" } ?? "(configured)") }
    }

    /// Why the store's folder cannot take the store's file, or nil when it can.
    static func writable(_ directory: String) -> String? {
        Glibc.access(directory, W_OK) == 0 ? nil : "\(directory): \(Errno.current.message)"
    }

    /// `kiosk doctor`'s lines: the clock, each key, the revocation list, the TOTP holders (how
    /// many: never a secret), the store.
    static func doctor(_ c: Configuration, _ environment: [String: String]) -> [Doctor.Check] {
        guard c.verdict == .credentials else { return [] }
        var checks: [Doctor.Check] = []
        func add(_ v: Doctor.Verdict, _ subject: String, _ detail: String) { checks.append(Doctor.Check(verdict: v, subject: subject, detail: detail)) }
        do {
            try Crypto.load()
            add(.pass, "crypto", "\(Crypto.library): \(Crypto.version ?? "?")")
        } catch {
            add(.fail, "crypto", "\(error): install libssl3 (libssl3t64 on trixie)")
        }
        // issue 35: the site's bundle in force, and so where each kind of file is read.
        let site = bundleSources(c, environment)
        // issue 44: the clock's source and floor (the bundle's `issued` among the floor's sources).
        let (clockChecks, clock) = ClockSetup.doctor(c, environment, bundleIssued: site.bundle?.bundle.issued)
        checks += clockChecks
        let synced = clock.judgesTime
        if let k = site.keyProblem { add(.fail, "bundle", "KIOSK_SITE_KEY=\(k): the kiosk will not start") }
        if let p = site.problem { add(.warn, "bundle", "the kept bundle is not used: \(p); the configured files are") }
        if let kept = site.bundle {
            add(.pass, "bundle", "version \(kept.bundle.version) in force (signed \(kept.bundle.issued), verified with \(c.siteKey ?? "")), in \(kept.folder): "
                + kept.bundle.files.map(\.name).joined(separator: ", "))
        } else if c.siteKey != nil && site.keyProblem == nil {
            add(.pass, "bundle", "no bundle taken yet: the configured files are in force")
        }
        if c.siteKey != nil { for line in inForceLines(site.sources) { add(.pass, "bundle", "in force: " + line) } }
        // A door behind the site: the bundle file holds a newer version than the one in force.
        if let file = c.bundleFile, let path = c.siteKey, let key = try? SiteKey(path: path) {
            do {
                if let bytes = try SmallFile.read(file, limit: SiteBundle.maxBytes) {
                    let waiting = try key.open(bytes)
                    let inForce = site.bundle?.bundle.version ?? 0
                    if waiting.version > inForce {
                        add(.warn, "bundle", "\(file) holds version \(waiting.version), above the one in force (\(inForce == 0 ? "none" : String(inForce))): taken at the next start or SIGHUP, or refused (the bundle events say why)")
                    } else {
                        add(.pass, "bundle", "\(file) holds version \(waiting.version), verified")
                    }
                }
            } catch {
                add(.fail, "bundle", "\(file): \(error)")
            }
        }
        let sources = site.sources
        let trustDir = sources.trustKeysDir
        let (keys, problems) = TrustDirectory.load(trustDir)
        for k in keys { add(.pass, "trust", "kid \(k.kidText): \(k.key.kind.rawValue) key in \(trustDir)/\(k.file)") }
        for p in problems { add(.fail, "trust", "\(trustDir): \(p)") }
        if keys.isEmpty && problems.isEmpty { add(.warn, "trust", "\(trustDir) holds no key (KID.pem): no signed credential can be granted") }
        // issue 34: the events' keys for their tickets (name, type, how the file holds it).
        let ticketDir = sources.ticketKeysDir
        let tickets = TicketKeys.load(folder: ticketDir)
        for k in tickets.keys {
            add(.pass, "pretix", "event \(k.name): \(k.key.kind.rawValue) key (\(k.form)) in \(ticketDir)/\(k.file)")
        }
        // A problem names its file as `pretix/NAME.pem`, beside the folder that holds `pretix/`.
        let ticketParent = ticketDir.hasSuffix("/" + TicketKeys.folderName) ? String(ticketDir.dropLast(TicketKeys.folderName.count + 1)) : ticketDir
        for p in tickets.problems { add(.fail, "pretix", "\(ticketParent)/\(p)") }
        if tickets.keys.isEmpty && tickets.problems.isEmpty {
            add(.pass, "pretix", "\(ticketDir): no event's key (pretix/NAME.pem): event tickets are denied (unknown key)")
        }
        switch Result(catching: { try CredentialFiles.revokedCount(sources.revokedFile) }) {
        case .success(nil): add(.pass, "revoked", "\(sources.revokedFile) does not exist: nothing revoked")
        case .success(let list?): add(.pass, "revoked", "\(sources.revokedFile): \(list) revoked")
        case .failure(let e): add(.fail, "revoked", "\(e)")
        }
        if let totp = CredentialFiles.totpPath(c, environment) {
            let (trust, problems) = CredentialFiles.load(c, environment, sources: sources)
            if let p = problems.first(where: { $0.variable == "KIOSK_TOTP_FILE" }) {
                add(.fail, "totp", p.description)
            } else {
                add(.pass, "totp", "\(totp): \(trust.secrets.count) holders (secrets not shown)")
            }
        }
        // issue 33: the door's rules, the zone they are read in, the closed days ahead.
        if let path = sources.accessFile {
            do {
                let access = try DoorRules.load(path, holidaysFile: sources.holidaysFile)
                let now = LocalTime.wallClock(unixSeconds())
                let zone = environment["TZ"].map { "TZ=\($0)" } ?? "the system's zone (/etc/localtime)"
                add(.pass, "access", "\(path): \(access.summary); local time \(now.weekday.name) \(now) in \(zone)")
                if access.rules.holidaysFile != nil {
                    let ahead = (0..<30).map { now.date.adding(days: $0) }.filter(access.holidays.contains)
                    add(.pass, "holidays", "closed days in the next 30 days: " + (ahead.isEmpty ? "none" : ahead.map(\.description).joined(separator: ", ")))
                }
                if !synced && access.rules.allows.contains(where: { $0.schedule != AccessRules.always }) {
                    add(.warn, "access", "the clock " + (clock.isBehind ? "is behind the floor" : "is not synchronized") + ": only 'always' opens until it is")
                }
            } catch {
                add(.fail, "access", "\(path): \(error)")
            }
        }
        let store = UsedTokenStore(directory: UsedTokenStore.directory(environment))
        if let damage = store.damage {
            add(.fail, "store", "\(store.path) is damaged (\(damage)): one-time credentials and rotating codes are denied until it is repaired or moved away")
        } else if let problem = writable(UsedTokenStore.directory(environment)) {
            add(.fail, "store", "\(problem): the kiosk will not start in credentials mode")
        } else {
            add(.pass, "store", "\(store.path): \(store.count) of \(store.capacity) used tokens")
        }
        return checks
    }
}

/// Why a reload kept the credentials read before (its text goes into `reload_failed` and the
/// `reload` command's answer).
struct CredentialReloadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
