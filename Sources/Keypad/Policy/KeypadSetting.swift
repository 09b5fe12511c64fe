// SPDX-License-Identifier: Apache-2.0
/// `KIOSK_KEYPAD` (interface.md 0.6): where the door's keypad is.
public enum KeypadSetting: Equatable, Sendable, CustomStringConvertible {
    /// An input-event device (a USB keypad, any keyboard): its path, best its /dev/input/by-id name.
    case evdev(path: String)
    /// A Wiegand keypad's D0 and D1 on two input lines of `KIOSK_GPIO_CHIP`.
    case wiegand(d0: Int, d1: Int)

    public static let expected = "evdev:PATH (an absolute path, such as /dev/input/by-id/...-event-kbd) or wiegand:D0,D1 (two different line offsets 0-511)"

    public init?(_ text: String) {
        if text.hasPrefix("evdev:") {
            let path = String(text.dropFirst(6))
            guard path.hasPrefix("/"), path.utf8.count <= 4096, !path.hasSuffix("/"),
                  path.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return nil }
            self = .evdev(path: path)
        } else if text.hasPrefix("wiegand:") {
            let f = text.dropFirst(8).split(separator: ",", omittingEmptySubsequences: false)
            guard f.count == 2, let a = PINHash.small3(f[0]), let b = PINHash.small3(f[1]), a != b, a <= 511, b <= 511 else { return nil }
            self = .wiegand(d0: a, d1: b)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .evdev(let path): return "evdev:\(path)"
        case .wiegand(let d0, let d1): return "wiegand:\(d0),\(d1)"
        }
    }

    /// The input lines it takes, if any.
    public var lines: [Int] {
        if case .wiegand(let d0, let d1) = self { return [d0, d1] }
        return []
    }
}

extension PINHash {
    /// 0-999, digits only, no leading zero but for 0 itself.
    static func small3(_ s: Substring) -> Int? {
        guard (1...3).contains(s.utf8.count), s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), s == "0" || s.first != "0" else { return nil }
        return Int(s)
    }
}

/// Why an input-event node refused the kiosk's user (EACCES), from the node's group and mode. The
/// kernel makes a plugged-in keypad's node root's (0600); udev gives it to the `input` group (0660)
/// a moment later. So a node its group cannot read is not given to a group yet (plugged in just
/// now, or no udev rule), which joining a group would not mend; else the user is not in its group.
public enum KeypadAccess {
    public static func advice(group: String?, groupReads: Bool) -> String {
        guard groupReads, let group, group != "root" else {
            return "its node is not given to a group yet (udev gives a keypad's node to the input group a moment after it is plugged in; if this stays, no udev rule does)"
        }
        return "the kiosk's user must be in the \(group) group, which owns its node"
    }
}
