// SPDX-License-Identifier: Apache-2.0
import Policy
import XCTest

/// The phrases, the phrases file, KIOSK_SPEAK and the quiet window, the cache's keys.
final class SpeechPhrasesTests: XCTestCase {
    func testEveryReasonOfTheContractHasItsPhrase() {
        let table: [(String, String)] = [
            ("granted", "Welcome."), ("expired", "This pass is out of date."), ("not-yet-valid", "This pass is out of date."),
            ("stale", "This code is old. Please show the live pass."), ("used", "This pass was already used."),
            ("antipassback", "This pass was already used."), ("outside-schedule", "Not at this time."), ("holiday", "Not at this time."),
            ("no-access", "This pass does not open this door."), ("wrong-door", "This pass does not open this door."),
            ("lockdown", "The building is locked down."), ("revoked", "This pass has been withdrawn."),
            ("pin", "Please enter your pin."), ("wrong-pin", "Wrong pin."), ("pin-required", "No pin was entered."),
            ("pin-locked", "Too many wrong pins. Please call for help."), ("setup-applied", "Setup done."), ("setup-refused", "Setup code refused."),
        ] + ["signature", "unknown-key", "wrong-issuer", "holder-signature", "no-proof", "malformed", "not-a-credential"].map { ($0, "This code is not valid here.") }
          + ["clock-not-synchronized", "clock-behind", "state-damaged", "state-volatile", "store-full"].map { ($0, "The door cannot check passes now. Please call for help.") }
        let defaults = SpeechPhrases.merged([:])
        XCTAssertEqual(defaults.count, table.count)
        for (key, text) in table { XCTAssertEqual(defaults[key], text, key) }
    }

    func testEveryCredentialReasonIsSpokenAndAGrantIsWelcome() {
        for reason in CredentialReason.allCases where reason != .valid {
            XCTAssertEqual(SpeechPhrases.key(reason: reason.rawValue, granted: false), reason.rawValue.replacingSpaces, reason.rawValue)
        }
        XCTAssertEqual(SpeechPhrases.key(reason: "valid", granted: true), "granted")
        XCTAssertEqual(SpeechPhrases.key(reason: "exit status 0", granted: true), "granted")
        XCTAssertNil(SpeechPhrases.key(reason: "exit status 1", granted: false), "a scan program's reason explains nothing to the person")
        XCTAssertNil(SpeechPhrases.key(reason: "no answer within 2000 ms", granted: false))
        XCTAssertEqual(SpeechPhrases.key(reason: "wrong pin", granted: false), "wrong-pin")
    }

    func testAPhrasesFileReplacesSomePhrasesAndKeepsTheRest() throws {
        let file = "# Deutsch\n\ngranted Willkommen.\n  expired   Dieser Ausweis ist abgelaufen.  \r\nrevoked Raum #3 ist zu.\n"
        let phrases = try PhrasesFile.parse(file)
        XCTAssertEqual(phrases, ["granted": "Willkommen.", "expired": "Dieser Ausweis ist abgelaufen.", "revoked": "Raum #3 ist zu."])
        let merged = SpeechPhrases.merged(phrases)
        XCTAssertEqual(merged["granted"], "Willkommen.")
        XCTAssertEqual(merged["not-yet-valid"], "This pass is out of date.", "a key not in the file keeps its default")
    }

    func testAnUnknownKeyIsRefusedNamingItsLineAndKey() {
        XCTAssertThrowsError(try PhrasesFile.parse("granted Hello.\n# fine\nexpird Old.\n")) { error in
            let e = error as! PhrasesFileError
            XCTAssertEqual(e.line, 3)
            XCTAssertEqual(e.key, "expird")
            XCTAssertTrue(e.description.hasPrefix("line 3 (expird): no phrase has this key"), e.description)
        }
    }

    func testBadLinesAreRefused() {
        func problem(_ text: String) -> PhrasesFileError? {
            do { _ = try PhrasesFile.parse(text); return nil } catch { return error }
        }
        XCTAssertEqual(problem("granted\n")?.reason, "expected KEY TEXT: the phrase is missing")
        XCTAssertEqual(problem("granted A.\ngranted B.\n")?.reason, "the key is already given on line 1")
        XCTAssertEqual(problem("granted " + String(repeating: "a", count: 301))?.line, 1)
        XCTAssertEqual(problem("granted a\u{1}b")?.reason, "a phrase without control characters")
        XCTAssertEqual(problem(String(repeating: "#\n", count: 40_000))?.line, 0, "a file too long")
        XCTAssertNil(problem(""))
        XCTAssertNil(problem("\n\n# only comments\n"))
    }

    func testWhichVerdictsAreSpoken() {
        XCTAssertFalse(SpeakSetting.denied.speaks("granted"))
        XCTAssertTrue(SpeakSetting.denied.speaks("expired"))
        XCTAssertTrue(SpeakSetting.denied.speaks("pin"), "a request is spoken with denied")
        XCTAssertTrue(SpeakSetting.denied.speaks("setup-applied"))
        XCTAssertTrue(SpeakSetting.all.speaks("granted"))
        XCTAssertFalse(SpeakSetting.off.speaks("expired"))
        XCTAssertEqual(SpeakSetting(rawValue: "0"), .off)
        XCTAssertNil(SpeakSetting(rawValue: "1"))
    }

    func testTheQuietWindowMayCrossMidnight() {
        let night = QuietWindow(parsing: "22:00-07:00")!
        XCTAssertEqual(night.description, "22:00-07:00")
        XCTAssertTrue(night.contains(minute: 22 * 60))
        XCTAssertTrue(night.contains(minute: 23 * 60 + 59))
        XCTAssertTrue(night.contains(minute: 0))
        XCTAssertTrue(night.contains(minute: 6 * 60 + 59))
        XCTAssertFalse(night.contains(minute: 7 * 60), "the end is not in the window")
        XCTAssertFalse(night.contains(minute: 21 * 60 + 59))
        let lunch = QuietWindow(parsing: "12:00-13:30")!
        XCTAssertTrue(lunch.contains(minute: 12 * 60 + 15))
        XCTAssertFalse(lunch.contains(minute: 13 * 60 + 30))
        XCTAssertFalse(lunch.contains(minute: 11 * 60))
        XCTAssertTrue(QuietWindow(parsing: "00:00-24:00")!.contains(minute: 1439))
        // Found by FuzzPhrases: an end of 00:00 is midnight, as 24:00 is.
        let toMidnight = QuietWindow(parsing: "22:00-00:00")!
        XCTAssertTrue(toMidnight.contains(minute: 23 * 60 + 59))
        XCTAssertFalse(toMidnight.contains(minute: 0))
        XCTAssertFalse(toMidnight.contains(minute: 21 * 60 + 59))
        XCTAssertEqual(QuietWindow(parsing: toMidnight.description), toMidnight)
        for bad in ["22:00", "7:00-08:00", "22:00-22:00", "24:00-01:00", "12:60-13:00", "12:00-13:00 ", ""] {
            XCTAssertNil(QuietWindow(parsing: bad), bad)
        }
    }
}

final class SpeechCacheTests: XCTestCase {
    func testTheFileNameIsTheVoiceAndTheTextNotTheVersion() {
        let a = SpeechCacheKey(voice: "en", text: "Welcome.", renderer: "1.51")
        let b = SpeechCacheKey(voice: "en", text: "Welcome.", renderer: "1.52")
        XCTAssertEqual(a.fileName, b.fileName)
        XCTAssertNotEqual(a.fileName, SpeechCacheKey(voice: "de", text: "Welcome.", renderer: "1.51").fileName)
        XCTAssertNotEqual(a.fileName, SpeechCacheKey(voice: "en", text: "Welcome!", renderer: "1.51").fileName)
        XCTAssertNotEqual(SpeechCacheKey.fileName(voice: "en", text: "ab"), SpeechCacheKey.fileName(voice: "ena", text: "b"), "the voice ends where the text starts")
        XCTAssertEqual(a.fileName.count, 16 + ".phrase".count)
        XCTAssertEqual(SpeechCacheKey.fileName(voice: "", text: "").prefix(16), "af63bd4c8601b7df", "FNV-1a of one zero byte")
    }

    func testARenderedPhraseReadsBackAndATornOneDoesNot() {
        let p = RenderedPhrase(key: SpeechCacheKey(voice: "fr", text: "Bienvenue.", renderer: "1.51"), sampleRate: 22050, samples: [0, 1, -1, 32767, -32768])
        let bytes = p.bytes
        XCTAssertEqual(RenderedPhrase(bytes: bytes), p)
        XCTAssertNil(RenderedPhrase(bytes: Array(bytes.dropLast())), "an odd number of sample bytes")
        XCTAssertNil(RenderedPhrase(bytes: Array(bytes.prefix(20))))
        XCTAssertNil(RenderedPhrase(bytes: Array("kiosk-phrase 2\n22050\nfr\n1.51\nx\n".utf8)))
        XCTAssertNil(RenderedPhrase(bytes: Array("kiosk-phrase 1\n100\nfr\n1.51\nx\n".utf8)), "no such sample rate")
        XCTAssertEqual(RenderedPhrase(bytes: Array("kiosk-phrase 1\n16000\nen\n1.51\nx\n".utf8))?.samples, [])
    }

    func testWAVAsEspeakWritesIt() {
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24 & 0xff)] }
        // Built step by step: Swift 6.0.3 (trixie) cannot type-check one long sum of arrays in time.
        var fmt: [UInt8] = Array("fmt ".utf8)
        fmt += le32(16)
        fmt += [1, 0, 1, 0]
        fmt += le32(22050)
        fmt += le32(44100)
        fmt += [2, 0, 16, 0]
        var data: [UInt8] = Array("data".utf8)
        data += le32(6)
        data += [1, 0, 0xff, 0xff, 0, 0x80]
        var wav: [UInt8] = Array("RIFF".utf8)
        wav += le32(4 + fmt.count + data.count)
        wav += Array("WAVE".utf8)
        wav += fmt
        wav += data
        XCTAssertEqual(WAVFile.parse(wav)?.sampleRate, 22050)
        XCTAssertEqual(WAVFile.parse(wav)?.samples, [1, -1, -32768])
        // Written to a pipe: the data's size is left at its maximum.
        var piped = Array(wav.prefix(wav.count - 10))
        piped += le32(0x7fff_ffff)
        piped += [1, 0, 2, 0, 3, 0]
        XCTAssertEqual(WAVFile.parse(piped)?.samples, [1, 2, 3])
        var stereo = wav
        stereo[22] = 2
        XCTAssertNil(WAVFile.parse(stereo))
        XCTAssertNil(WAVFile.parse(Array(wav.prefix(30))))
        XCTAssertNil(WAVFile.parse([]))
    }

    func testEspeakNGsVersion() {
        XCTAssertEqual(ESpeakVersion.parse("eSpeak NG text-to-speech: 1.51  Data at: /usr/lib/x86_64-linux-gnu/espeak-ng-data\n"), "1.51")
        XCTAssertEqual(ESpeakVersion.parse("eSpeak NG text-to-speech: 1.52.0  Data at: /usr/share/espeak-ng-data\n"), "1.52.0")
        XCTAssertNil(ESpeakVersion.parse("command not found"))
        XCTAssertNil(ESpeakVersion.parse(""))
    }

    func testTheSecondStartRendersOnlyWhatChanged() {
        let texts = ["Welcome.", "This pass is out of date."]
        let first = SpeechCachePlan.make(voice: "en", texts: texts, renderer: "1.51", cached: [:])
        XCTAssertEqual(first.render.map(\.text), ["This pass is out of date.", "Welcome."])
        var cached = Dictionary(uniqueKeysWithValues: first.render.map { ($0.fileName, $0) })
        XCTAssertEqual(SpeechCachePlan.make(voice: "en", texts: texts, renderer: "1.51", cached: cached),
                       SpeechCachePlan(render: [], stale: [], missing: []), "nothing changed: nothing rendered")
        let replaced = SpeechCachePlan.make(voice: "en", texts: ["Hello.", "This pass is out of date."], renderer: "1.51", cached: cached)
        XCTAssertEqual(replaced.render.map(\.text), ["Hello."])
        XCTAssertEqual(replaced.stale, [SpeechCacheKey.fileName(voice: "en", text: "Welcome.")], "a phrase no longer said is deleted")
        XCTAssertEqual(SpeechCachePlan.make(voice: "en", texts: texts, renderer: "1.52", cached: cached).render.count, 2, "a new espeak-ng renders again")
        XCTAssertEqual(SpeechCachePlan.make(voice: "de", texts: texts, renderer: "1.51", cached: cached).render.count, 2, "another voice")
        // espeak-ng gone: what is cached plays, whatever made it; nothing is deleted.
        let gone = SpeechCachePlan.make(voice: "en", texts: texts + ["Hello."], renderer: nil, cached: cached)
        XCTAssertEqual(gone, SpeechCachePlan(render: [], stale: [], missing: ["Hello."]))
        // A file of that name for another text (a collision) is no hit.
        cached[SpeechCacheKey.fileName(voice: "en", text: "Welcome.")] = SpeechCacheKey(voice: "en", text: "Other.", renderer: "1.51")
        XCTAssertEqual(SpeechCachePlan.make(voice: "en", texts: ["Welcome."], renderer: "1.51", cached: cached).render.map(\.text), ["Welcome."])
    }
}

/// The speaker's decisions on an injected time: the newest phrase wins, a failed speaker is
/// tried again backing off and said once a change.
final class SpeakerPolicyTests: XCTestCase {
    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    func testAPhraseWaitingOrPlayingIsCutByTheNext() {
        var s = SpeakerPolicy(speak: .all, quiet: nil)
        let first = s.asked(key: "expired", verdictAtNs: ms(1000), startAtNs: ms(1300))
        XCTAssertTrue(s.isCurrent(first))
        let second = s.asked(key: "granted", verdictAtNs: ms(1100), startAtNs: ms(1250))
        XCTAssertFalse(s.isCurrent(first), "the first is cut, waiting or playing")
        XCTAssertTrue(s.isCurrent(second))
        s.done(first)
        XCTAssertTrue(s.isCurrent(second), "the end of a cut phrase does not end the next")
        s.done(second)
        XCTAssertNil(s.newest)
        XCTAssertEqual(SpeakerPolicy.spokeMs(second, firstSampleAtNs: ms(1350)), 250)
        XCTAssertEqual(SpeakerPolicy.spokeMs(second, firstSampleAtNs: ms(1000)), 0)
    }

    func testWhatIsSaidFollowsTheSettingAndTheQuietWindow() {
        let s = SpeakerPolicy(speak: .denied, quiet: QuietWindow(parsing: "22:00-07:00"))
        XCTAssertTrue(s.says(key: "expired", minute: 12 * 60))
        XCTAssertFalse(s.says(key: "granted", minute: 12 * 60))
        XCTAssertFalse(s.says(key: "expired", minute: 23 * 60), "beeps only in the quiet window")
        XCTAssertTrue(s.saysText(minute: 12 * 60))
        XCTAssertFalse(s.saysText(minute: 3 * 60))
        XCTAssertFalse(SpeakerPolicy(speak: .off, quiet: nil).saysText(minute: 0))
    }

    func testAFailedSpeakerIsTriedAgainBackingOffAndSaidOnceAChange() {
        var s = SpeakerPolicy(speak: .all, quiet: nil)
        XCTAssertTrue(s.mayOpen(now: 0))
        XCTAssertEqual(s.failed("No such device", now: ms(0)), .failed(reason: "No such device", retryMs: 1000))
        XCTAssertFalse(s.mayOpen(now: ms(999)))
        XCTAssertTrue(s.mayOpen(now: ms(1000)))
        XCTAssertNil(s.failed("No such device", now: ms(1000)), "the same failure again is not said again")
        XCTAssertEqual(s.nextTryNs, ms(3000), "2 s after the second")
        XCTAssertEqual(s.failed("Device or resource busy", now: ms(3000)), .failed(reason: "Device or resource busy", retryMs: 4000), "another failure is")
        for _ in 0..<10 { _ = s.failed("Device or resource busy", now: ms(10_000)) }
        XCTAssertEqual(s.nextTryNs, ms(70_000), "capped at 60 s")
        XCTAssertEqual(s.opened(), .back)
        XCTAssertNil(s.nextTryNs)
        XCTAssertTrue(s.mayOpen(now: ms(10_001)))
        XCTAssertNil(s.opened(), "working on: nothing to say")
        XCTAssertEqual(s.failed("No such device", now: ms(20_000)), .failed(reason: "No such device", retryMs: 1000), "lost after working: said, back-off from the start")
    }
}

private extension String {
    var replacingSpaces: String { String(map { $0 == " " ? "-" : $0 }) }
}

/// The six speech variables in the configuration's one table.
final class SpeechConfigurationTests: XCTestCase {
    func read(_ env: [String: String]) -> ConfigurationReading {
        Configuration.read(environment: env, isExecutableFile: { _ in true })
    }

    func testTheDefaultsAndEverySettingRead() {
        let d = read([:]).configuration
        XCTAssertNil(d.speaker)
        XCTAssertEqual(d.voice, "en")
        XCTAssertEqual(d.speak, .denied)
        XCTAssertEqual(d.speakVolume, 80)
        XCTAssertNil(d.speakQuiet)
        XCTAssertEqual(d.phrasesFile, "/etc/kiosk/phrases")
        let r = read(["KIOSK_SPEAKER": "plughw:CARD=Device", "KIOSK_VOICE": "en-us+f3", "KIOSK_SPEAK": "ALL", "KIOSK_SPEAK_VOLUME": "55",
                      "KIOSK_SPEAK_QUIET": "22:00-07:00", "KIOSK_PHRASES_FILE": "/etc/kiosk/phrases.de"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings, [])
        let c = r.configuration
        XCTAssertEqual(c.speaker, "plughw:CARD=Device")
        XCTAssertEqual(c.voice, "en-us+f3")
        XCTAssertEqual(c.speak, .all)
        XCTAssertEqual(c.speakVolume, 55)
        XCTAssertEqual(c.speakQuiet, QuietWindow(parsing: "22:00-07:00"))
        XCTAssertEqual(c.phrasesFile, "/etc/kiosk/phrases.de")
        XCTAssertEqual(r.settings.first { $0.variable == "KIOSK_SPEAK_QUIET" }?.value, "22:00-07:00")
    }

    func testBadValuesAreConfigErrors() {
        for (name, value) in [("KIOSK_SPEAKER", "my speaker"), ("KIOSK_VOICE", "-v"), ("KIOSK_VOICE", "en us"), ("KIOSK_VOICE", "de;rm"),
                              ("KIOSK_SPEAK", "1"), ("KIOSK_SPEAK_VOLUME", "101"), ("KIOSK_SPEAK_QUIET", "22:00"),
                              ("KIOSK_SPEAK_QUIET", "07:00-07:00"), ("KIOSK_PHRASES_FILE", "phrases")] {
            var env = ["KIOSK_SPEAKER": "default"]
            env[name] = value
            let r = read(env)
            XCTAssertEqual(r.errors.map(\.variable), [name], "\(name)=\(value)")
        }
    }

    func testSpeechSettingsWithoutASpeakerAreIgnoredAndSaidSo() {
        let r = read(["KIOSK_VOICE": "de", "KIOSK_SPEAK": "all"])
        XCTAssertEqual(r.errors, [])
        XCTAssertEqual(r.warnings.map(\.variable), ["KIOSK_VOICE", "KIOSK_SPEAK"], "in the table's order")
        XCTAssertTrue(r.warnings.allSatisfy { $0.reason == "ignored: KIOSK_SPEAKER is unset, so the door does not speak" })
    }
}
