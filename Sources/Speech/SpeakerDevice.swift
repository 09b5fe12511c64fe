// SPDX-License-Identifier: Apache-2.0
import CALSA
import Glibc

/// Why the speaker did not play: ALSA's error code and its words.
public struct SpeakerFault: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public var description: String

    public init(code: Int32, description: String) {
        self.code = code
        self.description = description
    }
}

/// An open speaker: mono 16-bit samples at the rate it was opened with. Used from the speaker's
/// own thread only.
public protocol SpeakerOutput: AnyObject {
    /// Writes some of `samples`, waiting for room; how many were taken.
    func write(_ samples: UnsafeBufferPointer<Int16>) -> Result<Int, SpeakerFault>
    /// Drops what is queued at once (a phrase cut by the next).
    func drop()
    /// Waits until what is queued has played.
    func drain()
    func close()
}

/// Where speakers are opened: ALSA, or a test's device.
public protocol SpeakerDevice: Sendable {
    func open(_ name: String, sampleRate: Int) -> Result<SpeakerOutput, SpeakerFault>
}

/// ALSA's libasound, loaded on first use (Sources/CALSA): any PCM name, so that `default`,
/// `plughw:CARD=Device` and a PCM of /etc/asound.conf or ~/.asoundrc all work.
public struct ALSADevice: SpeakerDevice {
    /// 100 ms of buffer: a phrase cut by the next stops within that, and a busy Pi does not run dry.
    public static let latencyUs: UInt32 = 100_000

    public init() {}

    public func open(_ name: String, sampleRate: Int) -> Result<SpeakerOutput, SpeakerFault> {
        var error: Int32 = 0
        var why = [CChar](repeating: 0, count: 512)
        guard let pcm = kiosk_pcm_open(name, UInt32(sampleRate), ALSADevice.latencyUs, &error, &why, why.count) else {
            return .failure(SpeakerFault(code: error, description: String(decoding: why.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(ALSAOutput(pcm))
    }

    /// libasound's version, or why it cannot be loaded.
    public static func load() -> Result<String, SpeakerFault> {
        var why = [CChar](repeating: 0, count: 512)
        guard kiosk_alsa_load(&why, why.count) == 0 else {
            return .failure(SpeakerFault(code: -ENOSYS, description: String(decoding: why.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(String(cString: kiosk_alsa_version()))
    }

    /// The sound cards ALSA sees, as `aplay -l` would name them (empty: none).
    public static func cards() -> [String] {
        var out = [CChar](repeating: 0, count: 2048)
        guard kiosk_alsa_cards(&out, out.count) > 0 else { return [] }
        let text = String(decoding: out.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: ";").map { String($0.drop(while: { $0 == " " })) }
    }
}

final class ALSAOutput: SpeakerOutput {
    private var pcm: OpaquePointer?

    init(_ pcm: OpaquePointer) { self.pcm = pcm }

    deinit { close() }

    func write(_ samples: UnsafeBufferPointer<Int16>) -> Result<Int, SpeakerFault> {
        guard let pcm else { return .failure(SpeakerFault(code: -EBADF, description: "closed")) }
        let n = kiosk_pcm_write(pcm, samples.baseAddress, UInt(samples.count))
        if n < 0 { return .failure(SpeakerFault(code: Int32(n), description: String(cString: kiosk_alsa_strerror(Int32(n))))) }
        return .success(n)
    }

    func drop() { if let pcm { _ = kiosk_pcm_drop(pcm) } }
    func drain() { if let pcm { _ = kiosk_pcm_drain(pcm) } }

    func close() {
        if let pcm { kiosk_pcm_close(pcm) }
        pcm = nil
    }
}
