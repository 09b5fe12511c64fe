// SPDX-License-Identifier: Apache-2.0
import Commands
import Reader
import Glibc
import Platform
import Policy
import Scene

/// `kiosk-dev zoom`: what `KIOSK_ZOOM=1` buys, measured without a Camera Module.
///
/// A sensor picture (the HQ camera's 2028x1520 binned mode by default) with a QR code held in the
/// middle of the default ROI is made into a 640x480 stream two ways, as a camera's scaler does
/// (each output pixel the mean of the sensor pixels under it): the whole sensor (no zoom), and the
/// crop `SensorZoom` asks for (zoom). The kiosk's decoder then scans the ROI of each. For codes
/// from large to small (module pitch on the sensor), it prints which stream reads them and the
/// decode time: the smallest code each can read is the figure.
enum ZoomBench {
    static func main(_ args: [String]) -> Int32 {
        var sensorW = 2028, sensorH = 1520, runs = 5
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--sensor" where i + 1 < args.count:
                let p = args[i + 1].split(separator: "x")
                guard p.count == 2, let w = Int(p[0]), let h = Int(p[1]), w >= 640, h >= 480 else {
                    return DevCommand.usageError("--sensor needs WxH, at least 640x480")
                }
                sensorW = w; sensorH = h; i += 1
            case "--runs" where i + 1 < args.count:
                guard let n = Int(args[i + 1]), n > 0 else { return DevCommand.usageError("--runs needs a count") }
                runs = n; i += 1
            default:
                return DevCommand.usageError("zoom: unknown argument \(args[i])")
            }
            i += 1
        }
        let roi = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
        let sensor = PixelRect(x: 0, y: 0, width: sensorW, height: sensorH)
        let crop = SensorZoom.crop(for: roi, reference: sensor, maximum: sensor, streamWidth: 640, streamHeight: 480)
        let view = SensorZoom.view(of: crop, reference: sensor)
        let scanner = BarcodeScanner(symbologies: [.qrcode])
        let plainROI = Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480)
        let zoomROI = Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480, view: view)
        print("sensor \(sensorW)x\(sensorH), stream 640x480, ROI \(roi); zoom crop \(crop) (ROI \(zoomROI.width)x\(zoomROI.height) stream pixels instead of \(plainROI.width)x\(plainROI.height))")
        print("module on sensor  module in stream px (plain/zoom)  plain: read  ms   zoom: read  ms")
        let text = "KIOSK-ZOOM-0001"
        for pitch in [12, 10, 8, 6, 5, 4, 3, 2] {
            guard let code = try? QRCodeImage.render(text, moduleSize: pitch, quietZone: 4) else { continue }
            var picture = GrayImage(width: sensorW, height: sensorH, fill: 235)
            picture.paste(code, x: (sensorW - code.width) / 2, y: (sensorH - code.height) / 2)
            let plain = scaled(picture, from: sensor, width: 640, height: 480)
            let zoomed = scaled(picture, from: crop, width: 640, height: 480)
            let a = measure(scanner, plain, plainROI, text, runs)
            let b = measure(scanner, zoomed, zoomROI, text, runs)
            let plainPx = Double(pitch) * 640 / Double(sensorW), zoomPx = Double(pitch) * 640 / Double(crop.width)
            print(pad("\(pitch) px", 18) + pad("\(Format.fixed(plainPx, 2)) / \(Format.fixed(zoomPx, 2))", 33)
                  + pad(a.read ? "yes" : "no", 12) + pad(Format.fixed(a.ms, 1), 5) + pad(b.read ? "yes" : "no", 12) + Format.fixed(b.ms, 1))
        }
        return 0
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }

    /// Read or not, and the median decode time over `runs`.
    static func measure(_ scanner: BarcodeScanner, _ image: GrayImage, _ roi: PixelRect, _ text: String, _ runs: Int) -> (read: Bool, ms: Double) {
        var times: [Double] = []
        var read = false
        for _ in 0..<runs {
            let t0 = monotonicNanoseconds()
            let got = scanner.scan(image, in: roi)
            times.append(Double(monotonicNanoseconds() - t0) / 1e6)
            read = got.contains { $0.text == text }
        }
        return (read, times.sorted()[times.count / 2])
    }

    /// `rect` of `picture` scaled to width x height, each output pixel the mean of the sensor
    /// pixels under it (a box filter, as a camera's scaler averages).
    static func scaled(_ picture: GrayImage, from rect: PixelRect, width: Int, height: Int) -> GrayImage {
        var out = GrayImage(width: width, height: height)
        for oy in 0..<height {
            let y0 = rect.y + oy * rect.height / height, y1 = max(y0 + 1, rect.y + (oy + 1) * rect.height / height)
            for ox in 0..<width {
                let x0 = rect.x + ox * rect.width / width, x1 = max(x0 + 1, rect.x + (ox + 1) * rect.width / width)
                var sum = 0
                for y in y0..<y1 { for x in x0..<x1 { sum += Int(picture[x, y]) } }
                out[ox, oy] = UInt8(sum / ((y1 - y0) * (x1 - x0)))
            }
        }
        return out
    }
}
