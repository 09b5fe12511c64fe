// SPDX-License-Identifier: Apache-2.0
import GPIO
import Platform
import Policy

/// What must be left inactive if the process has to end at once (a second signal).
/// Set by the frame loop's thread, used by the signal thread: both under `lock`. The outputs'
/// own locks make a shutdown while the frame loop drives a line safe.
final class OutputsOnExit: @unchecked Sendable {  // guarded by `lock`
    private let lock = Lock()
    private var door: DoorReader?
    private var torch: Torch?
    private var watch: DoorWatch?
    func hold(door: DoorReader?, torch: Torch?, watch: DoorWatch? = nil) {
        lock.withLock { self.door = door; self.torch = torch; self.watch = watch }
    }
    func silence() {
        let (d, t, w) = lock.withLock { (door, torch, watch) }
        // The inputs first: an exit button pressed now cannot open a strike being shut.
        w?.shutDown()
        d?.shutDown()
        t?.shutDown()
    }
}

extension OutputLines {
    /// The lines, requested now (exit 69 names the chip, the line and its holder); a second
    /// signal silences them at once.
    static func assemble(_ a: Assembly) throws -> OutputLines {
        let lines: OutputLines
        do {
            lines = try OutputLines(a.config, logger: a.logger, clock: a.clock)
        } catch {
            KioskService.logGPIOError(error, logger: a.logger)
            throw ServiceExit(ExitStatus.unavailable)
        }
        a.outputs.hold(door: lines.door, torch: lines.torch, watch: lines.watch)
        return lines
    }
}

/// The GPIO chip and the lines the configuration asks for: all requested at their inactive level
/// under the consumer name `kiosk`, or none (exit 69 names the chip, the line and its holder).
struct OutputLines {
    /// The buzzer's patterns, the LEDs, the strike and Wiegand (there even with no line: the
    /// verdicts are logged).
    var door: DoorReader
    var torch: Torch?
    /// The door's inputs, when any is configured; the simulated chip whose inputs
    /// standard input drives (`KIOSK_GPIO_CHIP=sim`).
    var watch: DoorWatch?
    var simulatedChip: SimulatedChip?

    init(_ config: Configuration, logger: Logger, clock: Clock) throws {
        let failures = GPIOWriteFailures(logger: logger, clock: clock)
        let policy = TorchPolicy(settings: .init(mode: config.torch == .on ? .on : config.torch == .off ? .off : .auto,
                                                 onBelow: config.torchOnBelow, offAbove: config.torchOffAbove,
                                                 holdNs: UInt64(config.torchHoldMs) * 1_000_000))
        guard !config.lines.isEmpty || config.watchesDoor else {
            door = DoorReader(configuration: config, lines: .init(), logger: logger, clock: clock, failures: failures)
            return
        }
        let simulated = config.isSimulatedGPIO ? SimulatedChip() : nil
        simulatedChip = simulated
        let chip: GPIOInputChip = try simulated ?? LibgpiodChip(config.gpioChip)
        let gpioLevel: LogLevel = config.isSimulatedGPIO ? .info : .debug
        let onDrive: (Int, Int) -> Void = { offset, level in
            logger.log(gpioLevel, "gpio", ["line": .int(offset), "value": .int(level)])
        }
        var made: [SwitchedOutput] = []
        func output(_ line: Int?, activeLow: Bool) throws -> SwitchedOutput? {
            guard let line else { return nil }
            do {
                let o = try SwitchedOutput(chip: chip, offset: line, activeLow: activeLow, onDrive: onDrive)
                made.append(o)
                return o
            } catch {
                // All or none: the lines taken so far go back, inactive.
                made.forEach { $0.shutDown() }
                throw error
            }
        }
        var lines = DoorReader.Lines()
        lines.buzzer = try output(config.buzzerLine, activeLow: config.buzzerActiveLow)
        let torchOutput = try output(config.torchLine, activeLow: config.torchActiveLow)
        lines.grantedLED = try output(config.grantedLedLine, activeLow: config.grantedLedActiveLow)
        lines.deniedLED = try output(config.deniedLedLine, activeLow: config.deniedLedActiveLow)
        lines.door = try output(config.doorLine, activeLow: config.doorActiveLow)
        if let d0 = try output(config.wiegandD0Line, activeLow: config.wiegandActiveLow),
           let d1 = try output(config.wiegandD1Line, activeLow: config.wiegandActiveLow) {
            lines.wiegand = (d0, d1)
        }
        // The inputs, all or none (the outputs go back too when one cannot be had).
        var inputs: [DoorWatchPolicy.Input: DoorWatch.Input] = [:]
        let bias = GPIOBias(rawValue: config.inputBias.rawValue) ?? .pullUp
        for (input, line, activeLow) in [(DoorWatchPolicy.Input.contact, config.doorContactLine, config.doorContactActiveLow),
                                         (.rex, config.rexLine, config.rexActiveLow), (.tamper, config.tamperLine, config.tamperActiveLow),
                                         (.emergency, config.emergencyLine, config.emergencyActiveLow)] {
            guard let line else { continue }
            do {
                let l = try chip.requestInput(offset: line, consumer: "kiosk", activeLow: activeLow, bias: bias,
                                              debounceMicroseconds: config.inputDebounceMs * 1000)
                inputs[input] = DoorWatch.Input(line: l, activeLow: activeLow)
            } catch {
                inputs.values.forEach { $0.line.release() }
                made.forEach { $0.shutDown() }
                throw error
            }
        }
        door = DoorReader(configuration: config, lines: lines, logger: logger, clock: clock, failures: failures)
        torch = torchOutput.map { Torch(policy: policy, output: $0, logger: logger, failures: failures,
                                        screenLook: ScreenLook(settings: .init(afterMs: config.torchScreenMs))) }
        if !inputs.isEmpty {
            // The kernel debounced (libgpiod v2 with a period): the monitor takes the edges as they come.
            let kernelDebounced = inputs.values.allSatisfy { $0.line.kernelDebounced }
            let settings = DoorWatchPolicy.Settings(heldNs: UInt64(config.doorHeldS) * 1_000_000_000,
                                                debounceNs: kernelDebounced ? 0 : UInt64(config.inputDebounceMs) * 1_000_000,
                                                rexOpens: config.rexOpens, relockOnContact: config.doorRelock == .contact,
                                                releaseMilliseconds: config.doorMs)
            watch = DoorWatch(settings: settings, inputs: inputs, door: door, alarmPattern: config.beepAlarm, logger: logger)
            logger.log(.info, "door_inputs", fields: inputs.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, LogValue.int($0.value.line.offset)) }
                        + [("bias", .text(bias.rawValue)), ("debounce", .text(config.inputDebounceMs == 0 ? "off" : kernelDebounced ? "kernel" : "kiosk"))])
        }
    }
}

