// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Kiosk
import Policy

/// The input is an environment: lines of NAME=VALUE. Any input must give a configuration or a
/// list of errors, never a crash, and errors must name a variable that was given.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var environment: [String: String] = [:]
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        guard let eq = line.firstIndex(of: "=") else { continue }
        environment[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    let reading = Configuration.read(environment: environment, isExecutableFile: { $0.hasPrefix("/usr/bin/") })
    for error in reading.errors where environment[error.variable] == nil && error.value != "(default)" {
        fatalError("an error names \(error.variable), which was not given")
    }
    precondition(reading.settings.count == Configuration.variables.count)
    return 0
}

/// SwiftPM gives the executable its main under this name; libFuzzer runs from it.
@_cdecl("FuzzConfiguration_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
