// SPDX-License-Identifier: Apache-2.0
/// What the door's inputs mean: a pure state machine on monotonic nanoseconds.
///
/// Three inputs, each optional: the door position switch (active: the door is open), the
/// request-to-exit button (active: pressed) and the tamper loop (active: tampered). Edges come
/// with the kernel's timestamps; a level counts once it has held for the debounce time (none when
/// the kernel already debounced), and its time is the edge that began it.
///
/// The door is closed, or open: by a release (a grant, the exit button, a command from the
/// building: each releases the door for the strike's time), or forced (opened while not
/// released). An open door not closed within `heldNs` is held open. Closing ends the alarm
/// (forced or held). The exit button is never an alarm; it opens the strike unless told not to
/// (`rexOpens`), and releases the door either way (a door with a mechanical handle inside is not
/// forced by someone walking out). With `relockOnContact` the strike shuts as soon as the door
/// shuts after it was opened. Tamper is an alarm of its own, with its own end.
///
/// A fourth input, the fire panel's relay (`emergency`), is only reported (the door's
/// modes decide); and while the door is in free passage (`unlock`, `emergency`: the strike held
/// released) it is released without end: an open door is neither forced nor held, and its held
/// limit counts from the end of free passage.
public struct DoorWatchPolicy: Equatable, Sendable {
    public enum Input: String, Equatable, Sendable, CaseIterable {
        case contact, rex, tamper, emergency
    }

    /// What `<topic>/door` says.
    public enum DoorState: String, Equatable, Sendable {
        case closed, open, forced, held
    }

    public enum Alarm: String, Equatable, Sendable {
        case forced, held
    }

    public enum Action: Equatable, Sendable {
        /// The door opened or shut (`door_contact state=open|closed`); `edgeNs` the edge's time.
        case contact(open: Bool, edgeNs: UInt64)
        /// The exit button was pressed (`rex`); `opensStrike`: the strike is told to open.
        case rex(edgeNs: UInt64, opensStrike: Bool)
        /// The exit button was let go: nothing at the door; how long it was held opens setup
        /// (`SetupWindow`).
        case rexReleased(edgeNs: UInt64)
        /// Opened without a release (`door_forced`).
        case forced(edgeNs: UInt64)
        /// Open longer than allowed (`door_held`), `openNs` since it opened.
        case held(at: UInt64, openNs: UInt64)
        /// Shut after an alarm (`door_alarm_end`).
        case alarmEnd(alarm: Alarm, edgeNs: UInt64, openNs: UInt64)
        /// The tamper loop opened (true) or is whole again (false) (`tamper state=alarm|ok`).
        case tamper(active: Bool, edgeNs: UInt64)
        /// The fire panel's input became active (true) or inactive.
        case emergency(active: Bool, edgeNs: UInt64)
        /// Open the strike for `milliseconds` (the exit button).
        case openStrike(milliseconds: Int)
        /// Shut the strike now (relock on contact).
        case closeStrike
        /// `<topic>/door` changes.
        case doorState(DoorState)
        /// The alarm pattern on the buzzer (`KIOSK_BEEP_ALARM`), and its end.
        case soundAlarm
        case silenceAlarm
    }

    public struct Settings: Equatable, Sendable {
        public var heldNs: UInt64
        /// Software debounce (0: none, the kernel did it or none was asked).
        public var debounceNs: UInt64
        public var rexOpens: Bool
        public var relockOnContact: Bool
        /// `KIOSK_DOOR_MS`: how long a grant or the exit button releases the door.
        public var releaseMilliseconds: Int

        public init(heldNs: UInt64 = 30_000_000_000, debounceNs: UInt64 = 20_000_000, rexOpens: Bool = true,
                    relockOnContact: Bool = false, releaseMilliseconds: Int = StrikePolicy.defaultOpenMilliseconds) {
            self.heldNs = heldNs
            self.debounceNs = debounceNs
            self.rexOpens = rexOpens
            self.relockOnContact = relockOnContact
            self.releaseMilliseconds = releaseMilliseconds
        }
    }

    /// One input's levels: the debounced one (`stable`) and the raw one still to settle.
    struct Filter: Equatable, Sendable {
        var stable: Bool
        var raw: Bool
        var rawSinceNs: UInt64
        var pending: Bool { raw != stable }
    }

    public let settings: Settings
    public private(set) var state: DoorState = .closed
    public private(set) var tampered = false
    var filters: [Input: Filter] = [:]
    /// The door may be opened until then (a grant, the exit button, a command).
    public private(set) var releasedUntilNs: UInt64?
    /// The door opened during the current release (relock on contact shuts the strike when it shuts).
    var openedDuringRelease = false
    var openedAtNs: UInt64?
    /// The strike is held released (`unlock`, `emergency`).
    public private(set) var freePassage = false

    public init(settings: Settings) { self.settings = settings }

    /// The inputs there are and their levels at start (active true). A door open at start is
    /// open (no alarm: nobody saw it opened) and its held timer starts now; a tamper loop open at
    /// start is an alarm.
    public mutating func start(levels: [Input: Bool], at t: UInt64) -> [Action] {
        var actions: [Action] = []
        for (input, active) in levels { filters[input] = Filter(stable: active, raw: active, rawSinceNs: t) }
        if levels[.contact] == true {
            state = .open
            openedAtNs = t
            actions.append(.contact(open: true, edgeNs: t))
        }
        if levels[.contact] != nil { actions.append(.doorState(state)) }
        if levels[.tamper] == true {
            tampered = true
            actions += [.tamper(active: true, edgeNs: t), .soundAlarm]
        }
        if levels[.emergency] == true { actions.append(.emergency(active: true, edgeNs: t)) }
        return actions
    }

    /// The inputs watched.
    public var inputs: Set<Input> { Set(filters.keys) }

    /// An edge: `input` went to `active` at `t` (the kernel's time). Edges of one input come in
    /// time order; the caller gives every input's in time order too.
    public mutating func edge(_ input: Input, active: Bool, at t: UInt64) -> [Action] {
        guard var f = filters[input] else { return [] }
        var actions = settle(upTo: t)  // what settled before this edge, in time order
        f = filters[input]!
        guard active != f.raw else { return actions }
        f.raw = active
        f.rawSinceNs = t
        filters[input] = f
        if settings.debounceNs == 0 { actions += settle(upTo: t) }
        return actions
    }

    /// The door is released until `t + milliseconds`: a grant, or a command from the building.
    /// The strike is opened by whoever releases (the door reader), not by this.
    public mutating func release(at t: UInt64, milliseconds: Int) -> [Action] {
        let actions = settle(upTo: t)
        let until = t + UInt64(max(0, milliseconds)) * 1_000_000
        if let current = releasedUntilNs, current > t {
            releasedUntilNs = max(current, until)
        } else {
            releasedUntilNs = until
            openedDuringRelease = false
        }
        return actions
    }

    /// Free passage begins or ends. While it lasts the door is released without end;
    /// when it ends, a door still open has `heldNs` from now to shut.
    public mutating func setFreePassage(_ on: Bool, at t: UInt64) -> [Action] {
        var actions = settle(upTo: t)
        guard on != freePassage else { return actions }
        freePassage = on
        if on {
            releasedUntilNs = .max
            // A door already forced or held is an alarm that ends when it shuts, as before.
        } else {
            releasedUntilNs = nil
            openedDuringRelease = false
            if state == .open { openedAtNs = t }
            actions += settle(upTo: t)
        }
        return actions
    }

    /// The strike shut before its time (camera lost, stop): the door is no longer released.
    public mutating func strikeClosed(at t: UInt64) -> [Action] {
        let actions = settle(upTo: t)
        guard !freePassage else { return actions }
        releasedUntilNs = nil
        openedDuringRelease = false
        return actions
    }

    /// Time passes: levels that held for the debounce time count, an open door may become held.
    public mutating func tick(at t: UInt64) -> [Action] { settle(upTo: t) }

    /// When `tick` has something to do next (a level settling, the held limit), or nil.
    public var nextDeadlineNs: UInt64? {
        var deadlines: [UInt64] = filters.values.filter(\.pending).map { $0.rawSinceNs + settings.debounceNs }
        if state == .open, !freePassage, let opened = openedAtNs { deadlines.append(opened + settings.heldNs) }
        return deadlines.min()
    }

    public var isReleased: Bool { releasedUntilNs != nil }

    /// Everything due by `t`, in time order: settled levels and the held limit.
    mutating func settle(upTo t: UInt64) -> [Action] {
        var actions: [Action] = []
        while true {
            // The earliest of: a pending level whose debounce has run out, the held limit.
            var next: (at: UInt64, input: Input?)?
            for (input, f) in filters where f.pending {
                let due = f.rawSinceNs + settings.debounceNs
                if due <= t, next.map({ due < $0.at || (due == $0.at && order(input) < order($0.input)) }) ?? true {
                    next = (due, input)
                }
            }
            if state == .open, !freePassage, let opened = openedAtNs {
                let due = opened + settings.heldNs
                // A door that shut before the limit, still settling, was not held open.
                let shutBefore = filters[.contact].map { $0.pending && !$0.raw && $0.rawSinceNs <= due } ?? false
                if due <= t, !shutBefore, next.map({ due < $0.at }) ?? true { next = (due, nil) }
            }
            guard let due = next else { return actions }
            if let input = due.input {
                var f = filters[input]!
                f.stable = f.raw
                filters[input] = f
                actions += changed(input, active: f.stable, edgeNs: f.rawSinceNs)
            } else {
                state = .held
                actions += [.held(at: due.at, openNs: due.at - openedAtNs!), .doorState(.held), .soundAlarm]
            }
        }
    }

    private func order(_ input: Input?) -> Int {
        switch input {
        case .contact: return 0
        case .rex: return 1
        case .tamper: return 2
        case .emergency: return 3
        case nil: return 4
        }
    }

    /// A debounced change of `input` to `active`, begun at `edgeNs`.
    private mutating func changed(_ input: Input, active: Bool, edgeNs t: UInt64) -> [Action] {
        if let until = releasedUntilNs, t >= until {
            releasedUntilNs = nil
            openedDuringRelease = false
        }
        switch input {
        case .contact:
            if active {
                guard state == .closed else { return [] }
                openedAtNs = t
                if releasedUntilNs != nil {
                    openedDuringRelease = true
                    state = .open
                    return [.contact(open: true, edgeNs: t), .doorState(.open)]
                }
                state = .forced
                return [.contact(open: true, edgeNs: t), .forced(edgeNs: t), .doorState(.forced), .soundAlarm]
            }
            guard state != .closed else { return [] }
            var actions: [Action] = [.contact(open: false, edgeNs: t)]
            let openNs = openedAtNs.map { t >= $0 ? t - $0 : 0 } ?? 0
            switch state {
            case .forced: actions.append(.alarmEnd(alarm: .forced, edgeNs: t, openNs: openNs))
            case .held: actions.append(.alarmEnd(alarm: .held, edgeNs: t, openNs: openNs))
            default: break
            }
            // The buzzer goes quiet with the door's alarm, unless the tamper loop is still open.
            if state == .forced || state == .held, !tampered { actions.append(.silenceAlarm) }
            state = .closed
            openedAtNs = nil
            actions.append(.doorState(.closed))
            if settings.relockOnContact, !freePassage, releasedUntilNs != nil, openedDuringRelease {
                releasedUntilNs = nil
                openedDuringRelease = false
                actions.append(.closeStrike)
            }
            return actions
        case .emergency:
            return [.emergency(active: active, edgeNs: t)]
        case .rex:
            guard active else { return [.rexReleased(edgeNs: t)] }
            let until = t + UInt64(settings.releaseMilliseconds) * 1_000_000
            if let current = releasedUntilNs {
                releasedUntilNs = max(current, until)
            } else {
                releasedUntilNs = until
                openedDuringRelease = false
            }
            var actions: [Action] = [.rex(edgeNs: t, opensStrike: settings.rexOpens)]
            if settings.rexOpens { actions.append(.openStrike(milliseconds: settings.releaseMilliseconds)) }
            return actions
        case .tamper:
            guard active != tampered else { return [] }
            tampered = active
            return active ? [.tamper(active: true, edgeNs: t), .soundAlarm] : [.tamper(active: false, edgeNs: t)]
        }
    }
}

/// `KIOSK_INPUT_BIAS`.
public enum InputBias: String, Equatable, Sendable, CaseIterable {
    case pullUp = "pull-up", pullDown = "pull-down", disabled, asIs = "as-is"
    public static let expected = "pull-up, pull-down, disabled or as-is"
}

/// `KIOSK_DOOR_RELOCK`: when the strike shuts after it opened.
public enum DoorRelock: String, Equatable, Sendable, CaseIterable {
    /// `KIOSK_DOOR_MS` after it opened.
    case time
    /// As soon as the door shuts after opening (needs the door contact).
    case contact
    public static let expected = "time (the strike closes after KIOSK_DOOR_MS) or contact (as soon as the door shuts after opening)"
}
