// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Policy
import TestSupport
import XCTest

/// Issue 53 on the built `kiosk` binary: credentials minted by an independent issuer (PyPI's cwt,
/// Tests/Peers/credentials.py), shown one by one through a replay of FIFOs, judged by
/// `KIOSK_VERDICT=credentials`, and each verdict's phrase spoken by espeak-ng's voice into an ALSA
/// PCM of type `file` (an asoundrc of the test's own: no sound card), which Debian's pocketsphinx,
/// constrained to a grammar of the phrases, hears. The voice is `en-us`: pocketsphinx's model is
/// US English (with `en`, British vowels, it loses one phrase of the sixteen).
final class SpeechEndToEndTests: XCTestCase {
    var folder = ""
    var trust: String { folder + "/trust" }
    var state: String { folder + "/state" }
    var peer: CredentialPeer!

    override func setUpWithError() throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng"),
              FileManager.default.fileExists(atPath: "/usr/share/pocketsphinx/model/en-us/en-us/mdef") else {
            throw XCTSkip("espeak-ng and pocketsphinx-en-us are not installed (make test installs them: SPEECH_TEST_PACKAGES)")
        }
        folder = NSTemporaryDirectory() + "kiosk-speech-e2e-\(UUID().uuidString.prefix(8))"
        for d in [trust, state, folder + "/cache"] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try CredentialPeer(python: python)
        try peer.keygen("ES256", privatePath: folder + "/es.key", publicPath: trust + "/issuer-1.pem")
        // The speaker: ALSA's `plug` to 16 kHz mono, then its `file` plugin over `null`.
        try """
        pcm.door { type plug; slave { pcm "door_file"; rate 16000; format S16_LE; channels 1 } }
        pcm.door_file { type file; slave.pcm "null"; file "\(folder)/said.raw"; format "raw" }
        pcm.gone { type hw; card "NoSuchCardHere" }

        """.write(toFile: folder + "/asoundrc", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        peer = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    var now: Int { Int(Date().timeIntervalSince1970) }

    func mint(_ claims: [String: Any]) throws -> String {
        var all: [String: Any] = ["1": "acme", "2": "alice", "4": now + 3600, "5": now - 60, "6": now - 60]
        all.merge(claims) { _, b in b }
        return try peer.sign(lib: "cwt", privatePath: folder + "/es.key", alg: "ES256", kid: "issuer-1", claims: all)
    }

    func env(speaker: String, _ more: [String: String] = [:]) -> [String: String] {
        DoorFixtures.credentialsEnv(folder: folder, trust: trust, state: state)
            .merging(["KIOSK_SPEAKER": speaker, "KIOSK_VOICE": "en-us", "KIOSK_SPEAK": "all", "KIOSK_SPEAK_VOLUME": "100",
                      "KIOSK_PHRASES_FILE": folder + "/phrases", "CACHE_DIRECTORY": folder + "/cache",
                      "ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + folder + "/asoundrc"]) { _, b in b }
            .merging(more) { _, b in b }
    }

    /// The size of what the speaker wrote so far.
    func saidBytes() -> Int { (try? FileManager.default.attributesOfItem(atPath: folder + "/said.raw")[.size] as? Int) ?? 0 }

    /// The scene: granted, expired, revoked, a one-time pass and its reuse, a code that is
    /// no credential; each shown once the last phrase is out (the `null` PCM takes a phrase at once,
    /// so a phrase is whole once what was written stops growing), heard in order.
    func testEveryVerdictOfASceneIsHeardInOrderAsItsPhrase() throws {
        try "# revoked\nmallory\n".write(toFile: folder + "/revoked", atomically: true, encoding: .utf8)
        let scene: [(code: String, key: String)] = [
            (try mint([:]), "granted"),
            (try mint(["2": "dave", "4": now - 3600, "5": now - 7200]), "expired"),
            (try mint(["2": "mallory"]), "revoked"),
            (try mint(["2": "olga", "7": ["hex": "0a0b0c"]]), "granted"),
            ("", "used"),  // the one-time pass again
            ("HELLO-WORLD", "not-a-credential"),
        ]
        let codes = scene.enumerated().map { i, s in s.code.isEmpty ? scene[i - 1].code : s.code }
        let replay = try FleetEndToEndTests.FifoReplay(folder + "/fifo", count: codes.count + 1)
        let kiosk = try FleetEndToEndTests.LiveKiosk(env: env(speaker: "door", ["KIOSK_CAMERA": "replay:" + replay.path]))
        XCTAssertTrue(kiosk.waitFor("speech_phrases", seconds: 60), kiosk.text)
        for (i, code) in codes.enumerated() {
            replay.feed(try FleetEndToEndTests.frame(Array(code.utf8)))
            XCTAssertTrue(kiosk.waitFor("spoke", count: i + 1, seconds: 20), kiosk.text)
            var last = -1
            XCTAssertTrue(eventually("phrase \(i + 1) written whole", within: 10, every: 0.2) {
                defer { last = saidBytes() }
                return saidBytes() == last && last > 0
            })
        }
        replay.feed(try FleetEndToEndTests.frame(nil))
        XCTAssertEqual(kiosk.wait(), 0, kiosk.text)
        XCTAssertEqual(kiosk.of("verdict").map { $0["reason"] ?? "" }, ["valid", "expired", "revoked", "valid", "used", "not a credential"], kiosk.text)
        XCTAssertEqual(kiosk.of("spoke").map { $0["key"] ?? "" }, scene.map(\.key), kiosk.text)
        XCTAssertEqual(kiosk.of("speaker_error").count, 0, kiosk.text)
        let defaults = SpeechPhrases.merged([:])
        let allTexts = Array(Set(defaults.values)).sorted()
        let heard = try recognise(folder + "/said.raw", allTexts)
        XCTAssertEqual(heard.phrases.map { $0 >= 0 ? allTexts[$0] : "?" }, scene.map { defaults[$0.key]! }, "pocketsphinx heard: \(heard.text)")
        // No name is ever spoken, nor logged with the phrase.
        XCTAssertFalse(heard.text.contains("alice") || heard.text.contains("olga"))
    }

    /// A speaker that cannot be opened never delays or loses a verdict: every verdict is given, and
    /// the warning says why.
    func testASpeakerThatCannotBeOpenedLosesNoVerdict() throws {
        // The code that is no credential first: it is judged at once, the credentials in turn on
        // the verifier's thread, so only this order is the log's whatever the machine's load.
        let codes = ["HELLO", try mint([:]), try mint(["2": "bob"])]
        let replayFolder = try DoorFixtures.replay(codes, at: folder + "/replay")
        let r = try KioskProcess.run(["run"], env: env(speaker: "gone", ["KIOSK_CAMERA": "replay:" + replayFolder]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.reasons, ["not a credential", "valid", "valid"], r.stderr)
        XCTAssertEqual(r.of("verdict").count, 3, r.stderr)
        XCTAssertGreaterThanOrEqual(r.of("speaker_error").count, 1, r.stderr)
        XCTAssertEqual(r.of("speaker_error").first?["level"], "warning", r.stderr)
        XCTAssertEqual(r.of("spoke").count, 0, r.stderr)
    }

    func recognise(_ raw: String, _ phrases: [String]) throws -> (text: String, phrases: [Int]) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Checkout.root.appendingPathComponent("Tests/Peers/speech_recognizer.py").path, raw] + phrases
        let r = try Child.run(p)
        guard r.status == 0, let json = try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any],
              let text = json["hypothesis"] as? String, let list = json["phrases"] as? [Int] else {
            throw NSError(domain: "recogniser", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: r.output + r.errors])
        }
        return (text, list)
    }
}
