// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Glibc
import Platform
import Policy

/// The site bundles a kiosk takes: from `KIOSK_BUNDLE_FILE` (at start, on SIGHUP and
/// the building's `reload`, and when the file changes) and from `KIOSK_SITE_TOPIC` (retained, at
/// each connection and whenever a new one comes). One at a time: each is verified with
/// `KIOSK_SITE_KEY`, read, compared with the version in force, written whole under
/// `$STATE_DIRECTORY` and checked there as the kiosk loads its files, then switched to; the
/// verifier then reads its files where `sources` says. Each outcome is a `bundle` event.
public final class SiteBundles: @unchecked Sendable {  // `kept`, `refusedVersion`, `pending*`, `stopping` guarded by `shared`
    public enum Source: String, Sendable {
        case file, topic
    }

    public let key: SiteKey
    public let store: SiteBundleStore
    private let configuration: Configuration
    private let environment: [String: String]
    private let logger: Logger
    /// One bundle at a time, whoever brings it.
    private let applying = Lock()
    private let shared = Condition()
    private var kept: SiteBundleStore.Kept?
    private var refusedVersion: UInt64?
    private var pendingTopic: [UInt8]?
    private var stopping = false
    private var running = false
    private var fileStamp: [Int]?
    private var onApplied: [@Sendable () -> Void] = []
    private var onStanding: (@Sendable (KioskState.BundleStanding) -> Void)?
    private var done = Condition()
    private var threadDone = true
    /// How often the bundle file is looked at.
    public static let pollNs: UInt64 = 1_000_000_000

    /// The site key read and the kept bundle verified again; nil and a `config_error` when the key
    /// cannot be read (exit 78).
    public init?(_ c: Configuration, _ environment: [String: String], logger: Logger) {
        guard let path = c.siteKey else { return nil }
        do {
            key = try SiteKey(path: path)
        } catch {
            logger.configError(ConfigError(variable: "KIOSK_SITE_KEY", value: path, expected: "the site's public key, a PEM file (EC P-256 or Ed25519): \(error)"))
            return nil
        }
        configuration = c
        self.environment = environment
        self.logger = logger
        store = SiteBundleStore(directory: UsedTokenStore.directory(environment))
        if let ms = environment["TEST_KIOSK_BUNDLE_STEP_MS"].flatMap({ Int($0) }), (0...10_000).contains(ms) { store.stepPauseMs = ms }
        let (found, problem) = store.loadKept(key: key)
        if let problem {
            logger.warning("bundle_kept_unusable", ["error": .text(problem), "kept": "the configured files, until a bundle is applied"])
        }
        kept = found
        // What a kill left half written goes; the linked folder stays even when it is not used now
        // (a site key given wrongly for one start must not cost the doors their bundle).
        if case .success(let target?) = store.linked, target.hasPrefix(SiteBundleStore.folderName + "/") {
            store.removeOthers(keeping: String(target.dropFirst(SiteBundleStore.folderName.count + 1)))
        } else {
            store.removeOthers(keeping: nil)
        }
        if let found {
            logger.info("bundle_in_force", ["version": .int(Int(found.bundle.version)), "folder": .text(found.folder),
                                            "files": .text(found.bundle.files.map(\.name).joined(separator: ","))])
        }
    }

    /// Where the credentials' files are read now.
    public var sources: CredentialSources {
        shared.lock_ { kept.map { CredentialSources(configuration, bundle: $0.bundle, folder: $0.folder) } ?? CredentialSources(configuration) }
    }

    public var standing: KioskState.BundleStanding {
        shared.lock_ { KioskState.BundleStanding(inForce: kept?.bundle.version, refused: refusedVersion) }
    }

    /// After an apply from the topic or the watched file: what reloads (the verifier's files, as
    /// SIGHUP does; the pins), each in the order added.
    public func afterApply(_ reload: @escaping @Sendable () -> Void) { shared.lock_ { onApplied.append(reload) } }
    /// The standing changed (for `<topic>/state`).
    public func report(_ standing: @escaping @Sendable (KioskState.BundleStanding) -> Void) { shared.lock_ { onStanding = standing } }

    /// A message on `KIOSK_SITE_TOPIC` (the MQTT thread): taken on the bundles' own thread, the
    /// newest only when several come before it gets to them.
    public func received(_ payload: [UInt8]) {
        guard !payload.isEmpty else { return }  // a retained bundle cleared: nothing to take
        shared.lock_ { pendingTopic = payload }
        shared.signal()
    }

    /// `KIOSK_BUNDLE_FILE` read now (start, SIGHUP); `reload`: the verifier reloads after an apply
    /// (false when the caller reloads it itself). What is in force afterwards, for the log.
    @discardableResult
    public func takeFile(reload: Bool) -> String {
        guard let path = configuration.bundleFile else { return holds }
        var st = stat()
        guard stat(path, &st) == 0 else {
            shared.lock_ { fileStamp = nil }
            logger.debug("bundle_file_missing", ["file": .text(path), "error": .text(Errno.current.message)])
            return holds
        }
        let stamp = SiteBundles.stamp(st)
        shared.lock_ { fileStamp = stamp }
        guard Int(st.st_size) <= SiteBundle.maxBytes else {
            refused(SiteBundle.Refusal(.tooLarge, "\(path): \(st.st_size) bytes, at most \(SiteBundle.maxBytes)"), source: .file)
            return holds
        }
        do {
            guard let bytes = try SmallFile.read(path, limit: SiteBundle.maxBytes) else { return holds }
            take(bytes, source: .file, reload: reload)
        } catch {
            refused(SiteBundle.Refusal(.file, "\(path) cannot be read: \(error)"), source: .file)
        }
        return holds
    }

    /// What `reloaded` says: the version in force.
    public var holds: String { standing.inForce.map { "version=\($0)" } ?? "version=none" }

    /// One bundle's bytes, from `source`: applied, refused, or the one in force again (nothing done).
    public func take(_ bytes: [UInt8], source: Source, reload: Bool = true) {
        applying.withLock {
            let bundle: SiteBundle
            do throws(SiteBundle.Refusal) {
                bundle = try key.open(bytes)
            } catch {
                return refused(error, source: source)
            }
            let inForce = shared.lock_ { kept?.bundle.version }
            switch SiteBundle.standing(of: bundle.version, inForce: inForce) {
            case .same:
                logger.debug("bundle_unchanged", ["version": .int(Int(bundle.version)), "source": .text(source.rawValue)])
                return
            case .older:
                return refused(SiteBundle.Refusal(.version, "version \(bundle.version) is not above \(inForce ?? 0), the one in force", version: bundle.version),
                               source: source)
            case .newer:
                break
            }
            let c = configuration, env = environment
            logger.debug("bundle_applying", ["version": .int(Int(bundle.version)), "source": .text(source.rawValue)])
            let applied: SiteBundleStore.Kept
            do throws(SiteBundle.Refusal) {
                applied = try store.apply(bundle, bytes: bytes) { folder in
                    let (_, problems) = CredentialFiles.load(c, env, sources: CredentialSources(c, bundle: bundle, folder: folder))
                    guard !problems.isEmpty else { return nil }
                    return problems.map { p in
                        let where_ = p.value.hasPrefix(folder + "/") ? String(p.value.dropFirst(folder.count + 1)) : p.value
                        return "\(where_): \(p.reason)"
                    }.joined(separator: "; ")
                }
            } catch {
                return refused(SiteBundle.Refusal(error.reason, error.detail, version: bundle.version), source: source)
            }
            let (standing, after) = shared.lock_ { () -> (KioskState.BundleStanding, [@Sendable () -> Void]) in
                kept = applied
                if let r = refusedVersion, r <= bundle.version { refusedVersion = nil }
                return (KioskState.BundleStanding(inForce: bundle.version, refused: refusedVersion), onApplied)
            }
            logger.log(.info, "bundle", fields: [("result", "applied"), ("version", .int(Int(bundle.version))), ("source", .text(source.rawValue)),
                                                 ("issued", .int(Int(bundle.issued))), ("was", .text(inForce.map(String.init) ?? "none")),
                                                 ("files", .text(bundle.files.map(\.name).joined(separator: ",")))])
            if reload { for step in after { step() } }
            shared.lock_ { onStanding }?(standing)
        }
    }

    private func refused(_ r: SiteBundle.Refusal, source: Source) {
        var fields: [(String, LogValue)] = [("result", "refused")]
        if let v = r.version { fields.append(("version", .int(Int(v)))) }
        fields += [("reason", .text(r.reason.rawValue)), ("source", .text(source.rawValue)), ("error", .text(r.detail))]
        logger.log(.warning, "bundle", fields: fields)
        // A verified bundle newer than the one in force that this door could not take: shown on
        // `<topic>/state`, so that a door behind the site is seen.
        guard let v = r.version, r.reason != .version else { return }
        let changed: KioskState.BundleStanding? = shared.lock_ {
            guard v > (kept?.bundle.version ?? 0), v > (refusedVersion ?? 0) else { return nil }
            refusedVersion = v
            return KioskState.BundleStanding(inForce: kept?.bundle.version, refused: v)
        }
        if let changed { shared.lock_ { onStanding }?(changed) }
    }

    /// The bundles' thread: a topic's bundle as it comes, the file when it changes.
    public func start() {
        shared.lock_ {
            running = true
            threadDone = false
        }
        startThread(name: "kiosk-bundle") { [self] in
            while true {
                let (payload, stop) = shared.lock_ { () -> ([UInt8]?, Bool) in
                    if pendingTopic == nil && !stopping { _ = shared.wait(untilMonotonicNs: monotonicNanoseconds() + SiteBundles.pollNs) }
                    defer { pendingTopic = nil }
                    return (pendingTopic, stopping)
                }
                if stop { break }
                if let payload { take(payload, source: .topic) }
                if let path = configuration.bundleFile, fileChanged(path) { takeFile(reload: true) }
            }
            Crypto.threadEnds()  // the bundles' signatures were checked on this thread
            done.lock_ { threadDone = true }
            done.broadcast()
        }
    }

    public func shutDown() {
        let wasRunning = shared.lock_ { () -> Bool in
            stopping = true
            return running
        }
        shared.broadcast()
        guard wasRunning else { return }
        done.lock_ { while !threadDone { done.wait() } }
    }

    private func fileChanged(_ path: String) -> Bool {
        var st = stat()
        let now = stat(path, &st) == 0 ? SiteBundles.stamp(st) : nil
        return shared.lock_ { now != nil && now != fileStamp }
    }

    private static func stamp(_ st: stat) -> [Int] {
        [Int(st.st_dev), Int(st.st_ino), Int(st.st_size), Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), Int(st.st_ctim.tv_sec), Int(st.st_ctim.tv_nsec)]
    }
}

extension Condition {
    func lock_<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
