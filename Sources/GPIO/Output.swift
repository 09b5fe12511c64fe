// SPDX-License-Identifier: Apache-2.0
/// An output seen as active or inactive (buzzer sounding, torch lit), whatever level that takes
/// on the wire. Every level driven is reported to `onDrive`, which is how the `gpio` log event sees
/// each change; the simulated chip has nothing else to show.
public final class SwitchedOutput {
    public let line: GPIOOutputLine
    public let activeLow: Bool
    public private(set) var isActive = false
    private let onDrive: (_ offset: Int, _ level: Int) -> Void

    /// Requests the line at its inactive level.
    public init(chip: GPIOChip, offset: Int, activeLow: Bool, consumer: String = "kiosk",
                onDrive: @escaping (_ offset: Int, _ level: Int) -> Void = { _, _ in }) throws {
        self.activeLow = activeLow
        self.onDrive = onDrive
        let inactiveLevel = activeLow ? 1 : 0
        line = try chip.requestOutput(offset: offset, consumer: consumer, activeLow: activeLow, level: inactiveLevel)
        onDrive(offset, inactiveLevel)
    }

    public func level(active: Bool) -> Int { (active != activeLow) ? 1 : 0 }

    public func set(active: Bool) throws {
        let level = level(active: active)
        try line.setLevel(level)
        isActive = active
        onDrive(line.offset, level)
    }

    /// Leaves the output inactive and gives the line back. Used on every way out.
    public func shutDown() {
        if isActive { try? set(active: false) }
        line.release()
    }
}
