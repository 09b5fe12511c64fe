// SPDX-License-Identifier: Apache-2.0
/// A phrase as espeak-ng renders it for one voice: what names its file in the cache
/// (`$CACHE_DIRECTORY/speech`), and what is checked when it is read back.
public struct SpeechCacheKey: Equatable, Hashable, Sendable {
    public var voice: String
    public var text: String
    /// espeak-ng's version (`1.51`): a new one may say a word differently, so its phrases are
    /// rendered again. Not part of the file's name: with espeak-ng gone, a phrase it rendered
    /// is still found and played.
    public var renderer: String

    public init(voice: String, text: String, renderer: String) {
        self.voice = voice
        self.text = text
        self.renderer = renderer
    }

    /// `<16 hex digits>.phrase`: FNV-1a (64 bits) of the voice and the text. Only a name: the
    /// file holds the voice and the text and is used only when both match (a collision renders
    /// again, it never plays the wrong phrase). Not a security measure: the folder is the kiosk's own.
    public var fileName: String { SpeechCacheKey.fileName(voice: voice, text: text) }

    public static func fileName(voice: String, text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in Array(voice.utf8) + [0] + Array(text.utf8) {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + fileSuffix
    }

    public static let fileSuffix = ".phrase"
}

/// A rendered phrase as the cache holds it: five text lines (`kiosk-phrase 1`, the sample rate,
/// the voice, espeak-ng's version, the text), then the samples, mono, signed 16-bit little-endian.
public struct RenderedPhrase: Equatable, Sendable {
    public var key: SpeechCacheKey
    public var sampleRate: Int
    public var samples: [Int16]

    public init(key: SpeechCacheKey, sampleRate: Int, samples: [Int16]) {
        self.key = key
        self.sampleRate = sampleRate
        self.samples = samples
    }

    static let magic = "kiosk-phrase 1"
    /// A phrase of a few seconds at 22,050 Hz is some 200 kB; ten times that is no phrase.
    public static let maxSamples = 60 * 48_000
    public static let sampleRates: ClosedRange<Int> = 8000...48_000

    public var bytes: [UInt8] {
        var out = Array("\(RenderedPhrase.magic)\n\(sampleRate)\n\(key.voice)\n\(key.renderer)\n\(key.text)\n".utf8)
        out.reserveCapacity(out.count + samples.count * 2)
        for s in samples {
            let u = UInt16(bitPattern: s)
            out.append(UInt8(u & 0xff))
            out.append(UInt8(u >> 8))
        }
        return out
    }

    /// A cache file read back; nil when it is not one whole (a torn write, another program's file).
    public init?(bytes: [UInt8]) {
        var lines: [String] = []
        var i = 0
        while lines.count < 5 {
            guard let nl = bytes[i...].prefix(4096).firstIndex(of: 0x0a) else { return nil }
            guard let line = String(validating: bytes[i..<nl], as: UTF8.self) else { return nil }
            lines.append(line)
            i = nl + 1
        }
        guard lines[0] == RenderedPhrase.magic, let rate = Int(lines[1]), RenderedPhrase.sampleRates.contains(rate),
              !lines[2].isEmpty, !lines[4].isEmpty else { return nil }
        let body = bytes.count - i
        guard body % 2 == 0, body / 2 <= RenderedPhrase.maxSamples else { return nil }
        key = SpeechCacheKey(voice: lines[2], text: lines[4], renderer: lines[3])
        sampleRate = rate
        samples = stride(from: i, to: bytes.count, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// How long it plays.
    public var durationNs: UInt64 { UInt64(samples.count) * 1_000_000_000 / UInt64(max(1, sampleRate)) }
}

/// The WAV file `espeak-ng -w` writes: RIFF, a `fmt ` chunk of PCM, mono, 16 bits, a `data` chunk.
/// Only that form is taken; anything else is nil.
public enum WAVFile {
    public static func parse(_ b: [UInt8]) -> (sampleRate: Int, samples: [Int16])? {
        func u32(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
        guard b.count >= 12, Array(b[0..<4]) == Array("RIFF".utf8), Array(b[8..<12]) == Array("WAVE".utf8) else { return nil }
        var at = 12
        var rate: Int?
        while at + 8 <= b.count {
            let id = Array(b[at..<at + 4])
            let size = u32(at + 4)
            let start = at + 8
            if id == Array("fmt ".utf8) {
                guard size >= 16, start + 16 <= b.count, u16(start) == 1, u16(start + 2) == 1, u16(start + 14) == 16 else { return nil }
                rate = u32(start + 4)
            } else if id == Array("data".utf8) {
                // espeak-ng writing to a pipe leaves the size at its maximum: the rest of the file.
                guard let rate, RenderedPhrase.sampleRates.contains(rate) else { return nil }
                let count = max(0, (min(b.count, start + size) - start) / 2)
                guard count <= RenderedPhrase.maxSamples else { return nil }
                return (rate, (0..<count).map { Int16(bitPattern: UInt16(b[start + 2 * $0]) | UInt16(b[start + 2 * $0 + 1]) << 8) })
            }
            guard size <= b.count else { return nil }
            at = start + size + (size & 1)
        }
        return nil
    }
}

/// What `espeak-ng --version` says: `eSpeak NG text-to-speech: 1.51  Data at: ...` gives `1.51`.
public enum ESpeakVersion {
    public static func parse(_ output: String) -> String? {
        guard let colon = output.firstIndex(of: ":") else { return nil }
        let version = output[output.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).first
        guard let version, version.first?.isNumber == true, version.count <= 32 else { return nil }
        return String(version)
    }
}

/// What the cache needs at start or on a reload: the phrases to render (none in the cache for
/// this voice and text, or one of another espeak-ng version while espeak-ng is there) and the
/// files to delete (phrases no longer said). `renderer` nil: espeak-ng is missing, so what the
/// cache has is played whatever version made it, and nothing is deleted.
public struct SpeechCachePlan: Equatable, Sendable {
    public var render: [SpeechCacheKey]
    public var stale: [String]
    /// Texts that cannot be said: not in the cache, and no espeak-ng to render them.
    public var missing: [String]

    public init(render: [SpeechCacheKey], stale: [String], missing: [String]) {
        self.render = render
        self.stale = stale
        self.missing = missing
    }

    public static func make(voice: String, texts: [String], renderer: String?, cached: [String: SpeechCacheKey]) -> SpeechCachePlan {
        var render: [SpeechCacheKey] = []
        var missing: [String] = []
        var wanted: Set<String> = []
        for text in Set(texts).sorted() {
            let name = SpeechCacheKey.fileName(voice: voice, text: text)
            wanted.insert(name)
            let have = cached[name].flatMap { $0.voice == voice && $0.text == text ? $0 : nil }
            if let renderer {
                if have?.renderer != renderer { render.append(SpeechCacheKey(voice: voice, text: text, renderer: renderer)) }
            } else if have == nil {
                missing.append(text)
            }
        }
        let stale = renderer == nil ? [] : cached.keys.filter { !wanted.contains($0) }.sorted()
        return SpeechCachePlan(render: render, stale: stale, missing: missing)
    }
}
