// SPDX-License-Identifier: Apache-2.0
import CEvdev
import Glibc
import Platform
import Policy

/// A USB keypad or any keyboard, read through libevdev and grabbed (its keys reach no console
/// and no other program). Unplugged, it is `lost`; the thread looks for it again every
/// `retryNs` (a by-id path comes back when it is plugged in again) and says `ready` when it is
/// had again. Only key presses are read (not releases nor the keyboard's repeats).
public final class EvdevKeypad: Keypad, @unchecked Sendable {  // its thread's state in `thread`
    public let path: String
    public let retryNs: UInt64
    private let thread = KeypadThread()

    public init(path: String, retryNs: UInt64 = 1_000_000_000) {
        self.path = path
        self.retryNs = retryNs
    }

    public var description: String { "evdev:\(path)" }

    /// Whether libevdev can be loaded here, or why not (for `kiosk check` and `doctor`).
    public static func libraryProblem() -> String? {
        var err = [CChar](repeating: 0, count: 256)
        guard kiosk_evdev_load(&err, err.count) != 0 else { return nil }
        return String(cBuffer: err) + " (install \(KIOSK_EVDEV_PACKAGE))"
    }

    /// What `kiosk doctor` found opening and grabbing the device for a moment.
    public enum Probe: Equatable {
        /// Opened and grabbed: its name, and whether it has digit keys.
        case opened(name: String, digits: Bool)
        /// Not opened or not grabbed: why, and the errno (EACCES: not in the input group; EBUSY:
        /// another program, the kiosk service when it runs, holds it).
        case failed(String, errno: Int32)
    }

    /// Opens and grabs the device once, and lets it go.
    public static func probe(_ path: String) -> Probe {
        var error: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        guard let dev = kiosk_evdev_open(path, &error, &err, err.count) else {
            return .failed(String(cBuffer: err) + (error == EACCES ? " (\(accessAdvice(path)))" : ""), errno: error)
        }
        defer { kiosk_evdev_close(dev) }
        return .opened(name: String(cString: kiosk_evdev_name(dev)), digits: kiosk_evdev_has_keys(dev) == 1)
    }

    /// Why the node at `path` refuses this user, from its group and mode (KeypadAccess).
    public static func accessAdvice(_ path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return KeypadAccess.advice(group: nil, groupReads: false) }
        var entry = Glibc.group(), found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let name = getgrgid_r(st.st_gid, &entry, &buffer, buffer.count, &found) == 0 && found != nil
            ? String(cString: entry.gr_name) : nil
        return KeypadAccess.advice(group: name, groupReads: st.st_mode & S_IRGRP != 0)
    }

    public func start(_ listener: KeypadListener) { thread.start { [self] in run(listener) } }

    public func shutDown() { thread.stop() }

    private var isStopped: Bool { thread.isStopped }

    private func run(_ listener: KeypadListener) {
        var lastProblem: String?
        var everReady = false
        while !isStopped {
            var error: Int32 = 0
            var err = [CChar](repeating: 0, count: 256)
            guard let dev = kiosk_evdev_open(path, &error, &err, err.count) else {
                let problem = String(cBuffer: err) + (error == EACCES ? " (\(Self.accessAdvice(path)))" : "")
                // Said once a change: a keypad left unplugged is one `lost`, not one a second.
                if problem != lastProblem || everReady { listener.keypadLost(problem) }
                lastProblem = problem
                everReady = false
                if !pause(retryNs) { return }
                continue
            }
            lastProblem = nil
            everReady = true
            listener.keypadReady("\(description) (\(String(cString: kiosk_evdev_name(dev))))")
            let why = read(dev, listener)
            kiosk_evdev_close(dev)
            guard let why else { return }
            listener.keypadLost(why)
            lastProblem = why
            everReady = false
            if !pause(retryNs) { return }
        }
    }

    /// Reads until the device goes (why) or a stop (nil).
    private func read(_ dev: OpaquePointer, _ listener: KeypadListener) -> String? {
        while !isStopped {
            var fds = [pollfd(fd: thread.wake, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: kiosk_evdev_fd(dev), events: Int16(POLLIN), revents: 0)]
            let rc = poll(&fds, 2, -1)
            if rc < 0 {
                if errno == EINTR { continue }
                return "poll: \(Errno.current.message)"
            }
            if fds[0].revents != 0 { return nil }
            if fds[1].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && fds[1].revents & Int16(POLLIN) == 0 {
                return "\(path): unplugged"
            }
            while true {
                var code: UInt32 = 0, value: Int32 = 0, at: UInt64 = 0
                let n = kiosk_evdev_next_key(dev, &code, &value, &at)
                if n == 0 { break }
                if n < 0 { return -n == ENODEV ? "\(path): unplugged" : "\(path): \(Errno(-n).message)" }
                if value == 1, let key = KeypadKey(evdevCode: Int(code)) { listener.keyPressed(key) }
            }
        }
        return nil
    }

    /// Waits `ns` or until a stop: false on a stop.
    private func pause(_ ns: UInt64) -> Bool {
        var fds = [pollfd(fd: thread.wake, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Int32(ns / 1_000_000))
        return !isStopped
    }
}
