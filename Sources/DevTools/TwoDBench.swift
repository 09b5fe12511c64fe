// SPDX-License-Identifier: Apache-2.0
import Camera
import Commands
import Reader
import Foundation
import Kiosk
import Platform
import Policy
import Scene
import ZintDrawing

/// `kiosk-dev twod [--dump DIR] [--budget-ms N]`: the 2D bench: Aztec, Data Matrix and
/// PDF417 codes as a door is shown them (tickets, boarding passes, parcels and badges), drawn by
/// zint and put through what a camera does to them: held at a slant, modules of 2-4 pixels, a
/// soft lens, sensor noise, a grey print, a phone's screen (`PhoneScreen`). 60 pictures of
/// 640x480, the same every run. Each is read by the kiosk's still path (`kiosk decode`: zxing-cpp
/// and the kiosk's retries, the whole picture) and by zxing-cpp alone as anyone calls it (the
/// accuracy bench's "zxing alone"); with `--dump` the pictures and their texts are written as
/// `N.png` and `N.txt`, for another reader (`harness/bench-2d/zxing.py`: zxing-cpp 2.x from PyPI,
/// `make bench-2d`).
enum TwoDBench {
    struct Case {
        var name: String
        var symbology: Symbology
        var text: String
        var picture: GrayImage
    }

    static func main(_ args: [String]) -> Int32 {
        var dump: String?
        var budget = BarcodeScanner.defaultExtraBudgetMs
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--dump":
                i += 1
                guard i < args.count else { return DevCommand.usageError("--dump takes a folder") }
                dump = args[i]
            case "--budget-ms":
                i += 1
                guard i < args.count, let v = Double(args[i]), v >= 0 else { return DevCommand.usageError("--budget-ms takes milliseconds") }
                budget = v
            default: return DevCommand.usageError("twod: unexpected \(args[i])")
            }
            i += 1
        }
        let cases: [Case]
        do { cases = try makeCases() } catch {
            DevCommand.printError("kiosk-dev twod: \(error)")
            return ExitStatus.failure
        }
        let symbologies = Configuration().symbologies
        let alone = ZXingReader(symbologies: symbologies, minLineCount: 2)!
        var oursRead: [Symbology: Int] = [:], aloneRead: [Symbology: Int] = [:], total: [Symbology: Int] = [:]
        var wrong = 0
        var ms: [Double] = []
        for (n, c) in cases.enumerated() {
            if let dump {
                do {
                    try ImageFile.writePNG(c.picture, to: "\(dump)/\(n + 1).png")
                    try c.text.write(toFile: "\(dump)/\(n + 1).txt", atomically: true, encoding: .utf8)
                } catch {
                    DevCommand.printError("kiosk-dev twod: \(dump): \(error)")
                    return ExitStatus.failure
                }
            }
            total[c.symbology, default: 0] += 1
            let t0 = monotonicNanoseconds()
            let ours = KioskCommand.decodeStill(c.picture, symbologies: symbologies, extraBudgetMs: budget).map { $0.text ?? "" }
            ms.append(Double(monotonicNanoseconds() - t0) / 1e6)
            if ours.contains(c.text) { oursRead[c.symbology, default: 0] += 1 }
            if ours.contains(where: { $0 != c.text }) { wrong += 1 }
            let z = c.picture.withLumaPlane { alone.read($0, in: PixelRect(x: 0, y: 0, width: c.picture.width, height: c.picture.height)) }
            let zRead = z.contains { $0.zxingText == c.text }
            if zRead { aloneRead[c.symbology, default: 0] += 1 }
            print("\(n + 1) \(c.name): ours \(ours.contains(c.text) ? "read" : "-") zxing \(ZXingReader.version) alone \(zRead ? "read" : "-")")
        }
        print("")
        print("| symbology | pictures | ours (zxing-cpp \(ZXingReader.version) and retries) | zxing-cpp \(ZXingReader.version) alone |")
        print("|---|---|---|---|")
        for s in [Symbology.aztec, .datamatrix, .pdf417] {
            print("| \(s.displayName) | \(total[s] ?? 0) | \(oursRead[s] ?? 0) | \(aloneRead[s] ?? 0) |")
        }
        print("| total | \(cases.count) | \(oursRead.values.reduce(0, +)) | \(aloneRead.values.reduce(0, +)) |")
        ms.sort()
        print("ours: \(wrong) wrong; ms median \(String(format: "%.1f", ms[ms.count / 2])), p95 \(String(format: "%.1f", ms[ms.count * 95 / 100]))")
        return wrong == 0 ? ExitStatus.ok : ExitStatus.failure
    }

    /// The bench's pictures: 20 of each symbology.
    static func makeCases() throws -> [Case] {
        var cases: [Case] = []
        let ticket = "TICKET 8842 ZURICH HB-BERN 2ND CLASS VALID 2026-12-03 ADULT 1 PRICE 57.00"
        let uic = String((0..<240).map { i in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/")[(i * 7 + i / 5) % 38] })
        let parcel = "JJD0140000012345678 DE 10115 BERLIN"
        let badge = "EMP-004711 DOE JOHN LEVEL-3"
        let pass = "M1DOE/JOHN            EABC123 FRAJFKLH 0400 123Y012A0001 100"
        // (look, module px, degrees): clean, soft and noisy, grey print, a phone's screen.
        let looks: [(String, Int, Double)] = [
            ("clean", 3, 0), ("clean", 2, 15), ("clean", 3, 35), ("clean", 4, 25),
            ("soft", 3, 0), ("soft", 3, 20), ("soft", 4, 40), ("soft", 2, 8),
            ("grey", 3, 10), ("grey", 4, 30), ("grey", 2, 0), ("grey", 3, 45),
            ("noisy", 3, 5), ("noisy", 4, 18), ("noisy", 2, 28),
            ("screen", 4, 0), ("screen", 4, 12), ("screen", 5, 30), ("screen", 3, 6), ("screen", 5, 22),
        ]
        for (k, (look, module, degrees)) in looks.enumerated() {
            for symbology in [Symbology.aztec, .datamatrix, .pdf417] {
                let text: String
                let kind: ZintImage.Kind
                var m = module, d = degrees
                switch symbology {
                case .aztec: (text, kind) = (k % 3 == 2 ? uic : ticket, .aztec)
                case .datamatrix: (text, kind) = (k % 2 == 0 ? parcel : badge, .dataMatrix)
                default:
                    // A boarding pass's PDF417 is wide: thinner modules, smaller slants.
                    (text, kind) = (pass, .pdf417)
                    m = max(1, module - 1)
                    d = degrees / 3
                }
                var code = try ZintImage.render(kind, text: text, moduleSize: look == "screen" ? 1 : m, quietZone: look == "screen" ? 2 : 3)
                if look == "screen" {
                    var screen = PhoneScreen(modules: code, modulePixels: 8, pitch: Double(m) / 8)
                    screen.degrees = d
                    code = screen.render()
                } else {
                    if look == "grey" { code = GrayImage(width: code.width, height: code.height, pixels: code.pixels.map { $0 < 128 ? 95 : 190 }) }
                    if d != 0 { code = rotated(code, degrees: d, fill: look == "grey" ? 190 : 255) }
                    if look == "soft" { code = code.blurred(radius: 1) }
                }
                var picture = ScriptedScene.window(width: 640, height: 480)
                picture.paste(code, x: 320 - code.width / 2, y: 240 - code.height / 2)
                addNoise(&picture, sigma: look == "noisy" ? 7 : 2, seed: UInt32(k * 3 + cases.count + 1))
                cases.append(Case(name: "\(symbology.displayName) \(look) \(m) px \(String(format: "%.0f", d)) degrees", symbology: symbology, text: text, picture: picture))
            }
        }
        return cases
    }

    /// Roughly Gaussian sensor noise (the sum of four uniforms), deterministic by `seed`.
    static func addNoise(_ image: inout GrayImage, sigma: Double, seed: UInt32) {
        var s = seed &* 2_654_435_761 | 1
        for i in image.pixels.indices {
            var sum = 0.0
            for _ in 0..<4 {
                s = s &* 1_664_525 &+ 1_013_904_223
                sum += Double(s >> 8) / Double(1 << 24) - 0.5
            }
            image.pixels[i] = UInt8(max(0, min(255, (Double(image.pixels[i]) + sum * sigma * 1.7).rounded())))
        }
    }
}
