// SPDX-License-Identifier: Apache-2.0
import GPIO
import Platform
import Policy

/// What the access controller's OSDP commands do on the kiosk's lines: osdp_LED on
/// the granted (green) and denied (red) LEDs, osdp_BUZ on the buzzer, osdp_OUT output 0 on the
/// strike. The timing is Policy's (`OSDPLEDPlan`, `OSDPOutputPlan`, `OSDPBuzzerRecord.pattern`);
/// here each change is driven and the next one scheduled on the clock. Nothing waits.
public final class OSDPLines: @unchecked Sendable {  // state guarded by `lock`
    private let green: SwitchedOutput?
    private let red: SwitchedOutput?
    private let strike: SwitchedOutput?
    private let buzzer: PatternPlayer?
    private let clock: Clock
    private let logger: Logger
    private let lock = Lock()
    private var led = OSDPLEDPlan()
    private var output = OSDPOutputPlan()
    private var ledGeneration = 0
    private var outputGeneration = 0
    private var strikeOpen = false
    private var stopped = false

    /// The lines are the door reader's (requested inactive under the consumer "kiosk"); in OSDP
    /// mode its verdicts never drive them (the controller decides), only its read beep sounds.
    public init(door: DoorReader, clock: Clock, logger: Logger) {
        green = door.grantedLED?.output
        red = door.deniedLED?.output
        strike = door.door?.output
        buzzer = door.buzzer
        self.clock = clock
        self.logger = logger
    }

    public var hasLED: Bool { green != nil || red != nil }
    public var hasOutput: Bool { strike != nil }
    public var hasBuzzer: Bool { buzzer != nil }

    public func led(_ r: OSDPLEDRecord) {
        lock.withLock {
            guard !stopped else { return }
            led.apply(r, at: clock.now())
            ledGeneration += 1
            refreshLED()
        }
    }

    public func output(_ r: OSDPOutputRecord) {
        lock.withLock {
            guard !stopped else { return }
            output.apply(r, at: clock.now())
            outputGeneration += 1
            refreshOutput()
        }
    }

    public func buzzer(_ r: OSDPBuzzerRecord) {
        let steps = r.pattern
        guard let buzzer else { return }
        if steps.isEmpty { buzzer.silence() } else { buzzer.play(onOffMilliseconds: steps) }
        logger.debug("beep", ["ms": .int(steps.reduce(0, +)), "for": "osdp"])
    }

    /// Later commands do nothing; the lines themselves are shut by the door reader.
    public func shutDown() {
        lock.withLock {
            stopped = true
            ledGeneration += 1
            outputGeneration += 1
            if strikeOpen {
                strikeOpen = false
                logger.info("door", ["state": "closed", "reason": "stop"])
            }
        }
    }

    private func refreshLED() {
        let now = clock.now()
        let (color, next) = led.color(at: now)
        let lamps = OSDPColor.lamps(color)
        try? green?.set(active: lamps.green)
        try? red?.set(active: lamps.red)
        again(.led, at: next, now: now)
    }

    private func refreshOutput() {
        let now = clock.now()
        let (on, next) = output.level(at: now)
        try? strike?.set(active: on)
        if on != strikeOpen {
            strikeOpen = on
            logger.info("door", on ? ["state": "open", "reason": "osdp"] : ["state": "closed", "reason": "osdp"])
        }
        again(.output, at: next, now: now)
    }

    private enum Part: Sendable { case led, output }

    /// Refreshes `part` again at `next` (under the lock), unless the lines stopped or a newer
    /// command for it came since (its generation moved on).
    private func again(_ part: Part, at next: UInt64?, now: UInt64) {
        guard let next, next > now else { return }
        let mine = generation(part)
        clock.schedule(afterNs: next - now) { [weak self] in
            guard let self else { return }
            self.lock.withLock {
                guard !self.stopped, self.generation(part) == mine else { return }
                part == .led ? self.refreshLED() : self.refreshOutput()
            }
        }
    }

    private func generation(_ part: Part) -> Int { part == .led ? ledGeneration : outputGeneration }
}
