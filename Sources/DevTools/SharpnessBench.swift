// SPDX-License-Identifier: Apache-2.0
import Reader
import Glibc
import Kiosk
import Platform
import Policy
import Scene

/// What `kiosk aim`'s figures cost a frame: `AimFigures.measure` over the default ROI
/// (the middle half each way) of a frame with a QR code in it, against the decode gate's look at the
/// same ROI, each the median of 200 runs. `kiosk aim` measures every frame; the service does not
/// measure at all (its frame loop is unchanged).
enum SharpnessBench {
    static func main(_ args: [String]) -> Int32 {
        guard args.isEmpty || args == ["--json"] else {
            DevCommand.printError("kiosk-dev sharpness: takes [--json]")
            return ExitStatus.usage
        }
        var rows: [(size: String, measureUs: Double, gateUs: Double)] = []
        for (w, h) in [(640, 480), (1280, 720)] {
            var picture = GrayImage(width: w, height: h, fill: 180)
            guard let code = try? QRCodeImage.render("https://example.org/ticket/0001", moduleSize: 4) else { return ExitStatus.failure }
            picture.paste(code, x: w / 2 - code.width / 2, y: h / 2 - code.height / 2)
            let roi = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5).pixels(width: w, height: h)
            var sink = 0.0
            let measure = median(200) {
                picture.withLumaPlane { sink += AimFigures.measure($0, roi: roi).sharpness }
            }
            var gate = DecodeGate()
            let gateCost = median(200) {
                picture.withLumaPlane { sink += Double(gate.evaluate($0, roi: roi).decodes ? 1 : 0) }
            }
            if sink == -1 { print("") }
            rows.append(("\(w)x\(h)", measure, gateCost))
        }
        if args == ["--json"] {
            print("[" + rows.map { "{\"size\":\"\($0.size)\",\"aim_figures_us\":\(Format.fixed($0.measureUs, 1)),\"decode_gate_us\":\(Format.fixed($0.gateUs, 1))}" }
                .joined(separator: ",") + "]")
        } else {
            print("kiosk aim's figures (brightness, clipped, sharpness, edges) over the default ROI, median of 200:")
            for r in rows {
                print("  \(r.size): \(Format.fixed(r.measureUs, 1)) us a frame (the decode gate on the same ROI: \(Format.fixed(r.gateUs, 1)) us)")
            }
        }
        return ExitStatus.ok
    }

    static func median(_ runs: Int, _ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let t0 = monotonicNanoseconds()
            body()
            times.append(Double(monotonicNanoseconds() - t0) / 1000)
        }
        times.sort()
        return times[runs / 2]
    }
}
