// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// The pins file (`KIOSK_PINS_FILE`) and its hash lines (`scrypt$LOGN$R$P$SALT$KEY`): any bytes are
/// read whole or refused without a crash. A refusal names a line of the file (0: the whole file)
/// and one of the reader's own reasons, never a word of the line (it holds a hash). A file read
/// has subjects without spaces or control characters, hashes within the bounds that keep a check
/// short, and reads the same again; each hash written back as text reads as the same hash, and
/// the file written back from its entries reads as the same entries.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let h = PINHash(text) { check(h) }
    let file: PinsFile
    do throws(PinsFileError) {
        file = try PinsFile.parse(text)
    } catch {
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
        precondition((0...lines).contains(error.line), "\(error)")
        precondition(ownReason(error.reason), "a reason that is not the reader's own: \(error)")
        return 0
    }
    var rewritten = ""
    for (subject, entry) in file.entries.sorted(by: { $0.key < $1.key }) {
        precondition(entry.subject == subject && !subject.isEmpty && subject.utf8.count <= PinsFile.maxSubjectBytes)
        precondition(subject.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F } && subject.unicodeScalars.first != "#")
        precondition(entry.line >= 1)
        check(entry.hash)
        if let d = entry.duress { check(d) }
        rewritten += "\(subject) \(entry.hash.text)" + (entry.duress.map { " duress=\($0.text)" } ?? "") + "\n"
    }
    precondition((try? PinsFile.parse(text)) == file, "read differently twice")
    guard let again = try? PinsFile.parse(rewritten) else { preconditionFailure("the entries written back do not read") }
    precondition(again.count == file.count)
    for (subject, entry) in file.entries {
        let e = again.entry(for: subject)
        precondition(e?.hash == entry.hash && e?.duress == entry.duress, "an entry written back reads differently")
    }
    return 0
}

/// A hash in bounds whose text reads back as itself.
func check(_ h: PINHash) {
    precondition(PINHash.logNRange.contains(h.logN) && PINHash.rRange.contains(h.r) && PINHash.pRange.contains(h.p))
    precondition(PINHash.saltRange.contains(h.salt.count) && PINHash.keyRange.contains(h.key.count))
    precondition(PINHash(h.text) == h, "a hash's text reads differently")
}

/// The reasons PinsFile.parse gives: built from its constants, never from the file's words.
func ownReason(_ reason: String) -> Bool {
    let fixed = ["a file of at most \(PinsFile.maxBytes) bytes", "expected SUBJECT HASH [duress=HASH]",
                 "a SUBJECT of at most \(PinsFile.maxSubjectBytes) bytes without control characters",
                 "the HASH as \(PINHash.form)", "the third word as duress=HASH, the HASH as \(PINHash.form)"]
    if fixed.contains(reason) { return true }
    let prefix = "the subject of line ", suffix = " again"
    guard reason.hasPrefix(prefix), reason.hasSuffix(suffix) else { return false }
    let number = reason.dropFirst(prefix.count).dropLast(suffix.count)
    return !number.isEmpty && number.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
}

@_cdecl("FuzzPins_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
