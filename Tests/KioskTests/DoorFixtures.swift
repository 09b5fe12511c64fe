// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What the end-to-end tests of a door that decides by credentials share (credentials, tickets,
/// access rules, modes, site bundles).
enum DoorFixtures {
    /// A kiosk in credentials mode on the simulated GPIO chip (the strike on line 5 for 200 ms),
    /// every code reported, no clock wait, the log at debug; `folder` holds its revocation list.
    static func credentialsEnv(folder: String, trust: String, state: String) -> [String: String] {
        ["KIOSK_VERDICT": "credentials", "KIOSK_TRUST_DIR": trust, "KIOSK_REVOKED_FILE": folder + "/revoked",
         "STATE_DIRECTORY": state, "KIOSK_ROI": "0,0,1,1", "KIOSK_REPEAT_MS": "0", "KIOSK_GPIO_CHIP": "sim",
         "KIOSK_DOOR_LINE": "5", "KIOSK_DOOR_MS": "200", "KIOSK_STATS_S": "0", "KIOSK_REQUIRE_SYNCED_CLOCK": "0",
         "KIOSK_LOG_LEVEL": "debug"]
    }

    /// A replay folder at `dir`: an empty frame, then each code followed by an empty frame.
    static func replay(_ codes: [String], at dir: String) throws -> String {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var frames = [try FleetEndToEndTests.frame(nil)]
        for c in codes { frames += [try FleetEndToEndTests.frame(Array(c.utf8)), try FleetEndToEndTests.frame(nil)] }
        for (i, f) in frames.enumerated() { try Data(f).write(to: URL(fileURLWithPath: dir + String(format: "/%04d.pgm", i))) }
        return dir
    }
}
