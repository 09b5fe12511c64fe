// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// The kiosk: a headless barcode and QR-code scanner service for a door.
//
// Where things happen: one folder a concern, its pure core and its shell side by side.
//   Sources/<Concern>/           the concern's own module: its devices, files and libraries
//   Sources/<Concern>/Policy/    its pure core: no C, no Foundation, no import at all; every
//                                concern's Policy/ folder is the one module Policy, built and
//                                tested alone by `make test-core`
//   Sources/<Concern>/Service/   its part of the running service (module Kiosk)
//   Sources/<Concern>/Command/   its commands (module Commands)
// A core type that decides for a shell type is named `<Shell>Policy` (TorchPolicy decides for
// Torch, StrikePolicy for Strike, DoorWatchPolicy for DoorWatch, VerdictWaitPolicy for VerdictWait,
// FleetCommandsPolicy for FleetCommands).
//
// The data path, left to right:
//   Camera      - a frame comes in (V4L2 through libv4l2, libcamera through a dlopen'd plugin,
//                 replay of image files, PNG/PGM); Policy/: geometry, mounts, brightness, the
//                 camera's focus and exposure controls, kiosk aim's figures
//   Reader      - zbar and zxing-cpp read codes inside the region of interest; Policy/: the decode
//                 gate, symbols and their text, repeats, the two readers' agreement
//   Torch       - when the torch goes on and off (Policy/), the line that lights it (Service/)
//   Door        - where a decision is made for the door: verdicts, the strike, the door's inputs,
//                 beeps, Wiegand, access rules and modes (Policy/); the strike, the watch on the
//                 door contact, the scan program, the modes' socket (Service/)
//   Credentials - signed (COSE/CWT), rotating (TOTP) and pretix credentials and site bundles,
//                 verified offline: the trust directory, the used-token store, the verifier off the
//                 frame loop; Policy/: Base45, CBOR, COSE, claims, used tokens, bundles
//   OSDP        - the access controller's RS-485 bus: the kiosk as an OSDP reader (PD) with Secure
//                 Channel; Policy/: packets and the peripheral's decisions
//   Keypad      - the door's keypad: a USB keypad through libevdev, a Wiegand keypad on two inputs;
//                 Policy/: key bursts, a PIN's entry, its hash, the pins file, the lockout, duress;
//                 Service/: the PIN's gate between the verifier and the door
//   Fleet       - the building's broker: scan events, state and health over libmosquitto, a spool
//                 that keeps scans while the broker is away; Policy/: MQTT messages, Home
//                 Assistant, the building's commands
//   Speech      - the door's words: phrases rendered once by espeak-ng into a cache, played through
//                 libasound (loaded on first use) after a verdict's beeps; Policy/: the phrases and
//                 their keys, the phrases file, the quiet window, the speaker's cuts and back-off
//   GPIO        - where a line changes (buzzer, torch, strike, LEDs) through libgpiod
//   Setup       - a new door joins its site from one signed code (`KS1:`): the window after boot
//                 and the exit button, the code's check and what it changes (Policy/); the kiosk's
//                 side off the frame loop (Service/); `kiosk setup --apply/--show/--forget-site` (Command/)
//   Kiosk       - the service: the composition root, the frame loop, stats and metrics, signals,
//                 the log's output; Policy/: every KIOSK_* variable (one table), log text, formats
//   Commands    - the command line: it parses arguments and calls the service (run, demo, check,
//                 doctor)
//   Platform    - locks, monotonic waits, threads, files: the POSIX services, without Foundation
//   Systemd     - sd_notify and the journal
//   Crypto      - hashes, signatures and ciphers: OpenSSL's libcrypto, loaded on first use
//   Scene       - a simulated camera scene for `kiosk demo` and the tests
//   DevTools    - bench and accuracy, in `kiosk-dev` (never packaged); it links Tests/TestSupport for
//                 plain zbar, the reference reader the accuracy bench and the tests share
//   C*          - thin C shims and system-library maps; no policy lives there. A library loaded on
//                 first use goes through CPlatform's kiosk_dlopen.h (which names no library)
import Foundation
import PackageDescription

/// What a target built from several concerns' folders (`path: "Sources"`) leaves out: every folder
/// and file under Sources/ that is not one of its `sources` nor holds one (SwiftPM warns of each
/// file it is not told about).
func elsewhere(_ sources: [String]) -> [String] {
    let root = Context.packageDirectory + "/Sources"
    let names = { (folder: String) in ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? []).sorted() }
    return names("").flatMap { top -> [String] in
        if sources.contains(top) { return [] }
        if !sources.contains(where: { $0.hasPrefix(top + "/") }) { return [top] }
        return names(top).map { top + "/" + $0 }.filter { !sources.contains($0) }
    }
}

let policy = ["Camera/Policy", "Reader/Policy", "Torch/Policy", "Door/Policy", "Credentials/Policy", "OSDP/Policy", "Fleet/Policy", "Speech/Policy", "Keypad/Policy", "Kiosk/Policy", "Setup/Policy"]
let service = ["Kiosk", "Torch/Service", "Door/Service", "Credentials/Service", "OSDP/Service", "Fleet/Service", "Reader/Service", "Speech/Service", "Keypad/Service", "Setup/Service"]
let commands = ["Commands", "Camera/Command", "Reader/Command", "Door/Command", "Credentials/Command", "OSDP/Command", "Setup/Command"]

let package = Package(
    name: "kiosk",
    products: [
        .executable(name: "kiosk", targets: ["KioskMain"]),
        // The development tools (bench, accuracy): built here, never packaged.
        .executable(name: "kiosk-dev", targets: ["KioskDev"]),
        // For the fuzzers in Fuzz/, a package of their own that builds with -sanitize=fuzzer.
        .library(name: "KioskCore", targets: ["Policy", "Kiosk", "Camera", "Reader", "Credentials", "CZlib", "Crypto"]),
    ],
    targets: [
        .systemLibrary(name: "CZbar", path: "Sources/CZbar", pkgConfig: "zbar"),
        .systemLibrary(name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode"),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd"),
        .target(name: "CV4L2", path: "Sources/CV4L2", linkerSettings: [.linkedLibrary("v4l2")]),
        .target(name: "CGPIO", path: "Sources/CGPIO", linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "CPNG", path: "Sources/CPNG", linkerSettings: [.linkedLibrary("png16")]),
        // The loader of the libcamera plugin (plugins/libcamera/, dlopen'd): libcamera is never linked.
        .target(name: "CLibcamera", dependencies: ["CPlatform"], path: "Sources/CLibcamera", linkerSettings: [.linkedLibrary("dl")]),
        // zxing-cpp (C++) behind a C API: the one place that knows 1.4 (bookworm) from 2.3 (trixie).
        .target(name: "CZXing", path: "Sources/CZXing", linkerSettings: [.linkedLibrary("ZXing"), .linkedLibrary("stdc++")]),
        // OpenSSL's libcrypto behind a C API, dlopen()ed on first use (credentials, OSDP): never linked.
        .target(name: "CCrypto", dependencies: ["CPlatform"], path: "Sources/CCrypto", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "Crypto", dependencies: ["CCrypto", "Platform"]),
        // The pure core: every concern's Policy/ folder, one module with no dependency.
        .target(name: "Policy", path: "Sources", exclude: elsewhere(policy), sources: policy),
        // zlib's inflate with a cap (credentials' payloads). libz is already linked by libpng.
        .target(name: "CZlib", path: "Sources/CZlib", linkerSettings: [.linkedLibrary("z")]),
        // Signed and rotating credentials verified offline: trust, store, verifier.
        // libical loaded on first use (dlopen): the holidays' iCalendar file read and expanded.
        .target(name: "CICal", dependencies: ["CPlatform"], path: "Sources/CICal", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "Credentials", dependencies: ["Policy", "Platform", "CPlatform", "Crypto", "CZlib", "CICal"], exclude: ["Policy", "Service", "Command"]),
        .target(name: "CPlatform", path: "Sources/CPlatform"),
        .target(name: "Platform", dependencies: ["CPlatform"]),
        .target(name: "Camera", dependencies: ["Policy", "Platform", "CV4L2", "CPNG", "CLibcamera"], exclude: ["Policy", "Command"]),
        .target(name: "Reader", dependencies: ["Policy", "Platform", "CZbar", "CZXing", "Camera"], exclude: ["Policy", "Service", "Command"]),
        .target(name: "GPIO", dependencies: ["CGPIO", "Platform"]),
        .target(name: "Scene", dependencies: ["Policy", "Platform", "Camera", "Reader", "CQRencode"]),
        .target(name: "Systemd", dependencies: ["CSystemd"]),
        // libmosquitto loaded on first use (dlopen): its mosquitto_* names defined as
        // trampolines, mosquitto.h's types as they are; nothing links it.
        .target(name: "CMosquitto", dependencies: ["CPlatform"], path: "Sources/CMosquitto", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "Fleet", dependencies: ["Policy", "Platform", "CMosquitto"], exclude: ["Policy", "Service"]),
        // ALSA's libasound loaded on first use (dlopen): a PCM opened, samples written; nothing links it.
        .target(name: "CALSA", dependencies: ["CPlatform"], path: "Sources/CALSA", linkerSettings: [.linkedLibrary("dl")]),
        // The door speaks: phrases rendered by espeak-ng (its program) into a cache, played through ALSA.
        .target(name: "Speech", dependencies: ["Policy", "Platform", "CALSA"], exclude: ["Policy", "Service"]),
        // libevdev loaded on first use (dlopen): a USB keypad's events, the device grabbed.
        .target(name: "CEvdev", dependencies: ["CPlatform"], path: "Sources/CEvdev", linkerSettings: [.linkedLibrary("dl")]),
        // The door's keypad: an input-event device through libevdev, a Wiegand keypad on two GPIO inputs.
        .target(name: "Keypad", dependencies: ["Policy", "Platform", "GPIO", "CEvdev"], exclude: ["Policy", "Service"]),
        // The service: its own files and every concern's Service/ folder.
        .target(name: "Kiosk", dependencies: ["Policy", "Platform", "Camera", "Reader", "GPIO", "Systemd", "Credentials", "Crypto", "Fleet", "OSDP", "Scene", "Speech", "Keypad"],
                path: "Sources", exclude: elsewhere(service) + ["Kiosk/Policy"], sources: service),
        // The kiosk as an OSDP reader: the serial port, the link's thread, the key store.
        .target(name: "OSDP", dependencies: ["Policy", "Platform", "Crypto"], exclude: ["Policy", "Service", "Command"]),
        // The command line: its own files and every concern's Command/ folder.
        .target(name: "Commands", dependencies: ["Kiosk", "Credentials", "Crypto", "Policy", "Platform", "Camera", "Reader", "GPIO", "Systemd", "Scene", "Fleet", "OSDP", "Speech"],
                path: "Sources", exclude: elsewhere(commands), sources: commands),
        // The release kiosk is linked by lld with packed relative relocations (DT_RELR, glibc 2.36 and
        // later: bookworm and trixie): 657 kB of relocations become 5 kB, and an idle kiosk's RSS is
        // about 0.7 MB smaller (docs/design/memory.md). Both toolchains ship lld (swift.org's, trixie's swiftlang).
        // And with the functions an idle kiosk and a decode run first in its text (hot-functions.order,
        // written by harness/memory/hot-functions.sh): 2.4 MB of its text resident instead of 4.3 MB.
        // And exporting none of its own names: the static standard library's link arguments
        // (static-stdlib-args.lnk) ask for --export-dynamic, which put 8,463 of the kiosk's Swift
        // names in its dynamic symbol table (0.7 MB of the file, 0.6-1.0 MB of an idle kiosk's RSS,
        // docs/design/memory.md); nothing looks them up (the libcamera plugin is given pointers). lld
        // takes the last of the pair, and these come after the .lnk's.
        .executableTarget(name: "KioskMain", dependencies: ["Commands", "Platform"], exclude: ["hot-functions.order"],
                          linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                                         "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/KioskMain/hot-functions.order",
                                                         "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "--no-export-dynamic"],
                                                        .when(configuration: .release))]),
        .target(name: "DevTools", dependencies: ["Commands", "Kiosk", "Credentials", "Crypto", "OSDP", "GPIO", "Platform", "Policy", "Camera", "Reader", "Scene", "Speech", "CZXing", "ZintDrawing", "TestSupport"]),
        .executableTarget(name: "KioskDev", dependencies: ["DevTools"]),
        // zint draws barcodes (EAN-13, Code 128; Aztec, Data Matrix, PDF417) for the decoder's tests
        // and the bench's workloads (kiosk-dev only: the shipped kiosk never links it).
        .systemLibrary(name: "CZint", path: "Tests/CZint"),
        .target(name: "ZintDrawing", dependencies: ["Policy", "CZint"], path: "Tests/ZintDrawing"),
        .target(name: "TestSupport", dependencies: ["Camera", "Scene", "GPIO", "Platform", "Policy", "Reader", "CZbar", "CZint", "CQRencode", "ZintDrawing"],
                path: "Tests/TestSupport"),
        // The core's tests: nothing but the core, so no C library is linked.
        .testTarget(name: "PolicyTests", dependencies: ["Policy"]),
        .testTarget(name: "CameraTests", dependencies: ["Camera", "Platform", "TestSupport"]),
        .testTarget(name: "ReaderTests", dependencies: ["Reader", "CZbar", "CZXing", "Policy", "Platform", "Camera", "Scene", "TestSupport"]),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO", "Platform", "TestSupport"]),
        .testTarget(name: "KioskTests", dependencies: ["Kiosk", "Commands", "Systemd", "Platform", "Policy", "Camera", "Reader", "GPIO", "Scene", "Keypad", "TestSupport"]),
        // A kiosk's MQTT side in a process of its own, for the tests that kill it (SIGKILL).
        .executableTarget(name: "FleetTestChild", dependencies: ["Fleet", "Policy", "Platform"], path: "Tests/FleetTestChild"),
        .testTarget(name: "FleetTests", dependencies: ["Fleet", "Policy", "Platform", "TestSupport", "FleetTestChild"]),
        // The speaker against ALSA's own file PCM and espeak-ng; what it said, heard by pocketsphinx.
        .testTarget(name: "SpeechTests", dependencies: ["Speech", "Policy", "Platform", "TestSupport"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "Policy", "TestSupport"]),
        .testTarget(name: "CredentialsTests", dependencies: ["Credentials", "Crypto", "CZlib", "Policy", "Platform", "TestSupport"]),
        .testTarget(name: "DevToolsTests", dependencies: ["DevTools", "Commands", "Kiosk", "Policy", "Camera", "Reader", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
