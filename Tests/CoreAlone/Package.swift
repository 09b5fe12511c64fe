// swift-tools-version:6.0
// SPDX-License-Identifier: Apache-2.0
// The core (every Sources/<Concern>/Policy) and its tests as a package of their own: `make test-core` builds and
// runs them with nothing else, and checks that the test program links no C library of the kiosk's
// (zbar, libv4l2, libgpiod, libpng, libsystemd, libqrencode). The folders are symlinks to the
// real ones (Sources/Policy/<Concern> -> Sources/<Concern>/Policy).
import PackageDescription

let package = Package(
    name: "kiosk-core",
    targets: [
        .target(name: "Policy"),
        .testTarget(name: "PolicyTests", dependencies: ["Policy"]),
    ],
    swiftLanguageModes: [.v6]
)
