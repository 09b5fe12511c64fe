// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// Where the clock's facts are read. The defaults are the machine's; tests point them at
/// a temporary folder (`TEST_KIOSK_RTC_DIR`, `TEST_KIOSK_TIMESYNC_CLOCK`: not `KIOSK_` variables,
/// so an installer cannot set them by mistake).
public struct ClockPaths: Equatable, Sendable {
    /// The kernel's RTCs: `rtcN/hctosys`, `rtcN/since_epoch`.
    public var rtcFolder = "/sys/class/rtc"
    /// systemd-timesyncd touches this file at each synchronisation (and moves the clock forward to
    /// its time at boot).
    public var timesyncdClock = "/var/lib/systemd/timesync/clock"
    /// The kept floor: `$STATE_DIRECTORY/clock-floor` (else /var/lib/kiosk).
    public var keptFloor: String

    public static let keptFileName = "clock-floor"

    public init(rtcFolder: String = "/sys/class/rtc", timesyncdClock: String = "/var/lib/systemd/timesync/clock", keptFloor: String) {
        self.rtcFolder = rtcFolder
        self.timesyncdClock = timesyncdClock
        self.keptFloor = keptFloor
    }

    public init(environment: [String: String]) {
        self.init(rtcFolder: environment["TEST_KIOSK_RTC_DIR"] ?? "/sys/class/rtc",
                  timesyncdClock: environment["TEST_KIOSK_TIMESYNC_CLOCK"] ?? "/var/lib/systemd/timesync/clock",
                  keptFloor: UsedTokenStore.directory(environment) + "/" + ClockPaths.keptFileName)
    }
}

/// Reads the facts (`ClockFacts`, `ClockFloor`'s files) and writes the kept floor.
public enum ClockFiles {
    /// Every `rtcN` in the folder, by name: whether it set the system clock (`hctosys`) and its
    /// time (`since_epoch`, nil when it does not read).
    public static func rtcs(in folder: String) -> [RTCReading] {
        let names = (Files.names(in: folder) ?? []).filter { $0.hasPrefix("rtc") }.sorted()
        return names.map { name in
            let base = folder + "/" + name + "/"
            return RTCReading(name: name, setSystemClock: number(base + "hctosys") == 1, time: number(base + "since_epoch"))
        }
    }

    /// A file's modification time (Unix seconds); nil when it does not exist or cannot be seen.
    public static func modificationTime(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_mtim.tv_sec)
    }

    /// The kept floor: nil when there is none; a failure when the file is there and does not read
    /// (the caller says so and goes on without it).
    public static func readKept(_ path: String) -> Result<Int64?, SmallFile.Failure> {
        do {
            guard let bytes = try SmallFile.read(path, limit: 64) else { return .success(nil) }
            guard let text = String(validating: bytes, as: UTF8.self), let t = ClockFloor.parseKept(text) else {
                return .failure(SmallFile.Failure(description: "\(path): not a Unix time"))
            }
            return .success(t)
        } catch let e as SmallFile.Failure {
            return .failure(e)
        } catch {
            return .failure(SmallFile.Failure(description: "\(path): \(error)"))
        }
    }

    /// Written whole or not at all (temporary file, fsync, rename, folder fsync).
    public static func writeKept(_ path: String, _ time: Int64) throws {
        try SmallFile.replace(path, with: Array(ClockFloor.keptText(time).utf8), mode: 0o644)
    }

    /// A sysfs number (`1\n`); nil when the file does not read or holds something else.
    static func number(_ path: String) -> Int64? {
        guard let bytes = try? SmallFile.read(path, limit: 64), let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let t = text.hasSuffix("\n") ? String(text.dropLast()) : text
        return Int64(t)
    }
}
