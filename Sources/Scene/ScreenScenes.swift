// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy

/// Phone screens held up to the kiosk: the looks a screen gives a code, each with a
/// few variants (scale, turn, strength), drawn by `PhoneScreen`, and a scene that presents one
/// for a while, held in a hand (a pixel of tremor a frame) or set down still. The screen tests
/// replay these scenes end to end and `kiosk-dev screens` measures what each attempt wins on them.
public enum ScreenScenes {
    public enum Look: String, CaseIterable, Sendable {
        /// Light modules on a dark background (dark mode), at the usual scale.
        case darkMode = "dark-mode"
        /// Screen pixels finer than the camera's, their RGB stripes beating against its Bayer
        /// filter: moiré bands across the code.
        case moire
        /// Screen pixels coarser than the camera's (a code held close to a zoomed camera, a
        /// tablet's large pixels): the black matrix as dark lines through the light modules.
        case grid
        /// The screen at full brightness in a camera exposed for the room: the light clipped at
        /// 255, the dark lifted by the glass's reflection; 35-60 levels of contrast are left.
        case overexposed
        /// A dimmed screen's PWM seen through the rolling shutter: dark bands across the rows,
        /// moving from frame to frame, on a dim picture.
        case dimmed
        /// A lamp's reflection on the glass: a spot that clips part of the code.
        case glare
    }

    /// The payload the screens show: an event ticket's link (QR version 4, 33 modules).
    public static let payload = "https://tickets.example.org/e/2041/9F3KQ2ZT7XWD"

    /// How many variants each look has.
    public static func variants(_ look: Look) -> Int {
        switch look {
        case .darkMode: return 4
        case .moire: return 12
        case .grid: return 6
        case .overexposed: return 6
        case .dimmed: return 6
        case .glare: return 6
        }
    }

    /// Variant `variant` of `look`, at frame `frame` of its presentation (PWM bands move).
    public static func screen(_ look: Look, variant v: Int, frame: Int = 0, payload: String = ScreenScenes.payload) throws -> PhoneScreen {
        let modules = try QRCodeImage.render(payload, moduleSize: 1, quietZone: 4)
        // About 4 camera pixels a module, the way a phone is usually held up: 8 screen pixels a
        // module at half a camera pixel each.
        var s = PhoneScreen(modules: modules, modulePixels: 8, pitch: 0.5)
        switch look {
        case .darkMode:
            s.darkMode = true
            s.black = [0.03, 0.07, 0.12, 0.05][v % 4]
            s.pitch = [0.5, 0.45, 0.55, 0.6][v % 4]
            s.degrees = [0, 4, -6, 2][v % 4]
        case .moire:
            // Pitches from 0.35 to 1.25 camera pixels; module sizes keep the code 130-180 px.
            let pitches = [0.35, 0.42, 0.5, 0.58, 0.66, 0.75, 0.83, 0.92, 1.0, 1.08, 1.16, 1.25]
            s.pitch = pitches[v % pitches.count]
            s.modulePixels = max(3, Int((4.2 / s.pitch).rounded()))
            s.degrees = [0, 3, 7, 1.5][v % 4]
            s.fillFactor = 0.4
        case .grid:
            let pitches = [2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
            s.pitch = pitches[v % pitches.count]
            s.modulePixels = v % 2 == 0 ? 2 : 1
            s.degrees = [0, 2, 5][v % 3]
            s.blackMatrix = 0.3
            s.fillFactor = 0.6
        case .overexposed:
            s.white = 420
            s.veil = [195, 200, 205, 208, 211, 214][v % 6]
            s.black = 0.02
            s.degrees = [0, 3, -4][v % 3]
        case .dimmed:
            s.white = [70, 60, 80, 65, 75, 55][v % 6]
            s.bands = (period: [14, 22, 30, 18, 26, 34][v % 6], duty: 0.5, depth: [0.6, 0.7, 0.5, 0.65, 0.55, 0.7][v % 6],
                       phase: Double(frame * 7))
        case .glare:
            let spots: [(Double, Double)] = [(0.5, 0.5), (0.62, 0.4), (0.45, 0.65), (0.55, 0.58), (0.4, 0.5), (0.6, 0.62)]
            let (x, y) = spots[v % spots.count]
            s.glare = (x: x, y: y, radius: [0.08, 0.1, 0.12, 0.09, 0.11, 0.13][v % 6], peak: [160, 200, 240, 180, 220, 260][v % 6])
            s.degrees = [0, 3, -5][v % 3]
        }
        return s
    }

    /// A scene of `look`'s variant `variant`: the empty window for `before` frames, then the
    /// screen in the middle of the picture for `hold` frames, held in a hand (`tremor`: moved a
    /// pixel each frame, in a small loop) or still, then the empty window for `after` frames.
    /// 640x480 at 30 fps, the room lit, sensor noise of 2 steps (`ScriptedScene.held`).
    public static func scene(_ look: Look, variant: Int, before: Int = 10, hold: Int = 24, after: Int = 6,
                             tremor: Bool = true, payload: String = ScreenScenes.payload) throws -> ScriptedScene {
        let still = look == .dimmed ? nil : try screen(look, variant: variant, payload: payload).render()
        return try ScriptedScene.held("\(look.rawValue) \(variant)", width: 640, height: 480, before: before, hold: hold, after: after,
                                      tremor: tremor) { f in
            try still ?? screen(look, variant: variant, frame: f, payload: payload).render()
        }
    }
}
