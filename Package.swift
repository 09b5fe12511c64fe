// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// The kiosk: a headless barcode and QR-code scanner service for a door.
//
// Where things happen, by folder:
//   Camera   - a frame comes in (V4L2 through libv4l2, replay of image files)
//   Decoder  - zbar reads codes inside the region of interest
//   Kiosk    - decisions: configuration, duplicate filter, the frame loop, the log, the CLI
//   GPIO     - a GPIO line changes (buzzer, torch) through libgpiod
//   Scene    - a simulated camera scene for `kiosk demo` and the tests
//   C*       - thin C shims and system-library maps; no policy lives there
import PackageDescription

let package = Package(
    name: "kiosk",
    products: [
        .executable(name: "kiosk", targets: ["KioskMain"]),
        // For the fuzzers in Fuzz/, a package of their own that builds with -sanitize=fuzzer.
        .library(name: "KioskCore", targets: ["Kiosk", "Camera", "Decoder"]),
    ],
    targets: [
        .systemLibrary(name: "CZbar", path: "Sources/CZbar", pkgConfig: "zbar"),
        .systemLibrary(name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode"),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd"),
        .target(name: "CV4L2", path: "Sources/CV4L2", linkerSettings: [.linkedLibrary("v4l2")]),
        .target(name: "CGPIO", path: "Sources/CGPIO", linkerSettings: [.linkedLibrary("gpiod")]),
        .target(name: "CPNG", path: "Sources/CPNG", linkerSettings: [.linkedLibrary("png16")]),
        .target(name: "Camera", dependencies: ["CV4L2", "CPNG"]),
        .target(name: "Decoder", dependencies: ["CZbar", "Camera"]),
        .target(name: "GPIO", dependencies: ["CGPIO"]),
        .target(name: "Scene", dependencies: ["Camera", "Decoder", "CQRencode"]),
        .target(name: "Kiosk", dependencies: ["Camera", "Decoder", "GPIO", "Scene", "CSystemd"]),
        .executableTarget(name: "KioskMain", dependencies: ["Kiosk"]),
        // Test-only: zint draws 1D barcodes (EAN-13, Code 128) for the decoder's tests.
        .systemLibrary(name: "CZint", path: "Tests/CZint"),
        .target(name: "TestSupport", dependencies: ["Camera", "Scene", "GPIO", "CZint", "CQRencode"],
                path: "Tests/TestSupport"),
        .testTarget(name: "CameraTests", dependencies: ["Camera", "TestSupport"]),
        .testTarget(name: "DecoderTests", dependencies: ["Decoder", "Camera", "Scene", "TestSupport"]),
        .testTarget(name: "GPIOTests", dependencies: ["GPIO", "TestSupport"]),
        .testTarget(name: "KioskTests", dependencies: ["Kiosk", "Camera", "Decoder", "GPIO", "Scene", "TestSupport"]),
    ],
    swiftLanguageModes: [.v5]
)
