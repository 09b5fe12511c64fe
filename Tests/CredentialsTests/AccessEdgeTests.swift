// SPDX-License-Identifier: Apache-2.0
import Credentials
import Foundation
import Glibc
import Platform
import Policy
import TestSupport
import XCTest

/// The access rules at the edge: local time through the C library's tz database with
/// `TZ` set, checked minute by minute across the DST Sundays of Europe/Berlin and
/// America/New_York against Python's zoneinfo (an independent implementation); the rules file
/// read and refused; the verifier's decision on groups from a CWT's `groups` claim and from the
/// TOTP file's `groups=`.
final class AccessEdgeTests: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "kiosk-access-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/trust", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
        unsetenv("TZ")
        tzset()
    }

    func zone(_ name: String) {
        setenv("TZ", name, 1)
        tzset()
    }

    /// Runs a Python 3 program (the system's: zoneinfo is in its standard library), its stdout.
    func python(_ program: String, _ args: [String] = []) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", program] + args
        let run = try Child.run(p)
        XCTAssertEqual(run.status, 0, run.errors)
        return run.output
    }

    /// Every minute from Saturday 20:00 to Sunday 10:00 local time around `sunday`, as UTC
    /// instants, with the local date and minute zoneinfo gives each.
    static let sweep = """
        import sys, datetime
        from zoneinfo import ZoneInfo
        z = ZoneInfo(sys.argv[1]); sunday = datetime.date.fromisoformat(sys.argv[2])
        start = datetime.datetime.combine(sunday - datetime.timedelta(days=1), datetime.time(20, 0), z)
        end = datetime.datetime.combine(sunday, datetime.time(10, 0), z)
        t = int(start.timestamp())
        while t <= int(end.timestamp()):
            l = datetime.datetime.fromtimestamp(t, z)
            print(t, l.date().isoformat(), l.hour * 60 + l.minute, l.weekday())
            t += 60
        """

    func testLocalTimeAndANightWindowAcrossTheDSTSundays() throws {
        let rules = try AccessRules.parse("schedule nights mon-sun 22:00-06:00\nallow cleaning nights")
        let door = DoorRules(path: "/rules", rules: rules)
        for (name, sunday) in [("Europe/Berlin", "2026-03-29"), ("Europe/Berlin", "2026-10-25"),
                               ("America/New_York", "2026-03-08"), ("America/New_York", "2026-11-01")] {
            zone(name)
            var previousOpen: Bool?
            var closedAt: [Int] = []
            var minutes = 0
            for line in try python(AccessEdgeTests.sweep, [name, sunday]).split(separator: "\n") {
                let f = line.split(separator: " ")
                let t = Int64(f[0])!, date = LocalDate(String(f[1]))!, minute = Int(f[2])!, weekday = Int(f[3])!
                let wall = LocalTime.wallClock(t)
                XCTAssertEqual(wall, WallClock(date: date, minute: minute), "\(name) at \(t)")
                XCTAssertEqual(wall.weekday.rawValue, weekday)
                // The window as a person reads it: Saturday from 22:00, Sunday until 06:00.
                let expected = (weekday == 5 && minute >= 1320) || (weekday == 6 && minute < 360)
                let open = door.decide(groups: ["cleaning"], now: t, clockSynced: true) == .granted
                XCTAssertEqual(open, expected, "\(name) \(date) minute \(minute)")
                if previousOpen == true && !open { closedAt.append(minute) }
                previousOpen = open
                minutes += 1
            }
            XCTAssertEqual(closedAt, [360], "\(name) \(sunday): the night window ends once, at 06:00 local time")
            // 14 h of wall clock are 13 h of minutes in spring, 15 h in autumn.
            XCTAssertEqual(minutes, sunday.hasSuffix("-03-29") || sunday.hasSuffix("-03-08") ? 13 * 60 + 1 : 15 * 60 + 1, "\(name) \(sunday)")
        }
    }

    /// The defined behaviour inside the skipped and the repeated hour (WallClock's doc comment).
    func testBoundariesInsideTheSkippedAndTheRepeatedHour() throws {
        let rules = try AccessRules.parse("""
            schedule gap sun 02:30-04:00
            schedule repeat sat 22:00-02:30
            allow early gap
            allow late repeat
            """)
        let door = DoorRules(path: "/rules", rules: rules)
        zone("Europe/Berlin")
        // 2026-03-29 01:59:59 CET is 00:59:59 UTC; the next second is 03:00 CEST.
        let springGap: Int64 = 1_774_745_999
        XCTAssertEqual(LocalTime.wallClock(springGap), WallClock(date: LocalDate("2026-03-29")!, hour: 1, minute: 59))
        XCTAssertEqual(LocalTime.wallClock(springGap + 1), WallClock(date: LocalDate("2026-03-29")!, hour: 3, minute: 0))
        XCTAssertEqual(door.decide(groups: ["early"], now: springGap, clockSynced: true), .outsideSchedule)
        XCTAssertEqual(door.decide(groups: ["early"], now: springGap + 1, clockSynced: true), .granted, "a start in the gap: at 03:00")
        // 2026-10-25: 02:00-02:59 shown twice (CEST, then CET); 00:30 UTC is the first 02:30.
        let firstHalfPast: Int64 = 1_792_888_200
        XCTAssertEqual(LocalTime.wallClock(firstHalfPast), WallClock(date: LocalDate("2026-10-25")!, hour: 2, minute: 30))
        XCTAssertEqual(LocalTime.wallClock(firstHalfPast + 3600), WallClock(date: LocalDate("2026-10-25")!, hour: 2, minute: 30))
        XCTAssertEqual(door.decide(groups: ["late"], now: firstHalfPast - 60, clockSynced: true), .granted)
        XCTAssertEqual(door.decide(groups: ["late"], now: firstHalfPast, clockSynced: true), .outsideSchedule)
        XCTAssertEqual(door.decide(groups: ["late"], now: firstHalfPast + 1800, clockSynced: true), .granted, "the second 02:00")
        XCTAssertEqual(door.decide(groups: ["late"], now: firstHalfPast + 3600, clockSynced: true), .outsideSchedule, "the second 02:30")
    }

    // MARK: the rules file

    func write(_ name: String, _ text: String) throws -> String {
        let path = folder + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testTheFileIsReadOrRefusedWithItsLine() throws {
        let good = try write("access", "schedule office mon-fri 07:00-19:00\nallow visitor office\n")
        XCTAssertEqual(try DoorRules.load(good).rules.allows.count, 1)
        let bad = try write("bad", "schedule office mon-fri 07:00-19:00\nallow visitor offices\n")
        XCTAssertThrowsError(try DoorRules.load(bad)) {
            XCTAssertEqual(String(describing: $0), "line 2: schedule offices is not defined (always, office)")
        }
        XCTAssertThrowsError(try DoorRules.load(folder + "/missing")) { XCTAssertTrue(String(describing: $0).contains("no such file")) }
        let binary = folder + "/binary"
        XCTAssertTrue(FileManager.default.createFile(atPath: binary, contents: Data([0x61, 0xff, 0x0a])))
        XCTAssertThrowsError(try DoorRules.load(binary)) { XCTAssertTrue(String(describing: $0).contains("not UTF-8")) }

        // Through the credentials' files: KIOSK_ACCESS_FILE's problem names the file and the line.
        var c = Configuration()
        c.trustDir = folder + "/trust"
        c.revokedFile = folder + "/revoked"
        c.totpFile = try write("totp", "alice JBSWY3DPEHPK3PXPJBSWY3DP groups=staff,cleaning\n")
        c.accessFile = bad
        let (_, problems) = CredentialFiles.load(c, [:])
        XCTAssertEqual(problems.map(\.variable), ["KIOSK_ACCESS_FILE"])
        XCTAssertEqual(problems.first?.value, bad)
        XCTAssertEqual(problems.first?.reason, "line 2: schedule offices is not defined (always, office)")
        c.accessFile = good
        let (trust, none) = CredentialFiles.load(c, [:])
        XCTAssertTrue(none.isEmpty, "\(none)")
        XCTAssertEqual(trust.access?.rules.allows.first?.group, "visitor")
        XCTAssertEqual(trust.secrets.first?.groups, ["staff", "cleaning"])
    }

    // MARK: the verifier's decision

    final class Wall: @unchecked Sendable { var now: Int64 = 0 }
    final class Synced: ClockSynchronization, @unchecked Sendable {
        var value = true
        var isSynchronized: Bool { value }
    }

    func testTheVerifierDecidesByGroupsAfterTheCredentialAndBeforeTheStore() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        let peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: folder + "/trust/issuer-1.pem")
        zone("UTC")
        // 2026-03-02 is a Monday.
        let ten: Int64 = 1_772_445_600, twenty = ten + 10 * 3600
        let wall = Wall(), synced = Synced()
        var c = Configuration()
        c.trustDir = folder + "/trust"
        c.revokedFile = folder + "/revoked"
        c.totpFile = try write("totp", "alice JBSWY3DPEHPK3PXPJBSWY3DP 6 30 groups=cleaning,visitor\nbob JBSWY3DPEHPK3PXPJBSWY3DP\n")
        c.accessFile = try write("access", AccessRulesText.office)
        let (trust, problems) = CredentialFiles.load(c, [:])
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        let v = CredentialVerifier(prefix: "KC1:", rules: c.credentialRules, antipassbackSeconds: 0, trust: trust,
                                   store: UsedTokenStore(directory: folder + "/state"), clock: ManualClock(),
                                   wallClock: { wall.now }, synchronization: synced)
        func mint(_ groups: [String]?, cti: String? = nil) throws -> [UInt8] {
            var claims: [String: Any] = ["1": "acme", "2": "v", "4": ten + 86_400, "5": ten - 86_400, "6": ten - 86_400]
            if let groups { claims["groups"] = groups }
            if let cti { claims["7"] = ["hex": cti] }
            return Array(try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: claims).utf8)
        }
        let visitor = try mint(["visitor"]), staff = try mint(["staff", "x"]), none = try mint(nil), other = try mint(["guests"])
        wall.now = ten
        XCTAssertEqual(v.verify(visitor).reason, .valid)
        XCTAssertEqual(v.verify(staff).reason, .valid)
        XCTAssertEqual(v.verify(none).reason, .noAccess)
        XCTAssertEqual(v.verify(other).reason, .noAccess)
        wall.now = twenty
        XCTAssertEqual(v.verify(visitor).reason, .outsideSchedule)
        XCTAssertEqual(v.verify(staff).reason, .valid)
        // A one-time credential refused by the schedule is not used up.
        let once = try mint(["visitor"], cti: "0a0b")
        XCTAssertEqual(v.verify(once).reason, .outsideSchedule)
        wall.now = ten
        XCTAssertEqual(v.verify(once).reason, .valid)
        XCTAssertEqual(v.verify(once).reason, .used)
        // The unsynchronised clock (KIOSK_REQUIRE_SYNCED_CLOCK=1, the default): only always opens,
        // for a credential without exp or nbf (pycose adds none; a time-bound one is refused by 0.3's rule).
        func untimed(_ groups: [String]) throws -> [UInt8] {
            Array(try peer.sign(lib: "pycose", privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                                claims: ["1": "acme", "2": "u", "groups": groups]).utf8)
        }
        synced.value = false
        XCTAssertEqual(v.verify(try untimed(["staff"])).reason, .valid)
        XCTAssertEqual(v.verify(try untimed(["visitor"])).reason, .clockNotSynchronized)
        XCTAssertEqual(v.verify(staff).reason, .clockNotSynchronized)
        synced.value = true
        // Rotating codes: the holder's groups from the TOTP file.
        let alice = try peer.totp(secret: "JBSWY3DPEHPK3PXPJBSWY3DP", holder: "alice", time: Int(ten))
        let bob = try peer.totp(secret: "JBSWY3DPEHPK3PXPJBSWY3DP", holder: "bob", time: Int(ten))
        XCTAssertEqual(v.verify(Array(alice.utf8)).reason, .valid)
        XCTAssertEqual(v.verify(Array(bob.utf8)).reason, .noAccess)
        wall.now = twenty
        let aliceLate = try peer.totp(secret: "JBSWY3DPEHPK3PXPJBSWY3DP", holder: "alice", time: Int(twenty))
        XCTAssertEqual(v.verify(Array(aliceLate.utf8)).reason, .outsideSchedule)
        // Without rules every valid credential opens, groups or not (0.3).
        v.reload(CredentialTrust(keys: trust.keys))
        XCTAssertEqual(v.verify(none).reason, .valid)
        // uses: counted in the store, on disk (a new store on the same folder knows them).
        wall.now = ten
        let thrice = Array(try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                                         claims: ["1": "acme", "4": ten + 86_400, "5": ten - 86_400, "7": ["hex": "0c0c"], "uses": 3]).utf8)
        XCTAssertEqual((1...3).map { _ in v.verify(thrice).reason }, [.valid, .valid, .valid])
        XCTAssertEqual(v.verify(thrice).reason, .used)
        XCTAssertEqual(UsedTokenStore(directory: folder + "/state").uses(of: UsedTokens.signedKey(cti: [0x0c, 0x0c])), 3)
        let noCTI = Array(try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                                        claims: ["1": "acme", "4": ten + 86_400, "5": ten - 86_400, "uses": 3]).utf8)
        XCTAssertEqual(v.verify(noCTI).reason, .malformed)
        // A groups claim of the wrong shape is malformed, not ignored.
        let bad = Array(try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                                      claims: ["1": "acme", "4": ten + 86_400, "5": ten - 86_400, "groups": "visitor"]).utf8)
        XCTAssertEqual(v.verify(bad).reason, .malformed)
    }
}

enum AccessRulesText {
    static let office = """
        schedule office   mon-fri 07:00-19:00, sat 09:00-13:00
        allow  staff      always
        allow  visitor    office
        allow  cleaning   office
        """
}
