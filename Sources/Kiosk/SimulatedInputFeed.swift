// SPDX-License-Identifier: Apache-2.0
import GPIO
import Glibc
import Platform
import Policy

/// With `KIOSK_GPIO_CHIP=sim`: the simulated inputs' levels from the kiosk's standard
/// input, one change a line, `INPUT LEVEL [NS]`: INPUT a line offset or `contact`, `rex`, `tamper`;
/// LEVEL the physical level, 0 or 1 (`contact 1`: the door opens with the default wiring); NS,
/// when given, the moment of the change in CLOCK_MONOTONIC nanoseconds, as the kernel stamps a
/// line's event (else when the line is read): a writer that says a press and its release
/// together, read in one go under load, still gives the debounce the press's real length. A
/// test and demo aid (docs/door.md, "Try the door without wiring"): under systemd standard input is
/// /dev/null and this ends at once. Lines it cannot read are said (`sim_input_ignored`) and skipped.
public enum SimulatedInputFeed {
    public static let maxLineBytes = 200

    public static func start(chip: SimulatedChip, config: Configuration, logger: Logger, descriptor: Int32 = 0) {
        let names: [String: Int] = ["contact": config.doorContactLine, "rex": config.rexLine, "tamper": config.tamperLine,
                                      "emergency": config.emergencyLine]
            .compactMapValues { $0 }
        startThread(name: "kiosk-sim-input") {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                guard let n = try? Syscall.retryingEINTR({ read(descriptor, &buffer, buffer.count) }), n > 0 else { return }
                pending += buffer[0..<n]
                while let end = pending.firstIndex(of: 0x0A) {
                    let line = Array(pending[..<end])
                    pending.removeFirst(end + 1)
                    apply(line, chip: chip, names: names, logger: logger)
                }
                if pending.count > maxLineBytes {
                    logger.warning("sim_input_ignored", ["line": .bytes(Array(pending.prefix(maxLineBytes))), "reason": "longer than 200 bytes"])
                    pending.removeAll()
                }
            }
        }
    }

    static func apply(_ bytes: [UInt8], chip: SimulatedChip, names: [String: Int], logger: Logger) {
        let words = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        guard !words.isEmpty else { return }
        guard words.count == 2 || words.count == 3, let level = Int(words[1]), level == 0 || level == 1,
              let offset = names[words[0]] ?? Int(words[0]), let line = chip.input(offset: offset) else {
            logger.warning("sim_input_ignored", ["line": .bytes(bytes), "reason": "expected INPUT LEVEL [NS]: a simulated input's offset or contact, rex, tamper, emergency; then 0 or 1; then perhaps when, in CLOCK_MONOTONIC ns"])
            return
        }
        guard words.count == 3 else { return line.raise(level: level) }
        // Digits only (UInt64 would also take a sign), and not ahead of the clock: no edge can
        // have happened later than now.
        guard words[2].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let at = UInt64(words[2]), at <= monotonicNanoseconds() else {
            logger.warning("sim_input_ignored", ["line": .bytes(bytes), "reason": "NS must be a CLOCK_MONOTONIC time in nanoseconds, not later than now"])
            return
        }
        line.raise(level: level, timestampNs: at)
    }
}
