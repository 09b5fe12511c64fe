// SPDX-License-Identifier: Apache-2.0
import Reader
import Glibc
import Kiosk
import Policy

/// `kiosk-dev charsets [--samples N]`: what `PayloadText` makes of short payloads in the legacy
/// character sets a QR code without an ECI carries: GB2312 (Chinese), Shift_JIS and
/// EUC-JP (Japanese: kana and kanji mixed as text is, kanji alone as names are, half-width
/// katakana, full-size kana with marks, small kana and long marks where words have them) and
/// ISO-8859-1 (words with accented letters), each of 1 to 10 characters, bare and
/// after ASCII ("No 4711 "). Each sample is drawn by codes of the character set itself (the
/// common characters: GB2312's level 1, JIS X 0208's kana and level 1), its text is glibc's iconv
/// reading of those bytes; the table counts the samples read as that text (right), left as bytes
/// (escaped: `data_hex`) and read as another text (wrong). Deterministic: the same figures every run.
enum CharsetBench {
    struct Sample {
        var bytes: [UInt8]
        var text: String
    }

    struct Tally {
        var right = 0, escaped = 0, wrong = 0
        var examples: [String] = []
    }

    static func main(_ args: [String]) -> Int32 {
        var samples = 2000
        var verbose = false
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--samples":
                i += 1
                guard i < args.count, let n = Int(args[i]), n >= 10 else { return DevCommand.usageError("--samples takes a number from 10") }
                samples = n
            case "--verbose": verbose = true
            default: return DevCommand.usageError("charsets: unexpected \(args[i])")
            }
            i += 1
        }
        var random = Random(seed: 37)
        print("| source | characters | samples | right | escaped | wrong |")
        print("|---|---|---|---|---|---|")
        var totals: [String: Tally] = [:]
        for source in ["GB2312", "Shift_JIS text", "Shift_JIS kanji", "Shift_JIS half-width", "EUC-JP text", "EUC-JP kanji", "ISO-8859-1"] {
            for n in [1, 2, 3, 4, 6, 10] {
                for ascii in [false, true] {
                    var t = Tally()
                    for _ in 0..<samples {
                        guard var s = sample(source, characters: n, random: &random) else { continue }
                        if ascii {
                            s.bytes = Array("No 4711 ".utf8) + s.bytes
                            s.text = "No 4711 " + s.text
                        }
                        let read = PayloadText.decode(s.bytes)
                        if read?.text == s.text {
                            t.right += 1
                        } else if read == nil {
                            t.escaped += 1
                        } else {
                            t.wrong += 1
                            if t.examples.count < 3 { t.examples.append("\(s.text) -> \(read!.text) (\(read!.charset.rawValue))") }
                        }
                    }
                    let name = ascii ? "\(source), after ASCII" : source
                    print("| \(name) | \(n) | \(t.right + t.escaped + t.wrong) | \(t.right) | \(t.escaped) | \(t.wrong) |")
                    if verbose { for e in t.examples { print("    wrong: \(e)") } }
                    totals[source, default: Tally()].right += t.right
                    totals[source, default: Tally()].escaped += t.escaped
                    totals[source, default: Tally()].wrong += t.wrong
                }
            }
        }
        print("")
        for (source, t) in totals.sorted(by: { $0.key < $1.key }) {
            print("\(source): right \(t.right), escaped \(t.escaped), wrong \(t.wrong)")
        }
        return ExitStatus.ok
    }

    /// A deterministic generator (an LCG), so that every run draws the same samples.
    struct Random {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
    }

    /// One sample of `n` characters from `source`, nil when iconv cannot convert it.
    static func sample(_ source: String, characters n: Int, random: inout Random) -> Sample? {
        var bytes: [UInt8] = []
        switch source {
        case "GB2312":
            for _ in 0..<n {
                let lead = 0xB0 + random.next(0xD7 - 0xB0 + 1)
                let trail = 0xA1 + random.next((lead == 0xD7 ? 0xF9 : 0xFE) - 0xA1 + 1)
                bytes += [UInt8(lead), UInt8(trail)]
            }
            return decoded(bytes, from: "GB2312")
        case "Shift_JIS text", "Shift_JIS kanji", "EUC-JP text", "EUC-JP kanji":
            let kanjiOnly = source.hasSuffix("kanji")
            for _ in 0..<n {
                let r = kanjiOnly ? 99 : random.next(100)
                if r < 50 {
                    bytes += [0xA4, UInt8(0xA1 + random.next(0xF3 - 0xA1 + 1))]  // hiragana
                } else if r < 65 {
                    bytes += [0xA5, UInt8(0xA1 + random.next(0xF6 - 0xA1 + 1))]  // katakana
                } else {
                    let lead = 0xB0 + random.next(0xCF - 0xB0 + 1)
                    bytes += [UInt8(lead), UInt8(0xA1 + random.next((lead == 0xCF ? 0xD3 : 0xFE) - 0xA1 + 1))]  // level 1
                }
            }
            guard let euc = decoded(bytes, from: "EUC-JP") else { return nil }
            if source.hasPrefix("EUC") { return euc }
            guard let sjis = encoded(euc.text, to: "SHIFT_JIS") else { return nil }
            return Sample(bytes: sjis, text: euc.text)
        case "Shift_JIS half-width":
            // Full-size kana ｱ to ﾜ (ﾝ not first), as words are written: after a kana that takes
            // them now and then a voiced or semi-voiced mark, after the i row a small ｬｭｮ, after
            // any the long mark ｰ.
            var k = 0
            while k < n {
                var kana = 0xB1 + random.next(0xDD - 0xB1 + 1)
                if kana == 0xDD && k == 0 { kana = 0xB1 }
                bytes.append(UInt8(kana))
                k += 1
                let voiceable = (0xB6...0xC4).contains(kana) || (0xCA...0xCE).contains(kana)
                if voiceable, k < n, random.next(4) == 0 {
                    bytes.append((0xCA...0xCE).contains(kana) && random.next(2) == 0 ? 0xDF : 0xDE)
                    k += 1
                } else if [0xB7, 0xBC, 0xC1, 0xC6, 0xCB, 0xD0, 0xD8].contains(kana), k < n, random.next(6) == 0 {
                    bytes.append(UInt8(0xAC + random.next(3)))
                    k += 1
                } else if k < n, random.next(10) == 0 {
                    bytes.append(0xB0)
                    k += 1
                }
            }
            return decoded(bytes, from: "SHIFT_JIS")
        default:
            // A lowercase word of n letters, 1 or 2 of them (one when n is 1) accented.
            let accented: [UInt8] = [0xE9, 0xE8, 0xE0, 0xFC, 0xF6, 0xE4, 0xDF, 0xE7, 0xF1, 0xF8, 0xE5, 0xED, 0xF3, 0xFA, 0xE2, 0xEA, 0xF4, 0xEE, 0xFB, 0xEB, 0xEF]
            bytes = (0..<n).map { _ in UInt8(0x61 + random.next(26)) }
            for _ in 0..<min(n, 1 + random.next(2)) { bytes[random.next(n)] = accented[random.next(accented.count)] }
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return Sample(bytes: bytes, text: text)
        }
    }

    static func decoded(_ bytes: [UInt8], from charset: String) -> Sample? {
        guard let out = iconvConvert(bytes, from: charset, to: "UTF-8") else { return nil }
        var s = String(decoding: out, as: UTF8.self)
        if charset == "SHIFT_JIS" {
            // As PayloadText reads Shift-JIS (CP932): 0x5C and 0x7E are ASCII (none is drawn here).
            s = String(String.UnicodeScalarView(s.unicodeScalars.map { $0 == "\u{A5}" ? "\\" : $0 == "\u{203E}" ? "~" : $0 }))
        }
        return Sample(bytes: bytes, text: s)
    }

    static func encoded(_ text: String, to charset: String) -> [UInt8]? {
        iconvConvert(Array(text.utf8), from: "UTF-8", to: charset)
    }

    static func iconvConvert(_ bytes: [UInt8], from: String, to: String) -> [UInt8]? {
        let cd = iconv_open(to, from)
        guard let cd, cd != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(cd) }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: bytes.count * 4 + 8)
        let produced: Int? = input.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                var inPtr: UnsafeMutablePointer<CChar>? = inBuf.baseAddress
                var inLeft = inBuf.count
                var outPtr: UnsafeMutablePointer<CChar>? = outBuf.baseAddress
                var outLeft = outBuf.count
                guard iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft) != -1, inLeft == 0 else { return nil }
                return outBuf.count - outLeft
            }
        }
        guard let produced else { return nil }
        return output[0..<produced].map { UInt8(bitPattern: $0) }
    }
}
