// SPDX-License-Identifier: Apache-2.0
import CGPIO
import Glibc
import Platform

/// A GPIO chip the kiosk drives outputs on. The real one is `LibgpiodChip`; `SimulatedChip`
/// stands in with `KIOSK_GPIO_CHIP=sim`; the tests bring their own fakes.
public protocol GPIOChip: AnyObject {
    /// How the chip was named in the configuration, for messages.
    var name: String { get }
    /// Requests line `offset` as an output under `consumer`, driven at the physical `level` (0 or 1)
    /// from the first instant, so a line never glitches to the wrong level while it is claimed.
    /// `activeLow` tells the kernel how the line is wired (what `gpioinfo` shows); levels stay physical.
    func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine
}

/// A requested output line. Levels are physical: 0 low, 1 high.
public protocol GPIOOutputLine: AnyObject {
    var offset: Int { get }
    func setLevel(_ level: Int) throws
    /// Gives the line back to the kernel. Safe to call twice.
    func release()
}

/// A chip that can say who holds its lines (for `kiosk doctor`).
public protocol GPIOChipInspector: AnyObject {
    var name: String { get }
    /// The kernel's name and label of the chip.
    var kernelName: String { get }
    var label: String { get }
    var lineCount: Int { get }
    func lineInfo(offset: Int) throws -> (name: String?, consumer: String?, used: Bool)
}

public struct GPIOError: Error, Equatable, CustomStringConvertible {
    public var chip: String
    public var line: Int?
    public var message: String
    public var errno: Errno?
    /// Who holds the line when it is busy, as the kernel names the consumer.
    public var heldBy: String?

    public init(chip: String, line: Int? = nil, message: String, errno code: Int32, heldBy: String? = nil) {
        self.init(chip: chip, line: line, message: message, errno: Errno(code), heldBy: heldBy)
    }

    public init(chip: String, line: Int? = nil, message: String, errno: Errno? = nil, heldBy: String? = nil) {
        self.chip = chip
        self.line = line
        self.message = message
        self.errno = errno
        self.heldBy = heldBy
    }

    public var description: String {
        var s = "GPIO chip \(chip)"
        if let line { s += " line \(line)" }
        s += ": \(message)"
        if let errno { s += " (\(errno.message))" }
        if let heldBy { s += "; held by \"\(heldBy)\"" }
        return s
    }
}

/// A GPIO chip through libgpiod (the kernel's character device, `/dev/gpiochipN`).
public final class LibgpiodChip: GPIOChip, GPIOChipInspector {
    public let name: String
    private var handle: OpaquePointer?

    /// Opens the chip by name, path, label or number, as libgpiod looks it up.
    public init(_ name: String) throws {
        self.name = name
        guard let h = kiosk_gpio_chip_open(name) else {
            throw GPIOError(chip: name, message: "cannot open the GPIO chip", errno: Glibc.errno)
        }
        handle = h
    }

    deinit { close() }

    /// The shim's chip, for the inputs' requests (Input.swift).
    var rawHandle: OpaquePointer? { handle }

    public func close() {
        if let h = handle { kiosk_gpio_chip_close(h) }
        handle = nil
    }

    public var kernelName: String { handle.map { String(cString: kiosk_gpio_chip_name($0)) } ?? name }
    public var label: String { handle.map { String(cString: kiosk_gpio_chip_label($0)) } ?? "" }
    public var lineCount: Int { handle.map { Int(kiosk_gpio_chip_num_lines($0)) } ?? 0 }

    /// "libgpiod 2.2.1 (v2 API)": the library and the API the shim was built for.
    public static var libraryVersion: String { String(cString: kiosk_gpio_library_version()) }
    /// 1 or 2.
    public static var libraryAPI: Int { Int(kiosk_gpio_api()) }

    /// What the kernel says of a line: its name, and who holds it.
    public func lineInfo(offset: Int) throws -> (name: String?, consumer: String?, used: Bool) {
        guard let h = handle else { throw GPIOError(chip: name, line: offset, message: "chip is closed") }
        guard offset >= 0, offset < lineCount else {
            throw GPIOError(chip: name, line: offset, message: "no such line: the chip has \(lineCount) lines (0-\(lineCount - 1))")
        }
        var lineName: UnsafePointer<CChar>?
        var consumer: UnsafePointer<CChar>?
        var used: Int32 = 0
        guard kiosk_gpio_line_info(h, UInt32(offset), &lineName, &consumer, &used) == 0 else {
            throw GPIOError(chip: name, line: offset, message: "cannot read the line's state", errno: Glibc.errno)
        }
        return (lineName.map { String(cString: $0) }, consumer.map { String(cString: $0) }, used != 0)
    }

    public func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine {
        guard let h = handle else { throw GPIOError(chip: name, line: offset, message: "chip is closed") }
        let info = try lineInfo(offset: offset)
        if info.used {
            throw GPIOError(chip: name, line: offset, message: "line is busy", errno: EBUSY, heldBy: info.consumer ?? "the kernel")
        }
        guard let line = kiosk_gpio_line_request_output(h, UInt32(offset), consumer, activeLow ? 1 : 0, Int32(level)) else {
            let e = Glibc.errno
            let holder = e == EBUSY ? ((try? lineInfo(offset: offset))?.consumer ?? "unknown") : nil
            throw GPIOError(chip: name, line: offset, message: "cannot request the line as an output", errno: e, heldBy: holder)
        }
        return LibgpiodLine(chip: self, offset: offset, line: line)
    }
}

final class LibgpiodLine: GPIOOutputLine {
    let offset: Int
    // Holds the chip open for as long as the line is requested.
    private let chip: LibgpiodChip
    private var line: OpaquePointer?

    init(chip: LibgpiodChip, offset: Int, line: OpaquePointer) {
        self.chip = chip
        self.offset = offset
        self.line = line
    }

    deinit { release() }

    func setLevel(_ level: Int) throws {
        guard let line else { throw GPIOError(chip: chip.name, line: offset, message: "line was released") }
        guard kiosk_gpio_line_set(line, Int32(level)) == 0 else {
            throw GPIOError(chip: chip.name, line: offset, message: "cannot set the line", errno: Glibc.errno)
        }
    }

    func release() {
        if let line { kiosk_gpio_line_release(line) }
        line = nil
    }
}

/// Lines that exist only in the log (`KIOSK_GPIO_CHIP=sim`): for the demo and for trying a
/// configuration on a machine without the wiring.
public final class SimulatedChip: GPIOChip, @unchecked Sendable {  // `inputs` made at start, before any thread reads it
    public let name = "sim"
    /// The inputs requested, whose levels `raise` changes.
    public internal(set) var inputs: [SoftwareInputLine] = []
    public init() {}

    /// The simulated input at `offset`, if one was requested.
    public func input(offset: Int) -> SoftwareInputLine? { inputs.first { $0.offset == offset } }

    public func requestOutput(offset: Int, consumer: String, activeLow: Bool, level: Int) throws -> GPIOOutputLine {
        SimulatedLine(offset: offset)
    }

    final class SimulatedLine: GPIOOutputLine {
        let offset: Int
        init(offset: Int) { self.offset = offset }
        func setLevel(_ level: Int) throws {}
        func release() {}
    }
}
