// SPDX-License-Identifier: Apache-2.0
import Camera
import CQRencode
import Glibc
import Policy

/// Phone passes (`KH1:`) held up to the kiosk, for the reading-distance bench
/// (`kiosk-dev passes`): a payload of a pass's length (`KH1:` and random bytes: what decodes is
/// the symbol, not the CBOR), drawn as the holder's page draws it (one 8-bit segment at error
/// correction level L, `deploy/pass/pass.js`), on a phone screen (`PhoneScreen`) with a given
/// module size at the sensor, in a scene of a given resolution.
public enum PassScreens {
    public enum Form: Int, CaseIterable, Sendable {
        /// Form 1, self-contained: an issuer's CWT with `cnf` in the pass (about 284 bytes).
        case selfContained = 1
        /// Form 2, a holder on the door's list (86 bytes).
        case holder = 2
        /// Not a pass: a setup code's size (`deploy/examples/site-setup` with a P-256 site key, a
        /// network and its key, a zone, three NTP servers, the broker's password and three
        /// settings: 469 bytes, version 15, as `make test-setup-browser` makes one). It begins
        /// `KS0:`, not `KS1:`: the frame loop hands a `KS1:` code to the setup desk and to no
        /// listener, so the bench would never see one read; the symbol is the same (one 8-bit
        /// segment of as many bytes, level L).
        case setup = 3

        /// The code's bytes, its prefix included.
        public var bytes: Int { self == .holder ? 86 : self == .setup ? 469 : 284 }
        public var name: String { self == .holder ? "form 2" : self == .setup ? "setup code" : "form 1" }
        var prefix: String { self == .setup ? "KS0:" : "KH1:" }
    }

    /// How the screen looks to the camera: the page is black on white, never dark mode.
    public enum Look: String, CaseIterable, Sendable {
        /// A screen finer than the camera (about half a camera pixel a screen pixel), room light.
        case clean
        /// Screen pixels near the camera's (0.75-1 camera pixel): moiré.
        case moire
        /// Full brightness in a camera exposed for the room: white clipped, black lifted to ~205.
        case overexposed
        /// A dimmed screen's PWM through the rolling shutter: dark bands that move.
        case dimmed
        /// A lamp's reflection on the glass.
        case glare
    }

    /// `KH1:` and `form.bytes - 4` bytes from a fixed generator seeded by `seed` (test data, not a
    /// secret: a splitmix64 stream).
    public static func payload(_ form: Form, seed: Int) -> [UInt8] {
        var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(form.rawValue)
        var out = Array(form.prefix.utf8)
        while out.count < form.bytes {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            out.append(UInt8(truncatingIfNeeded: z))
        }
        return out
    }

    /// The code of `bytes` one pixel a module (quiet zone of 4 included) and its QR version:
    /// libqrencode's `QRcode_encodeData`, the whole payload one 8-bit segment, level L, the
    /// smallest version that holds it (what qrcode-generator's `qrcode(0, 'L')` with
    /// `addData(s, 'Byte')` makes).
    public static func modules(_ bytes: [UInt8]) throws -> (modules: GrayImage, version: Int) {
        guard let code = QRcode_encodeData(Int32(bytes.count), bytes, 0, QR_ECLEVEL_L) else {
            throw CodeRenderError(description: "libqrencode cannot encode \(bytes.count) bytes: \(String(cString: strerror(errno)))")
        }
        defer { QRcode_free(code) }
        return (QRCodeImage.draw(code, moduleSize: 1, quietZone: 4), Int(code.pointee.version))
    }

    /// The screen of `look` showing `modules` at `moduleSize` camera pixels a module; `variant`
    /// turns it a little (0, 3, -5 degrees), `frame` moves the PWM bands.
    public static func screen(_ look: Look, modules: GrayImage, moduleSize: Double, variant: Int = 0, frame: Int = 0) -> PhoneScreen {
        // Whole screen pixels a module (the page draws it so), the pitch making up the size.
        let target = look == .moire ? 0.9 : 0.5
        let screenPixels = max(1, Int((moduleSize / target).rounded()))
        var s = PhoneScreen(modules: modules, modulePixels: screenPixels, pitch: moduleSize / Double(screenPixels))
        s.degrees = [0, 3, -5][variant % 3]
        switch look {
        case .clean:
            break
        case .moire:
            s.fillFactor = 0.4
        case .overexposed:
            s.white = 420
            s.veil = 205
            s.black = 0.02
        case .dimmed:
            s.white = 65
            s.bands = (period: 22, duty: 0.5, depth: 0.6, phase: Double(frame * 7))
        case .glare:
            s.glare = (x: 0.55, y: 0.45, radius: 0.1, peak: 200)
        }
        return s
    }

    /// The empty window for `before` frames, the screen in the middle of a `width` x `height`
    /// picture for `hold` frames (held in a hand: a pixel of tremor a frame), the empty window for
    /// `after` frames; 30 fps, the room lit, sensor noise of 2 steps (`ScriptedScene.held`).
    public static func scene(_ look: Look, bytes: [UInt8], moduleSize: Double, variant: Int = 0, width: Int, height: Int,
                             before: Int = 10, hold: Int = 24, after: Int = 6) throws -> ScriptedScene {
        let (code, _) = try modules(bytes)
        let still = look == .dimmed ? nil : screen(look, modules: code, moduleSize: moduleSize, variant: variant).render()
        return ScriptedScene.held("pass \(look.rawValue)", width: width, height: height, before: before, hold: hold, after: after) { f in
            still ?? screen(look, modules: code, moduleSize: moduleSize, variant: variant, frame: f).render()
        }
    }
}
