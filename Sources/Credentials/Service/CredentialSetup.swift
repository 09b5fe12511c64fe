// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Glibc
import Platform
import Policy

/// What `run`, `check` and `doctor` make of `KIOSK_VERDICT=credentials`: libcrypto loaded, the
/// trust directory, revocations and TOTP secrets read, the used-token store opened.
public enum CredentialSetup {
    /// The verifier and its worker, or the exit status after the reasons were logged.
    public static func start(_ c: Configuration, _ environment: [String: String], sources: CredentialSources? = nil, clock: ClockSynchronization? = nil, volatile: String? = nil,
                             monotonic: Clock, logger: Logger) -> Result<CredentialWorker, ExitCode> {
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
        // A state file that did not read, and what the store did (never a silent grant on
        // a store that forgot tokens: one that cannot be trusted refuses every claim).
        for r in store.recoveries {
            logger.log(store.damage != nil ? .error : .warning, "state_damaged", fields: [("file", .text(r.file)), ("did", .text(r.did))])
        }
        if store.damage == nil, let problem = writable(directory) {
            logger.error("credential_store_unavailable", ["directory": .text(directory), "error": .text(problem),
                                                          "hint": "the kiosk keeps used one-time credentials there: set STATE_DIRECTORY (systemd's StateDirectory=kiosk does) or make /var/lib/kiosk writable"])
            return .failure(ExitCode(ExitStatus.unavailable))
        }
        if let volatile, c.volatileState == .refuse { store.refuseWhenVolatile(volatile) }
        let verifier = CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: c.antipassbackS,
                                          trust: trust, store: store, clock: monotonic,
                                          synchronization: clock ?? KernelClockSynchronization())
        logReloaded(trust, store: store, logger: logger, reason: "start")
        return .success(CredentialWorker(verifier: verifier))
    }

    /// Whether the state directory survives a power cut, said once at start (`state_volatile`):
    /// the reason it does not, or nil (the demo keeps no state).
    static func stateVolatile(_ a: Assembly) -> String? {
        let folder = UsedTokenStore.directory(a.environment)
        guard !a.demo, case .volatile(let why) = StateDirectoryProbe.system.verdict(folder) else { return nil }
        a.logger.warning("state_volatile", ["folder": .text(folder), "why": .text(why), "lost": .text(StateDirectoryProbe.whatIsLost),
                                            "policy": .text(a.config.volatileState == .refuse
                                                ? "KIOSK_VOLATILE_STATE=refuse: one-time credentials, uses and ticket entries are denied (state volatile)"
                                                : "KIOSK_VOLATILE_STATE=accept: judged anyway")])
        return why
    }

    /// The site's bundles (credentials mode with `KIOSK_SITE_KEY`), before the broker: a retained
    /// one waits for its thread. Exit 78 when the site key does not read.
    static func bundles(_ a: Assembly) throws -> SiteBundles? {
        guard a.config.verdict == .credentials, a.config.siteKey != nil else { return nil }
        guard let bundles = SiteBundles(a.config, a.environment, logger: a.logger) else { throw ServiceExit(ExitStatus.config) }
        return bundles
    }

    /// The verifier on its own thread and the watch on the clock (credentials mode), before any
    /// line is requested (a bad trust directory is exit 78); SIGHUP and a new bundle reload what it
    /// trusts. Nil in other modes.
    static func assemble(_ a: Assembly, bundles: SiteBundles?, volatile: String?) throws -> (worker: CredentialWorker, clockWatch: ClockWatch?)? {
        guard a.config.verdict == .credentials else { return nil }
        // The clock's source and floor (the bundle's `issued` among the floor's sources).
        let clockWatch = a.demo ? nil : ClockSetup.watch(a, bundles: bundles)
        // The bundle file first (what it carries is what the verifier reads).
        bundles?.takeFile(reload: false)
        let worker: CredentialWorker
        switch start(a.config, a.environment, sources: bundles?.sources, clock: clockWatch, volatile: volatile, monotonic: a.clock, logger: a.logger) {
        case .success(let w): worker = w
        case .failure(let exit):
            clockWatch?.shutDown()
            throw ServiceExit(exit.status)
        }
        if let bundles { a.reloadables.add("site bundle") { bundles.takeFile(reload: false) } }
        let logger = a.logger
        let step = reloadStep(a.config, a.environment, verifier: worker.verifier, logger: logger) { bundles?.sources }
        a.reloadables.add("credentials", step)
        bundles?.afterApply {
            do {
                logger.info("reloaded", ["what": "credentials", "via": "bundle", "holds": .text(try step())])
            } catch {
                logger.error("reload_failed", ["what": "credentials", "via": "bundle", "error": .text(String(describing: error))])
            }
        }
        return (worker, clockWatch)
    }

    /// The clock's source and the site bundle in force go to the broker's state as they change;
    /// the watch and the bundles start.
    static func report(_ clockWatch: ClockWatch?, _ bundles: SiteBundles?, to fleet: FleetReporter?) {
        if let clockWatch {
            clockWatch.report { fleet?.clock(ClockSetup.stateText($0)) }
            clockWatch.start()
        }
        if let bundles {
            fleet?.bundle(bundles.standing)
            bundles.report { fleet?.bundle($0) }
            bundles.start()
        }
    }

    public struct ExitCode: Error {
        public let status: Int32
        init(_ s: Int32) { status = s }
    }

    /// The reload step (SIGHUP): the files read again; on a problem what was trusted stays.
    public static func reloadStep(_ c: Configuration, _ environment: [String: String], verifier: CredentialVerifier, logger: Logger,
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
            return "keys=\(trust.keys.count) ticket_keys=\(trust.ticketKeys.count) revoked=\(trust.revoked.count) holders=\(trust.secrets.count) pass_holders=\(trust.holders.count)"
                + (trust.access.map { " " + $0.summary } ?? "")
        }
    }

    public static func logReloaded(_ trust: CredentialTrust, store: UsedTokenStore, logger: Logger, reason: String) {
        logger.info("credentials_reloaded", ["keys": .int(trust.keys.count), "ticket_keys": .int(trust.ticketKeys.count), "revoked": .int(trust.revoked.count),
                                             "holders": .int(trust.secrets.count), "pass_holders": .int(trust.holders.count), "store": .int(store.count), "reason": .text(reason),
                                             "rules": .text(trust.access.map(\.summary) ?? "none")])
    }

    /// Where the credentials' files are read (a kept bundle verified again with the site
    /// key, as `run` does at start), and for `check` and `doctor` what is in force: the bundle
    /// (nil: none), why a kept one is not used, or why the site key cannot be read.
    public static func bundleSources(_ c: Configuration, _ environment: [String: String])
        -> (sources: CredentialSources, bundle: SiteBundleStore.Kept?, problem: String?, keyProblem: String?) {
        guard let path = c.siteKey else { return (CredentialSources(c), nil, nil, nil) }
        let key: SiteKey
        do { key = try SiteKey(path: path) } catch { return (CredentialSources(c), nil, nil, "\(path): \(error)") }
        let (kept, problem) = SiteBundleStore(directory: UsedTokenStore.directory(environment)).loadKept(key: key)
        let sources = kept.map { CredentialSources(c, bundle: $0.bundle, folder: $0.folder) } ?? CredentialSources(c)
        return (sources, kept, problem, nil)
    }

    /// `kind: path (bundle vN)` or `(configured)`, a line each.
    public static func inForceLines(_ sources: CredentialSources) -> [String] {
        sources.inForce.map { "\($0.kind): \($0.path) " + ($0.bundle.map { "(bundle v\($0))" } ?? "(configured)") }
    }

    /// Why the store's folder cannot take the store's file, or nil when it can.
    public static func writable(_ directory: String) -> String? {
        Glibc.access(directory, W_OK) == 0 ? nil : "\(directory): \(Errno.current.message)"
    }
}

/// Why a reload kept the credentials read before (its text goes into `reload_failed` and the
/// `reload` command's answer).
struct CredentialReloadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
