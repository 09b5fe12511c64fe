// SPDX-License-Identifier: Apache-2.0
import CPlatform
import Glibc

/// The few questions the kiosk asks the file system, without Foundation.
public enum Files {
    /// The names in a folder (without "." and ".."), nil when it cannot be read.
    public static func names(in folder: String) -> [String]? {
        guard let dir = opendir(folder) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// A regular file this process may execute.
    public static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// This process's executable file (/proc/self/exe), nil when it cannot be read.
    public static func executablePath() -> String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The process's environment, as `environ` holds it.
    public static func environment() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return out
    }
}

extension Files {
    /// This machine's name (gethostname), "kiosk" if it has none.
    public static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "kiosk" }
        let name = String(cBuffer: buffer)
        return name.isEmpty ? "kiosk" : name
    }
}

// A pseudo-terminal pair (the OSDP bench's bus).
public enum PseudoTerminal {
    /// The master's descriptor and the slave's path.
    public static func open() throws -> (master: Int32, slave: String) {
        var name = [CChar](repeating: 0, count: 128)
        let fd = kiosk_open_pty(&name, UInt(name.count))
        guard fd >= 0 else { throw Errno.current }
        return (fd, String(cString: name))
    }
}
