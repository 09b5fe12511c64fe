// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// Issue 35's pure core: what a verified payload may hold, the names a bundle may carry, its
/// bounds, and how a version stands beside the one in force.
final class SiteBundleTests: XCTestCase {
    func payload(version: CBOR? = .unsigned(3), issued: CBOR? = .unsigned(1_800_000_000), files: CBOR? = .map([]),
                 extra: [CBORPair] = []) -> [UInt8] {
        var pairs: [CBORPair] = []
        if let version { pairs.append(CBORPair(.text("version"), version)) }
        if let issued { pairs.append(CBORPair(.text("issued"), issued)) }
        if let files { pairs.append(CBORPair(.text("files"), files)) }
        return CBOREncoder.encode(.map(pairs + extra))
    }

    func files(_ f: [(String, [UInt8])]) -> CBOR { .map(f.map { CBORPair(.text($0.0), .bytes($0.1)) }) }

    func refusal(_ bytes: [UInt8]) -> SiteBundle.Refusal? {
        do { _ = try SiteBundle(verifiedPayload: bytes); return nil } catch { return error }
    }

    func testAPayloadIsReadWithItsFilesInNameOrder() throws {
        let b = try SiteBundle(verifiedPayload: payload(files: files([("revoked", Array("x\n".utf8)), ("access", Array("allow a always\n".utf8)),
                                                                       ("trust/k1.pem", [1]), ("trust/pretix/fair.pem", [2]), ("holidays.ics", [3])]),
                                                        extra: [CBORPair(.text("comment"), .text("a later tool's"))]))
        XCTAssertEqual(b.version, 3)
        XCTAssertEqual(b.issued, 1_800_000_000)
        XCTAssertEqual(b.files.map(\.name), ["access", "holidays.ics", "revoked", "trust/k1.pem", "trust/pretix/fair.pem"])
        XCTAssertEqual(b.files.map(\.kind), [.access, .holidays, .revoked, .trustKey, .eventKey])
        XCTAssertTrue(b.carries(.eventKey))
        XCTAssertFalse(try SiteBundle(verifiedPayload: payload()).carries(.access))
    }

    func testOnlyTheListedNamesAreCarried() {
        for good in ["access", "holidays.ics", "revoked", "trust/lobby-2026.pem", "trust/hex-ed01.pem", "trust/k.2.pem", "trust/pretix/fair_2026.pem"] {
            XCTAssertNotNil(SiteBundle.kind(ofName: good), good)
        }
        for bad in ["", "access/", "/access", "Access", "revoked ", "trust/", "trust/.pem", "trust/.hidden.pem", "trust/../x.pem", "trust/a/b.pem",
                    "trust/pretix/../../etc.pem", "trust/a.pem\u{0}", "trust/x.PEM", "trust/pretix/", "trust/pretix/a/b.pem", "../access",
                    "trust/" + String(repeating: "k", count: 65) + ".pem", "trust/ä.pem", "bundle.cose", "holidays.ics.new", "trust/a b.pem"] {
            XCTAssertNil(SiteBundle.kind(ofName: bad), bad)
            let r = refusal(payload(files: files([(bad, [1])])))
            XCTAssertEqual(r?.reason, .file, bad)
            XCTAssertEqual(r?.version, 3, "the version of a verified bundle is said: \(bad)")
        }
    }

    func testEachMalformedPayloadSaysWhy() {
        let cases: [([UInt8], SiteBundle.Reason)] = [
            ([], .malformed),
            ([0xff], .malformed),
            (CBOREncoder.encode(.array([])), .malformed),
            (payload(version: nil), .malformed),
            (payload(version: .unsigned(0)), .malformed),
            (payload(version: .negative(0)), .malformed),
            (payload(version: .text("3")), .malformed),
            (payload(issued: nil), .malformed),
            (payload(issued: .negative(5)), .malformed),
            (payload(files: nil), .malformed),
            (payload(files: .array([])), .malformed),
            (payload(files: .map([CBORPair(.text("revoked"), .text("x"))])), .malformed),
            (payload(files: .map([CBORPair(.unsigned(1), .bytes([]))])), .malformed),
            (payload() + [0], .malformed),
        ]
        for (i, (bytes, reason)) in cases.enumerated() { XCTAssertEqual(refusal(bytes)?.reason, reason, "case \(i)") }
        // A repeated name is refused by the strict reader (a map key twice).
        XCTAssertEqual(refusal(payload(files: files([("revoked", [1]), ("revoked", [2])])))?.reason, .malformed)
    }

    func testTheBoundsAreTooLarge() {
        let many = (0...SiteBundle.maxFiles).map { ("trust/k\($0).pem", [UInt8]([1])) }
        XCTAssertEqual(refusal(payload(files: files(many)))?.reason, .tooLarge)
        // Built by hand (the encoder's `+` is quadratic): 1100 entries, more items than the reader takes.
        // In steps: Swift 6.0.3 cannot type-check the sum as one expression in reasonable time.
        var endless: [UInt8] = CBOREncoder.head(5, 3)
        endless += CBOREncoder.encode(.text("version"))
        endless += [0x03]
        endless += CBOREncoder.encode(.text("issued"))
        endless += [0x01]
        endless += CBOREncoder.encode(.text("files"))
        endless += CBOREncoder.head(5, 1100)
        for i in 0..<1100 { endless += CBOREncoder.encode(.text("trust/k\(i).pem")) + [0x41, 0x01] }
        XCTAssertEqual(refusal(endless)?.reason, .malformed, "more items than the reader takes")
        XCTAssertNil(refusal(payload(files: files(Array(many.prefix(SiteBundle.maxFiles))))))
        let key = [UInt8](repeating: 0x41, count: SiteBundle.maxKeyBytes + 1)
        XCTAssertEqual(refusal(payload(files: files([("trust/k.pem", key)])))?.reason, .tooLarge)
        let rules = [UInt8](repeating: 0x23, count: AccessRules.maxBytes + 1)
        XCTAssertEqual(refusal(payload(files: files([("access", rules)])))?.reason, .tooLarge)
        XCTAssertEqual(try? SiteBundle.envelope([UInt8](repeating: 0, count: SiteBundle.maxBytes + 1)), nil)
        do {
            _ = try SiteBundle.envelope([UInt8](repeating: 0, count: SiteBundle.maxBytes + 1))
        } catch {
            XCTAssertEqual(error.reason, .tooLarge)
        }
        do {
            _ = try SiteBundle.envelope([0x84, 0x40, 0xa0, 0x40, 0x40])
        } catch {
            XCTAssertEqual(error.reason, .malformed, "no algorithm")
        }
    }

    func testAVersionStandsBesideTheOneInForce() {
        XCTAssertEqual(SiteBundle.standing(of: 1, inForce: nil), .newer)
        XCTAssertEqual(SiteBundle.standing(of: 5, inForce: 4), .newer)
        XCTAssertEqual(SiteBundle.standing(of: 4, inForce: 4), .same)
        XCTAssertEqual(SiteBundle.standing(of: 3, inForce: 4), .older)
        XCTAssertEqual(SiteBundle.algorithm(forEd25519: true), .edDSA)
        XCTAssertEqual(SiteBundle.algorithm(forEd25519: false), .es256)
        XCTAssertEqual(SiteBundle.Reason.allCases.map(\.rawValue), ["signature", "unknown key", "version", "malformed", "too large", "file"])
    }

    func testTheStateCarriesTheBundleOnlyWithASiteKey() {
        XCTAssertFalse(KioskState().json.contains("bundle"))
        XCTAssertTrue(KioskState(bundle: .init()).json.hasSuffix(",\"bundle\":null,\"bundle_refused\":null}"))
        XCTAssertTrue(KioskState(bundle: .init(inForce: 7, refused: 9)).json.hasSuffix(",\"bundle\":7,\"bundle_refused\":9}"))
    }

    func testTheSiteVariablesAreReadAndCheckedTogether() {
        func read(_ env: [String: String]) -> ConfigurationReading {
            Configuration.read(environment: ["KIOSK_VERDICT": "credentials"].merging(env) { _, b in b }, isExecutableFile: { _ in false })
        }
        let ok = read(["KIOSK_SITE_KEY": "/etc/kiosk/site.pem", "KIOSK_SITE_TOPIC": "site/acme/bundle", "KIOSK_BUNDLE_FILE": "/etc/kiosk/bundle.cose",
                       "KIOSK_MQTT_URL": "mqtt://broker.lan"])
        XCTAssertEqual(ok.errors.count, 0)
        XCTAssertEqual(ok.configuration.siteKey, "/etc/kiosk/site.pem")
        XCTAssertEqual(ok.configuration.siteTopic, "site/acme/bundle")
        XCTAssertEqual(ok.configuration.bundleFile, "/etc/kiosk/bundle.cose")
        XCTAssertEqual(read(["KIOSK_SITE_KEY": "site.pem"]).errors.map(\.variable), ["KIOSK_SITE_KEY"], "a relative path")
        XCTAssertEqual(read(["KIOSK_SITE_KEY": "/k.pem", "KIOSK_SITE_TOPIC": "site/#"]).errors.map(\.variable), ["KIOSK_SITE_TOPIC"])
        XCTAssertEqual(read(["KIOSK_SITE_TOPIC": "site/acme/bundle", "KIOSK_BUNDLE_FILE": "/b.cose"]).errors.map(\.variable),
                       ["KIOSK_SITE_TOPIC", "KIOSK_BUNDLE_FILE"], "nothing could verify them")
        XCTAssertEqual(read(["KIOSK_SITE_KEY": "/k.pem", "KIOSK_SITE_TOPIC": "site/b"]).warnings.map(\.variable), ["KIOSK_SITE_TOPIC"], "no broker")
        let hook = Configuration.read(environment: ["KIOSK_SITE_KEY": "/k.pem"], isExecutableFile: { _ in false })
        XCTAssertEqual(hook.warnings.map(\.variable), ["KIOSK_SITE_KEY"], "ignored unless credentials")
    }
}
