// SPDX-License-Identifier: Apache-2.0
import Glibc
import Kiosk
import Platform
import Policy
import Speech

/// `kiosk-dev speech`: what saying a phrase costs, as the kiosk's speaker says one after a
/// verdict: the time from the verdict to the first sample written to ALSA (the `spoke` event's
/// `ms`, no beeps before it), and the process's CPU a phrase. The default phrases are rendered
/// once by espeak-ng into a cache of the bench's own (or `--cache DIR`, already made: then
/// espeak-ng is not needed), then said one after another, each once the last is out, through
/// ALSA's `plug` (to 48 kHz stereo, as `plughw` on a USB speaker) into its `file` PCM over `null`
/// (an asoundrc of the bench's own: no sound card, no device pacing: the figures are the
/// speaker's own work and ALSA's conversion). `--count N`: only N phrases, untimed (bench-arm64
/// --speech counts their instructions under qemu-aarch64).
enum SpeechBench {
    final class Spoken: @unchecked Sendable {  // guarded by `lock`
        private let lock = Lock()
        private var ms: [Double] = []
        private var errors: [String] = []
        func add(_ e: SpeechEvent) {
            lock.withLock {
                switch e {
                case .spoke(_, let m): ms.append(m)
                case .speakerError(_, let reason, _), .speechOff(let reason): errors.append(reason)
                default: break
                }
            }
        }
        var all: (ms: [Double], errors: [String]) { lock.withLock { (ms, errors) } }
    }

    static func main(_ args: [String]) -> Int32 {
        var phrases = 64, voice = "en", json = false, counting = false
        var cache: String?
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--phrases", "--count":
                guard i + 1 < args.count, let n = Int(args[i + 1]), n > 0 else { return usage() }
                phrases = n
                counting = args[i] == "--count"
                i += 1
            case "--voice":
                guard i + 1 < args.count else { return usage() }
                voice = args[i + 1]
                i += 1
            case "--cache":
                guard i + 1 < args.count else { return usage() }
                cache = args[i + 1]
                i += 1
            case "--json": json = true
            default: return usage()
            }
            i += 1
        }
        var template = Array("/tmp/kiosk-speech-bench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { print("kiosk-dev speech: cannot make a folder in /tmp"); return 1 }
        let folder = String(cString: made)
        defer { _ = runProgram("/bin/rm", ["-rf", folder]) }
        // ALSA reads ALSA_CONFIG_PATH when libasound first loads its configuration: before the speaker opens.
        // As on a USB speaker or an I2S amplifier through `plughw`: ALSA's plug converts espeak-ng's
        // 22,050 Hz mono to 48 kHz stereo; then the file plugin writes it to /dev/null.
        let conf = "pcm.bench { type plug; slave { pcm \"bench_file\"; rate 48000; format S16_LE; channels 2 } }\n"
            + "pcm.bench_file { type file; slave.pcm \"null\"; file \"/dev/null\"; format \"raw\" }\n"
        guard (try? SmallFile.replace(folder + "/asoundrc", with: Array(conf.utf8))) != nil else { print("kiosk-dev speech: cannot write \(folder)/asoundrc"); return 1 }
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:" + folder + "/asoundrc", 1)
        let spoken = Spoken()
        let clock = MonotonicClock()
        let speaker = Speaker(settings: SpeechSettings(speaker: "bench", voice: voice, speak: .all, volume: 80,
                                                       phrasesFile: folder + "/no-phrases", cacheFolder: cache ?? folder + "/cache"),
                              clock: clock, onEvent: spoken.add)
        do throws(SpeechStartError) {
            try speaker.start()
        } catch {
            print("kiosk-dev speech: \(error)")
            return 1
        }
        guard speaker.isOn else { print("kiosk-dev speech: speech is off: \(spoken.all.errors.joined(separator: "; "))"); return 1 }
        let keys = SpeechPhrases.keys.filter { !SpeechPhrases.requests.contains($0) }
        let cpu0 = processCPUNanoseconds(), wall0 = clock.now()
        for n in 0..<phrases {
            speaker.say(key: keys[n % keys.count], verdictAtNs: clock.now(), afterNs: 0)
            while !speaker.isIdle { usleep(200) }
        }
        let cpuNs = processCPUNanoseconds() - cpu0, wallNs = clock.now() - wall0
        speaker.stop()
        let (ms, errors) = spoken.all
        guard errors.isEmpty, ms.count == phrases else {
            print("kiosk-dev speech: \(ms.count) of \(phrases) phrases spoken; \(errors.joined(separator: "; "))")
            return 1
        }
        if counting { return 0 }
        let sorted = ms.sorted()
        let median = sorted[sorted.count / 2], p90 = sorted[sorted.count * 9 / 10], most = sorted.last ?? 0
        let cpuMs = Double(cpuNs) / 1e6 / Double(phrases), wallMs = Double(wallNs) / 1e6 / Double(phrases)
        if json {
            print("{\"phrases\": \(phrases), \"voice\": \"\(voice)\", \"spoke_ms_median\": \(Format.fixed(median, 3)), \"spoke_ms_p90\": \(Format.fixed(p90, 3)), "
                  + "\"spoke_ms_max\": \(Format.fixed(most, 3)), \"cpu_ms_per_phrase\": \(Format.fixed(cpuMs, 2)), \"wall_ms_per_phrase\": \(Format.fixed(wallMs, 2))}")
        } else {
            print("speech: \(phrases) phrases (voice \(voice)) through ALSA's plug (48 kHz stereo) into its file PCM over null")
            print("  spoke (verdict to first sample written): median \(Format.fixed(median, 3)) ms, p90 \(Format.fixed(p90, 3)) ms, max \(Format.fixed(most, 3)) ms")
            print("  a phrase: \(Format.fixed(cpuMs, 2)) ms of the process's CPU, \(Format.fixed(wallMs, 2)) ms from say to the last sample written")
        }
        return 0
    }

    static func usage() -> Int32 {
        print("usage: kiosk-dev speech [--phrases N | --count N] [--voice V] [--cache DIR] [--json]")
        return 64
    }
}
