// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Dispatch
import Platform
import Policy

/// Gate, then zbar on a worker thread: what `ScanService.process` asks for each frame.
///
/// The frame loop keeps its own thread (brightness, torch, watchdog, the log); zbar runs on one
/// worker thread that always takes the newest frame. The frame's memory belongs to the camera
/// until the next `nextFrame`, so the ROI's luma is copied into one of two buffers kept between
/// frames (no allocation per frame): the worker reads one while the loop may fill the other. A
/// frame submitted while an older one still waits replaces it (counted in `stats.replaced`): a
/// slow decode never queues stale frames.
///
/// `waitNs` is how long `decode` waits for the worker: nil waits until it is done, so the codes
/// of a frame are reported while that frame is processed (replays, the simulated scene, the
/// tests). A live camera sets a bound (`liveWaitNs`): a decode that takes longer is reported when
/// it ends, at a later frame (with its own frame number and latency), and the loop keeps the
/// camera's pace.
///
/// Not thread-safe itself: one frame loop calls it. The worker's state is behind one lock.
public final class DecodePipeline {
    public struct Stats: Equatable, Sendable {
        public var frames = 0
        /// Decisions by reason.
        public var reasons: [DecodeGate.Reason: Int] = [:]
        public var decodes = 0
        /// Attempts run (on a presentation that did not read on its first decode, where
        /// plain zbar read nothing).
        public var attempts = 0
        public var replaced = 0
        public var gateNs: UInt64 = 0
        public var copyNs: UInt64 = 0
        /// Time inside zbar (and the Code 128 re-reading) on the worker, wall clock.
        public var decodeNs: UInt64 = 0
        public var longestDecodeNs: UInt64 = 0
    }

    public var waitNs: UInt64?
    public private(set) var gate: DecodeGate
    public var stats: Stats {
        var s = ownStats
        worker.lock.lock()
        s.decodeNs = worker.decodeNs
        s.longestDecodeNs = worker.longestNs
        s.replaced = worker.replaced
        worker.lock.unlock()
        return s
    }

    private let worker: Worker
    private var ownStats = Stats()
    /// The codes of the newest finished decode, kept while the ROI stays unchanged.
    private var lastSymbols: [DecodedSymbol] = []
    private var finished: [Worker.Result] = []

    /// zbar's scan density for the kiosk, chosen by measurement (`kiosk-dev bench --density`, docs/measurements/frame-loop.md).
    /// The bench measures other densities by giving them to `ScanService` (`decodeDensity:`).
    public static let defaultDensity = 1

    /// The attempts a presentation that did not read on its first decode gets, one a decoded
    /// frame (`AttemptSchedule`).
    public let attempts: [Attempt]
    private var schedule: AttemptSchedule

    /// `mount`: how the camera is mounted (zxing reads the region upright). `attempts`: see
    /// `attempts`; the gate decodes at least as many frames after a change as there are attempts
    /// (its `settleFrames`), so that a screen held still gets each of them once.
    public init(symbologies: [Symbology], density: Int = DecodePipeline.defaultDensity, mount: Mount = Mount(),
                gate: DecodeGate? = nil, attempts: [Attempt] = Attempt.kept, waitNs: UInt64? = nil, clock: Clock = MonotonicClock()) {
        worker = Worker(scanner: BarcodeScanner(symbologies: symbologies, density: density, mount: mount, clock: clock))
        self.gate = gate ?? {
            var settings = DecodeGate.Settings()
            settings.settleFrames = max(settings.settleFrames, attempts.count)
            return DecodeGate(settings: settings)
        }()
        self.attempts = attempts
        schedule = AttemptSchedule(count: attempts.count)
        self.waitNs = waitNs
        finished.reserveCapacity(4)
    }

    deinit { worker.shutDown() }

    /// Half a frame interval: a decode that ends within it is reported on its own frame.
    public static func liveWaitNs(fps: Double) -> UInt64 { UInt64(0.5e9 / max(1, fps)) }

    /// Runs the gate on `frame`'s ROI and, if it says so, hands the ROI to the worker. Then calls
    /// `admit` with the codes of each decode that has finished, oldest first, with its own frame;
    /// when the ROI is unchanged since the last decode (and none is under way) with that decode's
    /// codes and this frame, so that a code held still stays in view for the repeat filter; and
    /// with no codes otherwise. Frames are admitted in order; a frame skipped while a decode is
    /// under way is not admitted at all (that decode's result stands for it when it comes).
    public func decode(_ frame: Frame, roi: PixelRect, admit: ([DecodedSymbol], Frame) -> Void) {
        ownStats.frames += 1
        _ = drain(admit)
        let t0 = monotonicNanoseconds()
        let decision = gate.evaluate(frame.luma, roi: roi)
        let t1 = monotonicNanoseconds()
        ownStats.gateNs += t1 &- t0
        ownStats.reasons[decision.reason, default: 0] += 1
        if !somethingHeld { schedule.nothingHeld() }
        if decision.decodes {
            ownStats.decodes += 1
            let attempt = somethingHeld ? schedule.plan() : nil
            ownStats.copyNs += worker.submit(frame, roi: roi, attempt: attempt.map { attempts[$0] }, index: attempt,
                                             glance: decision.reason == .glance)
            worker.waitIdle(ns: waitNs)
            _ = drain(admit)
            return
        }
        // Nothing under way (it would be admitted later, with its earlier frame: frames stay in order).
        // Idle now means every result is in: take them first, they are older.
        guard !worker.isBusy else { return }
        _ = drain(admit)
        admit(decision.reusesLastResult ? lastSymbols : [], frame)
    }

    /// Waits for the decode under way, if any, and admits its codes (end of a run).
    public func finish(admit: ([DecodedSymbol], Frame) -> Void) {
        worker.waitIdle(ns: nil)
        _ = drain(admit)
    }

    /// The gate starts afresh (a camera reopened: its first frame is decoded).
    public func resetGate() { gate.reset() }

    /// The last frame's ROI had edges enough to hold a code: something is held up.
    public var somethingHeld: Bool { gate.lastEdges >= gate.settings.minEdges }

    /// Stops the worker thread (it starts again on the next decode).
    public func shutDown() { worker.shutDown() }

    private func drain(_ admit: ([DecodedSymbol], Frame) -> Void) -> Bool {
        worker.take(into: &finished)
        guard !finished.isEmpty else { return false }
        for result in finished {
            lastSymbols = result.symbols
            gate.decodeRead(codes: !result.symbols.isEmpty)
            schedule.decoded(attempt: result.attemptIndex, read: !result.symbols.isEmpty, attemptRead: result.readByAttempt)
            if result.lookAgain { gate.lookAgain() }
            if result.ranAttempt { ownStats.attempts += 1 }
            admit(result.symbols, result.frame)
        }
        finished.removeAll(keepingCapacity: true)
        return true
    }

    /// The worker thread, its two ROI buffers and its results, all behind `lock`.
    final class Worker: @unchecked Sendable {
        struct Result {
            var symbols: [DecodedSymbol]
            var frame: Frame
            /// The attempt's index in the list, and whether the attempt read the codes.
            var attemptIndex: Int?
            var readByAttempt: Bool
            /// A glance that asks for a full decode of the next frame.
            var lookAgain = false
            /// The scan ran its attempt (plain zbar read nothing).
            var ranAttempt = false
        }

        /// One ROI copy. Owned by the frame loop while neither pending nor busy.
        final class Slot {
            var pixels: UnsafeMutablePointer<UInt8>?
            var capacity = 0
            var roi = PixelRect(x: 0, y: 0, width: 0, height: 0)
            var frame: Frame?
            var attempt: Attempt?
            var attemptIndex: Int?
            var glance = false
            deinit { pixels?.deallocate() }
        }

        let lock = Condition()
        private let scanner: BarcodeScanner
        private let slots = [Slot(), Slot()]
        private var pending: Slot?
        private var busy: Slot?
        private var results: [Result] = []
        private var running = false
        private var stopping = false
        private let exited = DispatchSemaphore(value: 0)
        var decodeNs: UInt64 = 0
        var longestNs: UInt64 = 0
        var replaced = 0

        init(scanner: BarcodeScanner) {
            self.scanner = scanner
            results.reserveCapacity(4)
        }

        var isBusy: Bool {
            lock.lock()
            defer { lock.unlock() }
            return pending != nil || busy != nil
        }

        /// Copies the ROI of `frame` into the free slot and makes it the pending job. Returns the
        /// nanoseconds the copy took.
        @discardableResult
        func submit(_ frame: Frame, roi: PixelRect, attempt: Attempt? = nil, index: Int? = nil, glance: Bool = false) -> UInt64 {
            let r = roi.clamped(width: frame.luma.width, height: frame.luma.height)
            lock.lock()
            if !running { start() }
            if pending != nil { replaced += 1 }
            pending = nil
            let slot = busy === slots[0] ? slots[1] : slots[0]
            lock.unlock()
            // The slot is neither pending nor busy: the worker cannot touch it until it is pending.
            let count = max(1, r.width * r.height)
            if slot.capacity < count {
                slot.pixels?.deallocate()
                slot.pixels = .allocate(capacity: count)
                slot.capacity = count
            }
            let out = slot.pixels!
            let luma = frame.luma
            let t0 = monotonicNanoseconds()
            if !r.isEmpty {
                if luma.pixelStride == 1 {
                    for y in 0..<r.height {
                        (out + y * r.width).update(from: luma.base + (r.y + y) * luma.rowStride + r.x, count: r.width)
                    }
                } else {
                    for y in 0..<r.height {
                        var p = luma.base + (r.y + y) * luma.rowStride + r.x * luma.pixelStride
                        let row = out + y * r.width
                        for x in 0..<r.width {
                            row[x] = p.pointee
                            p += luma.pixelStride
                        }
                    }
                }
            }
            let copyNs = monotonicNanoseconds() &- t0
            slot.roi = r
            slot.frame = frame
            slot.attempt = attempt
            slot.attemptIndex = index
            slot.glance = glance
            lock.lock()
            pending = slot
            lock.signal()
            lock.unlock()
            return copyNs
        }

        /// Waits until nothing is pending or busy, at most `ns` (nil: as long as it takes).
        func waitIdle(ns: UInt64?) {
            let deadline = ns.map { monotonicNanoseconds() + $0 }
            lock.lock()
            while pending != nil || busy != nil {
                if let deadline {
                    if !lock.wait(untilMonotonicNs: deadline) { break }
                } else {
                    lock.wait()
                }
            }
            lock.unlock()
        }

        /// Moves the finished results into `out` (both keep their capacity).
        func take(into out: inout [Result]) {
            lock.lock()
            swap(&results, &out)
            lock.unlock()
        }

        /// Called with the lock held.
        private func start() {
            running = true
            stopping = false
            startThread(name: "kiosk-decode") { [self] in loop() }
        }

        func shutDown() {
            lock.lock()
            guard running else { lock.unlock(); return }
            stopping = true
            lock.broadcast()
            lock.unlock()
            exited.wait()
        }

        private func loop() {
            lock.lock()
            while true {
                while pending == nil && !stopping { lock.wait() }
                if stopping { break }
                let slot = pending!
                pending = nil
                busy = slot
                lock.unlock()
                let t0 = monotonicNanoseconds()
                let (symbols, lookAgain) = decode(slot)
                let byAttempt = scanner.lastReadByAttempt, ranAttempt = scanner.lastRanAttempt
                let ns = monotonicNanoseconds() &- t0
                lock.lock()
                decodeNs += ns
                longestNs = max(longestNs, ns)
                busy = nil
                if let frame = slot.frame {
                    results.append(Result(symbols: symbols, frame: frame, attemptIndex: slot.attemptIndex, readByAttempt: byAttempt,
                                          lookAgain: lookAgain, ranAttempt: ranAttempt))
                }
                slot.frame = nil
                lock.broadcast()
            }
            pending = nil
            running = false
            lock.broadcast()
            lock.unlock()
            exited.signal()
        }

        private func decode(_ slot: Slot) -> (symbols: [DecodedSymbol], lookAgain: Bool) {
            let r = slot.roi
            guard !r.isEmpty, let pixels = slot.pixels else { return ([], false) }
            let luma = LumaPlane(base: pixels, width: r.width, height: r.height, rowStride: r.width)
            let whole = PixelRect(x: 0, y: 0, width: r.width, height: r.height)
            var symbols: [DecodedSymbol], lookAgain = false
            if slot.glance {
                (symbols, lookAgain) = scanner.glance(luma, in: whole)
            } else {
                symbols = scanner.scan(luma, in: whole, attempt: slot.attempt)
            }
            // Back to the frame's coordinates.
            for i in symbols.indices {
                for j in symbols[i].location.indices {
                    symbols[i].location[j].x += r.x
                    symbols[i].location[j].y += r.y
                }
            }
            return (symbols, lookAgain)
        }
    }
}
