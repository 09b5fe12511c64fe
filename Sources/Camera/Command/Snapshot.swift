// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Kiosk
import Platform
import Policy
import Systemd

/// `kiosk snapshot FILE.png [--sensor]`: how an installer aims the camera and places the ROI
/// from a laptop. Frames are skipped until the brightness settles (the camera's automatic
/// exposure), then one frame is written upright (or as the sensor sees it, with `--sensor`) with
/// the ROI outlined and a caption of its brightness and time.
enum Snapshot {
    /// At most this many frames are skipped waiting for the exposure to settle.
    static let settleFrameLimit = 90

    static func run(_ args: [String], environment: [String: String]) -> Int32 {
        var sensor = false
        var files: [String] = []
        for a in args {
            if a == "--sensor" { sensor = true } else if a.hasPrefix("-") { return KioskCommand.usageError("unknown option \(a)") } else { files.append(a) }
        }
        guard files.count == 1, let path = files.first else { return KioskCommand.usageError("snapshot needs one FILE.png") }
        guard let (config, _) = KioskCommand.readConfiguration(environment) else { return ExitStatus.config }
        let source = KioskService.makeSource(config, clock: MonotonicClock())
        do {
            _ = try source.open()
        } catch {
            KioskCommand.printError("kiosk snapshot: cannot open the camera \(config.camera): \(error)")
            return ExitStatus.failure
        }
        defer { source.close() }
        let estimator = BrightnessEstimator()
        var history: [Double] = []
        var picture: GrayImage?
        var brightness = 0.0
        var view = NormalizedRect.whole
        var frames = CommandFrames(source, command: "kiosk snapshot", camera: config.camera)
        while picture == nil {
            guard let next = frames.next() else { return CommandFrames.cameraFailureStatus }
            switch next {
            case .ended:
                KioskCommand.printError("kiosk snapshot: \(config.camera) gave no frame")
                return CommandFrames.cameraFailureStatus
            case .frame(let frame):
                let b = ambientBrightness(meanLuma: estimator.meanLuma(frame.luma), exposure: source.exposure)
                history.append(b)
                // Settled: the last five frames within 3% of each other (or the limit reached,
                // or a replay, which has no exposure to settle).
                let recent = history.suffix(5)
                let settled = recent.count == 5 && (recent.max()! - recent.min()!) <= 0.03 * max(1, recent.max()!)
                if settled || history.count >= settleFrameLimit || config.camera.isReplay {
                    brightness = b
                    view = frame.view
                    picture = sensor ? sensorPicture(frame.luma) : config.mount.uprightImage(of: frame.luma)
                }
            }
        }
        guard var image = picture else { return ExitStatus.failure }
        // A zoomed frame (KIOSK_ZOOM) shows part of the picture: the ROI is drawn where it lies in it.
        let roi = sensor
            ? config.mount.sensorROI(fromUpright: config.uprightROI, sensorWidth: image.width, sensorHeight: image.height, view: view)
            : config.uprightROI.relative(to: config.mount.uprightRegion(fromSensor: view)).pixels(width: image.width, height: image.height)
        image.outline(roi)
        let time = utcTimestamp()
        let caption = "BRIGHTNESS \(Format.fixed(brightness, 1))  " + time.uppercased() + (sensor ? "  SENSOR" : "")
        image = image.withCaption(caption)
        do {
            try ImageFile.writePNG(image, to: path)
        } catch {
            KioskCommand.printError("kiosk snapshot: \(error)")
            return ExitStatus.failure
        }
        print("brightness=\(Format.fixed(brightness, 1)) file=\(path) size=\(image.width)x\(image.height) roi=\(roi.description)")
        return ExitStatus.ok
    }

    static func sensorPicture(_ luma: LumaPlane) -> GrayImage {
        var out = GrayImage(width: luma.width, height: luma.height)
        for y in 0..<luma.height { for x in 0..<luma.width { out[x, y] = luma[x, y] } }
        return out
    }
}

extension GrayImage {
    /// A 2-pixel outline, white outside and black inside, visible on any background.
    mutating func outline(_ r: PixelRect) {
        guard !r.isEmpty else { return }
        for (inset, value) in [(0, UInt8(255)), (1, UInt8(0))] {
            let x0 = r.x + inset, y0 = r.y + inset, x1 = r.x + r.width - 1 - inset, y1 = r.y + r.height - 1 - inset
            guard x0 <= x1, y0 <= y1 else { continue }
            for x in x0...x1 {
                if y0 >= 0 && y0 < height && x >= 0 && x < width { self[x, y0] = value }
                if y1 >= 0 && y1 < height && x >= 0 && x < width { self[x, y1] = value }
            }
            for y in y0...y1 {
                if x0 >= 0 && x0 < width && y >= 0 && y < height { self[x0, y] = value }
                if x1 >= 0 && x1 < width && y >= 0 && y < height { self[x1, y] = value }
            }
        }
    }

    /// The image with a black band below it holding `text` in white (5x7 capitals, scale 2).
    func withCaption(_ text: String) -> GrayImage {
        let scale = 2, band = 7 * scale + 8
        var out = GrayImage(width: width, height: height + band, fill: 0)
        out.pixels.replaceSubrange(0..<(width * height), with: pixels)
        var x = 4
        for ch in text {
            guard let rows = CaptionFont.glyphs[ch] else { x += 6 * scale; continue }
            for (ry, bits) in rows.enumerated() {
                for rx in 0..<5 where bits & (0x10 >> rx) != 0 {
                    for dy in 0..<scale { for dx in 0..<scale {
                        let px = x + rx * scale + dx, py = height + 4 + ry * scale + dy
                        if px < width { out[px, py] = 255 }
                    } }
                }
            }
            x += 6 * scale
        }
        return out
    }
}

/// A 5x7 font of what captions need: digits, capitals and a little punctuation.
enum CaptionFont {
    static let glyphs: [Character: [UInt8]] = [
        "0": [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], "1": [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        "2": [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], "3": [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        "4": [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], "5": [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        "6": [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], "7": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        "8": [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], "9": [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        "A": [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11], "B": [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        "C": [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E], "D": [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        "E": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F], "F": [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        "G": [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F], "H": [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        "I": [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E], "J": [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        "K": [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11], "L": [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        "M": [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11], "N": [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        "O": [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "P": [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        "Q": [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D], "R": [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        "S": [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E], "T": [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        "U": [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], "V": [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        "W": [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A], "X": [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        "Y": [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04], "Z": [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        ":": [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00], ".": [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        "-": [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00], "+": [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        "/": [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00], " ": [0, 0, 0, 0, 0, 0, 0],
    ]
}
