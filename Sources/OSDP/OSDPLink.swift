// SPDX-License-Identifier: Apache-2.0
import Crypto
import Glibc
import Platform
import Policy

/// The kiosk as an OSDP reader on its bus: the serial port, the framer and the peripheral's state
/// machine (`OSDPPeripheral`) on a thread of their own, so that the frame loop never waits for
/// the bus and a reply never waits for a frame. The frame loop hands in card reads (`report`);
/// what the controller commands (LED, buzzer, output) and what happens on the link (online,
/// secure, errors) come out through `onAction`, on the link's thread (they must not block).
public final class OSDPLink: @unchecked Sendable {  // `incoming`, `tamper`, `status`, `stopped` guarded by `lock`
    public struct Status: Equatable, Sendable {
        public var online = false
        public var secure = false
        public var lastCommandNs: UInt64?
        public var pendingCards = 0
        public var baud: Int
        public var address: Int
    }

    public let path: String
    private var peripheral: OSDPPeripheral
    private let lock = Lock()
    private var incoming: [OSDPCardRead] = []
    /// The tamper loop's state for LSTATR, from the door's thread; the link's thread takes it.
    private var tamper = false
    private var stopped = false
    private var running = false
    private var status: Status
    private var framer = OSDPFramer()
    /// The strike's level as the controller set it, for OSTATR.
    private var outputPlan = OSDPOutputPlan()
    private var port: SerialPort?
    private let finished = Condition()
    private var done = false
    /// Line commands and link events, on the link's thread.
    public var onAction: (OSDPPeripheral.Action) -> Void = { _ in }
    /// The port could not be opened or was lost (it is retried each second).
    public var onPortError: (String) -> Void = { _ in }
    /// How long a packet may take to arrive whole after its SOM (then it is dropped).
    public static let packetTimeoutNs: UInt64 = 200_000_000
    /// What the link's times are read on: a packet's timeout, the peripheral's online window, the
    /// output's timer, the port's retry (a test's `ManualClock` moves them by hand). The port is
    /// still read in slices of real time (10 ms), so a moved clock is seen within one.
    private let clock: Clock

    /// Opens the port now (so that a wrong path fails at start, exit 69); the thread starts in `start`.
    public init(path: String, baud: Int, peripheral: OSDPPeripheral, clock: Clock) throws {
        self.path = path
        self.peripheral = peripheral
        self.clock = clock
        status = Status(baud: baud, address: Int(peripheral.settings.address))
        port = try SerialPort(path: path, baud: baud)
    }

    public var snapshot: Status { lock.withLock { status } }

    /// A card read for the controller's next POLL (from any thread; returns at once).
    public func report(_ card: OSDPCardRead) {
        lock.withLock { incoming.append(card) }
    }

    /// The tamper loop's state (from any thread; returns at once): LSTATR's tamper byte from the
    /// controller's next osdp_LSTAT on (1 tamper, 0 normal; nothing unsolicited).
    public func setTamper(_ active: Bool) {
        lock.withLock { tamper = active }
    }

    public func start() {
        lock.withLock { running = true }
        startThread(name: "kiosk.osdp") { [self] in
            loop()
            Crypto.threadEnds()  // Secure Channel's AES ran on this thread
            finished.lock()
            done = true
            finished.broadcast()
            finished.unlock()
        }
    }

    /// Waits (at most `limitNs`) until the controller has polled every card read handed in,
    /// while it is online: the end of a replay, so that its last reads reach the controller.
    public func settle(limitNs: UInt64) {
        let end = monotonicNanoseconds() + limitNs
        while monotonicNanoseconds() < end {
            let s = lock.withLock { (status, incoming.count) }
            guard s.0.online, s.0.pendingCards + s.1 > 0 else { return }
            usleep(5_000)
        }
    }

    /// Stops the thread and closes the port (from any thread; a second call does nothing).
    public func shutDown() {
        let wasRunning = lock.withLock { () -> Bool in
            stopped = true
            return running
        }
        guard wasRunning else { port?.close(); return }
        finished.lock()
        let deadline = monotonicNanoseconds() + 500_000_000
        while !done { if !finished.wait(untilMonotonicNs: deadline) { break } }
        finished.unlock()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func loop() {
        var lastRetryNs: UInt64 = 0
        while !isStopped {
            guard let port else {
                let now = clock.now()
                if now &- lastRetryNs > 1_000_000_000 {
                    lastRetryNs = now
                    do { self.port = try SerialPort(path: path, baud: lock.withLock { status.baud }) } catch {
                        onPortError(String(describing: error))
                    }
                }
                usleep(50_000)
                continue
            }
            let bytes: [UInt8]
            do { bytes = try port.read(timeoutMs: 10) } catch {
                onPortError(String(describing: error))
                port.close()
                self.port = nil
                continue
            }
            let now = clock.now()
            peripheral.outputOn = outputPlan.level(at: now).on
            peripheral.tamper = lock.withLock { tamper } ? 1 : 0
            var outputs = framer.feed(bytes, at: now)
            outputs += framer.expire(at: now, timeoutNs: OSDPLink.packetTimeoutNs)
            for output in outputs {
                switch output {
                case .packet(let packet): carryOut(peripheral.received(packet, at: now), port)
                case .badLength(let n): carryOut(peripheral.badLength(n), port)
                }
            }
            let cards = lock.withLock { () -> [OSDPCardRead] in
                defer { incoming.removeAll() }
                return incoming
            }
            for card in cards { carryOut(peripheral.report(card), port) }
            carryOut(peripheral.tick(at: clock.now()), port)
            let s = Status(online: peripheral.online, secure: peripheral.isSecure, lastCommandNs: peripheral.lastCommandNs,
                           pendingCards: peripheral.pendingCards, baud: port.baud, address: Int(peripheral.settings.address))
            lock.withLock { status = s }
        }
        port?.close()
    }

    private func carryOut(_ actions: [OSDPPeripheral.Action], _ port: SerialPort) {
        for action in actions {
            switch action {
            case .send(let bytes):
                do { try port.write(bytes) } catch { onPortError(String(describing: error)) }
            case .switchBaud(let baud):
                port.drain()
                do { try port.configure(baud: baud) } catch { onPortError(String(describing: error)) }
                onAction(action)
            case .output(let r):
                outputPlan.apply(r, at: clock.now())
                onAction(action)
            default:
                onAction(action)
            }
        }
    }
}
