// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import GPIO
import Glibc
import Platform
import Policy

/// The kiosk's side of setup by a signed code: a `KS1:` code the frame loop hands over
/// (`CodeReporter`, in every `KIOSK_VERDICT` mode) is checked here, on a thread of its own, never
/// on the frame loop: whether setup is open (`SetupWindow` on the boot clock and the exit
/// button), the code (`SetupVerifier`), its `cti` once (the used-token store). A code taken is
/// written to `$RUNTIME_DIRECTORY/setup/code` for `kiosk setup --apply` (root, started by the
/// package's `kiosk-setup.path`); the kiosk itself changes nothing. Each code is a `setup` event
/// (`taken` with the names it changes, or `refused` with the reason) and a beep pattern.
public final class SetupDesk: @unchecked Sendable {  // `window`, `pending`, `stopping`, `threadDone`, `outcomes` guarded by `shared`
    public static let fileName = "code"
    /// Three short and a long: taken. The denial's pattern: refused.
    public static let takenPattern = BeepPattern(milliseconds: [80, 80, 80, 80, 80, 80, 600])!
    public static let refusedPattern = BeepPattern.denied

    private let folder: String
    private let root: String
    private let siteKeyOverride: String?
    private let hostname: String?
    private let store: UsedTokenStore?
    private let buzzer: PatternPlayer?
    private let logger: Logger
    private let clock: Clock
    private let wallClock: @Sendable () -> Int64
    /// The boot clock's reading minus the service clock's: boot time = `clock.now() + bootOffsetNs`.
    private let bootOffsetNs: Int64
    private let shared = Condition()
    private var window: SetupWindow
    private var pending: [UInt8]?
    /// The door's `/etc/default/kiosk` set no `KIOSK_` variable when the kiosk started.
    private let doorIsNew: Bool
    /// A code was taken: `kiosk setup --apply` restarts the kiosk on its settings.
    private var tookACode = false
    private var stopping = false
    private var threadDone = true
    /// Codes checked so far, by result (`taken`, `refused`), for tests and stats.
    private var outcomes: [String: Int] = [:]
    /// Says `setup-applied` (the code taken and handed to `kiosk setup --apply`) or
    /// `setup-refused` after the beeps (set once, before `start`).
    var speech: DoorSpeech?

    /// `folder`: where a taken code is written; `root`: where the door's files are read
    /// (`/etc/default/kiosk`, the pinned key); `bootNsNow`: the boot clock now (read once, with
    /// `clock.now()`, so that the window then moves with the service's clock).
    public init(window: SetupWindow, folder: String, root: String = "/", siteKeyOverride: String?, hostname: String? = nil,
                store: UsedTokenStore?, buzzer: PatternPlayer?, logger: Logger, clock: Clock, bootNsNow: UInt64,
                wallClock: @escaping @Sendable () -> Int64 = SetupVerifier.wallClock) {
        self.window = window
        self.folder = folder
        self.root = root
        self.siteKeyOverride = siteKeyOverride
        self.hostname = hostname
        self.store = store
        self.buzzer = buzzer
        self.logger = logger
        self.clock = clock
        self.wallClock = wallClock
        doorIsNew = SetupDoor(root: root, hostname: hostname, siteKeyOverride: siteKeyOverride).isNew
        bootOffsetNs = Int64(bitPattern: bootNsNow &- clock.now())
    }

    private func bootNs(_ monotonicNs: UInt64) -> UInt64 { UInt64(bitPattern: Int64(bitPattern: monotonicNs) &+ bootOffsetNs) }

    /// A `KS1:` code from the frame loop: checked on the desk's thread. One waits at most; a
    /// code shown while another is checked replaces the waiting one (the same code again, mostly).
    public func submit(_ bytes: [UInt8]) {
        shared.lock_ { pending = bytes }
        shared.signal()
    }

    /// The exit button went down or up (`DoorWatch`, its edge's monotonic time).
    public func button(pressed: Bool, atNs: UInt64) {
        let opened = shared.lock_ { window.button(pressed: pressed, atBootNs: bootNs(atNs)) }
        if opened {
            logger.info("setup_open", ["by": "button", "for_s": .int(Int(SetupWindow.buttonOpenNs / 1_000_000_000))])
        }
    }

    /// Whether the frame loop looks at its whole frame at `atNs` (monotonic) rather than its ROI:
    /// while setup is open on a new door (its `/etc/default/kiosk` sets no `KIOSK_` variable),
    /// and on any door for the 60 s its exit button opens, until a code is taken. A whole setup
    /// code (about 450 bytes, QR version 14-15) is taller than the default ROI, the middle half of
    /// a 640x480 frame, at its reading distance (docs/measurements/setup-codes.md); a new door
    /// has no ROI of its own yet, and a door whose button was held has a hand on its inside.
    public func looksAtWholeFrame(atNs t: UInt64) -> Bool {
        shared.lock_ {
            guard !tookACode, let opening = window.opening(atBootNs: bootNs(t)) else { return false }
            return opening == .button || doorIsNew
        }
    }

    /// How many codes were taken or refused so far.
    public func count(_ result: String) -> Int { shared.lock_ { outcomes[result] ?? 0 } }

    /// Checks one code now (the desk's thread; a test calls it directly) and says what happened.
    @discardableResult
    public func take(_ bytes: [UInt8]) -> Result<SetupPlan, SetupRefusal> {
        let result = check(bytes)
        switch result {
        case .success(let plan):
            logger.log(.info, "setup", fields: [("result", "taken"), ("changed", .text(plan.changed.joined(separator: ",")))])
            sound(SetupDesk.takenPattern)
            speech?.say(key: "setup-applied", afterNs: buzzer == nil ? 0 : UInt64(SetupDesk.takenPattern.totalMs) * 1_000_000)
        case .failure(let refusal):
            logger.log(.warning, "setup", fields: [("result", "refused"), ("reason", .text(refusal.reason.text)), ("error", .text(refusal.detail))])
            sound(SetupDesk.refusedPattern)
            speech?.say(key: "setup-refused", afterNs: buzzer == nil ? 0 : UInt64(SetupDesk.refusedPattern.totalMs) * 1_000_000)
        }
        shared.lock_ {
            let taken = (try? result.get()) != nil
            outcomes[taken ? "taken" : "refused", default: 0] += 1
            tookACode = tookACode || taken
        }
        return result
    }

    private func check(_ bytes: [UInt8]) -> Result<SetupPlan, SetupRefusal> {
        let now = bootNs(clock.now())
        guard let opening = shared.lock_({ window.opening(atBootNs: now) }) else {
            return .failure(SetupRefusal(.closed, "setup is closed (KIOSK_SETUP=\(window.mode.rawValue)): hold the exit button 5 s to open it for 60 s"))
        }
        let door = SetupDoor(root: root, hostname: hostname, siteKeyOverride: siteKeyOverride)
        let plan: SetupPlan
        do throws(SetupRefusal) {
            plan = try SetupVerifier.verify(bytes, door: door, opening: opening, now: wallClock())
        } catch {
            return .failure(error)
        }
        guard let store else { return .failure(SetupRefusal(.closed, "no used-token store: a code could be taken twice")) }
        switch store.claim(plan.payload.usedKey, until: plan.payload.exp, now: wallClock(), skew: 0) {
        case .fresh: break
        case .used: return .failure(SetupRefusal(.used, "this code was taken before"))
        case .full: return .failure(SetupRefusal(.closed, "the used-token store is full"))
        case .unavailable(let why): return .failure(SetupRefusal(.closed, why))
        }
        do {
            try SetupDesk.write(bytes, into: folder)
        } catch {
            return .failure(SetupRefusal(.closed, "the code cannot be handed over: \(error)"))
        }
        return .success(plan)
    }

    /// The code, whole, as `folder/code` (written beside it, fsynced, renamed): the path unit
    /// sees a complete file or none.
    static func write(_ bytes: [UInt8], into folder: String) throws {
        if mkdir(folder, 0o750) != 0 && errno != EEXIST { throw SmallFile.Failure(description: "\(folder): \(Errno.current.message)") }
        try SmallFile.replace(folder + "/" + fileName, with: bytes, mode: 0o640)
    }

    private func sound(_ pattern: BeepPattern) {
        guard let buzzer, !pattern.isSilent else { return }
        buzzer.play(onOffMilliseconds: pattern.milliseconds)
        logger.debug("beep", ["ms": .int(pattern.totalMs), "pattern": .text(pattern.description), "for": "setup"])
    }

    /// The desk's thread: each code as it comes.
    public func start() {
        shared.lock_ { threadDone = false }
        startThread(name: "kiosk-setup") { [self] in
            while true {
                let (bytes, stop) = shared.lock_ { () -> ([UInt8]?, Bool) in
                    while pending == nil && !stopping { shared.wait() }
                    defer { pending = nil }
                    return (pending, stopping)
                }
                // A code handed over just before the kiosk stopped is still checked: a replay's
                // last frame, or a code shown as the service is told to stop.
                if let bytes { take(bytes) }
                if stop { break }
            }
            Crypto.threadEnds()
            shared.lock_ { threadDone = true }
            shared.broadcast()
        }
    }

    public func shutDown() {
        shared.lock_ { stopping = true }
        shared.broadcast()
        shared.lock_ { while !threadDone { shared.wait() } }
    }
}

extension SetupDesk {
    /// The desk of a running kiosk (not the demo's): the window from `KIOSK_SETUP` and
    /// `KIOSK_SETUP_WINDOW_S` on the boot clock, the exit button, the used-token store (the
    /// verifier's, or one of its own), `$RUNTIME_DIRECTORY/setup`. The door's files are read at
    /// `/` and nowhere else: a running kiosk has no other root to be pointed at (`--root` is
    /// `kiosk setup`'s, for an SD card), so nothing in its environment may move where it looks
    /// for the pinned key. The end-to-end tests give it a door of their own in a mount namespace.
    static func assemble(_ a: Assembly, store: UsedTokenStore?, lines: OutputLines, speech: DoorSpeech?) -> SetupDesk? {
        guard !a.demo else { return nil }
        let runtime = a.environment["RUNTIME_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? "/run/kiosk"
        let desk = SetupDesk(window: SetupWindow(mode: a.config.setupMode, windowS: a.config.setupWindowS), folder: runtime + "/setup",
                             root: "/", siteKeyOverride: a.config.siteKey,
                             store: store ?? UsedTokenStore(directory: UsedTokenStore.directory(a.environment)),
                             buzzer: lines.door.buzzer, logger: a.logger, clock: a.clock, bootNsNow: SetupVerifier.bootNanoseconds())
        lines.watch?.onButton { [weak desk] pressed, at in desk?.button(pressed: pressed, atNs: at) }
        desk.speech = speech
        desk.start()
        return desk
    }
}
