// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Camera
import Glibc

/// The input is an image file (PGM or PNG, or garbage): reading it must give an image of the size
/// it claims or an `ImageFileError`, never a crash.
let path = "/tmp/kiosk-fuzz-image-\(getpid())"

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return 0 }
    _ = write(fd, data, size)
    close(fd)
    if let image = try? ImageFile.read(path: path) {
        precondition(image.pixels.count == image.width * image.height)
    }
    return 0
}

/// SwiftPM gives the executable its main under this name; libFuzzer runs from it.
@_cdecl("FuzzImageFile_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
