// SPDX-License-Identifier: Apache-2.0
import Platform

/// Plays on/off patterns on one output (the buzzer's verdict beeps, a granted or denied LED)
/// without the caller waiting: the first sound starts at once, every later step is scheduled on
/// the clock from the pattern's start, so the steps do not drift by the timer's lateness.
///
/// A new pattern cuts the one playing: the output goes to the new pattern's first sound at once
/// (it stays on if it was sounding) and only the new pattern's steps follow. An empty pattern
/// cuts nothing (a silent read feedback must not silence a verdict still sounding); `silence()`
/// does. The patterns are `BeepPattern.milliseconds` (Policy): on, off, on, ..., each > 0.
public final class PatternPlayer: @unchecked Sendable {  // state guarded by `lock`
    public let output: SwitchedOutput
    private let clock: Clock
    private let lock = Lock()
    /// Bumped by each pattern; a scheduled step only acts if no newer pattern has come since.
    private var generation = 0
    private var endsAtNs: UInt64?
    private var stopped = false
    /// Called with the error when a step cannot drive the line; scanning goes on.
    public var onError: (Error) -> Void = { _ in }

    public init(output: SwitchedOutput, clock: Clock) {
        self.output = output
        self.clock = clock
    }

    /// Whether a pattern is still running (its last step not yet over).
    public var isPlaying: Bool { lock.withLock { endsAtNs.map { clock.now() < $0 } ?? false } }

    /// Plays `steps` (on, off, on, ... milliseconds); returns at once.
    public func play(onOffMilliseconds steps: [Int]) {
        guard !steps.isEmpty else { return }
        precondition(steps.allSatisfy { $0 > 0 }, "a pattern's steps are at least 1 ms (BeepPattern checks them)")
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        generation += 1
        let mine = generation
        drive(true)
        var offsetNs: UInt64 = 0
        for (i, step) in steps.enumerated() {
            offsetNs += UInt64(step) * 1_000_000
            let sounding = (i + 1) % 2 == 0 && i + 1 < steps.count
            // The last step ends silent; a trailing off step leaves nothing to switch.
            if i % 2 == 1 && i + 1 == steps.count { break }
            clock.schedule(afterNs: offsetNs) { [weak self] in self?.step(generation: mine, active: sounding) }
        }
        endsAtNs = clock.now() + offsetNs
    }

    /// Lights (or sounds) the output once for `milliseconds`: an LED's `KIOSK_LED_MS`.
    public func light(milliseconds: Int) { play(onOffMilliseconds: [milliseconds]) }

    /// Cuts whatever is playing; the output goes inactive.
    public func silence() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        generation += 1
        endsAtNs = nil
        drive(false)
    }

    /// Leaves the output inactive and releases its line; later patterns do nothing. On every way
    /// out, from any thread.
    public func shutDown() {
        lock.lock()
        defer { lock.unlock() }
        stopped = true
        generation += 1
        endsAtNs = nil
        output.shutDown()
    }

    private func step(generation g: Int, active: Bool) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, g == generation else { return }
        drive(active)
    }

    /// Drives only a change: a cut during a sound keeps the line on, with no write (and no `gpio`
    /// event) saying it went on again.
    private func drive(_ active: Bool) {
        guard output.isActive != active else { return }
        do { try output.set(active: active) } catch { onError(error) }
    }
}
