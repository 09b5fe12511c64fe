// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Platform
import Policy
import Speech
import TestSupport
import XCTest

/// A test folder, and an ALSA configuration of its own: PCMs of type `file` (ALSA's own plugin)
/// over `null`, resampled by ALSA's `plug` to 16 kHz for the recogniser. No sound card needed.
enum SpeechTestRig {
    /// The folder, made once a process; ALSA reads ALSA_CONFIG_PATH when it first loads its
    /// configuration, so it is set before any speaker opens.
    static var folder: String {
        let dir = path
        if !FileManager.default.fileExists(atPath: dir + "/asoundrc") { write(dir) }
        return dir
    }

    static let path: String = {
        let dir = NSTemporaryDirectory() + "kiosk-speech-\(getpid())"
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(dir)/asoundrc", 1)
        return dir
    }()

    /// Removed by each class when it ends (made again by the next).
    static func remove() { try? FileManager.default.removeItem(atPath: path) }

    private static func write(_ dir: String) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var conf = ""
        for n in 0..<8 {
            conf += """
            pcm.kiosk_test_\(n) {
              type plug
              slave { pcm "kiosk_test_\(n)_file"; rate 16000; format S16_LE; channels 1 }
            }
            pcm.kiosk_test_\(n)_file {
              type file
              slave.pcm "null"
              file "\(dir)/pcm\(n).raw"
              format "raw"
            }

            """
        }
        // A PCM that names a card no machine has: it cannot be opened.
        conf += "pcm.kiosk_test_gone { type hw; card \"NoSuchCardHere\" }\n"
        try? conf.write(toFile: dir + "/asoundrc", atomically: true, encoding: .utf8)
    }

    static func pcm(_ n: Int) -> (name: String, file: String) { ("kiosk_test_\(n)", folder + "/pcm\(n).raw") }

    /// A fresh folder for one test's cache.
    static func cacheFolder(_ name: String) -> String {
        let dir = folder + "/cache-" + name
        try? FileManager.default.removeItem(atPath: dir)
        return dir
    }

    static func requireTools() throws {
        guard FileManager.default.isExecutableFile(atPath: ESpeak.defaultPath) else {
            throw XCTSkip("espeak-ng is not installed (make test installs it: SPEECH_TEST_PACKAGES)")
        }
    }

    /// What pocketsphinx heard in a 16 kHz recording: the indices of `phrases`, in order.
    static func recognise(_ raw: String, _ phrases: [String]) throws -> (heard: String, phrases: [Int]) {
        guard FileManager.default.fileExists(atPath: "/usr/share/pocketsphinx/model/en-us/en-us/mdef") else {
            throw XCTSkip("pocketsphinx-en-us is not installed (make test installs it: SPEECH_TEST_PACKAGES)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Checkout.root.appendingPathComponent("Tests/Peers/speech_recognizer.py").path, raw] + phrases
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let heard = json["hypothesis"] as? String, let list = json["phrases"] as? [Int] else {
            throw NSError(domain: "recogniser", code: Int(p.terminationStatus), userInfo: [NSLocalizedDescriptionKey: String(decoding: data, as: UTF8.self)])
        }
        return (heard, list)
    }
}

/// The events a speaker sent, for the tests to wait on.
final class SpeechEvents: @unchecked Sendable {
    private let lock = Lock()
    private var list: [SpeechEvent] = []
    func add(_ e: SpeechEvent) { lock.withLock { list.append(e) } }
    var all: [SpeechEvent] { lock.withLock { list } }
    var spoken: [String] { all.compactMap { if case .spoke(let key, _) = $0 { return key } else { return nil } } }
    var errors: [SpeechEvent] { all.filter { if case .speakerError = $0 { return true } else { return false } } }
    var phrases: [SpeechEvent] { all.filter { if case .phrases = $0 { return true } else { return false } } }
}

/// The speaker end to end: espeak-ng renders, ALSA plays into a file PCM, pocketsphinx hears.
final class SpeakerRecognitionTests: XCTestCase {
    override class func tearDown() { SpeechTestRig.remove() }

    /// The scene: granted, expired, revoked, a one-time pass and its reuse, a code that is
    /// no credential. Voice en-us: pocketsphinx's model is US English (with `en`, British vowels,
    /// it loses a phrase of the sixteen).
    func testTheVerdictsOfASceneAreHeardInOrder() throws {
        try SpeechTestRig.requireTools()
        let (pcm, file) = SpeechTestRig.pcm(0)
        let events = SpeechEvents()
        let clock = ManualClock()
        let speaker = Speaker(settings: SpeechSettings(speaker: pcm, voice: "en-us", speak: .all, volume: 100,
                                                       phrasesFile: SpeechTestRig.folder + "/no-phrases", cacheFolder: SpeechTestRig.cacheFolder("scene")),
                              clock: clock, onEvent: events.add)
        try speaker.start()
        XCTAssertTrue(speaker.isOn)
        XCTAssertEqual(events.phrases, [.phrases(voice: "en-us", rendered: 16, cached: 0, removed: 0)], "every default phrase rendered once")
        let scene: [(reason: String, granted: Bool)] = [("valid", true), ("expired", false), ("revoked", false), ("valid", true), ("used", false), ("not a credential", false)]
        for (reason, granted) in scene {
            speaker.say(reason: reason, granted: granted, verdictAtNs: clock.now(), afterNs: 0)
            XCTAssertTrue(eventually("the phrase for \(reason) played", within: 10) { speaker.isIdle })
        }
        speaker.stop()
        XCTAssertEqual(events.spoken, ["granted", "expired", "revoked", "granted", "used", "not-a-credential"])
        XCTAssertEqual(events.errors, [])
        let defaults = SpeechPhrases.merged([:])
        let expected = ["granted", "expired", "revoked", "granted", "used", "not-a-credential"].map { defaults[$0]! }
        let allTexts = Array(Set(defaults.values)).sorted()
        let heard = try SpeechTestRig.recognise(file, allTexts)
        XCTAssertEqual(heard.phrases.map { $0 >= 0 ? allTexts[$0] : "?" }, expected, "pocketsphinx heard: \(heard.heard)")
    }

    /// A phrases file replaces a phrase: the new words are said, the others stay.
    func testAPhrasesFileReplacesAPhrase() throws {
        try SpeechTestRig.requireTools()
        let (pcm, file) = SpeechTestRig.pcm(1)
        let phrasesFile = SpeechTestRig.folder + "/phrases-replace"
        try "# the site's words\nrevoked Please go to the front desk.\n".write(toFile: phrasesFile, atomically: true, encoding: .utf8)
        let events = SpeechEvents()
        let clock = ManualClock()
        let speaker = Speaker(settings: SpeechSettings(speaker: pcm, voice: "en-us", speak: .denied, volume: 100,
                                                       phrasesFile: phrasesFile, cacheFolder: SpeechTestRig.cacheFolder("replace")),
                              clock: clock, onEvent: events.add)
        try speaker.start()
        for key in ["revoked", "expired"] {
            speaker.say(key: key, verdictAtNs: clock.now(), afterNs: 0)
            XCTAssertTrue(eventually("\(key) played", within: 10) { speaker.isIdle })
        }
        speaker.stop()
        XCTAssertEqual(events.spoken, ["revoked", "expired"])
        let texts = ["Please go to the front desk.", "This pass has been withdrawn.", "This pass is out of date.", "Welcome."]
        let heard = try SpeechTestRig.recognise(file, texts)
        XCTAssertEqual(heard.phrases, [0, 2], "pocketsphinx heard: \(heard.heard)")
    }
}

/// The cache: rendered once, kept across starts, only what changed rendered again; without
/// espeak-ng what is cached still speaks.
final class PhraseCacheTests: XCTestCase {
    override class func tearDown() { SpeechTestRig.remove() }

    func testTheSecondStartRendersOnlyWhatChanged() throws {
        try SpeechTestRig.requireTools()
        let cache = SpeechTestRig.cacheFolder("second-start")
        let phrasesFile = SpeechTestRig.folder + "/phrases-second-start"
        unlink(phrasesFile)
        func start(espeak: ESpeak = ESpeak()) throws -> (Speaker, SpeechEvents) {
            let events = SpeechEvents()
            let s = Speaker(settings: SpeechSettings(speaker: "kiosk_test_gone", voice: "en", phrasesFile: phrasesFile, cacheFolder: cache, espeak: espeak),
                            clock: ManualClock(), onEvent: events.add)
            try s.start()
            return (s, events)
        }
        let (first, e1) = try start()
        first.stop()
        XCTAssertEqual(e1.phrases, [.phrases(voice: "en", rendered: 16, cached: 0, removed: 0)])
        let files = Set(Files.names(in: cache)!.filter { $0.hasSuffix(".phrase") })
        XCTAssertEqual(files.count, 16, "one file a distinct phrase")

        let (second, e2) = try start()
        second.stop()
        XCTAssertEqual(e2.phrases, [.phrases(voice: "en", rendered: 0, cached: 16, removed: 0)], "nothing changed: nothing rendered")

        try "granted Good morning.\n".write(toFile: phrasesFile, atomically: true, encoding: .utf8)
        let (third, e3) = try start()
        third.stop()
        XCTAssertEqual(e3.phrases, [.phrases(voice: "en", rendered: 1, cached: 15, removed: 1)], "one phrase changed")
        XCTAssertEqual(Set(Files.names(in: cache)!.filter { $0.hasSuffix(".phrase") }).subtracting(files),
                       [SpeechCacheKey.fileName(voice: "en", text: "Good morning.")])

        // espeak-ng gone: every phrase is cached, so the door still speaks.
        let (fourth, e4) = try start(espeak: ESpeak(path: "/nonexistent/espeak-ng"))
        XCTAssertTrue(fourth.isOn)
        fourth.stop()
        XCTAssertEqual(e4.phrases, [.phrases(voice: "en", rendered: 0, cached: 16, removed: 0)])

        // ... but a phrase not in the cache turns speech off, with a warning.
        try "granted Good evening.\n".write(toFile: phrasesFile, atomically: true, encoding: .utf8)
        let (fifth, e5) = try start(espeak: ESpeak(path: "/nonexistent/espeak-ng"))
        XCTAssertFalse(fifth.isOn)
        fifth.say(key: "expired", verdictAtNs: 0, afterNs: 0)
        XCTAssertTrue(fifth.isIdle, "nothing to say while speech is off")
        fifth.stop()
        guard case .speechOff(let why) = e5.all.last else { return XCTFail("\(e5.all)") }
        XCTAssertTrue(why.contains("espeak-ng is not installed") && why.contains("1 phrase(s)"), why)
    }

    /// deploy/examples' German and French phrases: every key given, each rendered by its voice.
    func testTheGermanAndFrenchExamplesRenderWithTheirVoices() throws {
        try SpeechTestRig.requireTools()
        for voice in ["de", "fr"] {
            let file = Checkout.root.appendingPathComponent("deploy/examples/phrases.\(voice)").path
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let phrases = try PhrasesFile.parse(text)
            XCTAssertEqual(Set(phrases.keys), Set(SpeechPhrases.keys), "\(file) gives every key")
            let events = SpeechEvents()
            let s = Speaker(settings: SpeechSettings(speaker: "kiosk_test_gone", voice: voice, phrasesFile: file,
                                                     cacheFolder: SpeechTestRig.cacheFolder("example-\(voice)")),
                            clock: ManualClock(), onEvent: events.add)
            try s.start()
            s.stop()
            XCTAssertTrue(s.isOn, voice)
            XCTAssertEqual(events.phrases, [.phrases(voice: voice, rendered: Set(phrases.values).count, cached: 0, removed: 0)])
            let rendered = PhraseCache(folder: s.settings.cacheFolder).entries().values
            XCTAssertEqual(Set(rendered.map(\.key.text)), Set(phrases.values))
            for p in rendered {
                XCTAssertEqual(p.key.voice, voice)
                XCTAssertGreaterThan(p.durationNs, 500_000_000, "\(p.key.text): said, not an empty file")
                XCTAssertGreaterThan(p.samples.map { abs(Int($0)) }.max() ?? 0, 3000, "\(p.key.text): audible")
            }
        }
    }

    func testAnUnknownVoiceAndABadPhrasesFileAreRefused() throws {
        try SpeechTestRig.requireTools()
        let s = Speaker(settings: SpeechSettings(speaker: "default", voice: "xx-nosuch", phrasesFile: "/nonexistent/phrases",
                                                 cacheFolder: SpeechTestRig.cacheFolder("voice")), clock: ManualClock(), onEvent: { _ in })
        XCTAssertThrowsError(try s.start()) { error in
            let e = (error as! SpeechStartError).configError
            XCTAssertEqual(e.variable, "KIOSK_VOICE")
            XCTAssertEqual(e.value, "xx-nosuch")
        }
        let file = SpeechTestRig.folder + "/phrases-bad"
        try "granted Hello.\nexpird Old.\n".write(toFile: file, atomically: true, encoding: .utf8)
        let t = Speaker(settings: SpeechSettings(speaker: "default", voice: "en", phrasesFile: file, cacheFolder: SpeechTestRig.cacheFolder("bad")),
                        clock: ManualClock(), onEvent: { _ in })
        XCTAssertThrowsError(try t.start()) { error in
            let e = (error as! SpeechStartError).configError
            XCTAssertEqual(e.variable, "KIOSK_PHRASES_FILE")
            XCTAssertTrue(e.expected.contains("line 2 (expird)"), e.expected)
        }
    }
}

/// A device that plays only when the test lets it: each write waits for a permit.
final class GatedSpeaker: SpeakerDevice, @unchecked Sendable {
    enum Call: Equatable { case open(Int), write(Int), drop, drain, close }
    private let gate = Condition()
    private var permits = 0
    private var log: [Call] = []
    var failOpen: SpeakerFault?
    /// Writes fail with this (the device went away) while set.
    var failWrites: SpeakerFault? {
        get { gate.lock(); defer { gate.unlock() }; return writeFault }
        set { gate.lock(); writeFault = newValue; gate.unlock() }
    }
    private var writeFault: SpeakerFault?

    func allow(_ n: Int) { gate.lock(); permits += n; gate.broadcast(); gate.unlock() }
    var calls: [Call] { gate.lock(); defer { gate.unlock() }; return log }
    func record(_ c: Call) { gate.lock(); log.append(c); gate.broadcast(); gate.unlock() }
    /// Whether a write waits for its permit.
    var waiting: Bool { gate.lock(); defer { gate.unlock() }; return waitingNow }
    private var waitingNow = false

    func open(_ name: String, sampleRate: Int) -> Result<SpeakerOutput, SpeakerFault> {
        if let failOpen { return .failure(failOpen) }
        record(.open(sampleRate))
        return .success(Output(self))
    }

    final class Output: SpeakerOutput {
        let device: GatedSpeaker
        init(_ d: GatedSpeaker) { device = d }
        func write(_ samples: UnsafeBufferPointer<Int16>) -> Result<Int, SpeakerFault> {
            let g = device.gate
            g.lock()
            device.waitingNow = true
            if let fault = device.writeFault {
                device.log.append(.write(0))
                g.unlock()
                return .failure(fault)
            }
            while device.permits == 0 { g.wait() }
            device.permits -= 1
            device.waitingNow = false
            device.log.append(.write(samples.count))
            g.broadcast()
            g.unlock()
            return .success(samples.count)
        }
        func drop() { device.record(.drop) }
        func drain() { device.record(.drain) }
        func close() { device.record(.close) }
    }
}

/// The speaker's behaviour on the injected clock: after the beeps, cut by the next, never waited for.
final class SpeakerBehaviourTests: XCTestCase {
    override class func tearDown() { SpeechTestRig.remove() }

    func ms(_ m: Int) -> UInt64 { UInt64(m) * 1_000_000 }

    /// A started speaker on a gated device that plays everything, the clock at 0.
    func open(speak: SpeakSetting = .all, quiet: QuietWindow? = nil, minute: Int = 600) throws -> (GatedSpeaker, ManualClock, SpeechEvents, Speaker) {
        let device = GatedSpeaker()
        device.allow(1_000_000)
        let clock = ManualClock(startNs: 0)
        let events = SpeechEvents()
        return (device, clock, events, try make(device, speak: speak, quiet: quiet, minute: minute, clock: clock, events: events))
    }

    /// One speaker with the default phrases rendered (en) and a gated device.
    func make(_ device: SpeakerDevice, speak: SpeakSetting = .all, quiet: QuietWindow? = nil, minute: Int = 600,
              clock: ManualClock, events: SpeechEvents, name: String = "kiosk_test_gone") throws -> Speaker {
        try SpeechTestRig.requireTools()
        let s = Speaker(settings: SpeechSettings(speaker: name, voice: "en", speak: speak, volume: 100, quiet: quiet,
                                                 phrasesFile: "/nonexistent/phrases", cacheFolder: SpeechTestRig.folder + "/cache-shared"),
                        clock: clock, device: device, localMinute: { minute }, onEvent: events.add)
        try s.start()
        return s
    }

    func testAPhraseStartsAfterItsBeepsAndIsCutByTheNext() throws {
        let device = GatedSpeaker()
        let clock = ManualClock(startNs: 0)
        let events = SpeechEvents()
        let s = try make(device, clock: clock, events: events)
        defer { device.allow(1_000_000); s.stop() }
        s.say(key: "expired", verdictAtNs: ms(1000), afterNs: ms(300))
        clock.advance(to: ms(1299))
        XCTAssertEqual(device.calls, [], "nothing before the beeps end")
        clock.advance(to: ms(1300))
        XCTAssertTrue(eventually("the first chunk waits to be written") { device.waiting })
        device.allow(1)
        XCTAssertTrue(eventually("the second chunk waits") { device.calls.count == 2 && device.waiting })
        XCTAssertEqual(events.spoken, ["expired"])
        guard case .spoke(_, let ms1) = events.all.last else { return XCTFail() }
        XCTAssertEqual(ms1, 300, "from the verdict to the first sample, on the clock")
        // The next verdict: its beeps first, so the phrase playing is cut at once.
        clock.advance(to: ms(2000))
        s.say(key: "granted", verdictAtNs: ms(2000), afterNs: ms(150))
        device.allow(1)
        XCTAssertTrue(eventually("the cut phrase is dropped") { device.calls.contains(.drop) })
        XCTAssertEqual(device.calls.prefix(3), [.open(22050), .write(1024), .write(1024)])
        XCTAssertEqual(device.calls.last, .drop)
        device.allow(1_000_000)
        clock.advance(to: ms(2150))
        XCTAssertTrue(eventually("granted played out") { s.isIdle })
        XCTAssertEqual(events.spoken, ["expired", "granted"])
        guard case .spoke(_, let ms2) = events.all.last else { return XCTFail() }
        XCTAssertEqual(ms2, 150)
        XCTAssertEqual(events.errors, [])
    }

    func testAPhraseWaitingForItsBeepsIsCutByTheNextVerdictEvenASilentOne() throws {
        let (device, clock, events, s) = try open(speak: .denied)
        defer { s.stop() }
        s.say(key: "expired", verdictAtNs: 0, afterNs: ms(300))
        s.say(reason: "valid", granted: true, verdictAtNs: ms(100), afterNs: ms(300))  // not spoken with denied
        clock.advance(to: ms(1000))
        XCTAssertEqual(clock.pendingCount, 0)
        XCTAssertTrue(s.isIdle)
        XCTAssertEqual(device.calls, [], "neither is said: the first was cut, the second is not spoken")
        XCTAssertEqual(events.spoken, [])
    }

    func testNothingIsSaidInTheQuietWindow() throws {
        let (device, clock, _, s) = try open(quiet: QuietWindow(parsing: "22:00-07:00"), minute: 23 * 60)
        defer { s.stop() }
        s.say(key: "expired", verdictAtNs: 0, afterNs: 0)
        s.say(text: "Please wait")
        clock.advance(to: ms(1000))
        XCTAssertTrue(s.isIdle)
        XCTAssertEqual(device.calls, [])
    }

    func testAControllersTextIsRenderedOffTheCallersThreadAndSaid() throws {
        let (_, _, events, s) = try open()
        defer { s.stop() }
        let t0 = monotonicNanoseconds()
        s.say(text: "Please wait\u{7}")
        XCTAssertLessThan(monotonicNanoseconds() - t0, 20_000_000, "say(text:) returns at once; espeak-ng runs on the speech thread")
        XCTAssertTrue(eventually("the text is said") { events.spoken == ["text"] && s.isIdle })
    }

    /// A speaker that cannot be opened: say() returns at once, `speaker_error` is said once, it
    /// is tried again after the back-off, and when it works `speaker_ready`.
    func testASpeakerThatCannotBeOpenedNeverBlocksAndIsTriedAgain() throws {
        let device = GatedSpeaker()
        device.failOpen = SpeakerFault(code: -19, description: "No such device")
        device.allow(1_000_000)
        let clock = ManualClock(startNs: 0)
        let events = SpeechEvents()
        let s = try make(device, clock: clock, events: events)
        defer { s.stop() }
        s.say(key: "expired", verdictAtNs: 0, afterNs: 0)
        XCTAssertTrue(eventually("speaker_error") { events.errors.count == 1 && s.isIdle })
        XCTAssertEqual(events.errors, [.speakerError(speaker: "kiosk_test_gone", reason: "No such device", retryMs: 1000)])
        clock.advance(to: ms(500))
        s.say(key: "revoked", verdictAtNs: ms(500), afterNs: 0)
        XCTAssertTrue(eventually("given up in the back-off") { s.isIdle })
        clock.advance(to: ms(1000))
        s.say(key: "used", verdictAtNs: ms(1000), afterNs: 0)
        XCTAssertTrue(eventually("tried again") { s.isIdle })
        XCTAssertEqual(events.errors.count, 1, "the same failure is said once")
        device.failOpen = nil
        clock.advance(to: ms(4000))
        s.say(key: "expired", verdictAtNs: ms(4000), afterNs: 0)
        XCTAssertTrue(eventually("it speaks again") { events.spoken == ["expired"] && s.isIdle })
        XCTAssertEqual(events.all.filter { $0 == .speakerReady(speaker: "kiosk_test_gone") }.count, 1)
    }

    /// A speaker lost while playing (a USB speaker pulled): `speaker_error` once, the phrase given
    /// up, the speaker opened again after the back-off, `speaker_ready` when it plays.
    func testASpeakerLostWhilePlayingIsSaidOnceAndReopened() throws {
        let (device, clock, events, s) = try open()
        defer { s.stop() }
        s.say(key: "expired", verdictAtNs: 0, afterNs: 0)
        XCTAssertTrue(eventually("played") { events.spoken == ["expired"] && s.isIdle })
        device.failWrites = SpeakerFault(code: -19, description: "No such device")
        s.say(key: "revoked", verdictAtNs: 0, afterNs: 0)
        XCTAssertTrue(eventually("lost") { events.errors.count == 1 && s.isIdle })
        XCTAssertEqual(device.calls.last, .close, "the lost speaker is closed")
        device.failWrites = nil
        clock.advance(to: ms(999))
        s.say(key: "used", verdictAtNs: ms(999), afterNs: 0)
        XCTAssertTrue(eventually("in the back-off") { s.isIdle })
        XCTAssertEqual(device.calls.filter { if case .open = $0 { return true } else { return false } }.count, 1, "not opened again within 1 s")
        clock.advance(to: ms(1000))
        s.say(key: "used", verdictAtNs: ms(1000), afterNs: 0)
        XCTAssertTrue(eventually("back") { events.spoken == ["expired", "used"] && s.isIdle })
        XCTAssertEqual(events.errors, [.speakerError(speaker: "kiosk_test_gone", reason: "No such device", retryMs: 1000)])
        XCTAssertEqual(events.all.filter { $0 == .speakerReady(speaker: "kiosk_test_gone") }.count, 1)
    }

    /// The same through ALSA itself: a PCM whose card is not there.
    func testAnALSASpeakerThatCannotBeOpenedIsSaidAndSayNeverWaits() throws {
        _ = SpeechTestRig.folder
        let clock = ManualClock(startNs: 0)
        let events = SpeechEvents()
        let s = try make(ALSADevice(), clock: clock, events: events, name: "kiosk_test_gone")
        defer { s.stop() }
        var slowest: UInt64 = 0
        for i in 0..<20 {
            let t0 = monotonicNanoseconds()
            s.say(key: i % 2 == 0 ? "expired" : "revoked", verdictAtNs: clock.now(), afterNs: 0)
            slowest = max(slowest, monotonicNanoseconds() - t0)
        }
        XCTAssertLessThan(slowest, 20_000_000, "say() never waits for the speaker")
        XCTAssertTrue(eventually("speaker_error") { !events.errors.isEmpty && s.isIdle })
        XCTAssertEqual(events.errors.count, 1)
        guard case .speakerError(let name, let reason, _) = events.errors[0] else { return XCTFail() }
        XCTAssertEqual(name, "kiosk_test_gone")
        XCTAssertFalse(reason.isEmpty)
        XCTAssertEqual(events.spoken, [])
    }
}

final class SpeechSettingsTests: XCTestCase {
    func testTheSettingsComeFromTheConfigurationAndTheCacheDirectory() {
        let env = ["KIOSK_SPEAKER": "plughw:CARD=Device", "KIOSK_VOICE": "fr", "KIOSK_SPEAK_VOLUME": "40", "CACHE_DIRECTORY": "/var/cache/kiosk:/var/cache/other"]
        let c = Configuration.read(environment: env, isExecutableFile: { _ in true }).configuration
        let s = SpeechSettings(configuration: c, environment: env)
        XCTAssertEqual(s?.speaker, "plughw:CARD=Device")
        XCTAssertEqual(s?.voice, "fr")
        XCTAssertEqual(s?.volume, 40)
        XCTAssertEqual(s?.cacheFolder, "/var/cache/kiosk/speech", "the first of systemd's CacheDirectory= folders")
        XCTAssertEqual(SpeechSettings(configuration: c, environment: [:])?.cacheFolder, "/var/cache/kiosk/speech")
        XCTAssertEqual(SpeechSettings(configuration: c, environment: ["CACHE_DIRECTORY": "/tmp/c"])?.cacheFolder, "/tmp/c/speech")
        XCTAssertNil(SpeechSettings(configuration: Configuration(), environment: env), "no speaker: no speech")
        var off = c
        off.speak = .off
        XCTAssertNil(SpeechSettings(configuration: off, environment: env), "KIOSK_SPEAK=0: no speech")
    }
}

/// `spoke`'s `ms` on the real clock through ALSA (the file PCM): what the speaker adds after the
/// beeps (here none) is the wake of its thread and the first write, not a rendering.
final class SpeakerLatencyTests: XCTestCase {
    override class func tearDown() { SpeechTestRig.remove() }

    func testTheFirstSampleIsWrittenWellWithin100msOfTheVerdict() throws {
        try SpeechTestRig.requireTools()
        let events = SpeechEvents()
        let clock = MonotonicClock(label: "speech-latency")
        let s = Speaker(settings: SpeechSettings(speaker: SpeechTestRig.pcm(2).name, voice: "en", speak: .all,
                                                 phrasesFile: "/nonexistent/phrases", cacheFolder: SpeechTestRig.folder + "/cache-shared"),
                        clock: clock, onEvent: events.add)
        try s.start()
        defer { s.stop() }
        let keys = ["expired", "revoked", "used", "granted", "not-a-credential"]
        for i in 0..<20 {
            s.say(key: keys[i % keys.count], verdictAtNs: clock.now(), afterNs: 0)
            XCTAssertTrue(eventually("played") { s.isIdle })
        }
        let ms = events.all.compactMap { if case .spoke(_, let ms) = $0 { return ms } else { return nil } }.sorted()
        XCTAssertEqual(ms.count, 20)
        print("speech-latency: spoke ms median \(ms[ms.count / 2]), max \(ms.last ?? 0)")
        XCTAssertLessThan(ms[ms.count / 2], 100, "the median, the speaker's first open included")
    }
}
