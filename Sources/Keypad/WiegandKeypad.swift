// SPDX-License-Identifier: Apache-2.0
import GPIO
import Glibc
import Platform
import Policy

/// A Wiegand keypad on two input lines (D0, D1) of the door's chip: the lines' edges, stamped by
/// the kernel where they happened, assembled into key bursts (`WiegandKeypadPolicy`) on the
/// keypad's own thread. The lines are requested under the consumer "kiosk", biased up (a Wiegand
/// line idles high and is pulled low for each bit), not debounced (a bit's pulse is 50-100 us),
/// their falls only: a bit is a fall, and a both-edges request lets the kernel read an edge's type
/// from the line's level when its interrupt thread runs, by when a short pulse may be over (the
/// arm64 VM's keypad saw 1 bit of 64 so).
public final class WiegandKeypad: Keypad, @unchecked Sendable {  // `policy` its thread's own
    /// A burst ends by time only this long after its gap, on the clock now: edges read late (a
    /// busy machine) still join their burst. A person's next key comes later than this anyway.
    static let lateNs: UInt64 = 100_000_000

    public let d0: GPIOInputLine
    public let d1: GPIOInputLine
    private var policy = WiegandKeypadPolicy()
    private let thread = KeypadThread()

    /// Requests the two lines (a `GPIOError` names the line and its holder).
    public init(chip: GPIOInputChip, d0: Int, d1: Int) throws {
        self.d0 = try chip.requestInput(offset: d0, consumer: "kiosk", activeLow: false, bias: .pullUp, debounceMicroseconds: 0, edges: .falls)
        do {
            self.d1 = try chip.requestInput(offset: d1, consumer: "kiosk", activeLow: false, bias: .pullUp, debounceMicroseconds: 0, edges: .falls)
        } catch {
            self.d0.release()
            throw error
        }
    }

    public var description: String { "wiegand:\(d0.offset),\(d1.offset)" }

    public func start(_ listener: KeypadListener) {
        listener.keypadReady(description)
        thread.start { [self] in run(listener) }
    }

    public func shutDown() {
        guard thread.stop() else { return }
        d0.release()
        d1.release()
    }

    private var isStopped: Bool { thread.isStopped }

    private func run(_ listener: KeypadListener) {
        func tell(_ burst: WiegandKeypadPolicy.Burst?) {
            switch burst {
            case .key(let k)?: listener.keyPressed(k)
            case .refused(let n)?: listener.burstRefused(bits: n)
            case nil: break
            }
        }
        // The two lines are two descriptors, read one after the other: `order` gives the edges on
        // in the order the kernel stamped them.
        var order = WiegandEdgeOrder()
        while !isStopped {
            var next = policy.burstEndsNs.map { $0 &+ WiegandKeypad.lateNs }
            if let look = order.nextLookNs { next = min(next ?? .max, look) }
            var timeout: Int32 = -1
            if let next {
                let now = monotonicNanoseconds()
                timeout = next > now ? Int32(min(1000, (next - now + 999_999) / 1_000_000)) : 0
            }
            var fds = [pollfd(fd: thread.wake, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: d0.descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: d1.descriptor, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 3, timeout) < 0 && errno != EINTR {
                listener.keypadLost("poll: \(Errno.current.message)")
                return
            }
            if fds[0].revents != 0 { return }
            order.beginLook()
            do {
                for (i, line) in [(1, d0), (2, d1)] where fds[i].revents != 0 {
                    order.read(try line.readEdges().map { .init(one: i == 2, level: $0.level, timestampNs: $0.timestampNs) })
                }
            } catch {
                listener.keypadLost("\(description): \(error)")
                return
            }
            let now = monotonicNanoseconds()
            for edge in order.settled(nowNs: now) { tell(policy.edge(one: edge.one, level: edge.level, atNs: edge.timestampNs)) }
            if order.isEmpty, now > WiegandKeypad.lateNs { tell(policy.check(atNs: now - WiegandKeypad.lateNs)) }
        }
    }
}
