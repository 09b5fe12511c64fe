// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy
import Speech

/// The door's words in the running kiosk: each verdict the door acted on is followed, after its
/// beep pattern, by its phrase (`Speaker`, on threads of its own: nothing here waits). A request
/// (`pin`, `setup-*`) is said through `say(key:)`.
public final class DoorSpeech: ScanListener, @unchecked Sendable {  // immutable after init; Speaker locks itself
    public let speaker: Speaker
    private let clock: Clock
    /// How long each verdict's beep pattern sounds (0 without a buzzer): the phrase comes after it.
    private let patternNs: [Verdict.Result: UInt64]
    private let hasBuzzer: Bool

    init(speaker: Speaker, configuration c: Configuration, hasBuzzer: Bool, clock: Clock) {
        self.speaker = speaker
        self.clock = clock
        self.hasBuzzer = hasBuzzer
        func ns(_ p: BeepPattern) -> UInt64 { hasBuzzer ? UInt64(p.totalMs) * 1_000_000 : 0 }
        patternNs = [.granted: ns(c.beepGranted), .denied: ns(c.beepDenied), .error: ns(c.beepError)]
    }

    public func verdictGiven(_ verdict: Verdict, for code: ReportedCode) {
        speaker.say(reason: verdict.reason, granted: verdict.result == .granted, verdictAtNs: clock.now(),
                    afterNs: patternNs[verdict.result] ?? 0)
    }

    /// A PIN is asked for: `pin` (*Please enter your pin.*) after the prompt's beeps.
    public func pinRequested(for code: ReportedCode) {
        say(key: "pin", afterNs: hasBuzzer ? UInt64(BeepPattern.pinPrompt.totalMs) * 1_000_000 : 0)
    }

    /// A request's phrase (`pin`, `setup-applied`, ...), after `afterNs` of its own beeps.
    public func say(key: String, afterNs: UInt64 = 0) {
        speaker.say(key: key, verdictAtNs: clock.now(), afterNs: afterNs)
    }
}

extension SpeechSetup {
    /// The speaker (`KIOSK_SPEAKER`; nil: none, or `KIOSK_SPEAK=0`), its phrases rendered now,
    /// before the camera opens (never at a verdict); SIGHUP renders what changed. Exit 78 for an
    /// unknown voice or a phrases file that does not read.
    static func assemble(_ a: Assembly, lines: OutputLines) throws -> DoorSpeech? {
        guard let settings = SpeechSettings(configuration: a.config, environment: a.environment) else { return nil }
        let logger = a.logger
        let speaker = Speaker(settings: settings, clock: a.clock) { e in logger.log(e.level, e.event, fields: e.fields) }
        do throws(SpeechStartError) {
            try speaker.start()
        } catch {
            logger.configError(error.configError)
            throw ServiceExit(ExitStatus.config)
        }
        a.reloadables.add("phrases") {
            speaker.reload()
            return "phrases"
        }
        return DoorSpeech(speaker: speaker, configuration: a.config, hasBuzzer: lines.door.buzzer != nil, clock: a.clock)
    }
}
