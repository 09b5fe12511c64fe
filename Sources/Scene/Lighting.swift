// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy

/// The light in the simulated scene: the room, the kiosk's torch, the camera's automatic
/// exposure, sensor noise, and shadows of people passing.
///
/// What a pixel shows: luma = 255 x reflectance x illuminance x (exposure / 10 ms), plus noise,
/// clipped to 0-255. Illuminance is relative: 1 is a lit room, 0.1 dusk. The torch adds
/// `torchIlluminance` once `torchDelay` has passed since it was switched (LED driver and the
/// camera catching up). With `autoExposure`, the exposure moves each frame towards the one that
/// makes the picture's mean `exposureTarget` (time constant `exposureTimeConstant`), clamped to
/// 0.1-100 ms, and the camera reports it, as a UVC camera reports V4L2_CID_EXPOSURE_ABSOLUTE.
///
/// Not modelled: colour, gamma, motion blur, flicker of mains lighting, a torch that lights the
/// near code more than the far wall, rolling shutter.
public struct Lighting: Sendable {
    /// Room illuminance at script time t (seconds).
    public var ambient: @Sendable (Double) -> Double
    public var torchIlluminance: Double = 0.6
    public var torchDelay: Double = 0.15
    public var autoExposure = false
    public var exposureTarget = 110.0
    public var exposureTimeConstant = 0.4
    /// Standard deviation of the sensor noise, in luma steps.
    public var noise = 2.0
    /// A phone screen's own light, in the room's units (a screen at full brightness is about a
    /// lit room's white paper).
    public var screenLuminance = 0.9
    /// Shadows: during `from`..<`to` seconds, the upright region `area` gets `factor` of the light.
    public var shadows: [(from: Double, to: Double, area: NormalizedRect, factor: Double)] = []

    public init(ambient: @escaping @Sendable (Double) -> Double) {
        self.ambient = ambient
    }

    /// A room that goes from `from` to `to` illuminance between `start` and `end` seconds.
    public static func ramp(from a: Double, to b: Double, start: Double, end: Double) -> @Sendable (Double) -> Double {
        { t in t <= start ? a : t >= end ? b : a + (b - a) * (t - start) / (end - start) }
    }
}

/// Applies `Lighting` to the reflectance picture frame after frame.
struct LightingState {
    var lighting: Lighting
    var exposureSeconds = 0.010
    var torchOn = false
    var torchSwitchedAt = -Double.infinity
    /// Phone screens in view (sensor pixels): lit by themselves; the torch's glare on their glass.
    var screens: [PixelRect] = []
    private var noiseTable: [Int16]
    private var frameCount = 0

    init(_ lighting: Lighting) {
        self.lighting = lighting
        var seed: UInt32 = 0x1234_5678
        // Roughly Gaussian noise from the sum of four uniforms, precomputed once.
        noiseTable = (0..<8192).map { _ in
            var sum = 0.0
            for _ in 0..<4 {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                sum += Double(seed >> 8) / Double(1 << 24) - 0.5
            }
            return Int16((sum * lighting.noise * 1.7).rounded())
        }
    }

    /// Until `torchDelay` has passed since a switch, the light is still the old state's.
    func torchLight(at t: Double) -> Double {
        let settled = t - torchSwitchedAt >= lighting.torchDelay
        let lit = settled ? torchOn : !torchOn
        return lit ? lighting.torchIlluminance : 0
    }

    /// Lights `reflectance` (sensor orientation) at script time t into `out`.
    mutating func render(_ reflectance: GrayImage, at t: Double, fps: Double, view: SensorView, into out: inout GrayImage) {
        let illuminance = max(0, lighting.ambient(t) + torchLight(at: t))
        let scale = illuminance * exposureSeconds / AmbientReference.exposureSeconds
        var lut = [Int32](repeating: 0, count: 256)
        for r in 0..<256 { lut[r] = Int32((Double(r) * scale).rounded()) }
        let shadowRects: [(PixelRect, [Int32])] = lighting.shadows.filter { t >= $0.from && t < $0.to }.map { s in
            let rect = view.mount.sensorROI(fromUpright: s.area, sensorWidth: view.sensorWidth, sensorHeight: view.sensorHeight)
            return (rect, lut.map { Int32((Double($0) * s.factor).rounded()) })
        }
        let offset = (frameCount &* 2_654_435_761) & 8191
        frameCount += 1
        var total = 0
        let width = reflectance.width
        reflectance.pixels.withUnsafeBufferPointer { src in
            out.pixels.withUnsafeMutableBufferPointer { dst in
                noiseTable.withUnsafeBufferPointer { noise in
                    lut.withUnsafeBufferPointer { l in
                        for i in 0..<src.count {
                            var v = l[Int(src[i])] + Int32(noise[(i &+ offset) & 8191])
                            v = v < 0 ? 0 : (v > 255 ? 255 : v)
                            dst[i] = UInt8(v)
                            total += Int(v)
                        }
                    }
                }
                for screen in screens {
                    // Its own light, whatever the room and the torch; and while the torch is
                    // lit, its reflection: a saturated band over the middle 40% of the glass.
                    let scale = lighting.screenLuminance * exposureSeconds / AmbientReference.exposureSeconds
                    let glare = torchLight(at: t) > 0
                    let r = screen.clamped(width: width, height: out.height)
                    for y in r.y..<(r.y + r.height) {
                        for x in r.x..<(r.x + r.width) {
                            let i = y * width + x
                            let inBand = glare && x >= r.x + r.width * 3 / 10 && x < r.x + r.width * 7 / 10
                            let v = inBand ? 255 : min(255, max(0, Int32((Double(src[i]) * scale).rounded()) + Int32(noiseTable[(i &+ offset) & 8191])))
                            total += Int(v) - Int(dst[i])
                            dst[i] = UInt8(v)
                        }
                    }
                }
                for (rect, shaded) in shadowRects {
                    for y in rect.y..<(rect.y + rect.height) {
                        for x in rect.x..<(rect.x + rect.width) {
                            let i = y * width + x
                            let v = min(255, max(0, shaded[Int(src[i])] + Int32(noiseTable[(i &+ offset) & 8191])))
                            total += Int(v) - Int(dst[i])
                            dst[i] = UInt8(v)
                        }
                    }
                }
            }
        }
        if lighting.autoExposure {
            let mean = max(1.0, Double(total) / Double(out.pixels.count))
            let wanted = exposureSeconds * lighting.exposureTarget / mean
            let alpha = min(1, 1 / (fps * lighting.exposureTimeConstant))
            exposureSeconds = min(0.1, max(0.0001, exposureSeconds + (wanted - exposureSeconds) * alpha))
        }
    }
}
