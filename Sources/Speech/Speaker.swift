// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// The speech settings of the configuration (`KIOSK_SPEAKER` and the five beside it), with the
/// cache's folder and the renderer.
public struct SpeechSettings: Sendable {
    public var speaker: String
    public var voice: String
    public var speak: SpeakSetting
    /// 0-100, applied to the samples when they are loaded (not rendered in: a new volume needs
    /// no new rendering).
    public var volume: Int
    public var quiet: QuietWindow?
    public var phrasesFile: String
    public var cacheFolder: String
    public var espeak: ESpeak

    public init(speaker: String, voice: String = "en", speak: SpeakSetting = .denied, volume: Int = 80, quiet: QuietWindow? = nil,
                phrasesFile: String = "/etc/kiosk/phrases", cacheFolder: String = "/var/cache/kiosk/speech", espeak: ESpeak = ESpeak()) {
        self.speaker = speaker
        self.voice = voice
        self.speak = speak
        self.volume = volume
        self.quiet = quiet
        self.phrasesFile = phrasesFile
        self.cacheFolder = cacheFolder
        self.espeak = espeak
    }

    /// The configuration's; nil when `KIOSK_SPEAKER` is unset or `KIOSK_SPEAK=0` (no speech:
    /// nothing rendered, libasound never loaded).
    public init?(configuration c: Configuration, environment: [String: String]) {
        guard let speaker = c.speaker, c.speak != .off else { return nil }
        self.init(speaker: speaker, voice: c.voice, speak: c.speak, volume: c.speakVolume, quiet: c.speakQuiet,
                  phrasesFile: c.phrasesFile, cacheFolder: PhraseCache.folder(environment: environment))
    }
}

/// Why speech cannot start: a setting the kiosk refuses (exit 78, `config_error`).
public struct SpeechStartError: Error, Equatable, CustomStringConvertible {
    public var configError: ConfigError
    public var description: String { "\(configError.variable)=\(configError.value): \(configError.expected)" }
}

/// The door's voice: phrases rendered once (espeak-ng, the cache), played on a thread of its own
/// through ALSA. Nothing here waits for the caller's sake: `say` returns at once, a phrase starts
/// after its verdict's beeps on the speaker's thread, the next verdict cuts it, and a speaker that
/// cannot be opened or goes away is said once (`speaker_error`) and tried again, backing off
/// (`SpeakerPolicy` decides all of it, on the injected clock).
public final class Speaker: @unchecked Sendable {  // state guarded by `state`
    public let settings: SpeechSettings
    private let clock: Clock
    private let device: SpeakerDevice
    private let localMinute: @Sendable () -> Int
    private let onEvent: @Sendable (SpeechEvent) -> Void
    private let cache: PhraseCache

    /// Samples ready to play, scaled by the volume; shared, never copied.
    final class Sound: Sendable {
        let sampleRate: Int
        let samples: [Int16]
        init(_ p: RenderedPhrase, volume: Int) {
            sampleRate = p.sampleRate
            samples = volume >= 100 ? p.samples : p.samples.map { Int16(Int($0) * volume / 100) }
        }
    }

    private enum Job {
        case reload
        case text(String, SpeakerPolicy.Phrase)
    }

    private let state = Condition()
    private var policy: SpeakerPolicy
    private var sounds: [String: Sound] = [:]
    private var queued: (phrase: SpeakerPolicy.Phrase, sound: Sound)?
    private var jobs: [Job] = []
    private var started = false
    private var stopping = false
    private var threads = 0
    private var on = false
    /// The speaker's thread's own (never touched elsewhere).
    private var output: SpeakerOutput?
    private var outputRate = 0

    /// A chunk of samples written at a time (46 ms at espeak-ng's 22,050 Hz): between two, a
    /// newer phrase cuts this one.
    static let chunkFrames = 1024
    /// A controller's text longer than this is cut (osdp_TEXT's rows are 32 characters or fewer).
    public static let maxTextBytes = PhrasesFile.maxTextBytes

    public init(settings: SpeechSettings, clock: Clock, device: SpeakerDevice = ALSADevice(),
                localMinute: @escaping @Sendable () -> Int = Speaker.localMinute, onEvent: @escaping @Sendable (SpeechEvent) -> Void) {
        self.settings = settings
        self.clock = clock
        self.device = device
        self.localMinute = localMinute
        self.onEvent = onEvent
        cache = PhraseCache(folder: settings.cacheFolder)
        policy = SpeakerPolicy(speak: settings.speak, quiet: settings.quiet)
    }

    /// The local wall clock's minute of the day (the quiet window's).
    public static func localMinute() -> Int {
        var t = time(nil)
        var parts = tm()
        localtime_r(&t, &parts)
        return Int(parts.tm_hour) * 60 + Int(parts.tm_min)
    }

    /// Whether phrases are ready to be said (every one rendered or cached).
    public var isOn: Bool { state.lock(); defer { state.unlock() }; return on }

    /// Whether nothing waits to be said or is being said (the last phrase written to the speaker).
    public var isIdle: Bool { state.lock(); defer { state.unlock() }; return policy.newest == nil && queued == nil && jobs.isEmpty }

    /// Reads the phrases file, checks the voice and renders what the cache lacks (at start,
    /// before the service runs: never at a verdict), then starts the speaker's threads. Throws
    /// for an unknown voice or a bad phrases file (exit 78). Without espeak-ng and with a
    /// phrase not cached, speech is off (`speech_off`) and the kiosk goes on with its beeps.
    public func start() throws(SpeechStartError) {
        let phrases = try Speaker.readPhrases(settings.phrasesFile)
        if settings.espeak.knows(voice: settings.voice) == false {
            throw SpeechStartError(configError: ConfigError(variable: "KIOSK_VOICE", value: settings.voice,
                                                            expected: "a voice espeak-ng has (espeak-ng --voices lists them: de, fr, en-us, ...)"))
        }
        let loaded = load(phrases)
        state.lock()
        if let loaded { sounds = loaded; on = true }
        started = true
        threads = 2
        state.unlock()
        startThread(name: "kiosk-speaker") { [self] in playerLoop() }
        startThread(name: "kiosk-speech") { [self] in renderLoop() }
    }

    /// The phrases file (missing: the defaults) merged with the defaults, by key.
    static func readPhrases(_ path: String) throws(SpeechStartError) -> [String: String] {
        func refuse(_ why: String) -> SpeechStartError {
            SpeechStartError(configError: ConfigError(variable: "KIOSK_PHRASES_FILE", value: path, expected: why))
        }
        let bytes: [UInt8]?
        do {
            bytes = try SmallFile.read(path, limit: PhrasesFile.maxBytes)
        } catch {
            throw refuse("a readable phrases file (\(error))")
        }
        guard let bytes else { return SpeechPhrases.merged([:]) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw refuse("a phrases file in UTF-8") }
        do {
            return SpeechPhrases.merged(try PhrasesFile.parse(text))
        } catch {
            throw refuse("KEY TEXT lines with the keys of interface 0.6; \(error)")
        }
    }

    /// The sounds of `phrases` by key: from the cache, the rest rendered now and stored; nil
    /// (speech off, said) when one can be neither.
    private func load(_ phrases: [String: String]) -> [String: Sound]? {
        let voice = settings.voice
        let renderer = settings.espeak.version()
        var cantStore = cache.prepare()
        let cached = cache.entries()
        let plan = SpeechCachePlan.make(voice: voice, texts: Array(phrases.values), renderer: renderer, cached: cached.mapValues(\.key))
        var byText: [String: RenderedPhrase] = [:]
        for p in cached.values where p.key.voice == voice { byText[p.key.text] = p }
        var failures: [String] = []
        for key in plan.render {
            do {
                let wav = try settings.espeak.render(key.text, voice: voice, scratch: scratch(cacheWritable: cantStore == nil))
                let p = RenderedPhrase(key: key, sampleRate: wav.sampleRate, samples: wav.samples)
                byText[key.text] = p
                if cantStore == nil {
                    do { try cache.store(p) } catch { cantStore = "\(error)" }
                }
            } catch {
                failures.append("\"\(key.text)\": \(error)")
            }
        }
        for name in plan.stale { cache.remove(name) }
        if let cantStore { onEvent(.cacheUnwritable(reason: cantStore)) }
        let missing = Set(phrases.values).filter { byText[$0] == nil }.sorted()
        guard missing.isEmpty else {
            let why = renderer == nil
                ? "espeak-ng is not installed (\(settings.espeak.path)) and \(missing.count) phrase(s) are not in the cache \(settings.cacheFolder)"
                : "espeak-ng could not render \(failures.joined(separator: "; "))"
            onEvent(.speechOff(reason: why))
            return nil
        }
        onEvent(.phrases(voice: voice, rendered: plan.render.count, cached: Set(phrases.values).count - plan.render.count, removed: plan.stale.count))
        let volume = max(0, min(100, settings.volume))
        var soundByText: [String: Sound] = [:]
        for text in Set(phrases.values) { soundByText[text] = Sound(byText[text]!, volume: volume) }
        return phrases.mapValues { soundByText[$0]! }
    }

    /// Where espeak-ng's text and WAV files go while it renders: the cache's folder, else /tmp.
    private func scratch(cacheWritable: Bool) -> String {
        (cacheWritable ? settings.cacheFolder : "/tmp") + "/.kiosk-render-\(getpid())"
    }

    /// A verdict's phrase, said after its beeps (`afterNs`, from `verdictAtNs` on the clock).
    /// Returns at once. Whatever is being said is cut, said or not this verdict's (its beeps come
    /// first); a key `KIOSK_SPEAK` or the quiet window leaves out is not said.
    public func say(key: String, verdictAtNs: UInt64, afterNs: UInt64) {
        let minute = localMinute()
        let now = clock.now()
        state.lock()
        guard started, !stopping else { state.unlock(); return }
        policy.cut()
        queued = nil
        guard on, let sound = sounds[key], policy.says(key: key, minute: minute) else { state.unlock(); return }
        let p = policy.asked(key: key, verdictAtNs: verdictAtNs, startAtNs: verdictAtNs &+ afterNs)
        state.unlock()
        if p.startAtNs > now {
            clock.schedule(afterNs: p.startAtNs - now) { [weak self] in self?.due(p, sound) }
        } else {
            due(p, sound)
        }
    }

    /// A verdict by its reason (`Verdict.reason`, a credential's reason): its key's phrase, or
    /// nothing when no phrase explains it (a scan program's exit status).
    public func say(reason: String, granted: Bool, verdictAtNs: UInt64, afterNs: UInt64) {
        guard let key = SpeechPhrases.key(reason: reason, granted: granted) else {
            say(key: "", verdictAtNs: verdictAtNs, afterNs: afterNs)  // still cuts what is being said
            return
        }
        say(key: key, verdictAtNs: verdictAtNs, afterNs: afterNs)
    }

    /// The controller's text (osdp_TEXT), rendered on the speech thread and said when ready (the
    /// event's key is `text`). Returns at once; a verdict meanwhile cuts it.
    public func say(text: String) {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        let trimmed = String(decoding: Array(cleaned.utf8.prefix(Speaker.maxTextBytes)), as: UTF8.self).trimmedBlanks
        let minute = localMinute()
        let now = clock.now()
        state.lock()
        guard started, !stopping, !trimmed.isEmpty else { state.unlock(); return }
        policy.cut()
        queued = nil
        guard policy.saysText(minute: minute) else { state.unlock(); return }
        let p = policy.asked(key: nil, verdictAtNs: now, startAtNs: now)
        jobs.append(.text(trimmed, p))
        state.broadcast()
        state.unlock()
    }

    /// SIGHUP: the phrases file read again and what changed rendered, on the speech thread;
    /// returns at once. A bad file keeps the phrases in use (`phrases_error`).
    public func reload() {
        state.lock()
        defer { state.unlock() }
        guard started, !stopping else { return }
        jobs.append(.reload)
        state.broadcast()
    }

    /// Ends both threads, the phrase playing played out and the speaker closed.
    public func stop() {
        state.lock()
        stopping = true
        state.broadcast()
        while threads > 0 { state.wait() }
        state.unlock()
    }

    // MARK: the speaker's thread

    private func due(_ p: SpeakerPolicy.Phrase, _ sound: Sound) {
        state.lock()
        defer { state.unlock() }
        guard policy.isCurrent(p), !stopping else { return }
        queued = (p, sound)
        state.broadcast()
    }

    private func playerLoop() {
        while true {
            state.lock()
            while !stopping && queued == nil { state.wait() }
            guard !stopping, let next = queued else { break }
            queued = nil
            state.unlock()
            play(next.phrase, next.sound)
        }
        state.unlock()
        output?.drain()
        output?.close()
        output = nil
        ended()
    }

    private func ended() {
        state.lock()
        threads -= 1
        state.broadcast()
        state.unlock()
    }

    private func current(_ p: SpeakerPolicy.Phrase) -> Bool {
        state.lock()
        defer { state.unlock() }
        return policy.isCurrent(p) && !stopping
    }

    private func report(_ r: SpeakerPolicy.Report?) {
        switch r {
        case .failed(let reason, let retryMs): onEvent(.speakerError(speaker: settings.speaker, reason: reason, retryMs: retryMs))
        case .back: onEvent(.speakerReady(speaker: settings.speaker))
        case nil: break
        }
    }

    private func failed(_ fault: SpeakerFault, _ p: SpeakerPolicy.Phrase) {
        output?.close()
        output = nil
        state.lock()
        let r = policy.failed(fault.description, now: clock.now())
        policy.done(p)
        state.unlock()
        report(r)
    }

    private func play(_ p: SpeakerPolicy.Phrase, _ sound: Sound) {
        if output == nil || outputRate != sound.sampleRate {
            output?.close()
            output = nil
            state.lock()
            let may = policy.mayOpen(now: clock.now())
            if !may { policy.done(p) }
            state.unlock()
            guard may else { return }  // in its back-off: this phrase is not said
            switch device.open(settings.speaker, sampleRate: sound.sampleRate) {
            case .failure(let fault):
                failed(fault, p)
                return
            case .success(let o):
                output = o
                outputRate = sound.sampleRate
                state.lock()
                let r = policy.opened()
                state.unlock()
                report(r)
            }
        }
        guard let output else { return }
        var at = 0
        var first = true
        while at < sound.samples.count {
            guard current(p) else {
                output.drop()
                return
            }
            let n = min(Speaker.chunkFrames, sound.samples.count - at)
            let written = sound.samples.withUnsafeBufferPointer { output.write(UnsafeBufferPointer(rebasing: $0[at..<at + n])) }
            switch written {
            case .failure(let fault):
                failed(fault, p)
                return
            case .success(let count) where count <= 0:
                failed(SpeakerFault(code: -EIO, description: "the speaker took no samples"), p)
                return
            case .success(let count):
                if first {
                    first = false
                    onEvent(.spoke(key: p.key ?? "text", ms: SpeakerPolicy.spokeMs(p, firstSampleAtNs: clock.now())))
                }
                at += count
            }
        }
        state.lock()
        policy.done(p)
        state.unlock()
    }

    // MARK: the speech thread: reloads and the controller's texts

    private func renderLoop() {
        while true {
            state.lock()
            while !stopping && jobs.isEmpty { state.wait() }
            guard !stopping else { break }
            let job = jobs.removeFirst()
            state.unlock()
            switch job {
            case .reload: reloadNow()
            case .text(let text, let p): renderText(text, p)
            }
        }
        state.unlock()
        ended()
    }

    private func reloadNow() {
        let phrases: [String: String]
        do throws(SpeechStartError) {
            phrases = try Speaker.readPhrases(settings.phrasesFile)
        } catch {
            onEvent(.phrasesFileRefused(file: settings.phrasesFile, reason: error.configError.expected))
            return
        }
        let loaded = load(phrases)
        state.lock()
        if let loaded {
            sounds = loaded
            on = true
        }
        state.unlock()
    }

    private func renderText(_ text: String, _ p: SpeakerPolicy.Phrase) {
        guard current(p) else { return }
        do {
            let wav = try settings.espeak.render(text, voice: settings.voice, scratch: scratch(cacheWritable: cache.prepare() == nil))
            let sound = Sound(RenderedPhrase(key: SpeechCacheKey(voice: settings.voice, text: text, renderer: ""), sampleRate: wav.sampleRate, samples: wav.samples),
                              volume: max(0, min(100, settings.volume)))
            due(p, sound)
        } catch {
            state.lock()
            policy.done(p)
            state.unlock()
            onEvent(.textNotRendered(reason: "\(error)"))
        }
    }
}

extension String {
    var trimmedBlanks: String {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else { return "" }
        return String(self[first...last])
    }
}
