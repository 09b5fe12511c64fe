// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// The phrases file (`KIOSK_PHRASES_FILE`), the quiet window and a phrase cache file: any bytes are
/// read or refused without a crash. A refusal names a line of the file (0: the whole file) and,
/// for an unknown key, that key as it stands on the line; phrases read are known keys with a
/// non-empty text of at most 300 bytes without control characters, read the same again, and
/// merged over the defaults keep every key. A cache file read back writes the same bytes.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let p = RenderedPhrase(bytes: bytes) { precondition(RenderedPhrase(bytes: p.bytes) == p, "a cache file read back differently") }
    if let w = QuietWindow(parsing: text) {
        precondition((0..<1440).contains(w.start) && (0...1440).contains(w.end) && w.start != w.end)
        precondition(QuietWindow(parsing: w.description) == w)
        for m in stride(from: 0, to: 1440, by: 7) { _ = w.contains(minute: m) }
    }
    let phrases: [String: String]
    do throws(PhrasesFileError) {
        phrases = try PhrasesFile.parse(text)
    } catch {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
        precondition((0...lines).contains(error.line) && !error.reason.isEmpty, "\(error)")
        if let key = error.key { precondition(error.line > 0 && !key.isEmpty && !key.contains(" "), "\(error)") }
        return 0
    }
    for (key, phrase) in phrases {
        precondition(SpeechPhrases.keys.contains(key), key)
        precondition(!phrase.isEmpty && phrase.utf8.count <= PhrasesFile.maxTextBytes)
        precondition(!phrase.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        precondition(phrase.first != " " && phrase.last != " ")
    }
    precondition((try? PhrasesFile.parse(text)) == phrases, "read differently twice")
    let merged = SpeechPhrases.merged(phrases)
    precondition(merged.count == SpeechPhrases.keys.count)
    for (key, phrase) in phrases { precondition(merged[key] == phrase) }
    return 0
}

@_cdecl("FuzzPhrases_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
