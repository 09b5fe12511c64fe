// SPDX-License-Identifier: Apache-2.0
/// When the torch goes off for a look at a phone screen (`KIOSK_TORCH_SCREEN_MS`).
///
/// A phone screen lights itself; the torch adds nothing to it but a reflection on its glass that
/// wipes out part of the code (a specular reflection blinds an imager when the glass faces it
/// within about 10 degrees). Commercial readers switch their illumination off to read screens.
/// So: with the torch on, something held in the ROI, and nothing read for `afterNs`, the torch goes
/// off for `lookNs`; it comes back at the end of the look, or at once when the code reads. At most
/// one look per presentation (a presentation ends when the ROI has been empty for `endNs`), so a
/// paper code that reads under the torch never sees it move, and an unreadable thing held up
/// makes it blink once, not forever.
///
/// A pure value: the frame's time, whether the torch is wanted on, whether something is held and
/// whether a code was read, in; switches out. The torch policy is not fed during a look and its
/// settle time after (`quiet`), so the room's estimate is not spoilt by frames without the torch.
public struct ScreenLook: Equatable, Sendable {
    public struct Settings: Equatable, Sendable {
        /// Something held and nothing read for this long: look. 0 turns looks off.
        public var afterNs: UInt64
        /// How long the torch stays off: the LED's fall, the exposure's catching up (a camera's
        /// auto-exposure moves within a few frames towards the darker scene; a screen's code needs
        /// about two decodes at 30 fps) and a margin.
        public var lookNs: UInt64 = 700_000_000
        /// The ROI empty this long: the presentation is over.
        public var endNs: UInt64 = 500_000_000
        /// After the torch comes back, frames are not the room's: the LED and exposure are moving.
        public var settleNs: UInt64 = 600_000_000

        public init(afterMs: Int) { afterNs = UInt64(max(0, afterMs)) * 1_000_000 }
    }

    public enum Switch: Equatable, Sendable {
        /// The torch off for a look (`reason=screen`).
        case off
        /// The torch back on; `read`: the look read the code.
        case on(read: Bool)
    }

    public let settings: Settings
    /// The torch is off for a look now.
    public private(set) var looking = false
    public private(set) var looks = 0

    private var heldSince: UInt64?
    private var lastHeld: UInt64?
    private var readInPresentation = false
    private var lookedInPresentation = false
    private var lookStarted: UInt64 = 0
    private var quietUntil: UInt64 = 0

    public init(settings: Settings) { self.settings = settings }

    /// True while the torch policy must not learn from frames: during a look and the settle time
    /// after it.
    public func quiet(at t: UInt64) -> Bool { looking || t < quietUntil }

    /// One frame. `torchWanted`: the torch policy has it on. `held`: something is in the ROI.
    /// `read`: a code was read from a frame of this presentation.
    public mutating func observe(at t: UInt64, torchWanted: Bool, held: Bool, read: Bool) -> Switch? {
        if held {
            if heldSince == nil { heldSince = t }
            lastHeld = t
        } else if let last = lastHeld, t &- last >= settings.endNs, !looking {
            // The presentation is over: the next one may be looked at again.
            heldSince = nil
            lastHeld = nil
            readInPresentation = false
            lookedInPresentation = false
        }
        if read { readInPresentation = true }

        if looking {
            let over = t &- lookStarted >= settings.lookNs
            guard read || over || !torchWanted else { return nil }
            looking = false
            quietUntil = t &+ settings.settleNs
            // The torch is no longer wanted (the room lit up meanwhile): it stays off.
            return torchWanted ? .on(read: read) : nil
        }
        guard settings.afterNs > 0, torchWanted, let since = heldSince, held,
              !readInPresentation, !lookedInPresentation, t &- since >= settings.afterNs else { return nil }
        looking = true
        lookedInPresentation = true
        lookStarted = t
        looks += 1
        return .off
    }
}
