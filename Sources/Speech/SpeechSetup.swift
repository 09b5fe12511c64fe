// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// What `kiosk check` and `kiosk doctor` say about speech: the speaker, the voice, the phrases.
public enum SpeechSetup {
    /// A doctor's line: `PASS`, `WARN` or `FAIL`, its subject and what to do.
    public struct Finding: Equatable {
        public enum Verdict: String { case pass = "PASS", warn = "WARN", fail = "FAIL" }
        public var verdict: Verdict
        public var subject: String
        public var detail: String
    }

    /// `kiosk check`'s line, or the setting refused (exit 78): an unknown voice, a bad phrases file.
    public static func checkLine(_ s: SpeechSettings) -> Result<String, ConfigError> {
        let phrases: [String: String]
        do throws(SpeechStartError) {
            phrases = try Speaker.readPhrases(s.phrasesFile)
        } catch {
            return .failure(error.configError)
        }
        let version = s.espeak.version()
        if s.espeak.knows(voice: s.voice) == false {
            return .failure(ConfigError(variable: "KIOSK_VOICE", value: s.voice, expected: "a voice espeak-ng has (espeak-ng --voices lists them: de, fr, en-us, ...)"))
        }
        let replaced = phrases.filter { key, text in SpeechPhrases.merged([:])[key] != text }.count
        let cached = PhraseCache(folder: s.cacheFolder).entries().mapValues(\.key)
        let plan = SpeechCachePlan.make(voice: s.voice, texts: Array(phrases.values), renderer: version ?? "", cached: cached)
        let distinct = Set(phrases.values).count
        let renderer = version.map { "espeak-ng \($0)" } ?? "espeak-ng not installed"
        let file = Files.exists(s.phrasesFile) ? "\(s.phrasesFile) (\(replaced) of \(phrases.count) phrases not the defaults)" : "the defaults (\(s.phrasesFile) is missing)"
        return .success("speaker \(s.speaker), voice \(s.voice) (\(renderer)), says \(s.speak == .off ? "nothing" : s.speak.rawValue)"
                        + (s.quiet.map { ", quiet \($0) local time" } ?? "") + ", volume \(s.volume); phrases: \(file); "
                        + "cache \(s.cacheFolder): \(distinct - plan.render.count) of \(distinct) rendered")
    }

    /// `kiosk doctor`'s lines: libasound, espeak-ng and the voice, the phrases, the speaker
    /// opened (a FAIL says what to try) and, when it opens, the welcome phrase said on it so that
    /// the installer hears the door.
    public static func doctor(_ s: SpeechSettings, device: SpeakerDevice = ALSADevice()) -> [Finding] {
        var out: [Finding] = []
        func add(_ v: Finding.Verdict, _ subject: String, _ detail: String) { out.append(Finding(verdict: v, subject: subject, detail: detail)) }
        switch ALSADevice.load() {
        case .failure(let f):
            add(.fail, "speaker", "\(f.description): the kiosk cannot speak")
            return out
        case .success(let version):
            let cards = ALSADevice.cards()
            add(.pass, "speech", "libasound \(version); sound cards: " + (cards.isEmpty ? "none" : cards.joined(separator: "; ")))
        }
        let phrases: [String: String]
        do throws(SpeechStartError) {
            phrases = try Speaker.readPhrases(s.phrasesFile)
        } catch {
            add(.fail, "speech phrases", "\(error.configError.variable)=\(error.configError.value): \(error.configError.expected)")
            return out
        }
        let version = s.espeak.version()
        switch s.espeak.knows(voice: s.voice) {
        case false?: add(.fail, "speech voice", "espeak-ng \(version ?? "") has no voice \(s.voice): espeak-ng --voices lists them")
        case true?: add(.pass, "speech voice", "\(s.voice) (espeak-ng \(version ?? "?"))")
        case nil: break
        }
        let cache = PhraseCache(folder: s.cacheFolder)
        let cached = cache.entries()
        let plan = SpeechCachePlan.make(voice: s.voice, texts: Array(phrases.values), renderer: version, cached: cached.mapValues(\.key))
        if version == nil {
            add(plan.missing.isEmpty ? .warn : .fail, "speech voice",
                "espeak-ng is not installed (apt install espeak-ng): " + (plan.missing.isEmpty
                    ? "every phrase is in \(s.cacheFolder), so the door speaks; a new phrase or voice needs it"
                    : "\(plan.missing.count) phrase(s) are not in \(s.cacheFolder): the kiosk starts with speech off"))
        }
        // The phrase said: the welcome one, from the cache or rendered now (into memory only).
        let welcome = phrases["granted"] ?? "Welcome."
        var sound: RenderedPhrase? = cached[SpeechCacheKey.fileName(voice: s.voice, text: welcome)].flatMap { $0.key.voice == s.voice && $0.key.text == welcome ? $0 : nil }
        if sound == nil, version != nil, let wav = try? s.espeak.render(welcome, voice: s.voice, scratch: "/tmp/.kiosk-doctor-\(getpid())") {
            sound = RenderedPhrase(key: SpeechCacheKey(voice: s.voice, text: welcome, renderer: version ?? ""), sampleRate: wav.sampleRate, samples: wav.samples)
        }
        switch device.open(s.speaker, sampleRate: sound?.sampleRate ?? 22050) {
        case .failure(let f):
            add(.fail, "speaker", "\(s.speaker) cannot be opened: \(f.description). " + hint(f.code))
        case .success(let output):
            defer { output.close() }
            guard let sound, s.volume > 0 else {
                add(.pass, "speaker", "\(s.speaker) opens")
                return out
            }
            let samples = sound.samples.map { Int16(Int($0) * max(0, min(100, s.volume)) / 100) }
            var at = 0
            while at < samples.count {
                let r = samples.withUnsafeBufferPointer { output.write(UnsafeBufferPointer(rebasing: $0[at..<min(samples.count, at + 1024)])) }
                guard case .success(let n) = r, n > 0 else {
                    if case .failure(let f) = r { add(.fail, "speaker", "\(s.speaker) opened but took no sound: \(f.description). " + hint(f.code)) }
                    return out
                }
                at += n
            }
            output.drain()
            add(.pass, "speaker", "\(s.speaker) said \"\(welcome)\" at volume \(s.volume): did you hear it? (no: alsamixer's level, the amplifier's wiring; docs/installing.md, \"A speaker at the door\")")
        }
        return out
    }

    /// What to try when a speaker does not open, by ALSA's error.
    static func hint(_ code: Int32) -> String {
        switch -code {
        case EBUSY: return "Another program holds it (the kiosk service itself? systemctl stop kiosk, or speak through dmix: KIOSK_SPEAKER=default)."
        case EACCES, EPERM: return "The user is not allowed to open /dev/snd: add it to the group audio (sudo usermod -aG audio kiosk; for yourself, log in again)."
        default: return "aplay -l lists the cards and aplay -L the PCM names; a USB speaker is plughw:CARD=NAME; the service's user must be in the group audio."
        }
    }
}
