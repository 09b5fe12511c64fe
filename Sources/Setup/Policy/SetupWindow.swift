// SPDX-License-Identifier: Apache-2.0
/// `KIOSK_SETUP`: when the door takes setup codes.
public enum SetupMode: String, Equatable, Sendable, CaseIterable {
    /// In the first `KIOSK_SETUP_WINDOW_S` after the system booted, and after the exit button is held.
    case boot
    /// Only after the exit button is held.
    case button
    /// Never.
    case off = "0"
    public static let expected = "boot (the first KIOSK_SETUP_WINDOW_S after the system booted, and 60 s after the exit button is held 5 s), button (only the latter) or 0 (never)"
}

/// When setup is open (interface 0.6): on the time since the system booted (`CLOCK_BOOTTIME`,
/// which counts a suspend and is not set by NTP; passed in, never read here) and the exit
/// button's presses. Held `holdNs` and let go, the button opens setup for `buttonOpenNs` from
/// its release: a hand on the inside of the door.
public struct SetupWindow: Equatable, Sendable {
    /// How setup came to be open.
    public enum Opening: Equatable, Sendable {
        /// The window after boot.
        case boot
        /// The exit button was held: a hand on the inside, which may also let a door that is not
        /// new take its first site key.
        case button
    }

    public static let defaultWindowS = 600
    public static let windowRange: ClosedRange<Int> = 60...3600
    public static let holdNs: UInt64 = 5_000_000_000
    public static let buttonOpenNs: UInt64 = 60_000_000_000

    public let mode: SetupMode
    public let windowNs: UInt64
    /// When the button was pressed (boot time), while it is down.
    private var pressedAtNs: UInt64?
    /// Until when the button holds setup open.
    private var buttonOpenUntilNs: UInt64?

    public init(mode: SetupMode, windowS: Int) {
        self.mode = mode
        windowNs = UInt64(max(0, windowS)) * 1_000_000_000
    }

    /// The exit button went down (`pressed`) or up at `bootNs`. True when this release opened setup.
    @discardableResult
    public mutating func button(pressed: Bool, atBootNs t: UInt64) -> Bool {
        if pressed {
            if pressedAtNs == nil { pressedAtNs = t }
            return false
        }
        defer { pressedAtNs = nil }
        guard mode != .off, let down = pressedAtNs, t >= down, t - down >= SetupWindow.holdNs else { return false }
        buttonOpenUntilNs = t + SetupWindow.buttonOpenNs
        return true
    }

    /// Whether setup is open at `bootNs`, and how; nil: closed. The button's opening is named
    /// first: it is the stronger (a door that is not new may take a site key then).
    public func opening(atBootNs t: UInt64) -> Opening? {
        if let until = buttonOpenUntilNs, t < until, mode != .off { return .button }
        if mode == .boot, t < windowNs { return .boot }
        return nil
    }

    /// When, on the boot clock, setup next closes by itself (nil: it is closed).
    public func closesAtBootNs(after t: UInt64) -> UInt64? {
        switch opening(atBootNs: t) {
        case .button?: return max(buttonOpenUntilNs ?? 0, mode == .boot ? windowNs : 0)
        case .boot?: return windowNs
        case nil: return nil
        }
    }
}

/// Whose key a code must verify with, and whether the door may take it (interface 0.6): the
/// pinned site key's, or on a door with none the code's own, which it then pins; the first code
/// decides the site, and only while the door is new or its exit button opened setup, so that a
/// door set up over SSH is not taken over by whoever reaches it after a power cut.
public enum SetupSite {
    /// `codeKey`: the code's `site_key` (DER); `pinned`: the pinned key's DER, nil when none is
    /// pinned. Returns whether the code's key is to be pinned.
    public static func check(codeKey: [UInt8], pinned: [UInt8]?, doorIsNew: Bool, opening: SetupWindow.Opening) throws(SetupRefusal) -> Bool {
        if let pinned {
            guard pinned == codeKey else { throw SetupRefusal(.site, "signed for another site: its site_key is not the pinned site key") }
            return false
        }
        guard doorIsNew || opening == .button else {
            throw SetupRefusal(.site, "this door has no site key and is not new: hold its exit button 5 s to let a code decide its site")
        }
        return true
    }
}
