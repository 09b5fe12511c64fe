// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The checkout the tests come from (the repository's top folder): the folder in `KIOSK_CHECKOUT`,
/// or the one this file was compiled in. The arm64 tier needs the first: its bundle is built in the
/// trixie root's copy (/work/kiosk) and runs on the host under qemu-user, where the peers' native
/// python is handed the scripts' paths and sees no /work/kiosk.
public enum Checkout {
    public static var root: URL {
        if let path = ProcessInfo.processInfo.environment["KIOSK_CHECKOUT"], !path.isEmpty { return URL(fileURLWithPath: path) }
        // Tests/TestSupport/Checkout.swift -> the repository.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
