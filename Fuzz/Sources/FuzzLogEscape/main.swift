// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Kiosk
import Policy

/// Any bytes, escaped for the log, must give one line with no control or separator characters,
/// in logfmt and in JSON, bare without spaces or quoted, with nothing drawn on its quotes.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for line in [LogEscape.logfmt(.bytes(bytes)), LogEscape.jsonString(bytes)] {
        for scalar in line.unicodeScalars {
            let v = scalar.value
            precondition(v >= 0x20 && v != 0x7F && !(0x80..<0xA0).contains(v) && v != 0x2028 && v != 0x2029,
                         "control or separator U+\(String(v, radix: 16)) in the log")
        }
        // Quoted is a matter of scalars: a Character may hold the quote and a mark after it.
        let quoted = line.unicodeScalars.first == "\"" && line.unicodeScalars.last == "\""
        precondition(quoted || !line.unicodeScalars.contains(" "), "a space in a bare value")
        // And nothing the stranger sent may join the quotes into one grapheme (a terminal would
        // draw it on the quote): the escaper escapes what would (LogEscape.joinsPunctuation).
        precondition(!quoted || line.first == "\"" && line.last == "\"", "a scalar joins the quote: \(bytes)")
    }
    return 0
}

/// SwiftPM gives the executable its main under this name; libFuzzer runs from it.
@_cdecl("FuzzLogEscape_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
