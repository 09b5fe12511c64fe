// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// The used-token store's files after a power cut may hold any bytes: the snapshot's reader and
/// the log's replay take them without a crash, the replay never reads past what it was given, and
/// what it kept writes back as records that replay to the same tokens.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = UsedTokens.parse(String(decoding: bytes, as: UTF8.self))
    var tokens = UsedTokens()
    let r = UsedTokenLog.replay(bytes, into: &tokens)
    precondition(r.goodLength >= 0 && r.goodLength <= bytes.count, "a good length past the bytes")
    precondition(r.records <= bytes.count, "more records than bytes")
    var again = UsedTokens()
    for key in tokens.entries.keys.sorted() {
        guard let record = UsedTokenLog.record(key, in: tokens) else { preconditionFailure("a kept key without its record") }
        let one = UsedTokenLog.replay(record, into: &again)
        precondition(one.records == 1 && one.tornBytes == 0, "a record that does not read back: \(key)")
    }
    precondition(again.entries == tokens.entries, "the records replay to other tokens")
    return 0
}

/// SwiftPM gives the executable its main under this name; libFuzzer runs from it.
@_cdecl("FuzzStore_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
