// SPDX-License-Identifier: Apache-2.0
import Credentials
import Platform
import Policy

/// The clock a running kiosk judges time-bound credentials by. `TimeSource` decides
/// (pure); this gathers the facts: the kernel's synchronised flag and the wall clock at each
/// decision, the RTCs and the floor's sources (the kept floor, systemd-timesyncd's clock file, the
/// `issued` time of the site bundle in force) at start and then every `lookNs`. Each change of the
/// source (or of being behind the floor) is a `clock` event and goes to `<topic>/state`; the kept
/// floor is written at most once in 10 minutes while the clock is trusted (`FloorKeeping`), and at
/// stop. The verifier asks `judgement` (`ClockSynchronization`), the door's modes `judgesTime`.
public final class ClockWatch: ClockSynchronization, @unchecked Sendable {  // `rtcs`, `floor`, `keeping`, `reported`, `stopped`, `onChange` guarded by `lock`
    /// How often the RTCs and the floor's files are looked at (an RTC over I2C answers in about a
    /// millisecond; the files are a stat and a read).
    public static let lookNs: UInt64 = 5_000_000_000

    public let setting: ClockSetting
    public let tolerance: Int64
    public let paths: ClockPaths
    private let lock = Lock()
    private let synchronized: @Sendable () -> Bool
    private let wallClock: @Sendable () -> Int64
    private let clock: Clock
    private let bundleIssued: @Sendable () -> Int64?
    private let logger: Logger?
    private var rtcs: [RTCReading] = []
    private var floor: ClockFloor
    private var keeping: FloorKeeping
    private var reported: String?
    private var stopped = false
    private var onChange: (@Sendable (ClockJudgement) -> Void)?
    private var writeCount = 0
    /// The kept floor's writes that succeeded (a test counts them).
    public var writes: Int { lock.withLock { writeCount } }

    /// The kept floor is read now; a file that does not read is said (`state_damaged`) and left
    /// out of the floor until the next write replaces it.
    public init(setting: ClockSetting, tolerance: Int64, paths: ClockPaths,
                synchronized: @escaping @Sendable () -> Bool = { KernelClockSynchronization().isSynchronized },
                wallClock: @escaping @Sendable () -> Int64 = unixSeconds, clock: Clock,
                bundleIssued: @escaping @Sendable () -> Int64? = { nil }, logger: Logger?) {
        self.setting = setting
        self.tolerance = tolerance
        self.paths = paths
        self.synchronized = synchronized
        self.wallClock = wallClock
        self.clock = clock
        self.bundleIssued = bundleIssued
        self.logger = logger
        var kept: Int64?
        switch ClockFiles.readKept(paths.keptFloor) {
        case .success(let t): kept = t
        case .failure(let e):
            logger?.warning("state_damaged", ["file": .text(paths.keptFloor), "error": .text(e.description),
                                              "action": "the kept clock floor is left out until the next write replaces it"])
        }
        floor = ClockFloor(kept: kept)
        keeping = FloorKeeping(kept: kept)
        gather()
    }

    /// `<topic>/state` and the like: called with each change (after the `clock` event).
    public func report(_ change: @escaping @Sendable (ClockJudgement) -> Void) { lock.withLock { onChange = change } }

    /// The clock now: the kernel's flag and the wall clock read now, the RTCs and the floor as
    /// last looked at.
    public var judgement: ClockJudgement {
        let seen: (rtcs: [RTCReading], floor: ClockFloor) = lock.withLock { (self.rtcs, self.floor) }
        let facts = ClockFacts(now: wallClock(), ntpSynchronized: synchronized(), rtcs: seen.rtcs)
        return TimeSource.judge(facts, floor: seen.floor, setting: setting, tolerance: tolerance)
    }

    public var isSynchronized: Bool { judgement.judgesTime }
    /// Whether time-bound credentials, rotating codes and schedules are judged by the clock now.
    public var judgesTime: Bool { judgement.judgesTime }

    /// The first look (the `clock` event at start), then one every `lookNs`.
    public func start() {
        look()
        tick()
    }

    /// Stops looking; the floor is written a last time when the clock is trusted.
    public func shutDown() {
        guard !lock.withLock({ () -> Bool in defer { stopped = true }; return stopped }) else { return }
        keep(judgement, stopping: true)
    }

    /// Looks again: the RTCs and the floor's sources; a change is said; the floor kept when due.
    public func look() {
        gather()
        let j = judgement
        let changed = lock.withLock { () -> Bool in
            guard reported != j.state else { return false }
            reported = j.state
            return true
        }
        if changed {
            var fields: [(String, LogValue)] = [("source", .text(j.source.rawValue)), ("floor", j.floor.map { .int(Int($0)) } ?? .text("none"))]
            if let s = j.floorSource { fields.append(("floor_from", .text(s.rawValue))) }
            if let b = j.behindSeconds { fields.append(("behind_s", .int(Int(b)))) }
            if let r = j.rtc { fields.append(("rtc", .text(r))) }
            fields.append(("setting", .text(j.setting.rawValue)))
            if !j.judgesTime || j.isBehind {
                fields.append(("denied", .text(j.isBehind ? "time-bound credentials (clock behind)" : "time-bound credentials (clock not synchronized)")))
            }
            if j.source == .none, let why = j.untrustedBecause { fields.append(("why", .text(why))) }
            logger?.log(j.isBehind || !j.judgesTime ? .warning : .info, "clock", fields: fields)
            lock.withLock { onChange }?(j)
        }
        keep(j, stopping: false)
    }

    private func tick() {
        clock.schedule(afterNs: ClockWatch.lookNs) { [weak self] in
            guard let self, !self.lock.withLock({ self.stopped }) else { return }
            self.look()
            self.tick()
        }
    }

    private func gather() {
        let rtcs = ClockFiles.rtcs(in: paths.rtcFolder)
        let timesyncd = ClockFiles.modificationTime(paths.timesyncdClock)
        let issued = bundleIssued()
        lock.withLock {
            self.rtcs = rtcs
            floor.timesyncd = timesyncd
            floor.bundle = issued
        }
    }

    private func keep(_ j: ClockJudgement, stopping: Bool) {
        let now = wallClock()
        guard let t = lock.withLock({ keeping.due(j, now: now, monotonicNs: clock.now(), stopping: stopping) }) else { return }
        do {
            try ClockFiles.writeKept(paths.keptFloor, t)
            lock.withLock {
                floor.kept = t
                writeCount += 1
            }
        } catch {
            logger?.warning("clock_floor_not_saved", ["file": .text(paths.keptFloor), "error": .text(String(describing: error)),
                                                      "hint": "the floor survives no restart; set STATE_DIRECTORY or make /var/lib/kiosk writable"])
        }
    }
}
