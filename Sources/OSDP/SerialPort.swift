// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform

/// A serial device in raw mode, 8 data bits, no parity, one stop bit: the bus side of an RS-485
/// transceiver (the Pi's UART `/dev/serial0` with a MAX3485, or a USB adapter). Half duplex is
/// the transceiver's business (auto-direction, or the kernel's RS-485 mode set with the
/// adapter's tools): to the kiosk it is a tty. In the tests it is a pseudo-terminal.
public final class SerialPort {
    public let path: String
    public private(set) var baud: Int
    private var fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The termios speed of each baud rate the kiosk accepts (interface.md).
    static func speed(_ baud: Int) -> speed_t? {
        switch baud {
        case 9600: return speed_t(B9600)
        case 19200: return speed_t(B19200)
        case 38400: return speed_t(B38400)
        case 57600: return speed_t(B57600)
        case 115200: return speed_t(B115200)
        case 230400: return speed_t(B230400)
        default: return nil
        }
    }

    public init(path: String, baud: Int) throws {
        self.path = path
        self.baud = baud
        fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "\(path): cannot open: \(Errno.current)") }
        do { try configure(baud: baud) } catch {
            Glibc.close(fd)
            throw error
        }
        // What the controller sent before the kiosk listened (retries into a dead line) is no
        // command for this start: answering it would answer a past the controller has left.
        flushInput()
    }

    deinit { close() }

    /// Raw mode at `baud`: no echo, no line discipline, no flow control, reads return what is there.
    public func configure(baud: Int) throws {
        guard let speed = SerialPort.speed(baud) else { throw Failure(description: "\(path): \(baud) baud is not supported") }
        var t = termios()
        guard tcgetattr(fd, &t) == 0 else { throw Failure(description: "\(path): not a serial device: \(Errno.current)") }
        cfmakeraw(&t)
        t.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD)
        t.c_cflag &= ~(tcflag_t(CSTOPB) | tcflag_t(PARENB) | tcflag_t(CRTSCTS))
        t.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        cfsetispeed(&t, speed)
        cfsetospeed(&t, speed)
        guard tcsetattr(fd, TCSANOW, &t) == 0 else { throw Failure(description: "\(path): cannot set \(baud) baud: \(Errno.current)") }
        self.baud = baud
    }

    /// What has arrived within `timeoutMs` (empty: nothing). Throws when the device is gone.
    public func read(timeoutMs: Int32) throws -> [UInt8] {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let n: Int32
        do throws(Errno) { n = try Syscall.retryingEINTR { poll(&p, 1, timeoutMs) } } catch {
            throw Failure(description: "\(path): poll: \(error)")
        }
        guard n > 0 else { return [] }
        if p.revents & Int16(POLLIN) == 0 && p.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
            // A pseudo-terminal whose other side is closed: nothing to read until it reopens.
            if p.revents & Int16(POLLHUP) != 0 { usleep(20_000); return [] }
            throw Failure(description: "\(path): the device reports an error")
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        let got: Int
        do throws(Errno) { got = try Syscall.retryingEINTR { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } } } catch {
            if error == EAGAIN || error == EIO { return [] }
            throw Failure(description: "\(path): read: \(error)")
        }
        return Array(buffer[0..<got])
    }

    /// Writes all of `bytes` (waiting for room, at most `timeoutMs` in all), then waits until
    /// they are on the wire, so that the caller can switch speed after a reply.
    public func write(_ bytes: [UInt8], timeoutMs: Int = 500) throws {
        var sent = 0
        let deadline = monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000
        while true {
            do throws(Errno) {
                try Syscall.writeAll(fd, bytes, from: &sent)
                return
            } catch {
                guard error == EAGAIN else { throw Failure(description: "\(path): write: \(error)") }
            }
            guard monotonicNanoseconds() < deadline else { throw Failure(description: "\(path): write timed out") }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&p, 1, 10)
        }
    }

    /// Waits until what was written has left (before a speed change).
    public func drain() { _ = tcdrain(fd) }

    /// Drops what arrived and was not read (before a reply: the bus is the kiosk's).
    public func flushInput() { _ = tcflush(fd, TCIFLUSH) }

    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
