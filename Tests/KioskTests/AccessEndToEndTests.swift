// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// Issue 33 on the built `kiosk` binary: a door's rules (`KIOSK_ACCESS_FILE`), credentials minted
/// with groups by PyPI's cwt and shown as QR codes in replays, the wall clock moved by libfaketime
/// (Debian's `faketime`) and the zone chosen by `TZ`; a bad rules file at start and on SIGHUP.
final class AccessEndToEndTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }
    var rules: String { folder + "/access" }
    var peer: CredentialPeer!
    static let faketime = "/usr/bin/faketime"

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: KioskProcess.binary.path), "build the kiosk binary first")
        folder = NSTemporaryDirectory() + "kiosk-access-e2e-\(UUID().uuidString.prefix(8))"
        for d in [trust, state] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
        try """
            schedule office   mon-fri 07:00-19:00, sat 09:00-13:00   # the interface's example
            allow  staff      always
            allow  visitor    office
            """.write(toFile: rules, atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A credential for `sub` in `groups`, valid from `from` for two days (Unix seconds).
    func mint(_ sub: String, groups: [String]?, from: Int) throws -> String {
        var claims: [String: Any] = ["1": "acme", "2": sub, "4": from + 2 * 86_400, "5": from, "6": from]
        if let groups { claims["groups"] = groups }
        return try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: claims)
    }

    func env(_ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_ACCESS_FILE": rules, "TZ": "Europe/Berlin"]) { _, b in b }.merging(more) { _, b in b }
    }

    /// A replay folder: an empty frame, then each code followed by an empty frame.
    func replay(_ codes: [String], name: String) throws -> String {
        try DoorFixtures.replay(codes, at: folder + "/" + name)
    }

    /// The release kiosk with its wall clock starting at `local` (in `env`'s TZ), to its end.
    func runAt(_ local: String, env: [String: String], command: String = "run") throws -> KioskProcess.Run {
        try AccessEndToEndTests.runAt(local, env: env, command: command)
    }

    static func runAt(_ local: String, env: [String: String], command: String = "run") throws -> KioskProcess.Run {
        let (p, out, err) = try KioskProcess.start(["-m", "--exclude-monotonic", local, KioskProcess.binary.path, command], env: env,
                                                   executable: URL(fileURLWithPath: AccessEndToEndTests.faketime))
        return try KioskProcess.finish(p, out: out, err: err)
    }

    func testOfficeHoursOpenAt10AndNotAt20LocalTime() throws {
        guard FileManager.default.isExecutableFile(atPath: AccessEndToEndTests.faketime) else { throw XCTSkip("no faketime (make deps)") }
        // 2026-03-02, a Monday: 00:00 in Berlin (CET) is 23:00 UTC the day before.
        let midnight = 1_772_406_000
        let visitor = try mint("vera", groups: ["visitor"], from: midnight)
        let staff = try mint("sam", groups: ["staff"], from: midnight)
        let nobody = try mint("nina", groups: nil, from: midnight)
        let codes = [visitor, staff, nobody]
        let morning = try runAt("2026-03-02 10:00:00", env: env(["KIOSK_CAMERA": "replay:" + (try replay(codes, name: "morning"))]))
        XCTAssertEqual(morning.status, 0, morning.stderr)
        XCTAssertEqual(morning.reasons, ["valid", "valid", "no access"], morning.stderr)
        XCTAssertEqual(morning.doorOpenings, 2, morning.stderr)
        XCTAssertEqual(morning.of("credentials_reloaded").first?["rules"], "schedules=1 allow=2 lockdown_allow=0 unlock=0 pretix=0 holidays=0")
        let evening = try runAt("2026-03-02 20:00:00", env: env(["KIOSK_CAMERA": "replay:" + (try replay(codes, name: "evening"))]))
        XCTAssertEqual(evening.status, 0, evening.stderr)
        XCTAssertEqual(evening.reasons, ["outside schedule", "valid", "no access"], evening.stderr)
        XCTAssertEqual(evening.of("credential").map { $0["result"] ?? "" }, ["denied", "granted", "denied"])
        XCTAssertEqual(evening.of("credential").first?["sub"], "vera")
        XCTAssertEqual(evening.doorOpenings, 1, evening.stderr)
        // The same instant in New York is 14:00: office hours there.
        let newYork = try runAt("2026-03-02 14:00:00", env: env(["TZ": "America/New_York",
                                                                 "KIOSK_CAMERA": "replay:" + (try replay([visitor], name: "ny"))]))
        XCTAssertEqual(newYork.reasons, ["valid"], newYork.stderr)
        // kiosk check: the rules as understood at the local time now, and each schedule's next change.
        let check = try runAt("2026-03-02 10:00:00", env: env().merging(["KIOSK_CAMERA": "replay:" + folder]) { _, b in b }, command: "check")
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("# access: schedule office: mon,tue,wed,thu,fri 07:00-19:00, sat 09:00-13:00; open now, closes mon 2026-03-02 19:00\n"),
                      check.stdout)
        XCTAssertTrue(check.stdout.contains("# access: allow visitor office\n"), check.stdout)
        XCTAssertTrue(check.stdout.contains("KIOSK_ACCESS_FILE=\(rules)"), check.stdout)
        // kiosk doctor: the rules, the zone, the closed days of the next 30 days.
        let ics = folder + "/holidays.ics"
        try "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:a@t\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260306\r\nDTEND;VALUE=DATE:20260308\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            .write(toFile: ics, atomically: true, encoding: .utf8)
        try (try String(contentsOfFile: rules, encoding: .utf8) + "\nholidays \(ics)\n").write(toFile: rules, atomically: true, encoding: .utf8)
        let doctor = try runAt("2026-03-02 10:00:00", env: env(), command: "doctor")
        XCTAssertTrue(doctor.stdout.contains("PASS access: \(rules): schedules=1 allow=2 lockdown_allow=0 unlock=0 pretix=0 holidays=2; local time mon 2026-03-02 10:00 in TZ=Europe/Berlin"),
                      doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("PASS holidays: closed days in the next 30 days: 2026-03-06, 2026-03-07"), doctor.stdout)
    }

    /// README's small office, as the README gives it: its rules file read by `kiosk check` (the
    /// holidays file swapped for one here), its passes minted by the issue-credential lines it shows.
    func testTheReadmesSmallOfficeRulesAndPassesWork() throws {
        let readme = try String(contentsOf: Checkout.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("<<'RULES'") }), end = try XCTUnwrap(lines.firstIndex(of: "RULES"))
        let ics = folder + "/holidays.ics"
        try "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:a@t\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nRRULE:FREQ=YEARLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            .write(toFile: ics, atomically: true, encoding: .utf8)
        let text = lines[(start + 1)..<end].joined(separator: "\n").replacingOccurrences(of: "/etc/kiosk/holidays.ics", with: ics)
        try text.write(toFile: rules, atomically: true, encoding: .utf8)
        let check = try KioskProcess.run(["check"], env: env(["KIOSK_CAMERA": "replay:" + folder]))
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("schedules=2 allow=3 lockdown_allow=1 unlock=0 pretix=0 holidays="), check.stdout)
        // The mint lines, with this test's key for issuer.key.
        let script = Checkout.root.appendingPathComponent("deploy/examples/issue-credential").path
        let mints = lines.filter { $0.hasPrefix("deploy/examples/issue-credential mint ") }
        XCTAssertEqual(mints.count, 3)
        _ = try Self.python(script, ["keygen", "--kid", "office-1", "--key", folder + "/issuer.key", "--trust-dir", trust])
        for m in mints {
            let args = m.split(separator: " ").dropFirst().map { $0 == "issuer.key" ? folder + "/issuer.key" : String($0) }
            let out = try Self.python(script, args)
            XCTAssertTrue(out.hasPrefix("KC1:"), "\(m): \(out)")
        }
    }

    /// The peers' Python running `script ARGS`: its standard output (a failure throws).
    static func python(_ script: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CredentialPeer.python!)
        p.arguments = [script] + args
        let run = try Child.run(p)
        guard run.status == 0 else { throw NSError(domain: "\(script) \(args): \(run.errors)", code: Int(run.status)) }
        return run.output
    }

    func testABadRulesFileStopsTheStartAndIsRefusedOnSIGHUP() throws {
        try "schedule office mon-fri 07:00-19:00\nallow visitor offices\n".write(toFile: folder + "/bad", atomically: true, encoding: .utf8)
        let bad = try KioskProcess.run(["run"], env: env(["KIOSK_ACCESS_FILE": folder + "/bad", "KIOSK_CAMERA": "replay:" + (try replay([], name: "none"))]))
        XCTAssertEqual(bad.status, 78, bad.stderr)
        let error = bad.of("config_error").first
        XCTAssertEqual(error?["var"], "KIOSK_ACCESS_FILE")
        XCTAssertEqual(error?["value"], folder + "/bad")
        XCTAssertEqual(error?["expected"], "line 2: schedule offices is not defined (always, office)")
        let check = try KioskProcess.run(["check"], env: env(["KIOSK_ACCESS_FILE": folder + "/bad"]))
        XCTAssertEqual(check.status, 78, check.stderr)

        // Running: a bad file on SIGHUP changes nothing; a good one is taken whole.
        let now = Int(Date().timeIntervalSince1970)
        let staff = try mint("sam", groups: ["staff"], from: now - 60)
        let fifo = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: 4)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + fifo.path]))
        // `ready` (after the first frame, 0000.pgm): the reload is registered by then. A SIGHUP
        // between the credentials' first load and that is ignored (signal_ignored): under
        // qemu-user the arm64 tier's SIGHUP fell there after `credentials_reloaded`.
        XCTAssertTrue(kiosk.waitFor("ready"), kiosk.text)
        try "allow staff nights\n".write(toFile: rules, atomically: true, encoding: .utf8)
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("credentials_reload_failed"), kiosk.text)
        XCTAssertEqual(kiosk.of("credentials_reload_failed").first?["error"], "line 1: schedule nights is not defined (always)")
        fifo.feed(try FleetEndToEndTests.frame(Array(staff.utf8)))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
        XCTAssertEqual(kiosk.of("credential").last?["reason"], "valid", "the rules in force were kept")
        fifo.feed(try FleetEndToEndTests.frame(nil))
        try "allow visitor always\n".write(toFile: rules, atomically: true, encoding: .utf8)
        kill(kiosk.process.processIdentifier, SIGHUP)
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded", count: 2), kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(Array(staff.utf8)))
        XCTAssertTrue(kiosk.waitFor("credential", count: 2), kiosk.text)
        XCTAssertEqual(kiosk.of("credential").last?["reason"], "no access", kiosk.text)
        fifo.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
    }

    func testACredentialWithUsesOpensThatManyTimesAcrossASIGKILL() throws {
        let now = Int(Date().timeIntervalSince1970)
        let twice = try peer.sign(privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1",
                                  claims: ["1": "acme", "2": "pat", "4": now + 3600, "5": now - 60, "7": ["hex": "7a7a"],
                                           "uses": 2, "groups": ["staff"]])
        let first = try FleetEndToEndTests.FifoReplay(folder + "/fifo1", count: 2)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(["KIOSK_CAMERA": "replay:" + first.path]))
        XCTAssertTrue(kiosk.waitFor("credentials_reloaded"), kiosk.text)
        first.feed(try FleetEndToEndTests.frame(Array(twice.utf8)))
        XCTAssertTrue(kiosk.waitFor("credential"), kiosk.text)
        XCTAssertEqual(kiosk.of("credential").first?["reason"], "valid", kiosk.text)
        // The use is on disk before the door opens: killed now, the count stays.
        kiosk.kill9()
        XCTAssertEqual(kiosk.wait(), -SIGKILL)
        let again = try KioskProcess.run(["run"], env: env(["KIOSK_CAMERA": "replay:" + (try replay([twice, twice], name: "again"))]))
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.reasons, ["valid", "used"], again.stderr)
        XCTAssertEqual(again.of("credentials_reloaded").first?["store"], "1")
        // One record a use in the journal, the count in the last.
        let records = try String(contentsOfFile: state + "/used-tokens.log", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(records.map { $0.split(separator: " ").dropLast().joined(separator: " ") }, ["c:7a7a \(now + 3600) 1", "c:7a7a \(now + 3600) 2"])
    }
}
