// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Reading and durably replacing small files, without Foundation: the used-token store
/// (credentials), the OSDP key and bus settings.
public enum SmallFile {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The whole file (at most `limit` bytes: more is an error), or nil when it does not exist.
    public static func read(_ path: String, limit: Int = 4 << 20) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure(description: "\(path): \(Errno.current.message)")
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n: Int
            do throws(Errno) {
                n = try Syscall.retryingEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) } }
            } catch {
                throw Failure(description: "\(path): \(error.message)")
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            guard out.count <= limit else { throw Failure(description: "\(path): larger than \(limit) bytes") }
        }
    }

    /// Replaces `path` with `bytes` so that a crash at any moment leaves the old file or the new
    /// one, never a part: a temporary file beside it, written, fsynced, renamed over it, and the
    /// folder fsynced (the rename itself on disk) before this returns.
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "\(temporary): \(Errno.current.message)") }
        do throws(Errno) { try Syscall.writeAll(fd, bytes) } catch {
            close(fd)
            throw Failure(description: "\(temporary): \(error.message)")
        }
        guard fsync(fd) == 0 else {
            let e = Errno.current
            close(fd)
            throw Failure(description: "fsync \(temporary): \(e.message)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else { throw Failure(description: "rename \(temporary): \(Errno.current.message)") }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let dirFD = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirFD >= 0 else { throw Failure(description: "\(folder): \(Errno.current.message)") }
        defer { close(dirFD) }
        guard fsync(dirFD) == 0 else { throw Failure(description: "fsync \(folder): \(Errno.current.message)") }
    }
}
