// SPDX-License-Identifier: Apache-2.0
import Commands
import Glibc
import Platform

// libcamera writes its own log to stderr (the journal, under systemd): INFO lines and colour
// codes by default. Only its errors, uncoloured, unless the operator says otherwise
// (LIBCAMERA_LOG_LEVELS=*:WARN in a drop-in). Set here, before any thread exists (setenv is not
// thread-safe).
if getenv("KIOSK_CAMERA").map({ String(cString: $0).hasPrefix("libcamera") }) == true {
    setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0)
    setenv("LIBCAMERA_LOG_NO_COLOR", "1", 0)
}
exit(KioskCommand.main(arguments: CommandLine.arguments, environment: Files.environment()))
