// SPDX-License-Identifier: Apache-2.0
import Camera
import TestSupport
import Reader
import Foundation
import Kiosk
import Platform
import Policy

/// `kiosk-dev accuracy --corpus DIR [--json] [--passes a,b,...] [--budget-ms N]`: every image of a
/// folder-of-folders corpus (`FOLDER/N.png` with the expected text in `FOLDER/N.txt`; a folder
/// named `falsepositives` holds pictures of no code, where any read is wrong) through `kiosk
/// decode`'s path, through plain zbar (a fresh scanner, whole image, zbar's default configuration
/// for the same symbologies) and through zxing-cpp alone (whole image, zxing's own options and
/// text), at 0 and 90 degrees, in the same run.
public struct AccuracyBench {
    public struct Tally: Sendable {
        public var correct = 0, wrong = 0, missed = 0
        public var ms: [Double] = []
        public var count: Int { correct + wrong + missed }
        public var medianMs: Double { percentile(0.5) }
        public var p95Ms: Double { percentile(0.95) }
        func percentile(_ q: Double) -> Double {
            guard !ms.isEmpty else { return 0 }
            let sorted = ms.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
        }
        mutating func add(_ other: Tally) {
            correct += other.correct; wrong += other.wrong; missed += other.missed; ms += other.ms
        }
    }

    /// One row: a folder (or a symbology, or "total") at a rotation (nil: both), ours, plain zbar
    /// and zxing alone.
    public struct Row: Sendable {
        public var folder: String
        public var rotation: Int?
        public var ours = Tally()
        public var zbar = Tally()
        public var zxing = Tally()
    }

    public var rows: [Row] = []
    /// The same readings by the symbology each folder holds (both rotations together).
    public var symbologyRows: [Row] = []
    public var counters = DecodeCounters()
    /// Files read wrongly by our path (must stay empty), as "folder/file rotation: got (expected)".
    public var wrongReads: [String] = []
    public var missedReads: [String] = []
    /// Pictures with a code that neither plain zbar nor zxing alone read right, and whether ours
    /// did (what a door reader should read of what both libraries miss).
    public var missedByBoth: [(name: String, oursRead: Bool)] = []

    public static let rotations = [0, 90]
    /// The folder of pictures without a code.
    public static let noCodeFolder = "falsepositives"

    /// The symbology a corpus folder holds, from its name (`qrcode-3`, `pdf417-1`, ...); nil for
    /// the pictures of no code.
    static func symbology(ofFolder folder: String) -> String {
        if folder == noCodeFolder { return "(no code)" }
        return String(folder.split(separator: "-").first ?? Substring(folder))
    }

    /// Runs the bench over `root`.
    public static func run(root: String, symbologies: [Symbology], passes: [ExtraPass] = ExtraPass.kept,
                           budgetMs: Double = BarcodeScanner.defaultExtraBudgetMs) throws -> AccuracyBench {
        let fm = FileManager.default
        var bench = AccuracyBench()
        var totals = rotations.map { Row(folder: "total", rotation: $0) }
        var bySymbology: [String: Row] = [:]
        let zxingAlone = ZXingReader(symbologies: symbologies, minLineCount: 2)
        for folder in try fm.contentsOfDirectory(atPath: root).sorted() {
            let dir = (root as NSString).appendingPathComponent(folder)
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else { continue }
            let noCode = folder == noCodeFolder
            var folderRows = rotations.map { Row(folder: folder, rotation: $0) }
            let files = try fm.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".png") }.sorted {
                $0.compare($1, options: .numeric) == .orderedAscending
            }
            for png in files {
                let base = String(png.dropLast(4))
                let expected: String?
                if noCode {
                    expected = nil
                } else {
                    guard let data = fm.contents(atPath: (dir as NSString).appendingPathComponent(base + ".txt")) else { continue }
                    expected = expectedText(data)
                }
                let upright = try ImageFile.read(path: (dir as NSString).appendingPathComponent(png))
                for (index, rotation) in rotations.enumerated() {
                    let picture = rotation == 0 ? upright : rotatedClockwise90(upright)
                    // Ours: `kiosk decode`'s path, a fresh scanner.
                    let scanner = BarcodeScanner(symbologies: symbologies, extraPasses: passes, extraBudgetMs: budgetMs)
                    var t0 = monotonicNanoseconds()
                    let ours = scanner.scan(picture).map { $0.text ?? "<binary \($0.hex ?? "")>" }
                    let oursMs = Double(monotonicNanoseconds() - t0) / 1e6
                    bench.counters = bench.counters + scanner.counters
                    t0 = monotonicNanoseconds()
                    let plain = PlainZbar.read(picture, symbologies: symbologies)
                    let plainMs = Double(monotonicNanoseconds() - t0) / 1e6
                    t0 = monotonicNanoseconds()
                    let alone = zxingAlone.map { z in
                        picture.withLumaPlane { z.read($0, in: PixelRect(x: 0, y: 0, width: picture.width, height: picture.height)) }.map(\.zxingText)
                    } ?? []
                    let aloneMs = Double(monotonicNanoseconds() - t0) / 1e6
                    let name = "\(folder)/\(png) \(rotation)"
                    switch judge(ours, expected: expected) {
                    case .correct: folderRows[index].ours.correct += 1
                    case .wrong:
                        folderRows[index].ours.wrong += 1
                        bench.wrongReads.append("\(name): \(ours.filter { stripped($0) != expected }.map(\.debugDescription).joined(separator: ", ")) (expected \(expected?.debugDescription ?? "no code"))")
                    case .missed:
                        folderRows[index].ours.missed += 1
                        bench.missedReads.append(name)
                    }
                    tally(&folderRows[index].zbar, judge(plain, expected: expected))
                    tally(&folderRows[index].zxing, judge(alone, expected: expected))
                    if expected != nil, judge(plain, expected: expected) != .correct, judge(alone, expected: expected) != .correct {
                        bench.missedByBoth.append((name, judge(ours, expected: expected) == .correct))
                    }
                    folderRows[index].ours.ms.append(oursMs)
                    folderRows[index].zbar.ms.append(plainMs)
                    folderRows[index].zxing.ms.append(aloneMs)
                }
            }
            let key = symbology(ofFolder: folder)
            var sym = bySymbology[key] ?? Row(folder: key, rotation: nil)
            for i in rotations.indices {
                totals[i].ours.add(folderRows[i].ours)
                totals[i].zbar.add(folderRows[i].zbar)
                totals[i].zxing.add(folderRows[i].zxing)
                sym.ours.add(folderRows[i].ours)
                sym.zbar.add(folderRows[i].zbar)
                sym.zxing.add(folderRows[i].zxing)
            }
            bySymbology[key] = sym
            bench.rows += folderRows
        }
        bench.rows += totals
        bench.symbologyRows = bySymbology.keys.sorted().map { bySymbology[$0]! }
        return bench
    }

    static func tally(_ t: inout Tally, _ v: Verdict) {
        switch v {
        case .correct: t.correct += 1
        case .wrong: t.wrong += 1
        case .missed: t.missed += 1
        }
    }

    enum Verdict { case correct, wrong, missed }

    /// Wrong when any text read differs from the expected one (both with trailing CR/LF
    /// stripped); else correct when one was read. With no code expected (nil), any read is wrong
    /// and none is correct.
    static func judge(_ texts: [String], expected: String?) -> Verdict {
        guard let expected else { return texts.isEmpty ? .correct : .wrong }
        if texts.contains(where: { stripped($0) != expected }) { return .wrong }
        return texts.isEmpty ? .missed : .correct
    }

    /// The expected text: UTF-8 with trailing CR/LF stripped.
    public static func expectedText(_ data: Data) -> String {
        stripped(String(decoding: data, as: UTF8.self))
    }

    /// `text` without trailing CR and LF (a "\r\n" is one Character in Swift).
    public static func stripped(_ text: String) -> String {
        var s = Substring(text)
        while let last = s.unicodeScalars.last, last == "\n" || last == "\r" { s = Substring(s.unicodeScalars.dropLast()) }
        return String(s)
    }

    /// The picture turned a quarter clockwise, as a camera mounted turned would show it upright.
    static func rotatedClockwise90(_ image: GrayImage) -> GrayImage {
        image.withLumaPlane { Mount(rotation: .quarter).uprightImage(of: $0) }
    }

    // MARK: - output

    public var table: String {
        func cell(_ t: Tally) -> String {
            "\(t.correct)/\(t.count) (\(String(format: "%.1f", t.count == 0 ? 0 : 100 * Double(t.correct) / Double(t.count)))%) | \(t.wrong) | \(t.missed) | \(String(format: "%.1f", t.medianMs)) / \(String(format: "%.1f", t.p95Ms))"
        }
        let head = "correct | wrong | missed | ms median / p95"
        var lines = [
            "| folder | rot | ours \(head) | zbar \(head) | zxing \(head) |",
            "|---|---|" + String(repeating: "---|", count: 12),
        ]
        for r in rows {
            let name = r.folder == "total" ? "**total**" : r.folder
            lines.append("| \(name) | \(r.rotation.map(String.init) ?? "both") | \(cell(r.ours)) | \(cell(r.zbar)) | \(cell(r.zxing)) |")
        }
        lines += ["", "| symbology | rot | ours \(head) | zbar \(head) | zxing \(head) |", "|---|---|" + String(repeating: "---|", count: 12)]
        for r in symbologyRows {
            lines.append("| \(r.folder) | both | \(cell(r.ours)) | \(cell(r.zbar)) | \(cell(r.zxing)) |")
        }
        lines.append("")
        lines.append("(\(AccuracyBench.noCodeFolder): correct = nothing read, wrong = a read where there is no code)")
        return lines.joined(separator: "\n")
    }

    public var countersText: String {
        let c = counters
        var lines = ["regions \(c.regions): plain zbar read \(c.plainWins), structure test skipped \(c.skippedByStructureTest), extra passes \(c.extraRegions) (budget spent before the last pass: \(c.budgetExhausted)); unconfirmed 1D readings held back \(c.unconfirmed1D); places where readings disagreed \(c.contested)",
                     "| pass | runs | wins |", "|---|---|---|"]
        for p in ExtraPass.allCases where c.runs[p] != nil || c.wins[p] != nil {
            lines.append("| \(p.rawValue) | \(c.runs[p] ?? 0) | \(c.wins[p] ?? 0) |")
        }
        // A still gets every attempt after the passes.
        for a in Attempt.allCases where c.attemptRuns[a] != nil || c.attemptWins[a] != nil {
            lines.append("| attempt \(a.rawValue) | \(c.attemptRuns[a] ?? 0) | \(c.attemptWins[a] ?? 0) |")
        }
        return lines.joined(separator: "\n")
    }

    public var json: String {
        func tally(_ t: Tally) -> String {
            "{\"correct\":\(t.correct),\"wrong\":\(t.wrong),\"missed\":\(t.missed),\"median_ms\":\(String(format: "%.2f", t.medianMs)),\"p95_ms\":\(String(format: "%.2f", t.p95Ms))}"
        }
        func row(_ r: Row) -> String {
            "{\"folder\":\(LogEscape.jsonString(Array(r.folder.utf8))),\"rotation\":\(r.rotation.map(String.init) ?? "null"),\"ours\":\(tally(r.ours)),\"zbar\":\(tally(r.zbar)),\"zxing\":\(tally(r.zxing))}"
        }
        let rowsJSON = rows.map(row)
        let symbologyJSON = symbologyRows.map(row)
        let passes = ExtraPass.allCases.map { "\"\($0.rawValue)\":{\"runs\":\(counters.runs[$0] ?? 0),\"wins\":\(counters.wins[$0] ?? 0)}" }
            + Attempt.allCases.map { "\"attempt-\($0.rawValue)\":{\"runs\":\(counters.attemptRuns[$0] ?? 0),\"wins\":\(counters.attemptWins[$0] ?? 0)}" }
        return "{\"rows\":[\(rowsJSON.joined(separator: ","))],\"symbologies\":[\(symbologyJSON.joined(separator: ","))],\"contested\":\(counters.contested),\"passes\":{\(passes.joined(separator: ","))},\"plain_wins\":\(counters.plainWins),\"skipped_by_structure_test\":\(counters.skippedByStructureTest),\"extra_regions\":\(counters.extraRegions),\"budget_exhausted\":\(counters.budgetExhausted),\"unconfirmed_1d\":\(counters.unconfirmed1D)}"
    }
}

extension AccuracyBench {
    /// `kiosk-dev accuracy --corpus DIR [--json] [--passes a,b|none] [--budget-ms N] [--symbologies LIST] [--verbose]`;
    /// `arguments` are what follows `--corpus`. Exit 0, 1 when a text was read wrongly, 64 on usage errors.
    public static func main(corpusArguments arguments: [String]) -> Int32 {
        var folder: String?
        var json = false, verbose = false
        var passes = ExtraPass.kept
        var budget = BarcodeScanner.defaultExtraBudgetMs
        var symbologies = Configuration().symbologies
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--json": json = true
            case "--verbose": verbose = true
            case "--passes":
                i += 1
                guard i < arguments.count else { return DevCommand.usageError("--passes needs a list") }
                if arguments[i] == "none" { passes = []; break }
                var list: [ExtraPass] = []
                for name in arguments[i].split(separator: ",") {
                    guard let p = ExtraPass(rawValue: String(name)) else {
                        return DevCommand.usageError("--passes: unknown pass \(name) (\(ExtraPass.allCases.map(\.rawValue).joined(separator: ",")))")
                    }
                    list.append(p)
                }
                passes = list
            case "--symbologies":
                i += 1
                guard let chosen = DevCommand.symbologies(arguments, at: i) else { return DevCommand.usageError("--symbologies takes a KIOSK_SYMBOLOGIES list") }
                symbologies = chosen
            case "--budget-ms":
                i += 1
                guard i < arguments.count, let v = Double(arguments[i]), v >= 0 else { return DevCommand.usageError("--budget-ms needs a number of milliseconds") }
                budget = v
            default:
                if arguments[i].hasPrefix("--") || folder != nil { return DevCommand.usageError("accuracy --corpus: unexpected \(arguments[i])") }
                folder = arguments[i]
            }
            i += 1
        }
        guard let folder else { return DevCommand.usageError("accuracy --corpus needs a folder") }
        let bench: AccuracyBench
        do {
            bench = try AccuracyBench.run(root: folder, symbologies: symbologies, passes: passes, budgetMs: budget)
        } catch {
            DevCommand.printError("kiosk: \(folder): \(error)")
            return ExitStatus.failure
        }
        if json {
            print(bench.json)
        } else {
            print(bench.table)
            print("")
            print(bench.countersText)
            if verbose {
                for m in bench.missedReads { print("missed: \(m)") }
                for m in bench.missedByBoth { print("missed by zbar and zxing alone: \(m.name) (ours: \(m.oursRead ? "read" : "missed"))") }
            }
            for w in bench.wrongReads { print("WRONG: \(w)") }
        }
        return bench.wrongReads.isEmpty ? ExitStatus.ok : ExitStatus.failure
    }
}
