// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets for the kiosk's parsers of outside input. Built and run by `make fuzz`
// (not by `make test`): swift build -c release -Xswiftc -sanitize=fuzzer,address ...
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder: "main" in /work/main, anything in a clone.
let kiosk = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "kiosk-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "CFuzzDriver"),
        .executableTarget(name: "FuzzConfiguration", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        .executableTarget(name: "FuzzImageFile", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // Base45, zlib, CBOR, COSE_Sign1, CWT, KT1 and the verifier.
        .executableTarget(name: "FuzzCredential", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        .executableTarget(name: "FuzzLogEscape", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // The OSDP framer and peripheral on bus bytes.
        .executableTarget(name: "FuzzOSDP", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // The building's commands (MQTT payloads) and their answers.
        .executableTarget(name: "FuzzCommand", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // A door's access rules, read and decided.
        .executableTarget(name: "FuzzAccess", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // Pretix's signed tickets: the framing, the payload's protobuf, the verifier.
        .executableTarget(name: "FuzzTicket", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // A holidays calendar (iCalendar) through libical and the kiosk's shim.
        .executableTarget(name: "FuzzHolidays", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // Site bundles: the envelope, the site key's check, the payload's reader.
        .executableTarget(name: "FuzzBundle", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // The used-token store's snapshot and log as a power cut may leave them.
        .executableTarget(name: "FuzzStore", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // Passes bound to the holder's phone: the KH1: reader, COSE_Key, cnf, the verifier.
        .executableTarget(name: "FuzzPass", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // The door's phrases file, the quiet window, a phrase cache file.
        .executableTarget(name: "FuzzPhrases", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // Setup codes: the KS1: reader, the site key, the payload, what a code changes, the whole check.
        .executableTarget(name: "FuzzSetup", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // The pins file and its scrypt hash lines.
        .executableTarget(name: "FuzzPins", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
        // A Wiegand keypad's edges: 4-bit and 8-bit key bursts, the PIN's entry, KIOSK_KEYPAD.
        .executableTarget(name: "FuzzKeypad", dependencies: ["CFuzzDriver", .product(name: "KioskCore", package: kiosk)]),
    ],
    swiftLanguageModes: [.v5]
)
