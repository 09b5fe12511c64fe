// SPDX-License-Identifier: Apache-2.0
/// Whether the state directory (/var/lib/kiosk) survives a power cut: a file system
/// in RAM (tmpfs, ramfs) or an overlay whose upper layer is in RAM (Raspberry Pi OS's read-only
/// root: `raspi-config`'s overlay file system) loses every used one-time token and a lockdown at
/// the next cut. The shell gives the file systems' magic numbers (statfs) and
/// /proc/self/mountinfo; this decides.
public enum StateDurability {
    public static let tmpfsMagic: Int64 = 0x0102_1994
    public static let ramfsMagic: Int64 = 0x8584_58F6
    public static let overlayMagic: Int64 = 0x794C_7630

    public enum Verdict: Equatable, Sendable {
        case durable
        /// Lost at a power cut: why (what the folder is on).
        case volatile(String)
        /// An overlay whose upper layer could not be found: said, not refused.
        case unknown(String)
    }

    static func inRAM(magic: Int64?, fsType: String?) -> String? {
        if magic == tmpfsMagic || fsType == "tmpfs" { return "tmpfs" }
        if magic == ramfsMagic || fsType == "ramfs" { return "ramfs" }
        return nil
    }

    /// `folder`'s verdict: `magic` is statfs's f_type for it; `mountinfo` the text of
    /// /proc/self/mountinfo; `magicOf` statfs's f_type of another path (nil: it cannot be read).
    public static func judge(folder: String, magic: Int64?, mountinfo: String?, magicOf: (String) -> Int64?) -> Verdict {
        let mount = mountinfo.flatMap { Mount.covering(folder, in: $0) }
        if let ram = inRAM(magic: magic, fsType: magic == nil ? mount?.fsType : nil) {
            return .volatile("\(folder) is on \(ram) (in RAM)")
        }
        guard magic == overlayMagic || (magic == nil && mount?.fsType == "overlay") else {
            return magic == nil && mount == nil ? .unknown("\(folder): its file system cannot be read") : .durable
        }
        guard let mount, let upper = mount.superOptions["upperdir"] else {
            return .unknown("\(folder) is on an overlay whose upper layer is not in /proc/self/mountinfo")
        }
        let upperMount = mountinfo.flatMap { Mount.covering(upper, in: $0) }
        let upperMagic = magicOf(upper)
        if let ram = inRAM(magic: upperMagic, fsType: upperMagic == nil ? upperMount?.fsType : nil) {
            return .volatile("\(folder) is on an overlay (\(mount.point)) whose upper layer \(upper) is on \(ram) (in RAM): a read-only root")
        }
        // The upper layer's path leads to an overlay from here: the layer was mounted where this
        // root cannot see it, by an initramfs that never moved it into the new root (raspi-config's
        // overlay file system before bookworm, `boot=overlay`: a tmpfs on the initramfs's /upper).
        // What it is on cannot be known; the safe choice is RAM (a container's root, whose upper
        // layer is on the host's disk, lands here too: KIOSK_VOLATILE_STATE=accept, or a volume).
        if upperMagic == overlayMagic || (upperMagic == nil && upperMount?.fsType == "overlay") {
            return .volatile("\(folder) is on an overlay (\(mount.point)) whose upper layer \(upper) is not visible here "
                             + "(mounted before the root was switched, as a read-only root's tmpfs is): taken as in RAM")
        }
        if upperMagic == nil && upperMount == nil {
            return .unknown("\(folder) is on an overlay (\(mount.point)) whose upper layer \(upper) cannot be read")
        }
        return .durable
    }

    /// One line of /proc/self/mountinfo (proc(5)): where, what file system, its options.
    public struct Mount: Equatable, Sendable {
        public var point: String
        public var fsType: String
        public var superOptions: [String: String]

        /// `36 35 98:0 /root /mnt rw,noatime shared:1 - ext4 /dev/sda1 rw,errors=continue`
        public init?(line: Substring) {
            let f = line.split(separator: " ")
            guard let dash = f.firstIndex(of: "-"), dash >= 6, f.count >= dash + 3 else { return nil }
            point = Mount.unescape(f[4])
            fsType = String(f[dash + 1])
            var options: [String: String] = [:]
            if f.count > dash + 3 {
                for o in f[dash + 3].split(separator: ",") {
                    let kv = o.split(separator: "=", maxSplits: 1)
                    options[String(kv[0])] = kv.count == 2 ? Mount.unescape(kv[1]) : ""
                }
            }
            superOptions = options
        }

        /// The mount that holds `path` (an absolute, resolved path): the longest mount point that
        /// is `path` or one of its parents; of equals, the last (it is mounted over the others).
        public static func covering(_ path: String, in mountinfo: String) -> Mount? {
            var best: Mount?
            for line in mountinfo.split(separator: "\n") {
                guard let m = Mount(line: line) else { continue }
                let holds = m.point == "/" || path == m.point || path.hasPrefix(m.point + "/")
                if holds, m.point.utf8.count >= (best?.point.utf8.count ?? 0) { best = m }
            }
            return best
        }

        /// mountinfo writes a space, tab, newline and backslash as \040, \011, \012, \134.
        static func unescape(_ s: Substring) -> String {
            var out: [UInt8] = []
            let b = Array(s.utf8)
            var i = 0
            while i < b.count {
                if b[i] == 0x5C, i + 4 <= b.count,
                   let v = UInt8(String(decoding: b[(i + 1)..<(i + 4)], as: UTF8.self), radix: 8) {
                    out.append(v)
                    i += 4
                } else {
                    out.append(b[i])
                    i += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Whether a claim of `key` in the used-token store needs a store that survives a power cut:
    /// one-time credentials and their `uses` (`c:`) and event tickets' entries (`p:`) would open
    /// again after one; a rotating code's step (`t:`) is over before a Pi has booted again.
    public static func needsDurableStore(key: String) -> Bool {
        key.hasPrefix("c:") || key.hasPrefix("p:")
    }
}

/// `KIOSK_VOLATILE_STATE`: what the kiosk does when its state directory does not
/// survive a power cut.
public enum VolatileState: String, Equatable, Sendable, CaseIterable {
    /// One-time credentials, `uses` and ticket entries denied (`state volatile`).
    case refuse
    /// Judged anyway (what a power cut loses is said at start).
    case accept
    public static let expected = "refuse or accept"
}
