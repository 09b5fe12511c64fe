// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Glibc
import Kiosk
import Platform
import Policy

/// `kiosk doctor`'s part for `KIOSK_VERDICT=credentials`.
extension CredentialSetup {
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
        let site = bundleSources(c, environment)
        // The clock's source and floor (the bundle's `issued` among the floor's sources).
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
        // The events' keys for their tickets (name, type, how the file holds it).
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
        // The holders of passes (public keys; each checked on the curve by OpenSSL).
        switch Result(catching: { try HolderKeys.load(sources.holdersFile) }) {
        case .success(nil): add(.pass, "holders", "\(sources.holdersFile) does not exist: no pass holder (form 2 passes are denied: unknown key)")
        case .success(let h?): add(.pass, "holders", "\(sources.holdersFile): \(h.count) pass holders (public keys)")
        case .failure(let e): add(.fail, "holders", "\(sources.holdersFile): \(e)")
        }
        if let totp = CredentialFiles.totpPath(c, environment) {
            let (trust, problems) = CredentialFiles.load(c, environment, sources: sources)
            if let p = problems.first(where: { $0.variable == "KIOSK_TOTP_FILE" }) {
                add(.fail, "totp", p.description)
            } else {
                add(.pass, "totp", "\(totp): \(trust.secrets.count) holders (secrets not shown)")
            }
        }
        // The door's rules, the zone they are read in, the closed days ahead.
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
        let store = UsedTokenStore(directory: UsedTokenStore.directory(environment), readOnly: true)
        // A state file that did not read, what the kiosk does about it, and what the operator can do.
        for r in store.recoveries where store.damage == nil { add(.warn, "store", "\(r.file): \(r.did)") }
        if let damage = store.damage {
            add(.fail, "store", "\(damage): one-time credentials, uses, ticket entries and rotating codes are denied (state damaged). "
                + "To start again knowingly with what the other file holds (a token it lost could open again), move the damaged file away: "
                + "sudo systemctl stop kiosk; sudo mv \(store.damageFile ?? store.path) \(store.damageFile ?? store.path).damaged; sudo systemctl start kiosk")
        } else if let problem = writable(UsedTokenStore.directory(environment)) {
            add(.fail, "store", "\(problem): the kiosk will not start in credentials mode")
        } else {
            let sizes = store.sizes
            add(.pass, "store", "\(store.path): \(store.count) of \(store.capacity) used tokens (snapshot \(sizes.snapshotBytes) bytes, log \(sizes.logRecords) records)")
        }
        return checks
    }
}
