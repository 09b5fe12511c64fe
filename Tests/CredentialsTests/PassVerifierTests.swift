// SPDX-License-Identifier: Apache-2.0
import Credentials
import Crypto
import Foundation
import Platform
import Policy
import TestSupport
import XCTest

/// Passes bound to the holder's phone in-process: every reason on passes made by the
/// independent peer (harness/pass/peer.py: `cryptography`, `cbor2`, `cwt`), with an injected wall
/// clock; the holders file through OpenSSL's point check; the replay state across a restart.
final class PassVerifierTests: XCTestCase {
    var fixture: PassFolder!
    var folder: String { fixture.path }
    var trust: String { fixture.trust }
    var state: String { fixture.state }
    var holders: String { fixture.holders }
    var peer: PassPeer { fixture.peer }
    let wall = VerifierTests.Wall()
    let synced = VerifierTests.Synced()
    var slot: Int64 { wall.now / 5 }

    override func setUpWithError() throws { fixture = try PassFolder(name: "kiosk-pass") }
    override func tearDown() { fixture?.remove() }

    func verifier(_ configure: (inout Configuration) -> Void = { _ in }, clock: ManualClock = ManualClock()) throws -> CredentialVerifier {
        var c = Configuration()
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        c.holdersFile = holders
        configure(&c)
        let (t, problems) = CredentialFiles.load(c, [:])
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        return CredentialVerifier(prefix: c.credentialPrefix, rules: c.credentialRules, antipassbackSeconds: c.antipassbackS, trust: t,
                                  store: UsedTokenStore(directory: state), clock: clock, wallClock: { [wall] in wall.now }, synchronization: synced)
    }

    func holder(_ name: String, compressed: Bool = false) throws -> PassPeer.Holder {
        try peer.holder(privatePath: folder + "/\(name).key", compressed: compressed)
    }

    func credential(_ claims: [String: Any] = [:], key: String = "issuer.key", holder: PassPeer.Holder?) throws -> [UInt8] {
        try fixture.credential(claims, key: key, holder: holder, now: Int(wall.now))
    }

    // MARK: form 2

    func testForm2EveryReason() throws {
        let alice = try holder("alice"), bob = try holder("bob", compressed: true), eve = try holder("eve"), mallory = try holder("mallory")
        try "# the site's holders\nalice \(alice.key) groups=staff\nbob \(bob.key)\nmallory \(mallory.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        try "mallory\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let v = try verifier()
        XCTAssertEqual(v.currentTrust.holders.count, 3)
        XCTAssertEqual(v.currentTrust.holders.entries.first?.keyID.map { String(format: "%02x", $0) }.joined(), alice.keyID,
                       "the key_id (RFC 9679 thumbprint) as the peer's cbor2 and hashlib make it")

        let first = try peer.pass(form: 2, holder: alice, slot: slot)
        let o = v.verify(first)
        XCTAssertEqual(o.reason, .valid)
        XCTAssertEqual(o.kind, .pass)
        XCTAssertEqual(o.form, "pass2")
        XCTAssertEqual(o.holder, "alice")
        XCTAssertEqual(o.sub, "alice")
        XCTAssertEqual(o.groups, ["staff"])
        XCTAssertNil(o.kid, "the key_id is the pass's bytes: not said")
        XCTAssertEqual(o.skewS, slot * 5 - wall.now)
        XCTAssertEqual(v.verify(first).reason, .used, "the same code again")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot, malleate: true)).reason, .used,
                       "(r, n-s) of the accepted slot: keyed on the slot, not the signature")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot - 1)).reason, .used, "an earlier slot than the last accepted")
        wall.now += 5
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot)).reason, .valid, "the next slot")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot - 4)).reason, .stale, "began 20 s ago, window 15 s")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot + 2)).reason, .stale, "begins 10 s from now")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, signer: eve, slot: slot + 1)).reason, .holderSignature, "another key's proof")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: eve, slot: slot)).reason, .unknownKey, "a holder not listed")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: mallory, slot: slot)).reason, .revoked, "revoked by NAME")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: bob, slot: slot)).reason, .valid, "a compressed point")
        synced.value = false
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: bob, slot: slot + 1)).reason, .clockNotSynchronized)
        synced.value = true
        // The slot is on disk: a restart still knows it.
        XCTAssertEqual(try verifier().verify(try peer.pass(form: 2, holder: bob, slot: slot)).reason, .used)
        XCTAssertEqual(UsedTokenStore(directory: state).count, 2)
    }

    func testTheWindowIsTheVariable() throws {
        let alice = try holder("alice")
        try "alice \(alice.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        let v = try verifier { $0.passWindowS = 60 }
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot - 12)).reason, .valid, "began 60 s ago")
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot - 13)).reason, .stale)
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot + 1)).reason, .valid, "begins 5 s from now")
    }

    func testAntipassbackAndTheRulesApplyToPasses() throws {
        let alice = try holder("alice"), bob = try holder("bob")
        try "alice \(alice.key) groups=staff\nbob \(bob.key) groups=visitor\n".write(toFile: holders, atomically: true, encoding: .utf8)
        try "allow staff always\n".write(toFile: folder + "/access", atomically: true, encoding: .utf8)
        let clock = ManualClock()
        let v = try verifier({ $0.antipassbackS = 60; $0.accessFile = folder + "/access" }, clock: clock)
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: bob, slot: slot)).reason, .noAccess)
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot)).reason, .valid)
        wall.now += 5
        XCTAssertEqual(v.verify(try peer.pass(form: 2, holder: alice, slot: slot)).reason, .antipassback)
    }

    // MARK: form 1

    func testForm1EveryReason() throws {
        let alice = try holder("alice"), eve = try holder("eve")
        try peer.issuer(privatePath: folder + "/forger.key", publicPath: folder + "/forger.pem")
        try "carol\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let v = try verifier()
        let cred = try credential(["7": ["hex": "c0ffee"]], holder: alice)
        let first = try peer.pass(form: 1, credential: cred, holder: alice, slot: slot)
        XCTAssertLessThan(first.count, 300)
        let o = v.verify(first)
        XCTAssertEqual(o.reason, .valid)
        XCTAssertEqual(o.form, "pass1")
        XCTAssertEqual(o.sub, "alice")
        XCTAssertEqual(o.cti, "c0ffee")
        XCTAssertEqual(o.kid, "issuer-1")
        XCTAssertNil(o.holder)
        XCTAssertEqual(v.verify(first).reason, .used)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot, malleate: true)).reason, .used)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot + 1)).reason, .valid,
                       "a cti without `uses` is no one-time credential here: the slot decides")
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot - 5)).reason, .stale)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, signer: eve, slot: slot + 1)).reason, .holderSignature)
        let forged = try credential(key: "forger.key", holder: alice)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: forged, holder: alice, slot: slot)).reason, .signature)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: try credential(["2": "carol"], holder: alice), holder: alice, slot: slot)).reason, .revoked)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: try credential(["4": Int(wall.now) - 100], holder: alice), holder: alice, slot: slot)).reason,
                       .expired)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: try credential(holder: nil), holder: alice, slot: slot)).reason, .malformed,
                       "a credential with no cnf has no key to prove")
        // Without a cti the credential's hash keys its slots.
        let plain = try credential(holder: alice)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: plain, holder: alice, slot: slot)).reason, .valid)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: plain, holder: alice, slot: slot)).reason, .used)
        // Shown as a KC1: credential (Base45 of the same COSE_Sign1), it has no proof.
        XCTAssertEqual(v.verify(Array(("KC1:" + Base45.encode(cred)).utf8)).reason, .noProof)
        XCTAssertEqual(v.verify(Array(("KC1:" + Base45.encode(try credential(holder: nil))).utf8)).reason, .valid, "no cnf: a KC1 as before")
    }

    func testForm1UsesAreCountedPerPass() throws {
        let alice = try holder("alice", compressed: true)
        let v = try verifier()
        let cred = try credential(["7": ["hex": "0a0b"], "uses": 2], holder: alice)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot - 2)).reason, .valid)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot - 1)).reason, .valid)
        XCTAssertEqual(v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot)).reason, .used, "two uses")
    }

    // MARK: what is malformed

    func testMalformedPasses() throws {
        let alice = try holder("alice")
        try "alice \(alice.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        let v = try verifier()
        let good = try peer.pass(form: 2, holder: alice, slot: slot)
        let body = Array(good.dropFirst(4))
        var cases: [(String, [UInt8])] = [
            ("truncated", Array(good.dropLast())),
            ("a byte after the array", good + [0]),
            ("the prefix alone", Array("KH1:".utf8)),
            ("indefinite length", Array("KH1:".utf8) + [0x9f] + body.dropFirst() + [0xff]),
            ("form 3", Array("KH1:".utf8) + [body[0], 0x03] + body.dropFirst(2)),
            ("a 63-byte proof", Array("KH1:".utf8) + CBOREncoder.encode(.array([.unsigned(2), .bytes(Array(repeating: 1, count: 8)), .unsigned(1), .bytes(Array(repeating: 1, count: 63))]))),
            ("a slot past 2^32", Array("KH1:".utf8) + CBOREncoder.encode(.array([.unsigned(2), .bytes(Array(repeating: 1, count: 8)), .unsigned(1 << 32), .bytes(Array(repeating: 1, count: 64))]))),
        ]
        // Oversized: a form 1 pass of 1100 bytes (its CBOR is well formed).
        let big = Pass.encode(form: .selfContained, credential: [0x84] + Array(repeating: 0, count: 1000), slot: slot, proof: Array(repeating: 0, count: 64))
        XCTAssertGreaterThan(big.count, Pass.maxBytes)
        cases.append(("oversized", big))
        for (what, bytes) in cases {
            let o = v.verify(bytes)
            XCTAssertEqual(o.reason, .malformed, what)
            XCTAssertEqual(o.kind, .pass, what)
        }
        XCTAssertEqual(v.verify(good).reason, .valid, "none of them used the slot")
    }

    // MARK: the holders file

    func testTheHoldersFileIsReadStrictlyAndItsPointsChecked() throws {
        let alice = try holder("alice"), other = try holder("other")
        var c = Configuration()
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        c.holdersFile = holders
        // A point off the curve: another key's x with a bit of y flipped (a COSE_Key the parser
        // takes, OpenSSL refuses).
        var key = try HolderKey(bytes: Base64URL.decode(other.key)!)
        guard case .bytes(var y) = key.y else { return XCTFail("uncompressed") }
        y[31] ^= 1
        key = try HolderKey(x: key.x, y: .bytes(y))
        let offCurve = PassHolder(name: "bad", key: key).fileLine
        try "alice \(alice.key)\n\(offCurve)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        var problems = CredentialFiles.load(c, [:]).problems
        XCTAssertEqual(problems.map(\.variable), ["KIOSK_HOLDERS_FILE"])
        XCTAssertTrue(problems.first?.reason.hasPrefix("line 2: the key of bad is not a point of P-256") ?? false, "\(problems)")
        try "alice \(alice.key)\nalice \(alice.key)\n".write(toFile: holders, atomically: true, encoding: .utf8)
        problems = CredentialFiles.load(c, [:]).problems
        XCTAssertEqual(problems.first?.reason, "line 2: holder alice is listed twice")
        try FileManager.default.removeItem(atPath: holders)
        XCTAssertTrue(CredentialFiles.load(c, [:]).problems.isEmpty, "a missing file is no holder")
    }

    /// A site bundle may carry the holders (`holders`): read from the bundle's folder in place
    /// of KIOSK_HOLDERS_FILE; a bundle that says it carries them and has no file is a problem.
    func testASiteBundleCarriesTheHolders() throws {
        let alice = try holder("alice")
        let line = Array("alice \(alice.key)\n".utf8)
        let payload = CBOREncoder.encode(.map([CBORPair(.text("version"), .unsigned(3)), CBORPair(.text("issued"), .unsigned(1_800_000_000)),
                                               CBORPair(.text("files"), .map([CBORPair(.text("holders"), .bytes(line))]))]))
        let bundle = try SiteBundle(verifiedPayload: payload)
        XCTAssertTrue(bundle.carries(.holders))
        let site = folder + "/site"
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        var c = Configuration()
        c.trustDir = trust
        c.revokedFile = folder + "/revoked"
        c.holdersFile = holders  // none there: the bundle's are read instead
        let sources = CredentialSources(c, bundle: bundle, folder: site)
        XCTAssertEqual(sources.holdersFile, site + "/holders")
        XCTAssertTrue(sources.inForce.contains { $0.kind == "holders" && $0.bundle == 3 })
        XCTAssertEqual(CredentialFiles.load(c, [:], sources: sources).problems.map(\.variable), ["bundle v3"], "carried but not there")
        try Data(line).write(to: URL(fileURLWithPath: site + "/holders"))
        let (t, problems) = CredentialFiles.load(c, [:], sources: sources)
        XCTAssertTrue(problems.isEmpty, "\(problems)")
        XCTAssertEqual(t.holders.entries.map(\.holder.name), ["alice"])
    }

    /// The admin's side: `issue-credential mint --holder-key LINK` prints the page's `#c=` link;
    /// the credential in it, shown by its holder's key as a form 1 pass, opens; as KC1, no proof.
    func testIssueCredentialBindsACredentialToThePagesKey() throws {
        let alice = try holder("alice")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CredentialPeer.python!)
        p.arguments = [Checkout.root.appendingPathComponent("deploy/examples/issue-credential").path, "mint", "--key", folder + "/issuer.key",
                       "--kid", "issuer-1", "--iss", "acme", "--sub", "alice", "--valid-from", String(wall.now - 60), "--valid-for", "1h",
                       "--holder-key", alice.link]
        let run = try Child.run(p)
        XCTAssertEqual(run.status, 0, run.errors)
        let link = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(link.hasPrefix("https://pass.example/#c="), link)
        let cred = try XCTUnwrap(Base64URL.decode(link.split(separator: "=", maxSplits: 1).last ?? ""))
        let v = try verifier()
        let o1 = v.verify(try peer.pass(form: 1, credential: cred, holder: alice, slot: slot))
        XCTAssertEqual(o1.reason, .valid)
        XCTAssertEqual(o1.sub, "alice")
        XCTAssertEqual(v.verify(Array(("KC1:" + Base45.encode(cred)).utf8)).reason, .noProof)
    }
}
