// SPDX-License-Identifier: Apache-2.0
import GPIO
import Policy

/// The torch: its policy's decisions carried out on the torch line and told in the log.
public final class Torch {
    public private(set) var policy: TorchPolicy
    let output: SwitchedOutput?
    let logger: Logger
    let failures: GPIOWriteFailures?
    /// Told of every switch (the demo's simulated scene lights up with it).
    public var onSwitch: (Bool) -> Void = { _ in }
    public private(set) var changes = 0

    public init(policy: TorchPolicy, output: SwitchedOutput?, logger: Logger, failures: GPIOWriteFailures? = nil) {
        self.policy = policy
        self.output = output
        self.logger = logger
        self.failures = failures
    }

    public var isOn: Bool { policy.isOn }

    public func start(at t: UInt64) { apply(policy.start(at: t)) }

    public func observe(brightness: Double, at t: UInt64) { apply(policy.observe(brightness: brightness, at: t)) }

    public func forceOff(at t: UInt64, reason: String) { apply(policy.forceOff(at: t, reason: reason)) }

    public func resume(at t: UInt64) { apply(policy.resume(at: t)) }

    /// Off and released, on every way out. Safe from another thread (the signal thread on a
    /// second signal): it touches only the output, which has its own lock.
    public func shutDown() { output?.shutDown() }

    private func apply(_ list: [TorchPolicy.Change]) {
        for change in list {
            changes += 1
            do { try output?.set(active: change.on) } catch { failures?.report(error) }
            logger.info("torch", ["state": change.on ? "on" : "off", "brightness": .number(change.brightness, digits: 1),
                                  "reason": .text(change.reason)])
            onSwitch(change.on)
        }
    }
}
