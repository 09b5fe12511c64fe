// SPDX-License-Identifier: Apache-2.0
import Platform

/// The success beep: the buzzer line goes active and, `beepMilliseconds` later, inactive again,
/// without the frame loop waiting for it. A beep during a beep lengthens it to end
/// `beepMilliseconds` after the second one: two codes read in quick succession sound as one
/// longer beep, never a buzzer stuck on.
public final class Buzzer: @unchecked Sendable {  // state guarded by `lock`
    public let output: SwitchedOutput
    public let beepMilliseconds: Int
    private let clock: Clock
    private let lock = Lock()
    /// Bumped by each beep; a scheduled "off" only acts if no newer beep has come since.
    private var generation = 0
    private var stopped = false
    /// Called with the error when a beep cannot drive the line; scanning goes on.
    public var onError: (Error) -> Void = { _ in }

    public init(output: SwitchedOutput, beepMilliseconds: Int, clock: Clock) {
        self.output = output
        self.beepMilliseconds = beepMilliseconds
        self.clock = clock
    }

    public func beep() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        generation += 1
        let mine = generation
        do { try output.set(active: true) } catch { onError(error) }
        clock.schedule(afterNs: UInt64(beepMilliseconds) * 1_000_000) { [weak self] in self?.endBeep(generation: mine) }
    }

    private func endBeep(generation g: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, g == generation else { return }
        do { try output.set(active: false) } catch { onError(error) }
    }

    /// Silences the buzzer at once and releases its line; later beeps do nothing.
    public func shutDown() {
        lock.lock()
        defer { lock.unlock() }
        stopped = true
        output.shutDown()
    }
}
