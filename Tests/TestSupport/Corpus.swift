// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The shared photo corpus: `../shared/corpus` beside the checkout (as CI lays it out), or the
/// folder in `KIOSK_CORPUS`. Never a path of one machine.
public enum Corpus {
    public static var root: URL {
        if let path = ProcessInfo.processInfo.environment["KIOSK_CORPUS"] { return URL(fileURLWithPath: path) }
        // Tests/TestSupport/Corpus.swift -> the repository -> its sibling shared/.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }

    /// zxing's black-box photographs, a folder per symbology.
    public static var blackbox: URL { root.appendingPathComponent("zxing-blackbox") }

    /// The few of them kept in the repository (Tests/Photos, Apache-2.0): there on every clone, found
    /// from the checkout (`KIOSK_CHECKOUT` where the bundle runs away from where it was built: the
    /// arm64 tier under qemu-user).
    public static var inRepository: URL { Checkout.root.appendingPathComponent("Tests/Photos") }
}
