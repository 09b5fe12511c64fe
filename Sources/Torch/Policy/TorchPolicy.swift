// SPDX-License-Identifier: Apache-2.0
/// When the torch goes on and off: a pure state machine fed with timestamped brightness samples.
///
/// The phone article (seed 003, part 4) calls a scene dim below a threshold and reports only
/// changes. A kiosk that switches its own torch closes a loop the article never had: the torch
/// brightens the very frames that decide whether it is needed. So:
/// - two thresholds: on below `onBelow`, off above `offAbove` (`onBelow < offAbove`);
/// - a condition must last `confirmNs` (a shadow passing for a second changes nothing), and a
///   state is kept at least `holdNs`;
/// - frames during a switch (`settleNs`) are not trusted: the LED and the camera's exposure are
///   still moving;
/// - the torch's own light is learned at each switch-on (brightness settled after, minus just
///   before) and subtracted while it is on, so that the ambient part is what meets the
///   thresholds: a torch brighter than the gap between them cannot make it blink;
/// - the learned figure is re-learned after `relearnNs` on, by a short look with the torch off.
public struct TorchPolicy: Equatable {
    public enum Mode: Equatable { case auto, on, off }

    public struct Settings: Equatable {
        public var mode: Mode
        public var onBelow: Double
        public var offAbove: Double
        public var holdNs: UInt64
        public var confirmNs: UInt64 = 1_500_000_000
        public var settleNs: UInt64 = 600_000_000
        public var relearnNs: UInt64 = 30 * 60 * 1_000_000_000

        public init(mode: Mode, onBelow: Double, offAbove: Double, holdNs: UInt64) {
            precondition(onBelow < offAbove)
            self.mode = mode
            self.onBelow = onBelow
            self.offAbove = offAbove
            self.holdNs = holdNs
        }
    }

    public struct Change: Equatable {
        public var on: Bool
        /// The ambient figure the decision was made on.
        public var brightness: Double
        public var reason: String
    }

    public let settings: Settings
    public private(set) var isOn = false
    /// How much the torch adds to the brightness figure, once learned.
    public private(set) var torchLight: Double?
    /// The latest ambient estimate (torch light discounted).
    public private(set) var ambient: Double?

    private var lastChangeNs: UInt64?
    private var conditionSinceNs: UInt64?
    /// Brightness of the last few trusted frames with the torch off: the "before" of learning.
    private var recentOff: [Double] = []
    private var learningFrom: Double?
    private var learnedAtNs: UInt64?
    private var probing = false

    public init(settings: Settings) {
        self.settings = settings
    }

    /// The torch is off at start; with `KIOSK_TORCH=on` it goes on at once.
    public mutating func start(at t: UInt64) -> [Change] {
        guard settings.mode == .on else { return [] }
        return [switchTo(true, at: t, brightness: ambient ?? 0, reason: "KIOSK_TORCH=on")]
    }

    /// Everything off (camera lost, shutting down). The next samples decide afresh.
    public mutating func forceOff(at t: UInt64, reason: String) -> [Change] {
        guard isOn else { return [] }
        return [switchTo(false, at: t, brightness: ambient ?? 0, reason: reason)]
    }

    /// Restarts after `forceOff` (the camera is back): on again at once if the mode says so.
    public mutating func resume(at t: UInt64) -> [Change] {
        settings.mode == .on && !isOn ? [switchTo(true, at: t, brightness: ambient ?? 0, reason: "KIOSK_TORCH=on")] : []
    }

    public mutating func observe(brightness b: Double, at t: UInt64) -> [Change] {
        guard settings.mode == .auto else {
            ambient = isOn ? max(0, b - (torchLight ?? 0)) : b
            return []
        }
        if let changed = lastChangeNs, t &- changed < settings.settleNs { return [] }

        if isOn, let before = learningFrom {
            torchLight = max(0, b - before)
            learningFrom = nil
            learnedAtNs = t
        }
        if probing {
            // The torch was switched off for a look at the room alone: this is the ambient light.
            probing = false
            ambient = b
            if b <= settings.offAbove {
                recentOff = [b]
                return [switchTo(true, at: t, brightness: b, reason: "still dim with the torch off (re-learning its light)")]
            }
        }
        if isOn, let light = torchLight, b < light {
            // Darker than the torch alone could make it: the learned figure is stale (a dimmer LED).
            torchLight = b
        }
        let a = isOn ? max(0, b - (torchLight ?? 0)) : b
        ambient = a
        if !isOn {
            recentOff.append(b)
            if recentOff.count > 5 { recentOff.removeFirst() }
        }

        if isOn, let learned = learnedAtNs, t &- learned >= settings.relearnNs {
            probing = true
            conditionSinceNs = nil
            return [switchTo(false, at: t, brightness: a, reason: "re-learning the torch's light")]
        }

        let wantsChange = isOn ? a > settings.offAbove : a < settings.onBelow
        guard wantsChange else {
            conditionSinceNs = nil
            return []
        }
        let since = conditionSinceNs ?? t
        conditionSinceNs = since
        let held = lastChangeNs.map { t &- $0 >= settings.holdNs } ?? true
        guard t &- since >= settings.confirmNs, held else { return [] }
        let seconds = Format.fixed(Double(t &- since) / 1e9, 1)
        return isOn
            ? [switchTo(false, at: t, brightness: a, reason: "ambient above \(Self.trim(settings.offAbove)) for \(seconds) s")]
            : [switchTo(true, at: t, brightness: a, reason: "ambient below \(Self.trim(settings.onBelow)) for \(seconds) s")]
    }

    private mutating func switchTo(_ on: Bool, at t: UInt64, brightness: Double, reason: String) -> Change {
        if on {
            let sorted = recentOff.sorted()
            learningFrom = sorted.isEmpty ? nil : sorted[sorted.count / 2]
        } else {
            recentOff.removeAll()
            learningFrom = nil
        }
        isOn = on
        lastChangeNs = t
        conditionSinceNs = nil
        return Change(on: on, brightness: brightness, reason: reason)
    }

    static func trim(_ d: Double) -> String { d == d.rounded() ? String(Int(d)) : String(d) }
}

