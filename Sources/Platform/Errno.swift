// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A system call's failure, as errno named it: the one error number type of the kiosk (the camera's
/// and the GPIO chip's errors carry one). Compares with glibc's constants: `error.errno == ENODEV`.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) { self.code = code }

    /// errno as it is now, right after the call that failed.
    public static var current: Errno { Errno(Glibc.errno) }

    /// "No such device (errno 19)".
    public var description: String { "\(message) (errno \(code))" }
    /// "No such device".
    public var message: String { String(cString: strerror(code)) }

    public static func == (a: Errno, b: Int32) -> Bool { a.code == b }
}

/// `error.errno == ENODEV` where the error may carry no errno.
public func == (a: Errno?, b: Int32) -> Bool { a?.code == b }
public func != (a: Errno?, b: Int32) -> Bool { a?.code != b }
