// SPDX-License-Identifier: Apache-2.0

/// How bright the scene in front of the kiosk is, from one frame's luma, cheaply.
///
/// The frame is cut into blocks (8 x 6); each block's mean is taken from a sparse grid of samples
/// (about 5 x 5 a block whatever the frame's size: every 16th pixel each way at 640x480, 1/256 of
/// the pixels, every 24th at 1280x720), and the estimate is the mean of the middle half of the
/// block means. A code held up, a hand or a coat filling a few blocks moves only the blocks at the
/// ends, which are dropped, so the figure follows the room, not the visitor. Its cost does not grow
/// with the frame (about 1,200 samples; once every 8th pixel, a tenth of an idle
/// frame's instructions).
public struct BrightnessEstimator: Sendable {
    public let blocksAcross: Int
    public let blocksDown: Int
    /// Every `sampleStep`th pixel each way; nil: about `samplesAcrossBlock` a block each way.
    public let sampleStep: Int?
    public static let samplesAcrossBlock = 5

    public init(blocksAcross: Int = 8, blocksDown: Int = 6, sampleStep: Int? = nil) {
        precondition(blocksAcross > 0 && blocksDown > 0 && (sampleStep ?? 1) > 0)
        self.blocksAcross = blocksAcross
        self.blocksDown = blocksDown
        self.sampleStep = sampleStep
    }

    /// The step between samples on a frame of this size.
    public func step(width: Int, height: Int) -> Int {
        if let sampleStep { return sampleStep }
        let block = min(width / blocksAcross, height / blocksDown)
        return max(1, block / Self.samplesAcrossBlock)
    }

    /// The trimmed mean luma (0-255) of the frame.
    public func meanLuma(_ luma: LumaPlane) -> Double {
        let count = blocksAcross * blocksDown
        let sampleStep = step(width: luma.width, height: luma.height)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { means in
            for by in 0..<blocksDown {
                let y0 = by * luma.height / blocksDown, y1 = (by + 1) * luma.height / blocksDown
                for bx in 0..<blocksAcross {
                    let x0 = bx * luma.width / blocksAcross, x1 = (bx + 1) * luma.width / blocksAcross
                    var sum = 0, n = 0
                    // Start half a step in, so small blocks still get a sample.
                    var y = y0 + min(sampleStep / 2, max(0, y1 - y0 - 1))
                    while y < y1 {
                        var p = luma.base + y * luma.rowStride + (x0 + min(sampleStep / 2, max(0, x1 - x0 - 1))) * luma.pixelStride
                        var x = x0 + min(sampleStep / 2, max(0, x1 - x0 - 1))
                        while x < x1 {
                            sum += Int(p.pointee)
                            n += 1
                            p += sampleStep * luma.pixelStride
                            x += sampleStep
                        }
                        y += sampleStep
                    }
                    means[by * blocksAcross + bx] = n > 0 ? Double(sum) / Double(n) : 0
                }
            }
            // Middle half: sort the (48) block means and average the central ones.
            var sorted = UnsafeMutableBufferPointer(rebasing: means[0..<count])
            sorted.sort()
            let drop = count / 4
            var total = 0.0
            for i in drop..<(count - drop) { total += sorted[i] }
            return total / Double(count - 2 * drop)
        }
    }
}

/// The ambient brightness figure the torch decides on: the mean luma the picture would have at a
/// reference exposure of 10 ms and the camera's default gain. Without exposure information it is
/// just the mean luma. With it, the figure keeps falling as the room darkens even while automatic
/// exposure keeps the picture grey (it can exceed 255 in bright light).
public func ambientBrightness(meanLuma: Double, exposure: CameraExposure?) -> Double {
    guard let e = exposure, e.seconds > 0, e.gain > 0 else { return meanLuma }
    return meanLuma * (AmbientReference.exposureSeconds / e.seconds) / e.gain
}

public enum AmbientReference {
    public static let exposureSeconds = 0.010
}

/// What the camera's automatic exposure is doing, when it says (V4L2 controls).
public struct CameraExposure: Equatable, Sendable {
    /// Exposure time in seconds.
    public var seconds: Double
    /// Analogue/digital gain relative to the camera's default (1 = default).
    public var gain: Double

    public init(seconds: Double, gain: Double = 1) {
        self.seconds = seconds
        self.gain = gain
    }
}

/// What a libcamera request's metadata says about the light (each figure only where the camera's
/// pipeline reports it: vimc reports none, Raspberry Pi's IPA all three).
public struct SensorLight: Equatable, Sendable {
    /// `ExposureTime`, microseconds.
    public var exposureMicroseconds: Double?
    /// `AnalogueGain`, 1 = unity.
    public var analogueGain: Double?
    /// `Lux`: the IPA's own estimate of the scene's illuminance.
    public var lux: Double?

    public init(exposureMicroseconds: Double? = nil, analogueGain: Double? = nil, lux: Double? = nil) {
        self.exposureMicroseconds = exposureMicroseconds
        self.analogueGain = analogueGain
        self.lux = lux
    }

    /// The exposure for `ambientBrightness`: nil without an exposure time (the mean luma is then
    /// all there is, as on a V4L2 camera without controls); a missing gain counts as unity.
    public var exposure: CameraExposure? {
        guard let us = exposureMicroseconds, us > 0 else { return nil }
        let gain = analogueGain.flatMap { $0 > 0 ? $0 : nil } ?? 1
        return CameraExposure(seconds: us / 1e6, gain: gain)
    }
}
