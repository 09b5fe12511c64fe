// SPDX-License-Identifier: Apache-2.0
import Crypto
import Glibc
import Platform
import Policy

/// `KIOSK_SITE_KEY`: the site's own public key, a PEM file (EC P-256 or Ed25519), and
/// the check of a bundle with it: the envelope, the algorithm against the key's kind, the
/// signature over the exact bytes, and only then the payload.
public struct SiteKey: @unchecked Sendable {
    public let path: String
    public let key: PublicKey

    public init(path: String) throws {
        try Crypto.load()
        guard let pem = try SmallFile.read(path, limit: 65_536) else { throw SmallFile.Failure(description: "\(path): no such file") }
        try self.init(pem: pem, path: path)
    }

    /// A key already read (`path`: what the log calls it).
    public init(pem: [UInt8], path: String) throws {
        try Crypto.load()
        self.path = path
        key = try PublicKey(pem: pem)
    }

    public func open(_ bytes: [UInt8]) throws(SiteBundle.Refusal) -> SiteBundle {
        let envelope = try SiteBundle.envelope(bytes)
        let expected = SiteBundle.algorithm(forEd25519: key.kind == .ed25519)
        guard envelope.algorithm == expected else {
            throw SiteBundle.Refusal(.unknownKey, "signed with \(envelope.algorithm.name); the site key \(path) is \(key.kind.rawValue) (\(expected.name))")
        }
        let verified: Bool
        do {
            verified = try key.verify(message: envelope.toBeSigned, signature: envelope.signature)
        } catch {
            throw SiteBundle.Refusal(.signature, String(describing: error))
        }
        guard verified else { throw SiteBundle.Refusal(.signature, "the signature does not verify with the site key \(path)") }
        return try SiteBundle(verifiedPayload: envelope.payload)
    }
}

/// The bundles kept under `$STATE_DIRECTORY`: `bundles/vN/` holds a bundle's files and
/// its own bytes (`bundle.cose`, so that a restart verifies it again), and the symlink `bundle`
/// names the one in force. A new one is written whole beside it (`bundles/vN.tmp/`, each file
/// fsynced), checked, renamed to `bundles/vN`, and the symlink is replaced in one rename(2) (the
/// folder fsynced): a SIGKILL at any moment leaves the old set or the new one, never a part.
public final class SiteBundleStore: @unchecked Sendable {
    public static let linkName = "bundle"
    public static let folderName = "bundles"
    public static let envelopeName = "bundle.cose"

    public struct Kept: Sendable {
        public let bundle: SiteBundle
        /// The folder its files are in (`…/bundles/vN`).
        public let folder: String
    }

    public let directory: String
    public var link: String { directory + "/" + SiteBundleStore.linkName }
    public var folder: String { directory + "/" + SiteBundleStore.folderName }
    /// A test's hook (TEST_KIOSK_BUNDLE_STEP_MS, never set in service): a pause after each step of
    /// an apply, so that a test can kill the kiosk between any two.
    public var stepPauseMs = 0

    public init(directory: String) {
        self.directory = directory
    }

    /// The bundle in force, verified again with `key` and its files found as it says; nil: none
    /// (the configured files are used). A kept bundle that does not verify or whose files differ
    /// from what it signed is not used: the reason is returned to be said.
    public func loadKept(key: SiteKey) -> (kept: Kept?, problem: String?) {
        let target: String
        switch linked {
        case .success(nil): return (nil, nil)
        case .success(let t?): target = t
        case .failure(let e): return (nil, e.description)
        }
        guard target.hasPrefix(SiteBundleStore.folderName + "/v"), let version = UInt64(target.dropFirst(SiteBundleStore.folderName.count + 2)) else {
            return (nil, "\(link) names \(target), not a kept bundle")
        }
        let dir = directory + "/" + target
        do {
            guard let bytes = try SmallFile.read(dir + "/" + SiteBundleStore.envelopeName, limit: SiteBundle.maxBytes) else {
                return (nil, "\(dir)/\(SiteBundleStore.envelopeName): no such file")
            }
            let bundle: SiteBundle
            do { bundle = try key.open(bytes) } catch { return (nil, "\(dir): no longer verifies (\(error))") }
            guard bundle.version == version else { return (nil, "\(dir) holds version \(bundle.version)") }
            for f in bundle.files {
                guard try SmallFile.read(dir + "/" + f.name, limit: SiteBundle.maxBytes) == f.bytes else {
                    return (nil, "\(dir)/\(f.name) differs from what the bundle signed")
                }
            }
            return (Kept(bundle: bundle, folder: dir), nil)
        } catch {
            return (nil, String(describing: error))
        }
    }

    /// What the symlink names (`bundles/vN`), nil when there is none.
    public var linked: Result<String?, SmallFile.Failure> {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = readlink(link, &buffer, buffer.count - 1)
        guard n > 0 else { return errno == ENOENT ? .success(nil) : .failure(SmallFile.Failure(description: "\(link): \(Errno.current.message)")) }
        return .success(String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Writes `bundle` (whose bytes are `bytes`) beside the one in force, lets `check` load it from
    /// there as the kiosk would (a problem: refused `file`, nothing changed), then switches to it.
    public func apply(_ bundle: SiteBundle, bytes: [UInt8], check: (String) -> String?) throws(SiteBundle.Refusal) -> Kept {
        let final = folder + "/v\(bundle.version)"
        let temporary = final + ".tmp"
        do {
            try makeFolder(folder)
            try removeTree(temporary)
            try makeFolder(temporary)
            pause()
            for f in bundle.files {
                // The name is from the list (SiteBundle.kind): at most two folders, known names.
                var parent = temporary
                for part in f.name.split(separator: "/").dropLast() {
                    parent += "/" + part
                    try makeFolder(parent)
                }
                // The pins' hashes can be guessed offline with time: readable by the kiosk alone.
                try SmallFile.replace(temporary + "/" + f.name, with: f.bytes, mode: f.kind == .pins ? 0o600 : 0o644)
                pause()
            }
            try SmallFile.replace(temporary + "/" + SiteBundleStore.envelopeName, with: bytes, mode: 0o644)
            pause()
        } catch {
            try? removeTree(temporary)
            throw SiteBundle.Refusal(.file, "cannot be kept in \(folder): \(error)")
        }
        if let problem = check(temporary) {
            try? removeTree(temporary)
            throw SiteBundle.Refusal(.file, problem)
        }
        do {
            try removeTree(final)
            guard rename(temporary, final) == 0 else { throw SmallFile.Failure(description: "rename \(temporary): \(Errno.current.message)") }
            try syncFolder(folder)
            pause()
            // The switch: a symlink at a temporary name renamed over the one in force.
            let next = link + ".new"
            _ = unlink(next)
            guard symlink(SiteBundleStore.folderName + "/v\(bundle.version)", next) == 0 else {
                throw SmallFile.Failure(description: "symlink \(next): \(Errno.current.message)")
            }
            guard rename(next, link) == 0 else { throw SmallFile.Failure(description: "rename \(next): \(Errno.current.message)") }
            try syncFolder(directory)
            pause()
        } catch {
            throw SiteBundle.Refusal(.file, "cannot be switched to in \(directory): \(error)")
        }
        removeOthers(keeping: "v\(bundle.version)")
        return Kept(bundle: bundle, folder: final)
    }

    /// Everything under `bundles/` but `keeping`: older bundles, and what a kill left half written.
    public func removeOthers(keeping: String?) {
        for name in Files.names(in: folder) ?? [] where name != keeping {
            try? removeTree(folder + "/" + name)
        }
    }

    private func pause() {
        if stepPauseMs > 0 { usleep(UInt32(stepPauseMs) * 1000) }
    }

    private func makeFolder(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw SmallFile.Failure(description: "mkdir \(path): \(Errno.current.message)") }
    }

    private func syncFolder(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SmallFile.Failure(description: "\(path): \(Errno.current.message)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SmallFile.Failure(description: "fsync \(path): \(Errno.current.message)") }
    }

    /// Removes a file or a folder with what it holds (no symlink is followed: lstat).
    private func removeTree(_ path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw SmallFile.Failure(description: "\(path): \(Errno.current.message)")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in Files.names(in: path) ?? [] { try removeTree(path + "/" + name) }
            guard rmdir(path) == 0 else { throw SmallFile.Failure(description: "rmdir \(path): \(Errno.current.message)") }
        } else {
            guard unlink(path) == 0 else { throw SmallFile.Failure(description: "unlink \(path): \(Errno.current.message)") }
        }
    }
}
