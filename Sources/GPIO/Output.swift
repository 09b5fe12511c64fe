// SPDX-License-Identifier: Apache-2.0
import Platform
/// An output seen as active or inactive (buzzer sounding, torch lit), whatever level that takes
/// on the wire. Every level driven is reported to `onDrive`, which is how the `gpio` log event sees
/// each change; the simulated chip has nothing else to show.
///
/// Thread-safe: the frame loop drives the torch while the signal thread may shut everything down
/// (a second SIGTERM); once shut down, the line is released and later writes do nothing.
public final class SwitchedOutput: @unchecked Sendable {  // `active` and `released` guarded by `lock`
    public let line: GPIOOutputLine
    public let activeLow: Bool
    private let lock = Lock()
    private var active = false
    private var released = false
    private let onDrive: (_ offset: Int, _ level: Int) -> Void
    public var isActive: Bool { lock.withLock { active } }

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

    public func set(active newState: Bool) throws {
        try lock.withLock {
            guard !released else { return }
            let level = level(active: newState)
            try line.setLevel(level)
            active = newState
            onDrive(line.offset, level)
        }
    }

    /// Leaves the output inactive and gives the line back. Used on every way out; a second call
    /// does nothing.
    public func shutDown() {
        lock.withLock {
            guard !released else { return }
            if active, (try? line.setLevel(level(active: false))) != nil {
                active = false
                onDrive(line.offset, level(active: false))
            }
            released = true
            line.release()
        }
    }
}
