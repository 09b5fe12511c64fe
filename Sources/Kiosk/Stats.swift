// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// What the kiosk has done, as the `stats` event and the metrics file show it.
public struct StatsSnapshot: Equatable {
    public var frames = 0
    public var decoded = 0
    public var skipped = 0
    public var reopenings = 0
    public var brightness: Double?
    public var torchOn: Bool?
    /// Process CPU time (user + system), nanoseconds.
    public var cpuNs: UInt64 = 0
    public var atNs: UInt64 = 0
    /// The broker link's counters; nil: no broker configured.
    public var fleet: BrokerCounters?
    /// The door's counters; nil: no door input watched.
    public var door: DoorWatch.Counts?

    public init() {}
}

/// CPU time this process has used (getrusage), nanoseconds.
public func processCPUNanoseconds() -> UInt64 {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Every `KIOSK_STATS_S`: a `stats` line with the interval's figures and, with
/// `KIOSK_METRICS_FILE`, the totals in Prometheus text format, written to a temporary file beside
/// it and renamed over it, so node_exporter's textfile collector never reads half a file.
public final class StatsReporter {
    public let intervalNs: UInt64
    public let metricsFile: String?
    private let logger: Logger
    private var last: StatsSnapshot?
    private var metricsFailures = RateLimit(intervalNs: 600_000_000_000)

    public init(intervalSeconds: Int, metricsFile: String?, logger: Logger) {
        intervalNs = UInt64(intervalSeconds) * 1_000_000_000
        self.metricsFile = metricsFile
        self.logger = logger
    }

    /// Whether a report is due at `now`.
    public func isDue(at now: UInt64) -> Bool {
        guard intervalNs > 0 else { return false }
        guard let last else { return true }
        return now &- last.atNs >= intervalNs
    }

    /// Starts the first interval without a report.
    public func begin(_ s: StatsSnapshot) { last = s }

    /// At stop: the metrics file gets the final totals, however short the run was (a run shorter
    /// than the interval would otherwise never write it). No `stats` line.
    public func finish(_ s: StatsSnapshot) {
        guard let path = metricsFile else { return }
        let previous = last ?? s
        let frames = s.frames - previous.frames
        let seconds = Double(s.atNs &- previous.atNs) / 1e9
        let cpuPerFrame = frames > 0 ? Double(s.cpuNs &- previous.cpuNs) / 1e6 / Double(frames) : 0
        writeMetrics(StatsReporter.prometheusText(s, fps: seconds > 0 ? Double(frames) / seconds : 0, cpuMsPerFrame: cpuPerFrame),
              to: path, at: s.atNs)
    }

    private func writeMetrics(_ text: String, to path: String, at now: UInt64) {
        do {
            try StatsReporter.writeMetrics(text, to: path)
        } catch {
            if metricsFailures.shouldSay(at: now).say {
                logger.warning("metrics_write_failed", ["file": .text(path), "error": .text(String(describing: error))])
            }
        }
    }

    /// The `stats` line; returns its fields (the broker's `<topic>/stats` carries the same).
    @discardableResult
    public func report(_ s: StatsSnapshot) -> [(String, LogValue)]? {
        guard let previous = last else { last = s; return nil }
        last = s
        let frames = s.frames - previous.frames
        let seconds = Double(s.atNs &- previous.atNs) / 1e9
        let cpuPerFrame = frames > 0 ? Double(s.cpuNs &- previous.cpuNs) / 1e6 / Double(frames) : 0
        var fields: [(String, LogValue)] = [
            ("frames", .int(frames)), ("fps", .number(seconds > 0 ? Double(frames) / seconds : 0, digits: 1)),
            ("decoded", .int(s.decoded - previous.decoded)), ("skipped", .int(s.skipped - previous.skipped)),
        ]
        if let b = s.brightness { fields.append(("brightness", .number(b, digits: 1))) }
        fields.append(("torch", .text(s.torchOn.map { $0 ? "on" : "off" } ?? "none")))
        fields.append(("cpu_ms_per_frame", .number(cpuPerFrame, digits: 2)))
        if let f = s.fleet {
            // Sent, acknowledged and dropped in the interval, like the frames; queued now.
            let p = previous.fleet ?? BrokerCounters()
            fields += [("mqtt", .text(f.connected ? "connected" : "disconnected")),
                       ("mqtt_published", .int(f.published - p.published)), ("mqtt_acknowledged", .int(f.acknowledged - p.acknowledged)),
                       ("mqtt_queued", .int(f.queued)), ("mqtt_dropped", .int(f.dropped - p.dropped))]
        }
        if let d = s.door {
            // The door's events in the interval; its state now.
            let p = previous.door ?? DoorWatch.Counts()
            if let state = d.state { fields.append(("door", .text(state.rawValue))) }
            fields += [("door_opened", .int(d.opened - p.opened)), ("door_forced", .int(d.forced - p.forced)),
                       ("door_held", .int(d.held - p.held)), ("rex", .int(d.rex - p.rex)), ("tamper", .int(d.tamper - p.tamper))]
        }
        logger.log(.info, "stats", fields: fields)
        if let path = metricsFile {
            writeMetrics(StatsReporter.prometheusText(s, fps: seconds > 0 ? Double(frames) / seconds : 0, cpuMsPerFrame: cpuPerFrame),
                  to: path, at: s.atNs)
        }
        return fields
    }

    /// The Prometheus text exposition of the totals. No payload ever becomes a label.
    public static func prometheusText(_ s: StatsSnapshot, fps: Double, cpuMsPerFrame: Double) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("kiosk_frames_total", "counter", "Frames processed.", String(s.frames))
        metric("kiosk_codes_total", "counter", "Codes reported (after the repeat filter).", String(s.decoded))
        metric("kiosk_frames_skipped_total", "counter", "Corrupt or unreadable frames skipped.", String(s.skipped))
        metric("kiosk_camera_reopens_total", "counter", "Times the camera was lost and reopened.", String(s.reopenings))
        metric("kiosk_fps", "gauge", "Frames per second over the last interval.", Format.fixed(fps, 2))
        metric("kiosk_cpu_ms_per_frame", "gauge", "Process CPU milliseconds per frame over the last interval.", Format.fixed(cpuMsPerFrame, 3))
        if let b = s.brightness { metric("kiosk_brightness", "gauge", "Ambient brightness figure (see README).", Format.fixed(b, 1)) }
        if let t = s.torchOn { metric("kiosk_torch_on", "gauge", "1 when the torch is on.", t ? "1" : "0") }
        if let f = s.fleet {
            metric("kiosk_mqtt_connected", "gauge", "1 while connected to the broker.", f.connected ? "1" : "0")
            metric("kiosk_mqtt_published_total", "counter", "Scan events sent to the broker (a resend counts again).", String(f.published))
            metric("kiosk_mqtt_acknowledged_total", "counter", "Scan events the broker acknowledged.", String(f.acknowledged))
            metric("kiosk_mqtt_queued", "gauge", "Scan events waiting for the broker (spooled).", String(f.queued))
            metric("kiosk_mqtt_dropped_total", "counter", "Scan events dropped because the queue was full (oldest first).", String(f.dropped))
        }
        if let d = s.door {
            metric("kiosk_door_opened_total", "counter", "Times the door opened (the door contact).", String(d.opened))
            metric("kiosk_door_forced_total", "counter", "Times the door was forced open.", String(d.forced))
            metric("kiosk_door_held_total", "counter", "Times the door was held open past KIOSK_DOOR_HELD_S.", String(d.held))
            metric("kiosk_rex_total", "counter", "Presses of the exit button.", String(d.rex))
            metric("kiosk_tamper_total", "counter", "Times the tamper loop opened.", String(d.tamper))
            if let state = d.state { metric("kiosk_door_open", "gauge", "1 while the door is open (open, forced or held).", state == .closed ? "0" : "1") }
            if let t = d.tampered { metric("kiosk_tamper", "gauge", "1 while the tamper loop is open.", t ? "1" : "0") }
        }
        return out
    }

    /// Writes `text` to a temporary file in the same folder and renames it over `path` (a reader sees the old file or the new one).
    public static func writeMetrics(_ text: String, to path: String) throws {
        let temporary = path + ".tmp.\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemCallError("open \(temporary)", errno) }
        do throws(Errno) {
            try Syscall.writeAll(fd, Array(text.utf8))
        } catch {
            close(fd)
            unlink(temporary)
            throw SystemCallError("write \(temporary)", error.code)
        }
        // Not fsynced: the totals are written again at the next interval, and a file
        // a power cut empties costs nothing; an fsync would force a write to the card each time
        // (the file belongs in /run/kiosk, in RAM).
        close(fd)
        guard rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw SystemCallError("rename to \(path)", e)
        }
    }
}

/// A failed system call and what it was for ("rename to /var/lib/kiosk/kiosk.prom: ...").
struct SystemCallError: Error, CustomStringConvertible {
    var what: String
    var errno: Errno
    init(_ what: String, _ code: Int32) { self.what = what; errno = Errno(code) }
    var description: String { "\(what): \(errno.message)" }
}
