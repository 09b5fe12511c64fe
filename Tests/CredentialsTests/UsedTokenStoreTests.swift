// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Glibc
import Platform
import Policy
import TestSupport
import XCTest

/// The used-token store's files on disk: one record a grant, the log folded into the
/// snapshot, and every torn shape read back (a cut at every byte of the last record, zero
/// length, a flipped byte, a compaction cut at each step); whether a folder survives a power cut.
final class UsedTokenStoreTests: XCTestCase {
    var folder = ""
    var snapshot: String { folder + "/used-tokens" }
    var log: String { folder + "/used-tokens.log" }

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-store-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
    func write(_ b: [UInt8], _ path: String) { FileManager.default.createFile(atPath: path, contents: Data(b)) }
    func claim(_ s: UsedTokenStore, _ key: String, uses: Int = 1) -> UsedTokenStore.Claim {
        s.claim(key, until: 2_000_000_000, now: 1_000, skew: 0, uses: uses)
    }

    func testAGrantAppendsOneRecordAndARestartKnowsIt() {
        let s = UsedTokenStore(directory: folder)
        XCTAssertEqual(claim(s, "c:01"), .fresh)
        XCTAssertEqual(claim(s, "p:02", uses: 2), .fresh)
        XCTAssertEqual(claim(s, "p:02", uses: 2), .fresh)
        XCTAssertFalse(FileManager.default.fileExists(atPath: snapshot), "no snapshot until the log is folded")
        XCTAssertEqual(String(decoding: bytes(log), as: UTF8.self).split(separator: "\n").count, 3, "one record a grant")
        let again = UsedTokenStore(directory: folder)
        XCTAssertNil(again.damage)
        XCTAssertEqual(again.recoveries, [])
        XCTAssertEqual(claim(again, "c:01"), .used)
        XCTAssertEqual(claim(again, "p:02", uses: 2), .used)
        XCTAssertEqual(again.uses(of: "p:02"), 2)
    }

    func testTheLogIsFoldedIntoTheSnapshotAndEverythingSurvives() throws {
        let s = UsedTokenStore(directory: folder, minimumLogBytes: 1000)
        for i in 0..<100 { XCTAssertEqual(claim(s, "c:" + String(format: "%04x", i)), .fresh) }
        let sizes = s.sizes
        XCTAssertGreaterThan(sizes.snapshotBytes, 0, "folded at least once")
        XCTAssertLessThan(sizes.logBytes, max(1000, sizes.snapshotBytes) + 100)
        XCTAssertNil(s.compactionProblem)
        XCTAssertEqual(bytes(log).count, sizes.logBytes)
        let again = UsedTokenStore(directory: folder)
        XCTAssertEqual(again.count, 100)
        for i in 0..<100 { XCTAssertEqual(claim(again, "c:" + String(format: "%04x", i)), .used) }
    }

    /// The last record cut at each of its bytes (a power cut during its write: never
    /// acknowledged): every record before it is kept, the tail cut off, the next record follows.
    func testALogCutAtEveryByteOfItsLastRecord() throws {
        let s = UsedTokenStore(directory: folder)
        for k in ["c:01", "c:02", "c:03"] { XCTAssertEqual(claim(s, k), .fresh) }
        let whole = bytes(log)
        let lastStart = whole.dropLast().lastIndex(of: 0x0A)! + 1
        for cut in lastStart..<whole.count {
            write(Array(whole.prefix(cut)), log)
            let t = UsedTokenStore(directory: folder)
            XCTAssertNil(t.damage, "cut at \(cut)")
            XCTAssertEqual(t.count, 2, "cut at \(cut)")
            if cut == lastStart {
                XCTAssertEqual(t.recoveries, [], "a cut between records is no damage")
            } else {
                XCTAssertEqual(t.recoveries.map(\.file), [log], "cut at \(cut)")
                XCTAssertEqual(t.recoveries.first?.did, "recovered 2 of 2 complete records, dropped a torn tail of \(cut - lastStart) bytes (a record never acknowledged)")
            }
            XCTAssertEqual(bytes(log).count, lastStart, "the torn tail is cut off: cut at \(cut)")
            XCTAssertEqual(claim(t, "c:01"), .used)
            XCTAssertEqual(claim(t, "c:03"), .fresh, "cut at \(cut)")
            XCTAssertEqual(bytes(log), whole, "the record written again follows the whole ones")
        }
    }

    func testZeroLengthFilesAndFlippedBytes() throws {
        let s = UsedTokenStore(directory: folder, minimumLogBytes: 1)
        XCTAssertEqual(claim(s, "c:01"), .fresh)
        XCTAssertEqual(claim(s, "c:02"), .fresh)
        XCTAssertGreaterThan(bytes(snapshot).count, 0)
        XCTAssertEqual(String(decoding: bytes(log), as: UTF8.self).split(separator: "\n").count, 1, "the first grant folded, the second's record")
        // A zero-length log: nothing to replay, no damage.
        XCTAssertNil(UsedTokenStore(directory: folder).damage)
        // A zero-length snapshot (a rename the card had not made durable): damaged, every claim refused.
        let good = bytes(snapshot)
        write([], snapshot)
        let zero = UsedTokenStore(directory: folder)
        XCTAssertEqual(zero.damage, "\(snapshot): zero length")
        XCTAssertEqual(zero.damageFile, snapshot)
        XCTAssertTrue(zero.recoveries.first?.did.hasPrefix("nothing recovered from the snapshot") ?? false, "\(zero.recoveries)")
        guard case .unavailable = claim(zero, "c:09") else { return XCTFail("a damaged store must not grant") }
        XCTAssertEqual(bytes(snapshot), [], "nothing written to a damaged store")
        // A byte flipped anywhere in the snapshot: damaged.
        for i in 0..<good.count {
            var b = good
            b[i] ^= 0x04
            write(b, snapshot)
            XCTAssertNotNil(UsedTokenStore(directory: folder).damage, "byte \(i) flipped")
        }
        write(good, snapshot)
        // A byte flipped in a record before a whole one: that record is lost, said, and refused.
        let l = UsedTokenStore(directory: folder, minimumLogBytes: 1 << 20)
        for k in ["c:03", "c:04"] { XCTAssertEqual(claim(l, k), .fresh) }
        var b = bytes(log)
        b[1] ^= 0x04
        write(b, log)
        let d = UsedTokenStore(directory: folder)
        XCTAssertEqual(d.damageFile, log)
        XCTAssertTrue(d.recoveries.first?.did.hasPrefix("recovered 2 records; 1 damaged record(s)") ?? false, "\(d.recoveries)")
        guard case .unavailable = claim(d, "c:05") else { return XCTFail("a store that lost a record must not grant") }
        // The doctor's reading changes nothing.
        let before = bytes(log)
        write(before + Array("c:06 - 1 0000".utf8), log)
        _ = UsedTokenStore(directory: folder, readOnly: true)
        XCTAssertEqual(bytes(log).count, before.count + 13)
    }

    /// A compaction cut at each step: before its rename (a `.new` left), between the rename and the
    /// log's truncation (the log's records replayed onto a snapshot that holds them).
    func testACompactionCutAtEachStep() throws {
        let s = UsedTokenStore(directory: folder, minimumLogBytes: 1 << 20)
        XCTAssertEqual(claim(s, "c:01", uses: 3), .fresh)
        XCTAssertEqual(claim(s, "c:01", uses: 3), .fresh)
        let records = bytes(log)
        // Before the rename: an unfinished snapshot beside the old one.
        write(Array("kiosk-used-tokens 2\nc:01 2000".utf8), snapshot + ".new")
        let a = UsedTokenStore(directory: folder)
        XCTAssertNil(a.damage)
        XCTAssertEqual(a.recoveries.map(\.file), [snapshot + ".new"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: snapshot + ".new"))
        XCTAssertEqual(a.uses(of: "c:01"), 2)
        // After the rename, before the truncation: the new snapshot and the old log: nothing counted twice.
        var t = UsedTokens()
        _ = UsedTokenLog.replay(records, into: &t)
        write(Array(t.fileText.utf8), snapshot)
        let b = UsedTokenStore(directory: folder)
        XCTAssertNil(b.damage)
        XCTAssertEqual(b.uses(of: "c:01"), 2, "a record replayed twice changes nothing")
        XCTAssertEqual(claim(b, "c:01", uses: 3), .fresh)
        XCTAssertEqual(claim(b, "c:01", uses: 3), .used)
    }

    func testWhatAVolatileFolderRefuses() {
        let s = UsedTokenStore(directory: folder)
        s.refuseWhenVolatile("/x is on tmpfs (in RAM)")
        guard case .unavailable = claim(s, "c:01") else { return XCTFail("a one-time credential on a volatile folder") }
        guard case .unavailable = claim(s, "p:01") else { return XCTFail("a ticket entry on a volatile folder") }
        XCTAssertTrue(s.refusesAsVolatile("c:01"))
        XCTAssertEqual(claim(s, "t:01:7"), .fresh, "a rotating code's step is over before a reboot")
    }

    func testTmpfsIsVolatileAndThisFolderIsNot() throws {
        guard StateDirectoryProbe.system.magicOf("/dev/shm") == StateDurability.tmpfsMagic else { throw XCTSkip("/dev/shm is not tmpfs here") }
        guard case .volatile(let why) = StateDirectoryProbe.system.verdict("/dev/shm/kiosk-not-made-yet") else { return XCTFail("/dev/shm") }
        XCTAssertEqual(why, "/dev/shm is on tmpfs (in RAM)", "a folder not made yet: its parent")
        if StateDirectoryProbe.system.magicOf(folder) != StateDurability.tmpfsMagic {
            XCTAssertEqual(StateDirectoryProbe.system.verdict(folder), .durable)
        }
        // Injected readings: an overlay whose upper layer is on tmpfs.
        let probe = StateDirectoryProbe(magicOf: { $0 == "/up" ? StateDurability.tmpfsMagic : StateDurability.overlayMagic },
                                        mountinfo: { "1 0 0:1 / / rw - overlay overlay rw,lowerdir=/lo,upperdir=/up,workdir=/wk\n" })
        guard case .volatile = probe.verdict("/var/lib") else { return XCTFail("an overlay on RAM") }
    }

    /// A real overlay (as Raspberry Pi OS's read-only root mounts one): its upper layer on tmpfs is
    /// volatile, on this folder's disk it is not. Needs root and overlayfs: skipped otherwise.
    func testARealOverlayWithItsUpperLayerInRAMOrOnDisk() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting needs root") }
        func mount(_ args: [String]) -> Bool {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/mount")
            p.arguments = args
            p.standardError = FileHandle.nullDevice
            return (try? Child.run(p))?.status == 0
        }
        func umount(_ path: String) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/umount")
            p.arguments = [path]
            _ = try? Child.run(p)
        }
        let ram = folder + "/ram", disk = folder + "/disk"
        for d in [ram, disk + "/lower", disk + "/upper", disk + "/work", folder + "/merged-ram", folder + "/merged-disk", folder + "/lower"] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
        guard mount(["-t", "tmpfs", "tmpfs", ram]) else { throw XCTSkip("tmpfs cannot be mounted here") }
        defer { umount(ram) }
        for d in [ram + "/upper", ram + "/work"] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        guard mount(["-t", "overlay", "overlay", "-o", "lowerdir=\(folder)/lower,upperdir=\(ram)/upper,workdir=\(ram)/work", folder + "/merged-ram"]) else {
            throw XCTSkip("overlayfs cannot be mounted here")
        }
        defer { umount(folder + "/merged-ram") }
        XCTAssertEqual(StateDirectoryProbe.system.verdict(folder + "/merged-ram/kiosk"),
                       .volatile("\(folder)/merged-ram is on an overlay (\(folder)/merged-ram) whose upper layer \(ram)/upper is on tmpfs (in RAM): a read-only root"))
        guard mount(["-t", "overlay", "overlay", "-o", "lowerdir=\(disk)/lower,upperdir=\(disk)/upper,workdir=\(disk)/work", folder + "/merged-disk"]) else {
            throw XCTSkip("overlayfs on this folder's file system cannot be mounted here")
        }
        defer { umount(folder + "/merged-disk") }
        if StateDirectoryProbe.system.magicOf(folder) != StateDurability.tmpfsMagic {
            XCTAssertEqual(StateDirectoryProbe.system.verdict(folder + "/merged-disk"), .durable)
        }
    }
}
