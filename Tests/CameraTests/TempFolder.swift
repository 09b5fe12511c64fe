// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A fresh folder under the system's temporary directory, removed by `remove()`.
struct TempFolder {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiosk-camera-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ bytes: [UInt8], to name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: file(name)))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
