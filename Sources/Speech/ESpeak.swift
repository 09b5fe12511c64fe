// SPDX-License-Identifier: Apache-2.0
import Glibc
import Platform
import Policy

/// espeak-ng, run as a program at render time (`espeak-ng -v VOICE -w FILE -f TEXTFILE`), never
/// through a shell. Why the program and not libespeak-ng in-process: rendering happens only at
/// start, on SIGHUP and for a controller's text, so a process a phrase costs nothing that
/// matters, while the library would stay mapped in the kiosk with its 12 MB of voice data and
/// its global, single-threaded state (one voice and one callback a process, espeak_Initialize
/// once); a program that crashes on a strange text cannot take the door with it; and with the
/// program gone (it is only Recommended by the package) the phrases already rendered still play.
/// The text goes in a file (`-f`), so that a phrase starting with `-` is never read as an option.
public struct ESpeak: Sendable {
    /// Debian's espeak-ng.
    public static let defaultPath = "/usr/bin/espeak-ng"
    public var path: String

    public init(path: String = ESpeak.defaultPath) { self.path = path }

    /// Whether the program is there.
    public var isInstalled: Bool { Files.isExecutableFile(path) }

    /// espeak-ng's version (`1.51`), nil when it is not installed or says no version.
    public func version() -> String? {
        guard isInstalled, let run = runProgram(path, ["--version"]) else { return nil }
        return ESpeakVersion.parse(run.output)
    }

    /// Whether espeak-ng has `voice` (a language such as `de`, `en-us`, a voice file such as
    /// `gmw/de`, a name, with a variant: `en-us+f3`): it exits 1 on one it does not have. Nil
    /// when the program is not there to ask.
    public func knows(voice: String) -> Bool? {
        guard isInstalled, let run = runProgram(path, ["-q", "-v", voice, "-f", "/dev/null"]) else { return nil }
        return ProgramEnd(waitStatus: run.waitStatus) == .exited(status: 0)
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// `text` said by `voice`, mono 16-bit samples at espeak-ng's rate (22,050 Hz). `scratch` is a
    /// path prefix for the two files it needs (in the cache's folder), removed after.
    public func render(_ text: String, voice: String, scratch: String) throws(Failure) -> (sampleRate: Int, samples: [Int16]) {
        let textFile = scratch + ".txt", wavFile = scratch + ".wav"
        defer {
            unlink(textFile)
            unlink(wavFile)
        }
        do {
            try SmallFile.replace(textFile, with: Array(text.utf8))
        } catch {
            throw Failure(description: "\(error)")
        }
        guard let run = runProgram(path, ["-v", voice, "-w", wavFile, "-f", textFile]) else {
            throw Failure(description: "\(path) could not be started")
        }
        let end = ProgramEnd(waitStatus: run.waitStatus)
        guard end == .exited(status: 0) else {
            throw Failure(description: "\(path) ended with \(end.map { "\($0)" } ?? "status \(run.waitStatus)")")
        }
        let bytes: [UInt8]?
        do {
            bytes = try SmallFile.read(wavFile, limit: 16 << 20)
        } catch {
            throw Failure(description: "\(error)")
        }
        guard let bytes, let wav = WAVFile.parse(bytes) else { throw Failure(description: "\(path) wrote no mono 16-bit WAV file") }
        return wav
    }
}

/// The rendered phrases on disk (`$CACHE_DIRECTORY/speech`, else `/var/cache/kiosk/speech`): one
/// file a voice and text (`RenderedPhrase`), kept across restarts, so that a start renders only
/// what changed and a kiosk without espeak-ng still speaks what it once rendered.
public struct PhraseCache: Sendable {
    public let folder: String

    /// The folder in systemd's `CacheDirectory=` (`$CACHE_DIRECTORY`), else the Debian default.
    public static func folder(environment: [String: String]) -> String {
        let base = environment["CACHE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) } ?? "/var/cache/kiosk"
        return base + "/speech"
    }

    public init(folder: String) { self.folder = folder }

    /// Makes the folder (and its parent) when missing; why not, when it cannot.
    public func prepare() -> String? {
        let parent = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
        for f in [parent, folder] where !f.isEmpty && !Files.exists(f) {
            if mkdir(f, 0o750) != 0 && errno != EEXIST { return "\(f): \(Errno.current.message)" }
        }
        return nil
    }

    /// What the folder holds: each cache file's name and the phrase it is (files that do not read
    /// as one are left out, and rendered again if wanted).
    public func entries() -> [String: RenderedPhrase] {
        var out: [String: RenderedPhrase] = [:]
        for name in Files.names(in: folder) ?? [] where name.hasSuffix(SpeechCacheKey.fileSuffix) {
            if let bytes = try? SmallFile.read(folder + "/" + name, limit: 8 << 20), let p = RenderedPhrase(bytes: bytes) {
                out[name] = p
            }
        }
        return out
    }

    public func store(_ p: RenderedPhrase) throws {
        try SmallFile.replace(folder + "/" + p.key.fileName, with: p.bytes, mode: 0o640)
    }

    public func remove(_ name: String) {
        unlink(folder + "/" + name)
    }
}
