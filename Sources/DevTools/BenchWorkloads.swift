// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Kiosk
import Policy
import Scene
import ZintDrawing

/// The deterministic scenes `kiosk-dev bench` measures, generated in-process (no files, no camera).
/// Every workload is a `ScriptedScene` (the scene the demo and the tests use) with its lighting;
/// the same name and size always give the same frames.
public struct BenchWorkload {
    public enum Kind: String, CaseIterable, Codable, Sendable {
        /// (a) Nobody at the door: the empty window, sensor noise.
        case empty
        /// (b) A brick wall behind the window, people in patterned coats walking past with their
        /// shadows; never a code.
        case motion
        /// (c) A QR code, an EAN-13 and a Code 128 each brought in (small, then near), held,
        /// taken away; twice each, with other payloads the second time; then a rail ticket's
        /// Aztec code and a boarding pass's PDF417 (zint draws them; zxing reads them).
        case presentations
        /// (d) Dusk: a dark room, automatic exposure at a high gain (strong noise), a QR code and
        /// an EAN-13 presented.
        case lowLight = "low-light"

        public var letter: String {
            switch self {
            case .empty: return "a"
            case .motion: return "b"
            case .presentations: return "c"
            case .lowLight: return "d"
            }
        }
    }

    /// A code shown in the workload, and the frame from which it is fully in view (near).
    public struct Presentation: Sendable {
        public var payload: String
        public var symbology: Symbology
        public var firstFrame: Int
        public var lastFrame: Int
    }

    public let kind: Kind
    public let width: Int
    public let height: Int
    public let fps: Double
    public let scene: ScriptedScene
    public let presentations: [Presentation]
    public var frames: Int { Int((scene.duration * fps).rounded(.up)) }

    public static let roi = NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5)

    public init(_ kind: Kind, width: Int, height: Int, fps: Double = 30) throws {
        self.kind = kind
        self.width = width
        self.height = height
        self.fps = fps
        let scale = max(1, width / 640)
        var steps: [ScriptedScene.Step] = [ScriptedScene.Step(start: 0, narration: "empty")]
        var presentations: [Presentation] = []
        var lighting = Lighting { _ in 1.0 }
        lighting.noise = 2
        var duration: Double
        let centre = NormalizedPoint(x: 0.5, y: 0.5)

        /// One presentation from frame `f`: 2 frames at a distance (half size), then held near for
        /// `hold` frames, then gone. Returns the frame after it.
        func present(_ payload: String, _ symbology: Symbology, from f: Int, hold: Int, extra: [ScriptedScene.Placement] = []) throws -> Int {
            let far: GrayImage, near: GrayImage
            switch symbology {
            case .qrcode:
                far = try QRCodeImage.render(payload, moduleSize: 2 * scale)
                near = try QRCodeImage.render(payload, moduleSize: 4 * scale)
            case .ean13:
                far = try Barcode1DImage.ean13(payload, moduleWidth: scale, height: 40 * scale)
                near = try Barcode1DImage.ean13(payload, moduleWidth: 2 * scale, height: 80 * scale)
            case .aztec:
                far = try ZintImage.render(.aztec, text: payload, moduleSize: 2 * scale, quietZone: 2)
                near = try ZintImage.render(.aztec, text: payload, moduleSize: 4 * scale, quietZone: 2)
            case .pdf417:
                far = try ZintImage.render(.pdf417, text: payload, moduleSize: scale, quietZone: 2)
                near = try ZintImage.render(.pdf417, text: payload, moduleSize: 2 * scale, quietZone: 2)
            default:
                far = try Barcode1DImage.code128(payload, moduleWidth: scale, height: 40 * scale)
                near = try Barcode1DImage.code128(payload, moduleWidth: 2 * scale, height: 80 * scale)
            }
            let t = { (frame: Int) in Double(frame) / fps }
            steps.append(.init(start: t(f), narration: "\(payload) far", codes: extra + [.init(picture: far, centre: centre)]))
            steps.append(.init(start: t(f + 2), narration: "\(payload) near", codes: extra + [.init(picture: near, centre: centre)]))
            steps.append(.init(start: t(f + 2 + hold), narration: "\(payload) away", codes: extra))
            presentations.append(Presentation(payload: payload, symbology: symbology, firstFrame: f, lastFrame: f + 1 + hold))
            return f + 2 + hold
        }

        switch kind {
        case .empty:
            duration = 6
        case .motion:
            duration = 8
            let wall = BenchWorkload.brickWall(width: width, height: height)
            let coat = BenchWorkload.coat(width: width * 3 / 10, height: height * 9 / 10)
            let backdrop = ScriptedScene.Placement(picture: wall, centre: centre)
            steps = [.init(start: 0, narration: "the wall", codes: [backdrop])]
            // Two passers-by, 2 s each across the frame, with a shadow trailing on the right.
            let frames = Int(duration * fps)
            var f = 0
            for passStart in [Int(1 * fps), Int(4.5 * fps)] {
                for i in 0..<Int(2 * fps) {
                    f = passStart + i
                    let x = -0.2 + 1.4 * Double(i) / (2 * fps)
                    steps.append(.init(start: Double(f) / fps, narration: "passing",
                                       codes: [backdrop, .init(picture: coat, centre: NormalizedPoint(x: x, y: 0.55))]))
                    lighting.shadows.append((from: Double(f) / fps, to: Double(f + 1) / fps,
                                             area: NormalizedRect(x: max(0, min(1, x + 0.15)), y: 0.1, width: 0.25, height: 0.9),
                                             factor: 0.55))
                }
                steps.append(.init(start: Double(f + 1) / fps, narration: "the wall", codes: [backdrop]))
            }
            precondition(f < frames)
        case .presentations:
            var f = 20
            for round in 1...2 {
                f = try present("KIOSK-QR-000\(round)", .qrcode, from: f, hold: 30) + 20
                f = try present(round == 1 ? "400638133393" : "978020137962", .ean13, from: f, hold: 30) + 20
                f = try present("KIOSK-C\(round)", .code128, from: f, hold: 30) + 20
            }
            f = try present("TICKET 8842 ZURICH HB-BERN 2ND", .aztec, from: f, hold: 30) + 20
            f = try present("M1DOE/JOHN EABC123 FRAJFKLH 0400 123Y012A0001", .pdf417, from: f, hold: 30) + 20
            duration = Double(f) / fps
        case .lowLight:
            lighting = Lighting { _ in 0.06 }
            lighting.autoExposure = true
            lighting.noise = 7
            var f = Int(1.5 * fps)  // automatic exposure settles first
            f = try present("KIOSK-DUSK-1", .qrcode, from: f, hold: 30) + 20
            f = try present("590123412345", .ean13, from: f, hold: 30) + 20
            duration = Double(f) / fps
        }
        // EAN-13 payloads are given without the check digit: report what zbar will return.
        self.presentations = presentations.map { p in
            guard p.symbology == .ean13, p.payload.count == 12 else { return p }
            var q = p
            q.payload += String(Barcode1DImage.ean13CheckDigit(p.payload.compactMap { $0.wholeNumberValue }))
            return q
        }
        scene = ScriptedScene(steps: steps, duration: duration, fps: fps, uprightWidth: width, uprightHeight: height,
                              mount: Mount(), realTime: false, lighting: lighting)
    }

    /// Bricks 48 x 20 pixels (scaled), of varied shades, in dark mortar: edges everywhere.
    static func brickWall(width: Int, height: Int) -> GrayImage {
        let s = max(1, width / 640)
        let bw = 48 * s, bh = 20 * s, mortar = 3 * s
        var image = GrayImage(width: width, height: height, fill: 70)
        var seed: UInt32 = 0xB51C_4A11
        for row in 0...(height / bh) {
            let offset = row % 2 == 0 ? 0 : bw / 2
            var x0 = -offset
            while x0 < width {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let shade = UInt8(120 + Int(seed >> 26))  // 120-183
                let ys = (row * bh + mortar), ye = min(height, (row + 1) * bh)
                let xs = max(0, x0 + mortar), xe = min(width, x0 + bw)
                if ys < ye && xs < xe {
                    for y in ys..<ye {
                        for x in xs..<xe { image.pixels[y * width + x] = shade }
                    }
                }
                x0 += bw
            }
        }
        return image
    }

    /// A passer-by's coat: diagonal stripes, a houndstooth-like texture at the collar.
    static func coat(width: Int, height: Int) -> GrayImage {
        var image = GrayImage(width: width, height: height)
        let s = max(1, width / 192)
        for y in 0..<height {
            for x in 0..<width {
                let stripe = ((x + y) / (9 * s)) % 2 == 0
                let check = y < height / 5 && ((x / (6 * s)) + (y / (6 * s))) % 2 == 0
                image.pixels[y * width + x] = check ? 30 : (stripe ? 60 : 170)
            }
        }
        return image
    }
}
