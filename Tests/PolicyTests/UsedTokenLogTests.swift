// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The used-token store's journal and snapshot read back after every torn shape, and
/// whether the state directory survives a power cut.
final class UsedTokenLogTests: XCTestCase {
    func testCRC32IsZlibs() {
        XCTAssertEqual(CRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926, "the CRC-32 check value (zlib's crc32)")
        XCTAssertEqual(CRC32.checksum([UInt8]()), 0)
        XCTAssertEqual(CRC32.hex(0xAB), "000000ab")
    }

    /// Three grants' records (a one-time credential, a ticket entry counted twice, a rotating step).
    func log() -> (bytes: [UInt8], records: [[UInt8]], tokens: UsedTokens) {
        var t = UsedTokens()
        var records: [[UInt8]] = []
        for (key, expiry, uses) in [("c:0a0b", Int64(2_000_000_000), 1), ("p:ff", nil, 3), ("p:ff", nil, 3), ("t:6361:7", 100, 1)] {
            XCTAssertEqual(t.claim(key, until: expiry, now: 0, skew: 0, uses: uses), .fresh)
            records.append(UsedTokenLog.record(key, in: t)!)
        }
        return (records.flatMap { $0 }, records, t)
    }

    func testARecordIsOneCheckedLineAndTheLogReplaysIntoTheState() throws {
        let (bytes, records, t) = log()
        XCTAssertEqual(String(decoding: records[0], as: UTF8.self), "c:0a0b 2000000000 1 \(CRC32.hex(CRC32.checksum(Array("c:0a0b 2000000000 1".utf8))))\n")
        XCTAssertEqual(String(decoding: records[2], as: UTF8.self).split(separator: " ")[2], "2", "the count after the claim, not +1")
        var back = UsedTokens()
        let r = UsedTokenLog.replay(bytes, into: &back)
        XCTAssertEqual(back, t)
        XCTAssertEqual(r.records, 4)
        XCTAssertEqual(r.goodLength, bytes.count)
        XCTAssertEqual(r.tornBytes, 0)
        XCTAssertEqual(r.damagedRecords, 0)
        // Replayed again onto what already holds it (a compaction cut between its rename and the
        // log's truncation): nothing changes, a count is never lowered.
        var twice = back
        _ = UsedTokenLog.replay(bytes, into: &twice)
        XCTAssertEqual(twice, t)
        var newer = UsedTokens()
        newer.set("p:ff", until: nil, uses: 3)
        _ = UsedTokenLog.replay(bytes, into: &newer)
        XCTAssertEqual(newer.uses(of: "p:ff"), 3)
    }

    func testALogCutAtEveryByteOfItsLastRecordKeepsEveryRecordBeforeIt() {
        let (bytes, records, _) = log()
        let before = records.dropLast().flatMap { $0 }
        var expected = UsedTokens()
        _ = UsedTokenLog.replay(before, into: &expected)
        for cut in before.count..<bytes.count {
            var t = UsedTokens()
            let r = UsedTokenLog.replay(Array(bytes.prefix(cut)), into: &t)
            XCTAssertEqual(t, expected, "cut at \(cut)")
            XCTAssertEqual(r.records, 3, "cut at \(cut)")
            XCTAssertEqual(r.goodLength, before.count, "cut at \(cut)")
            XCTAssertEqual(r.tornBytes, cut - before.count, "cut at \(cut)")
            XCTAssertEqual(r.damagedRecords, 0, "a torn tail is not damage: cut at \(cut)")
            XCTAssertFalse(t.contains("t:6361:7"), "cut at \(cut)")
        }
        // A cut anywhere at all: only whole records, never a changed one.
        for cut in 0...bytes.count {
            var t = UsedTokens()
            let r = UsedTokenLog.replay(Array(bytes.prefix(cut)), into: &t)
            XCTAssertEqual(r.records, records.reduce(into: [0]) { $0.append($0.last! + $1.count) }.filter { $0 > 0 && $0 <= cut }.count, "cut at \(cut)")
            XCTAssertEqual(r.damagedRecords, 0)
        }
    }

    /// Empty lines (a line end doubled by a bad sector) are damage, not a crash: FuzzStore found
    /// the replay trapping on them.
    func testEmptyLinesAreDamageNotACrash() {
        var tokens = UsedTokens()
        _ = tokens.claim("c:0ca201", until: 2_000_000_000, now: 1_000, skew: 30)
        let record = UsedTokenLog.record("c:0ca201", in: tokens)!
        var replayed = UsedTokens()
        let r = UsedTokenLog.replay(Array("\n\n".utf8) + record + Array("\n".utf8), into: &replayed)
        XCTAssertEqual(r.records, 1)
        XCTAssertEqual(r.damagedRecords, 2)
        XCTAssertEqual(replayed.entries, tokens.entries)
        var none = UsedTokens()
        XCTAssertEqual(UsedTokenLog.replay(Array("\n".utf8), into: &none).records, 0)
    }

    func testZeroLengthZerosAndFlippedBytes() {
        var t = UsedTokens()
        XCTAssertEqual(UsedTokenLog.replay([], into: &t), UsedTokenLog.Replay())
        let (bytes, records, _) = log()
        // The tail a file system may leave: zeros where the record was to be.
        let zeros = UsedTokenLog.replay(bytes + [UInt8](repeating: 0, count: 4096), into: &t)
        XCTAssertEqual(zeros.records, 4)
        XCTAssertEqual(zeros.tornBytes, 4096)
        XCTAssertEqual(zeros.damagedRecords, 0)
        // A byte flipped in the last record: it is the torn tail (dropped, never acknowledged).
        // In an earlier one: that record is lost and said (damage), every other one kept.
        let lastStart = bytes.count - records.last!.count
        for i in 0..<bytes.count {
            for flip: UInt8 in [0x01, 0x80, 0x20] {
                var b = bytes
                b[i] ^= flip
                var u = UsedTokens()
                let r = UsedTokenLog.replay(b, into: &u)
                if i >= lastStart {
                    XCTAssertEqual(r.records, 3, "byte \(i) ^ \(flip)")
                    XCTAssertEqual(r.damagedRecords, 0, "byte \(i) ^ \(flip)")
                    XCTAssertGreaterThan(r.tornBytes, 0, "byte \(i) ^ \(flip)")
                } else if b[i] == 0x0A || bytes[i] == 0x0A {
                    // A line end made or unmade: two records become one bad line, or one becomes two.
                    XCTAssertGreaterThan(r.damagedRecords, 0, "byte \(i) ^ \(flip)")
                } else {
                    XCTAssertEqual(r.records, 3, "byte \(i) ^ \(flip)")
                    XCTAssertEqual(r.damagedRecords, 1, "byte \(i) ^ \(flip)")
                    XCTAssertEqual(r.tornBytes, 0, "byte \(i) ^ \(flip)")
                }
            }
        }
    }

    func testTheSnapshotReadsBackExactlyOrIsDamaged() throws {
        let (_, _, t) = log()
        let text = t.fileText
        XCTAssertTrue(text.hasPrefix("kiosk-used-tokens 2\n"))
        XCTAssertEqual(try UsedTokens.parse(text).get(), t)
        guard case .failure(let zero) = UsedTokens.parse("") else { return XCTFail("zero length reads") }
        XCTAssertEqual(zero.description, "zero length")
        let bytes = Array(text.utf8)
        for cut in 0..<bytes.count {
            XCTAssertThrowsError(try UsedTokens.parse(String(decoding: bytes.prefix(cut), as: UTF8.self)).get(), "cut at \(cut)")
        }
        for i in 0..<bytes.count {
            var b = bytes
            b[i] ^= 0x01
            XCTAssertThrowsError(try UsedTokens.parse(String(decoding: b, as: UTF8.self)).get(), "byte \(i) flipped")
        }
        // What 0.4 wrote (no checksum) still reads.
        let v1 = "kiosk-used-tokens 1\nc:0a0b 2000000000\np:ff - 2\nend 2\n"
        let old = try UsedTokens.parse(v1).get()
        XCTAssertEqual(old.uses(of: "p:ff"), 2)
        XCTAssertThrowsError(try UsedTokens.parse("kiosk-used-tokens 1\nc:0a0b 2000000000\nend 1 00000000\n").get())
    }

    func testTheLogIsFoldedOnceItIsAsLargeAsTheSnapshot() {
        XCTAssertFalse(UsedTokenLog.shouldCompact(logBytes: 1000, snapshotBytes: 0))
        XCTAssertTrue(UsedTokenLog.shouldCompact(logBytes: 64 << 10, snapshotBytes: 0))
        XCTAssertFalse(UsedTokenLog.shouldCompact(logBytes: 100_000, snapshotBytes: 600_000))
        XCTAssertTrue(UsedTokenLog.shouldCompact(logBytes: 600_000, snapshotBytes: 600_000))
    }

    // MARK: whether the state directory survives a power cut

    static let mountinfo = """
        22 1 179:2 / /media/root-ro ro,noatime - ext4 /dev/mmcblk0p2 ro
        23 1 0:21 / /media/root-rw rw,relatime - tmpfs tmpfs-root rw
        24 0 0:22 / / rw,relatime - overlay overlayroot rw,lowerdir=/media/root-ro,upperdir=/media/root-rw/overlay,workdir=/media/root-rw/overlay-workdir
        30 24 0:25 / /run rw,nosuid,nodev - tmpfs tmpfs rw,size=94m
        31 24 179:3 / /var/lib/kiosk rw,noatime - ext4 /dev/mmcblk0p3 rw
        32 24 179:4 / /srv/a\\040b rw - ext4 /dev/sdb1 rw
        """

    func testTmpfsRamfsAndAnOverlayOnRAMAreVolatile() {
        let none: (String) -> Int64? = { _ in nil }
        let ext4: Int64 = 0xEF53
        XCTAssertEqual(StateDurability.judge(folder: "/dev/shm/k", magic: StateDurability.tmpfsMagic, mountinfo: nil, magicOf: none),
                       .volatile("/dev/shm/k is on tmpfs (in RAM)"))
        XCTAssertEqual(StateDurability.judge(folder: "/k", magic: StateDurability.ramfsMagic, mountinfo: nil, magicOf: none),
                       .volatile("/k is on ramfs (in RAM)"))
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/kiosk", magic: ext4, mountinfo: Self.mountinfo, magicOf: none), .durable)
        // Raspberry Pi OS's read-only root: the overlay's upper layer is on tmpfs (by statfs, or by
        // mountinfo when it cannot be statted).
        let overlay = StateDurability.judge(folder: "/var/lib/other", magic: StateDurability.overlayMagic, mountinfo: Self.mountinfo,
                                            magicOf: { $0 == "/media/root-rw/overlay" ? StateDurability.tmpfsMagic : nil })
        XCTAssertEqual(overlay, .volatile("/var/lib/other is on an overlay (/) whose upper layer /media/root-rw/overlay is on tmpfs (in RAM): a read-only root"))
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/other", magic: StateDurability.overlayMagic, mountinfo: Self.mountinfo, magicOf: none),
                       overlay)
        // An overlay whose upper layer is on a disk (a container's, a card's partition): durable.
        let onDisk = Self.mountinfo.replacing("- tmpfs tmpfs-root", with: "- ext4 /dev/sda1")
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/other", magic: StateDurability.overlayMagic, mountinfo: onDisk, magicOf: none), .durable)
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/other", magic: StateDurability.overlayMagic, mountinfo: onDisk, magicOf: { _ in ext4 }), .durable)
        // raspi-config's overlay before bookworm (`boot=overlay`): its tmpfs stayed on the
        // initramfs's /upper, so from the new root the upper layer's path leads into the overlay
        // itself (or nowhere): it cannot be judged durable.
        let bullseye = """
            24 1 0:22 / / rw,relatime - overlay overlay rw,lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work
            30 24 0:25 / /run rw,nosuid,nodev - tmpfs tmpfs rw,size=94m
            """
        let unseen = StateDurability.Verdict.volatile("/var/lib/kiosk is on an overlay (/) whose upper layer /upper/data is not visible here "
                                                      + "(mounted before the root was switched, as a read-only root's tmpfs is): taken as in RAM")
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/kiosk", magic: StateDurability.overlayMagic, mountinfo: bullseye, magicOf: none), unseen)
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/kiosk", magic: StateDurability.overlayMagic, mountinfo: bullseye,
                                             magicOf: { _ in StateDurability.overlayMagic }), unseen, "a folder /upper/data in the overlay is not its layer")
        // The same overlay root with the state on a partition: durable.
        XCTAssertEqual(StateDurability.judge(folder: "/var/lib/kiosk", magic: ext4, mountinfo: bullseye + "\n31 24 179:3 / /var/lib/kiosk rw - ext4 /dev/mmcblk0p3 rw",
                                             magicOf: none), .durable)
        // An overlay whose upper layer cannot be found: said, not refused.
        guard case .unknown = StateDurability.judge(folder: "/x", magic: StateDurability.overlayMagic, mountinfo: nil, magicOf: none) else {
            return XCTFail("unknown")
        }
        // No statfs: the mount's type decides.
        XCTAssertEqual(StateDurability.judge(folder: "/run/kiosk", magic: nil, mountinfo: Self.mountinfo, magicOf: none),
                       .volatile("/run/kiosk is on tmpfs (in RAM)"))
    }

    func testMountinfoLines() throws {
        XCTAssertEqual(StateDurability.Mount.covering("/var/lib/kiosk", in: Self.mountinfo)?.fsType, "ext4")
        XCTAssertEqual(StateDurability.Mount.covering("/var/lib/kiosker", in: Self.mountinfo)?.point, "/", "a mount point is a whole folder")
        XCTAssertEqual(StateDurability.Mount.covering("/run", in: Self.mountinfo)?.fsType, "tmpfs")
        XCTAssertEqual(StateDurability.Mount.covering("/srv/a b/c", in: Self.mountinfo)?.point, "/srv/a b", "\\040 is a space")
        let root = try XCTUnwrap(StateDurability.Mount.covering("/etc", in: Self.mountinfo))
        XCTAssertEqual(root.superOptions["upperdir"], "/media/root-rw/overlay")
        XCTAssertNil(StateDurability.Mount(line: "garbage"))
        // Mounted over: the last of equal mount points.
        XCTAssertEqual(StateDurability.Mount.covering("/run/x", in: Self.mountinfo + "\n40 30 0:30 / /run rw - ext4 /dev/sdc rw")?.fsType, "ext4")
    }

    func testWhatAVolatileFolderRefuses() {
        XCTAssertTrue(StateDurability.needsDurableStore(key: UsedTokens.signedKey(cti: [1])))
        XCTAssertTrue(StateDurability.needsDurableStore(key: UsedTokens.ticketKey(payloadDigest: [2])))
        XCTAssertFalse(StateDurability.needsDurableStore(key: UsedTokens.rotatingKey(holder: "carol", step: 7)))
        func read(_ env: [String: String]) -> ConfigurationReading { Configuration.read(environment: env, isExecutableFile: { _ in false }) }
        XCTAssertEqual(read([:]).configuration.volatileState, .refuse)
        XCTAssertEqual(read(["KIOSK_VOLATILE_STATE": "accept"]).configuration.volatileState, .accept)
        let bad = read(["KIOSK_VOLATILE_STATE": "yes"])
        XCTAssertEqual(bad.errors.map(\.variable), ["KIOSK_VOLATILE_STATE"])
        XCTAssertEqual(bad.errors.first?.expected, "refuse or accept")
    }
}
