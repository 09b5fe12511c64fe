// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import OSDP
import Platform
import Policy
import TestSupport
import XCTest

/// The OSDP link's own times on a manual clock: the link on a pseudo-terminal, the controller's
/// POLL written by hand. Real time only carries the bytes; when the link goes offline is the
/// clock's business, so the test moves it rather than waiting two seconds.
final class OSDPLinkTests: XCTestCase {
    struct NoKeeper: OSDPKeeper {
        func keep(key: [UInt8]) -> Bool { false }
        func keep(address: Int, baud: Int) -> Bool { false }
    }

    final class Actions: @unchecked Sendable {  // guarded by `lock`
        private let lock = Lock()
        private var list: [OSDPPeripheral.Action] = []
        func add(_ a: OSDPPeripheral.Action) { lock.withLock { list.append(a) } }
        var all: [OSDPPeripheral.Action] { lock.withLock { list } }
    }

    /// Writes `bytes` to the controller's end and returns the reply's packet (within 5 s of real time).
    func exchange(_ master: Int32, _ bytes: [UInt8]) throws -> OSDPPacket {
        XCTAssertEqual(bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }, bytes.count)
        var framer = OSDPFramer()
        var buffer = [UInt8](repeating: 0, count: 512)
        var reply: [UInt8]?
        XCTAssertEventually("a reply to \(bytes)") {
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 10) > 0 else { return false }
            let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            guard n > 0 else { return false }
            for case .packet(let packet) in framer.feed(buffer[0..<n], at: 0) { reply = packet }
            return reply != nil
        }
        return try OSDPPacket.parse(try XCTUnwrap(reply)).get()
    }

    func testOnlineWhilePolledOfflineWhenTheClockPassesTheWindowWithNoCommand() throws {
        let (master, slave) = try PseudoTerminal.open()
        defer { close(master) }
        let settings = OSDPPeripheral.Settings(address: 0, identity: OSDPIdentity(vendorCode: 0, model: 1, version: 1, serial: 1, firmware: (0, 1, 0)),
                                               key: nil, installMode: false, requireSecure: false, hasBuzzer: false, hasLED: false, hasOutput: false)
        let clock = ManualClock()
        let link = try OSDPLink(path: slave, baud: 9600, peripheral: OSDPPeripheral(settings: settings, cipher: OpenSSLCipher(), keeper: NoKeeper()),
                                clock: clock)
        let actions = Actions()
        link.onAction = { actions.add($0) }
        link.start()
        defer { link.shutDown() }
        let ack = try exchange(master, OSDPPacket(address: 0, sequence: 0, check: .crc16, body: [0x60]).encoded())
        XCTAssertEqual(ack.body.first, 0x40, "osdp_ACK to osdp_POLL")
        XCTAssertEventually("online") { link.snapshot.online }
        XCTAssertEqual(actions.all.filter { $0 == .event(.online) }.count, 1)
        // Within the window on the link's clock: a second POLL keeps it online (the link has read
        // the moved clock: the ACK comes after it looked).
        clock.advance(byNs: settings.offlineNs - 100_000_000)
        XCTAssertEqual(try exchange(master, OSDPPacket(address: 0, sequence: 1, check: .crc16, body: [0x60]).encoded()).body.first, 0x40)
        XCTAssertTrue(link.snapshot.online)
        XCTAssertFalse(actions.all.contains(.event(.offline)), "no command missed on the clock: still online")
        // Past the window with no command: offline, said once.
        clock.advance(byNs: settings.offlineNs + 1_000_000)
        XCTAssertEventually("offline", { !link.snapshot.online && actions.all.contains(.event(.offline)) }, "\(actions.all)")
        XCTAssertEqual(actions.all.filter { $0 == .event(.offline) }.count, 1)
    }
}
