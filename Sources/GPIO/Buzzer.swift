// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Platform

/// Runs a piece of work later. The buzzer takes one so that tests can drive time by hand.
public protocol Scheduler: AnyObject {
    func after(milliseconds: Int, _ work: @escaping @Sendable () -> Void)
}

/// Work on a private serial queue at real time.
public final class DispatchScheduler: Scheduler {
    private let queue: DispatchQueue
    public init(label: String = "kiosk.buzzer") { queue = DispatchQueue(label: label) }
    public func after(milliseconds: Int, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds), execute: work)
    }
}

/// The success beep: the buzzer line goes active and, `beepMilliseconds` later, inactive again,
/// without the frame loop waiting for it. A beep during a beep lengthens it to end
/// `beepMilliseconds` after the second one: two codes read in quick succession sound as one
/// longer beep, never a buzzer stuck on.
public final class Buzzer: @unchecked Sendable {  // state guarded by `lock`
    public let output: SwitchedOutput
    public let beepMilliseconds: Int
    private let scheduler: Scheduler
    private let lock = Lock()
    /// Bumped by each beep; a scheduled "off" only acts if no newer beep has come since.
    private var generation = 0
    private var stopped = false
    /// Called with the error when a beep cannot drive the line; scanning goes on.
    public var onError: (Error) -> Void = { _ in }

    public init(output: SwitchedOutput, beepMilliseconds: Int, scheduler: Scheduler) {
        self.output = output
        self.beepMilliseconds = beepMilliseconds
        self.scheduler = scheduler
    }

    public func beep() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        generation += 1
        let mine = generation
        do { try output.set(active: true) } catch { onError(error) }
        scheduler.after(milliseconds: beepMilliseconds) { [weak self] in self?.endBeep(generation: mine) }
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
