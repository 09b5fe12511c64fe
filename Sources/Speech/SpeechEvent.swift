// SPDX-License-Identifier: Apache-2.0
import Policy

/// What the speaker tells the log. Each knows its level, event name and fields, so the service
/// logs it in one line (`logger.log(e.level, e.event, fields: e.fields)`).
public enum SpeechEvent: Equatable, Sendable {
    /// A phrase began: `ms` from its verdict (or the controller's text) to the first sample
    /// written to ALSA, the verdict's beeps included.
    case spoke(key: String, ms: Double)
    /// The speaker could not be opened, or went away: said once a change; tried again in `retryMs`
    /// at the earliest (when there is something to say).
    case speakerError(speaker: String, reason: String, retryMs: Int)
    /// It plays again after an error.
    case speakerReady(speaker: String)
    /// The phrases are ready: how many were rendered now, how many came from the cache, how many
    /// files of phrases no longer said were removed.
    case phrases(voice: String, rendered: Int, cached: Int, removed: Int)
    /// Speech is off: a phrase is neither in the cache nor can be rendered (espeak-ng missing, or
    /// it failed). The beeps go on.
    case speechOff(reason: String)
    /// The cache's folder cannot be written: the phrases are kept in memory only, and rendered
    /// again at the next start.
    case cacheUnwritable(reason: String)
    /// A reload (SIGHUP) found a bad phrases file: the phrases in use are kept.
    case phrasesFileRefused(file: String, reason: String)
    /// A controller's text could not be rendered.
    case textNotRendered(reason: String)

    public var level: LogLevel {
        switch self {
        case .spoke, .speakerReady, .phrases: return .info
        case .speakerError, .speechOff, .cacheUnwritable, .phrasesFileRefused, .textNotRendered: return .warning
        }
    }

    public var event: String {
        switch self {
        case .spoke: return "spoke"
        case .speakerError: return "speaker_error"
        case .speakerReady: return "speaker_ready"
        case .phrases: return "speech_phrases"
        case .speechOff: return "speech_off"
        case .cacheUnwritable: return "speech_cache_error"
        case .phrasesFileRefused: return "phrases_error"
        case .textNotRendered: return "speech_text_error"
        }
    }

    public var fields: [(String, LogValue)] {
        switch self {
        case .spoke(let key, let ms): return [("key", .text(key)), ("ms", .ms(ms))]
        case .speakerError(let speaker, let reason, let retryMs): return [("speaker", .text(speaker)), ("reason", .text(reason)), ("retry_ms", .int(retryMs))]
        case .speakerReady(let speaker): return [("speaker", .text(speaker))]
        case .phrases(let voice, let rendered, let cached, let removed):
            return [("voice", .text(voice)), ("rendered", .int(rendered)), ("cached", .int(cached)), ("removed", .int(removed))]
        case .speechOff(let reason), .cacheUnwritable(let reason), .textNotRendered(let reason): return [("reason", .text(reason))]
        case .phrasesFileRefused(let file, let reason): return [("file", .text(file)), ("reason", .text(reason))]
        }
    }
}
