// SPDX-License-Identifier: Apache-2.0
/// When the door strike is released: a pure state machine on monotonic nanoseconds.
///
/// Shut at start. A grant at `t` opens it until `t + openNs` (`KIOSK_DOOR_MS`); a grant while it
/// is open keeps it open until the later of the two ends (a second person let in does not shorten
/// the first one's time, and the strike does not click shut and open again between them). It
/// shuts when its time is up (`tick`), or at once when forced (stop, camera lost): a door must
/// never be left open by a kiosk that is no longer watching.
///
/// Held released (`hold`, the `unlock` and `emergency` modes) it stays open whatever
/// comes (grants, a lost camera) until the hold ends (`endHold`), then shuts; only a stop shuts
/// it before (the line is released: the strike's own wiring decides, fail-safe or fail-secure).
public struct StrikePolicy: Equatable, Sendable {
    public enum CloseReason: Equatable, Sendable {
        /// `KIOSK_DOOR_MS` after the last grant.
        case timeUp
        /// Shut before its time: "stop", "camera_lost".
        case forced(String)

        /// The `door` event's `reason`.
        public var text: String {
            switch self {
            case .timeUp: return "time"
            case .forced(let why): return why
            }
        }
    }

    public enum Change: Equatable, Sendable {
        /// Released until `untilNs` (a `door` event, `state=open`).
        case opened(at: UInt64, untilNs: UInt64)
        /// Already open; now open until `untilNs` (no `door` event: the door did not move).
        case extended(at: UInt64, untilNs: UInt64)
        /// Shut (a `door` event, `state=closed`).
        case closed(at: UInt64, reason: CloseReason)
    }

    public static let defaultOpenMilliseconds = 3000
    public static let openMillisecondsRange: ClosedRange<Int> = 100...60_000
    public static let openMillisecondsExpected = "a whole number of milliseconds from 100 to 60000"

    public let openNs: UInt64
    /// When it shuts, while it is open (`UInt64.max` while held).
    public private(set) var closesAtNs: UInt64?
    public var isHeld: Bool { closesAtNs == .max }

    public init(openMilliseconds: Int) {
        openNs = UInt64(max(0, openMilliseconds)) * 1_000_000
    }

    public var isOpen: Bool { closesAtNs != nil }

    public mutating func grant(at t: UInt64) -> [Change] { grant(at: t, forNs: openNs) }

    /// A release for another time than `KIOSK_DOOR_MS` (the building's `open` command's `ms`).
    public mutating func grant(at t: UInt64, forNs: UInt64) -> [Change] {
        let end = t + forNs
        if let current = closesAtNs {
            // A tick that has not run yet for a time already up: the door shuts at its time and
            // this grant opens it again, rather than stretching an expired opening.
            if t >= current {
                closesAtNs = end
                return [.closed(at: current, reason: .timeUp), .opened(at: t, untilNs: end)]
            }
            closesAtNs = max(current, end)
            return [.extended(at: t, untilNs: closesAtNs!)]
        }
        closesAtNs = end
        return [.opened(at: t, untilNs: end)]
    }

    /// Shuts the door when its time is up by `t`.
    public mutating func tick(at t: UInt64) -> [Change] {
        guard let end = closesAtNs, t >= end else { return [] }
        closesAtNs = nil
        return [.closed(at: end, reason: .timeUp)]
    }

    /// Held released until `endHold` (a `door` event `state=open` when it was shut).
    public mutating func hold(at t: UInt64) -> [Change] {
        defer { closesAtNs = .max }
        return closesAtNs == nil ? [.opened(at: t, untilNs: .max)] : isHeld ? [] : [.extended(at: t, untilNs: .max)]
    }

    /// The hold ends: the strike shuts now (`reason` the `door` event's).
    public mutating func endHold(at t: UInt64, reason: String) -> [Change] {
        guard isHeld else { return [] }
        closesAtNs = nil
        return [.closed(at: t, reason: .forced(reason))]
    }

    /// Shuts at once (camera lost); nothing when already shut or held. Grants afterwards open it
    /// again as usual. `evenHeld`: a stop, which shuts a held strike too.
    public mutating func forceClose(at t: UInt64, reason: String, evenHeld: Bool = false) -> [Change] {
        guard closesAtNs != nil, evenHeld || !isHeld else { return [] }
        closesAtNs = nil
        return [.closed(at: t, reason: .forced(reason))]
    }
}
