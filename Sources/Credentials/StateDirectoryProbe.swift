// SPDX-License-Identifier: Apache-2.0
import CPlatform
import Glibc
import Platform
import Policy

/// Finds out whether the state directory survives a power cut: statfs's f_type of the
/// folder, and for an overlay the upper layer named in /proc/self/mountinfo (`StateDurability`
/// decides). Both readings are given, so that a test can give others.
public struct StateDirectoryProbe: Sendable {
    /// statfs's f_type of a path (nil: it cannot be read).
    public var magicOf: @Sendable (String) -> Int64?
    /// /proc/self/mountinfo's text (nil: it cannot be read).
    public var mountinfo: @Sendable () -> String?

    public init(magicOf: @escaping @Sendable (String) -> Int64?, mountinfo: @escaping @Sendable () -> String?) {
        self.magicOf = magicOf
        self.mountinfo = mountinfo
    }

    public static let system = StateDirectoryProbe(
        magicOf: { path in
            let t = kiosk_statfs_type(path)
            return t < 0 ? nil : Int64(t)
        },
        mountinfo: { (try? SmallFile.read("/proc/self/mountinfo", limit: 4 << 20)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } })

    /// The verdict for `folder` (its real path; a folder not made yet is judged by its nearest parent).
    public func verdict(_ folder: String) -> StateDurability.Verdict {
        var path = folder
        while true {
            if let real = realpath(path, nil) {
                defer { free(real) }
                let resolved = String(cString: real)
                return StateDurability.judge(folder: resolved, magic: magicOf(resolved), mountinfo: mountinfo(), magicOf: magicOf)
            }
            guard let slash = path.lastIndex(of: "/"), path != "/" else {
                return StateDurability.judge(folder: folder, magic: nil, mountinfo: mountinfo(), magicOf: magicOf)
            }
            path = slash == path.startIndex ? "/" : String(path[..<slash])
        }
    }

    /// What a power cut loses when the state directory is in RAM (the `state_volatile` event's `lost`).
    public static let whatIsLost = "used one-time credentials, uses and ticket entries (they would open again), a lockdown, the mode, kept site bundles and the scans spooled for the broker"
}
