// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The setup code's reader, the window, the site's key, what a code changes and the
/// `/etc/default/kiosk` rewrite (interface 0.6, "Set up at the door by a signed code").
final class SetupPolicyTests: XCTestCase {
    static let x = [UInt8](repeating: 7, count: 32), y = [UInt8](repeating: 9, count: 32)
    static let key = SetupSiteKey(kind: .p256(x: x, y: y))

    static func payload(_ extra: [(String, CBOR)] = [], drop: Set<String> = [], iat: Int64 = 1_800_000_000, exp: Int64 = 1_800_003_600) -> [UInt8] {
        var pairs: [CBORPair] = [CBORPair(.text("iat"), CBOREncoder.int(iat)), CBORPair(.text("exp"), CBOREncoder.int(exp)),
                                 CBORPair(.text("cti"), .bytes([1, 2, 3, 4])), CBORPair(.text("site_key"), key.item)]
        pairs.removeAll { if case .text(let k) = $0.key { return drop.contains(k) } else { return false } }
        pairs += extra.map { CBORPair(.text($0.0), $0.1) }
        return CBOREncoder.encode(.map(pairs))
    }

    static func code(_ payload: [UInt8], alg: Int64 = -7) -> [UInt8] {
        let protected = CBOREncoder.encode(.map([CBORPair(.unsigned(1), CBOREncoder.int(alg))]))
        return Array("KS1:".utf8) + CBOREncoder.encode(.array([.bytes(protected), .map([]), .bytes(payload), .bytes([UInt8](repeating: 0, count: 64))]))
    }

    func reason(_ body: () throws -> Void) -> SetupRefusal.Reason? {
        do { try body(); return nil } catch let e as SetupRefusal { return e.reason } catch { return .malformed }
    }

    func testReadsACodeAndItsSiteKey() throws {
        let env = CBOR.map([CBORPair(.text("KIOSK_ROI"), .text("0.2,0.2,0.6,0.6"))])
        let wifi = CBOR.map([CBORPair(.text("ssid"), .text("door-net")), CBORPair(.text("psk"), .text("correct horse"))])
        let p = SetupPolicyTests.payload([("wifi", wifi), ("tz", .text("Europe/Berlin")), ("ntp", .array([.text("ntp.example.org")])),
                                          ("mqtt_password", .text("s3cret")), ("env", env), ("door", .text("door-3"))])
        let envelope = try SetupCode.envelope(SetupPolicyTests.code(p))
        XCTAssertEqual(try SetupCode.claimedSiteKey(envelope), SetupPolicyTests.key)
        let read = try SetupPayload(verifiedPayload: envelope.payload)
        XCTAssertEqual(read.wifi, SetupPayload.WiFi(ssid: "door-net", psk: "correct horse"))
        XCTAssertEqual(read.tz, "Europe/Berlin")
        XCTAssertEqual(read.ntp, ["ntp.example.org"])
        XCTAssertEqual(read.env.map(\.name), ["KIOSK_ROI"])
        XCTAssertEqual(read.usedKey, "c:5:01020304")
        XCTAssertTrue(read.isFor(audience: nil, hostname: "door-3"))
        XCTAssertFalse(read.isFor(audience: "door-4", hostname: "kiosk"))
        XCTAssertTrue(read.isInDate(now: 1_800_003_599))
        XCTAssertFalse(read.isInDate(now: 1_800_003_600))
        // The secrets are never shown.
        XCTAssertFalse(read.description.contains("correct horse"))
        XCTAssertFalse(read.description.contains("s3cret"))
        XCTAssertTrue(read.description.contains("(hidden)"))
    }

    func testRefusesWhatIsNotStrictlyACode() {
        let good = SetupPolicyTests.payload()
        XCTAssertEqual(reason { _ = try SetupCode.envelope(Array("KH1:".utf8) + SetupPolicyTests.code(good).dropFirst(4)) }, .malformed)
        // Tagged (18), too long, trailing bytes.
        let tagged = Array("KS1:".utf8) + [0xd2] + SetupPolicyTests.code(good).dropFirst(4)
        XCTAssertEqual(reason { _ = try SetupCode.envelope(tagged) }, .malformed)
        XCTAssertEqual(reason { _ = try SetupCode.envelope(SetupPolicyTests.code(good) + [0]) }, .malformed)
        XCTAssertEqual(reason { _ = try SetupCode.envelope(Array("KS1:".utf8) + [UInt8](repeating: 0x84, count: 1300)) }, .malformed)
        // An EdDSA signature over an EC2 key.
        XCTAssertEqual(reason { _ = try SetupCode.claimedSiteKey(try SetupCode.envelope(SetupPolicyTests.code(good, alg: -8))) }, .malformed)
        let cases: [[UInt8]] = [
            SetupPolicyTests.payload([("colour", .text("red"))]),                 // a key the door does not know
            SetupPolicyTests.payload(drop: ["cti"]),
            SetupPolicyTests.payload(drop: ["site_key"]),
            SetupPolicyTests.payload(iat: 10, exp: 10 + 86_401),                   // more than 24 h
            SetupPolicyTests.payload(iat: 10, exp: 10),
            SetupPolicyTests.payload([("tz", .text("../../etc/shadow"))]),
            SetupPolicyTests.payload([("ntp", .array([.text("-oProxyCommand=x")]))]),
            SetupPolicyTests.payload([("wifi", .map([CBORPair(.text("ssid"), .text("x")), CBORPair(.text("psk"), .text("short"))]))]),
            SetupPolicyTests.payload([("wifi", .map([CBORPair(.text("ssid"), .text(String(repeating: "s", count: 33)))]))]),
            SetupPolicyTests.payload([("mqtt_password", .text("two\nlines"))]),
            SetupPolicyTests.payload([("env", .map([CBORPair(.text("PATH"), .text("/tmp"))]))]),
        ]
        for (i, p) in cases.enumerated() {
            XCTAssertEqual(reason { _ = try SetupPayload(verifiedPayload: p) }, .malformed, "case \(i)")
        }
        XCTAssertEqual(reason { _ = try SetupPayload(verifiedPayload: SetupPolicyTests.payload([("env", .map([CBORPair(.text("KIOSK_ROI"), .text("a\nKIOSK_ON_SCAN=/bin/sh"))]))])) },
                       .refused("KIOSK_ROI"))
    }

    func testTheSiteKeyAsPEM() throws {
        let ed = SetupSiteKey(kind: .ed25519([UInt8](repeating: 1, count: 32)))
        XCTAssertEqual(SetupSiteKey.der(pem: ed.pem), ed.subjectPublicKeyInfo)
        XCTAssertEqual(ed.subjectPublicKeyInfo.count, 44)
        XCTAssertEqual(SetupPolicyTests.key.subjectPublicKeyInfo.count, 91)
        XCTAssertTrue(SetupPolicyTests.key.pem.hasPrefix("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"))
        XCTAssertNil(SetupSiteKey.der(pem: "not a key"))
        XCTAssertEqual(try SetupSiteKey(ed.item), ed)
        XCTAssertThrowsError(try SetupSiteKey(.map([CBORPair(.unsigned(1), .unsigned(2)), CBORPair(.negative(0), .unsigned(1)),
                                                    CBORPair(.negative(1), .bytes(SetupPolicyTests.x)), CBORPair(.negative(2), .bytes(SetupPolicyTests.y)),
                                                    CBORPair(.negative(3), .bytes(SetupPolicyTests.x))])), "a private key d (-4) in the map")
    }

    func testTheWindowAfterBoot() {
        let s = UInt64(1_000_000_000)
        var w = SetupWindow(mode: .boot, windowS: 600)
        XCTAssertEqual(w.opening(atBootNs: 30 * s), .boot)
        XCTAssertEqual(w.opening(atBootNs: 599 * s), .boot)
        XCTAssertNil(w.opening(atBootNs: 600 * s))
        XCTAssertNil(w.opening(atBootNs: 2400 * s))
        // Held 4.9 s: nothing; held 5 s: open for 60 s from the release.
        w.button(pressed: true, atBootNs: 2400 * s)
        XCTAssertFalse(w.button(pressed: false, atBootNs: 2400 * s + 4_900_000_000))
        XCTAssertNil(w.opening(atBootNs: 2405 * s))
        w.button(pressed: true, atBootNs: 2410 * s)
        w.button(pressed: true, atBootNs: 2412 * s)  // a bounce while down changes nothing
        XCTAssertTrue(w.button(pressed: false, atBootNs: 2415 * s))
        XCTAssertEqual(w.opening(atBootNs: 2415 * s), .button)
        XCTAssertEqual(w.opening(atBootNs: 2474 * s), .button)
        XCTAssertEqual(w.closesAtBootNs(after: 2416 * s), 2475 * s)
        XCTAssertNil(w.opening(atBootNs: 2475 * s))
        // Within the window after boot the button's opening is named (the stronger).
        var early = SetupWindow(mode: .boot, windowS: 600)
        early.button(pressed: true, atBootNs: 10 * s)
        early.button(pressed: false, atBootNs: 16 * s)
        XCTAssertEqual(early.opening(atBootNs: 20 * s), .button)
        XCTAssertEqual(early.opening(atBootNs: 100 * s), .boot)
    }

    func testButtonOnlyAndNever() {
        let s = UInt64(1_000_000_000)
        var b = SetupWindow(mode: .button, windowS: 600)
        XCTAssertNil(b.opening(atBootNs: 1 * s))
        b.button(pressed: true, atBootNs: 1 * s)
        b.button(pressed: false, atBootNs: 7 * s)
        XCTAssertEqual(b.opening(atBootNs: 8 * s), .button)
        var off = SetupWindow(mode: .off, windowS: 600)
        XCTAssertNil(off.opening(atBootNs: 1 * s))
        off.button(pressed: true, atBootNs: 1 * s)
        XCTAssertFalse(off.button(pressed: false, atBootNs: 7 * s))
        XCTAssertNil(off.opening(atBootNs: 8 * s))
    }

    func testTheFirstCodeDecidesTheSite() {
        let mine: [UInt8] = [1, 2, 3], other: [UInt8] = [4, 5, 6]
        XCTAssertEqual(reason { _ = try SetupSite.check(codeKey: other, pinned: mine, doorIsNew: true, opening: .button) }, .site)
        XCTAssertNil(reason { XCTAssertFalse(try SetupSite.check(codeKey: mine, pinned: mine, doorIsNew: false, opening: .boot)) })
        XCTAssertNil(reason { XCTAssertTrue(try SetupSite.check(codeKey: other, pinned: nil, doorIsNew: true, opening: .boot)) })
        // A door set up over SSH with no site key: not taken over after a power cut.
        XCTAssertEqual(reason { _ = try SetupSite.check(codeKey: other, pinned: nil, doorIsNew: false, opening: .boot) }, .site)
        XCTAssertNil(reason { _ = try SetupSite.check(codeKey: other, pinned: nil, doorIsNew: false, opening: .button) })
    }

    func plan(_ env: [(String, String)], current: [String: String] = [:], password: String? = nil) throws -> SetupPlan {
        var extra: [(String, CBOR)] = [("env", .map(env.map { CBORPair(.text($0.0), .text($0.1)) }))]
        if let password { extra.append(("mqtt_password", .text(password))) }
        let p = try SetupPayload(verifiedPayload: SetupPolicyTests.payload(extra))
        return try SetupPlan(p, current: current, pinsSiteKey: true, isExecutableFile: { _ in true })
    }

    func testWhatACodeChangesIsCheckedAsKioskCheckDoes() throws {
        let p = try plan([("KIOSK_ROI", "0.2,0.2,0.6,0.6"), ("KIOSK_MQTT_URL", "mqtt://broker.local"), ("KIOSK_MQTT_USER", "door-3")], password: "pw")
        XCTAssertEqual(p.variables.map(\.name), ["KIOSK_ROI", "KIOSK_MQTT_URL", "KIOSK_MQTT_USER", "KIOSK_MQTT_PASSWORD_FILE", "KIOSK_SITE_KEY"])
        XCTAssertEqual(p.changed, ["KIOSK_ROI", "KIOSK_MQTT_URL", "KIOSK_MQTT_USER", "KIOSK_MQTT_PASSWORD_FILE", "KIOSK_SITE_KEY", "mqtt_password"])
        XCTAssertFalse(p.lines.joined().contains("pw)"))
        XCTAssertEqual(reason { _ = try plan([("KIOSK_ROI", "0.9,0.9,0.5,0.5")]) }, .refused("KIOSK_ROI"))
        XCTAssertEqual(reason { _ = try plan([("KIOSK_ON_SCAN", "/usr/bin/true")]) }, .refused("KIOSK_ON_SCAN"))
        XCTAssertEqual(reason { _ = try plan([("KIOSK_SITE_KEY", "/tmp/evil.pem")]) }, .refused("KIOSK_SITE_KEY"))
        XCTAssertEqual(reason { _ = try plan([("KIOSK_NO_SUCH", "1")]) }, .refused("KIOSK_NO_SUCH"))
        // A password with no user to give it for: the password file's variable is refused.
        XCTAssertEqual(reason { _ = try plan([("KIOSK_MQTT_URL", "mqtt://b")], password: "pw") }, .refused("KIOSK_MQTT_PASSWORD_FILE"))
        // The file's own settings count: hook mode with a program already there is fine, a
        // contradiction the code brings is not.
        XCTAssertEqual(reason { _ = try plan([("KIOSK_VERDICT", "hook")]) }, .refused("KIOSK_VERDICT"))
        XCTAssertNil(reason { _ = try plan([("KIOSK_VERDICT", "hook")], current: ["KIOSK_ON_SCAN": "/usr/local/bin/door"]) })
        XCTAssertTrue(Configuration.table.first { $0.name == "KIOSK_ON_SCAN" }!.namesProgram)
    }

    func testTheEnvironmentFileRewrite() {
        let before = """
        # /etc/default/kiosk
        #KIOSK_ROI=0.25,0.25,0.5,0.5
        KIOSK_CAMERA=/dev/video2
        OTHER="kept as it is"
          KIOSK_ROI=0.1,0.1,0.8,0.8
        ; a comment
        KIOSK_ROI=0.3,0.3,0.4,0.4

        """
        XCTAssertTrue(EnvironmentFile.setsKioskVariable(before))
        XCTAssertFalse(EnvironmentFile.setsKioskVariable("#KIOSK_ROI=1\nOTHER=1\n"))
        XCTAssertEqual(EnvironmentFile.values(before)["KIOSK_ROI"], "0.3,0.3,0.4,0.4")
        let after = EnvironmentFile.rewrite(before, setting: [("KIOSK_ROI", "0.2,0.2,0.6,0.6"), ("KIOSK_MQTT_TOPIC", "site/door 3's")],
                                            removing: ["KIOSK_CAMERA"])
        XCTAssertEqual(after, """
        # /etc/default/kiosk
        #KIOSK_ROI=0.25,0.25,0.5,0.5
        OTHER="kept as it is"
        KIOSK_ROI=0.2,0.2,0.6,0.6
        ; a comment

        # Set by a setup code (kiosk setup --apply)
        KIOSK_MQTT_TOPIC="site/door 3's"

        """)
        let values = EnvironmentFile.values(after)
        XCTAssertEqual(values["KIOSK_MQTT_TOPIC"], "site/door 3's")
        XCTAssertEqual(values["OTHER"], "kept as it is")
        XCTAssertNil(values["KIOSK_CAMERA"])
        // Every value reads back as written.
        for v in ["a b", "it's", #"back\slash "q" $HOME `x`"#, "plain", "'single'"] {
            XCTAssertEqual(EnvironmentFile.values(EnvironmentFile.line("KIOSK_X", v))["KIOSK_X"], v, v)
        }
    }
}
