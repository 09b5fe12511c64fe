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
    /// Times the torch went off for a look at a screen (not in `changes`: the fleet hears only
    /// the policy's switches).
    public private(set) var screenLooks = 0
    /// Looks at phone screens with the torch off (`KIOSK_TORCH_SCREEN_MS`); nil: never.
    public private(set) var screenLook: ScreenLook?

    public init(policy: TorchPolicy, output: SwitchedOutput?, logger: Logger, failures: GPIOWriteFailures? = nil,
                screenLook: ScreenLook? = nil) {
        self.policy = policy
        self.output = output
        self.logger = logger
        self.failures = failures
        self.screenLook = screenLook.flatMap { $0.settings.afterNs > 0 ? $0 : nil }
    }

    /// Whether the torch is wanted on (its policy's state; a screen look turns it off for a moment
    /// without changing this).
    public var isOn: Bool { policy.isOn }
    /// Whether the torch's line is lit now.
    public var isLit: Bool { policy.isOn && !(screenLook?.looking ?? false) }

    public func start(at t: UInt64) { apply(policy.start(at: t)) }

    /// A frame's brightness. Not learned from during a screen look and its settle time: those
    /// frames are the room without the torch the policy believes on.
    public func observe(brightness: Double, at t: UInt64) {
        if let screenLook, screenLook.quiet(at: t) { return }
        apply(policy.observe(brightness: brightness, at: t))
    }

    /// A frame's reading: whether something is held in the ROI and whether a code was read.
    public func observeReading(held: Bool, read: Bool, at t: UInt64) {
        guard screenLook != nil, let change = screenLook!.observe(at: t, torchWanted: policy.isOn, held: held, read: read) else { return }
        let lit: Bool
        switch change {
        case .off: lit = false
        case .on: lit = true
        }
        if !lit { screenLooks += 1 }
        do { try output?.set(active: lit) } catch { failures?.report(error) }
        var fields: [(String, LogValue)] = [("state", .text(lit ? "on" : "off")), ("brightness", .number(policy.ambient ?? 0, digits: 1)),
                                            ("reason", "screen")]
        if case .on(let read) = change { fields.append(("read", .bool(read))) }
        logger.log(.info, "torch", fields: fields)
        onSwitch(lit)
    }

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
