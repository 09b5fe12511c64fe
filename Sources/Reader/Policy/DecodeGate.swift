// SPDX-License-Identifier: Apache-2.0

/// Decides from the ROI's luma alone, cheaply, whether zbar should look at this frame.
///
/// At a door nothing is in front of the camera most of the day, and zbar costs milliseconds a
/// frame; this costs microseconds. It reads a sparse grid of the ROI (every `sampleStep`th pixel
/// each way: 1/16 of the bytes by default) once, and from it:
///
/// - **flat**: fewer than `minEdges` neighbouring samples differ by `edgeThreshold` or more, in
///   either direction. A code is black modules on white: it makes such edges wherever it lies;
///   an empty window, a wall, a shadow do not. Skipped.
/// - **unchanged**: the block means (blocks of `blockSamples` x `blockSamples` samples) are all
///   within `changeThreshold` of those of the last frame that was decoded: what zbar would read
///   is what it read then. Skipped (the caller keeps that reading: see `Decision.reusesLastResult`).
/// - **changed**: decoded, and so are the `settleFrames` frames after a change (a code still
///   settling, sensor noise that made zbar miss it once), until a decode reads a code
///   (`decodeRead`): what is settling has been read, and the frames like it reuse that reading.
/// - **safety net**: whatever the above say, a frame is decoded when `safetyNetFrames` frames have
///   passed since the last decode. When the ROI is flat then (nobody at the door: the idle path),
///   that decode is a **glance**: the ROI at half its size each way, read by zbar
///   alone, about a quarter of a decode; when the glance sees a code it cannot confirm, or
///   structure like a code's, the caller asks for a full look at the next frame (`lookAgain`).
///   When something is held, it is a whole decode, as before.
///
/// A pure value: frames in, decisions out; no clock, no thread. The two sample buffers are kept
/// between frames, so steady state allocates nothing.
public struct DecodeGate: Sendable {
    public enum Reason: String, Sendable, CaseIterable {
        case first, changed, settling, safetyNet = "safety_net", glance = "safety_glance", lookAgain = "look_again", unchanged, flat
    }

    public enum Decision: Equatable, Sendable {
        case decode(Reason)
        case skip(Reason)

        public var decodes: Bool { if case .decode = self { return true } else { return false } }
        public var reason: Reason {
            switch self {
            case .decode(let r), .skip(let r): return r
            }
        }
        /// True when the ROI is as it was at the last decode, so that decode's codes are still in view.
        public var reusesLastResult: Bool { self == .skip(.unchanged) }
    }

    public struct Settings: Equatable, Sendable {
        /// Pixels between samples, each way.
        public var sampleStep = 4
        /// Samples a block side (blocks of 16 x 16 pixels by default).
        public var blockSamples = 4
        /// A block mean that moved this much (luma steps) since the last decode is a change.
        /// Sensor noise moves a 16-sample mean by a quarter of its own deviation.
        public var changeThreshold = 10
        /// Neighbouring samples this far apart (luma steps) are an edge.
        public var edgeThreshold = 36
        /// Fewer edges than this and the ROI is flat.
        public var minEdges = 12
        /// Frames decoded after a change even if they look unchanged.
        public var settleFrames = 4
        /// At most this many frames between two decodes.
        public var safetyNetFrames = 30

        public init() {}
    }

    public let settings: Settings
    private var reference: [Int32] = []
    private var current: [Int32] = []
    private var hasReference = false
    private var framesSinceDecode = 0
    private var settleLeft = 0
    private var lookAgainNext = false
    private var geometry = (columns: 0, rows: 0, blocksAcross: 0, blocksDown: 0)
    /// The last frame's edge count (for the bench and tests).
    public private(set) var lastEdges = 0
    /// The last frame's largest block-mean change against the reference, in luma steps.
    public private(set) var lastChange = 0

    public init(settings: Settings = Settings()) {
        precondition(settings.sampleStep >= 1 && settings.blockSamples >= 1 && settings.safetyNetFrames >= 1)
        self.settings = settings
    }

    /// Forget the reference: the next frame is decoded (a camera reopened, another frame size).
    public mutating func reset() {
        hasReference = false
        settleLeft = 0
        lookAgainNext = false
    }

    /// The glance saw something it could not read (a code of one scan line, structure like a
    /// code's): the next frame is decoded whole, whatever it looks like.
    public mutating func lookAgain() { lookAgainNext = true }

    /// What a decode the gate asked for found: codes end the settling after a change (each settling
    /// decode costs a whole zbar scan, and what it would read has been read; a new change starts
    /// it again). Told late is no harm: the settling frames decided before are decoded.
    public mutating func decodeRead(codes: Bool) {
        if codes { settleLeft = 0 }
    }

    /// The decision for this frame's ROI (sensor pixels). A decision to decode makes this frame
    /// the reference that later frames are compared with.
    public mutating func evaluate(_ luma: LumaPlane, roi: PixelRect) -> Decision {
        let r = roi.clamped(width: luma.width, height: luma.height)
        let step = settings.sampleStep, bs = settings.blockSamples
        let columns = max(1, r.width / step), rows = max(1, r.height / step)
        if r.isEmpty { return .skip(.flat) }
        if geometry.columns != columns || geometry.rows != rows {
            let across = (columns + bs - 1) / bs, down = (rows + bs - 1) / bs
            geometry = (columns, rows, across, down)
            reference = [Int32](repeating: 0, count: across * down)
            current = reference
            hasReference = false
        }
        let edges = sample(luma, r)
        lastEdges = edges
        framesSinceDecode += 1

        let changed = hasReference ? maxBlockChange() > settings.changeThreshold : true
        if changed && hasReference { settleLeft = settings.settleFrames }
        let decision: Decision
        if !hasReference {
            decision = .decode(.first)
        } else if lookAgainNext {
            decision = .decode(.lookAgain)
        } else if framesSinceDecode >= settings.safetyNetFrames {
            decision = .decode(edges < settings.minEdges ? .glance : .safetyNet)
        } else if edges < settings.minEdges {
            decision = .skip(.flat)
        } else if changed {
            decision = .decode(.changed)
        } else if settleLeft > 0 {
            decision = .decode(.settling)
        } else {
            decision = .skip(.unchanged)
        }
        if settleLeft > 0 && decision.decodes && decision.reason != .changed { settleLeft -= 1 }
        if decision == .decode(.lookAgain) { lookAgainNext = false }
        if decision.decodes {
            swap(&reference, &current)
            hasReference = true
            framesSinceDecode = 0
        }
        return decision
    }

    /// Fills `current` with the block sums and returns the number of edges. Written for the idle
    /// frame's cost (it runs on every frame): the block sums and the edges in two tight
    /// loops over a row's samples, an edge counted without a branch (|d| >= t is d + t - 1
    /// beyond 2t - 2, unsigned).
    private mutating func sample(_ luma: LumaPlane, _ r: PixelRect) -> Int {
        let step = settings.sampleStep, bs = settings.blockSamples
        let t = UInt32(max(1, settings.edgeThreshold))
        let (columns, rows, across, _) = geometry
        let ps = luma.pixelStride, rowStride = luma.rowStride
        let dx = step * ps, dy = step * rowStride
        // Half a step in from the ROI's corner, so a small ROI still gets samples.
        let x0 = r.x + min(step / 2, r.width - 1), y0 = r.y + min(step / 2, r.height - 1)
        var edges = 0
        @inline(__always) func edge(_ a: Int32, _ b: Int32) -> Int {
            UInt32(bitPattern: a &- b &+ Int32(t) &- 1) > 2 &* t &- 2 ? 1 : 0
        }
        current.withUnsafeMutableBufferPointer { sums in
            for i in 0..<sums.count { sums[i] = 0 }
            let fullBlocks = columns / bs, rest = columns % bs
            for sy in 0..<rows {
                let row = luma.base + (y0 + sy * step) * rowStride + x0 * ps
                let below = sy + 1 < rows ? row + dy : row
                let sumsRow = sums.baseAddress! + (sy / bs) * across
                // The block sums: a block's samples in a tight loop.
                var o = 0
                for bx in 0..<fullBlocks {
                    var sum: Int32 = 0
                    for _ in 0..<bs { sum &+= Int32(row[o]); o &+= dx }
                    sumsRow[bx] &+= sum
                }
                if rest > 0 {
                    var sum: Int32 = 0
                    for _ in 0..<rest { sum &+= Int32(row[o]); o &+= dx }
                    sumsRow[fullBlocks] &+= sum
                }
                // The edges: to the left and to the sample below.
                var previous = Int32(row[0]), rowEdges = 0
                o = 0
                for _ in 0..<columns {
                    let v = Int32(row[o])
                    rowEdges &+= edge(v, previous) &+ edge(v, Int32(below[o]))
                    previous = v
                    o &+= dx
                }
                edges &+= rowEdges
            }
        }
        return edges
    }

    /// The largest change of a block mean against the reference, in luma steps.
    private mutating func maxBlockChange() -> Int {
        let bs = settings.blockSamples
        let (columns, rows, across, down) = geometry
        var worst = 0
        reference.withUnsafeBufferPointer { ref in
            current.withUnsafeBufferPointer { cur in
                for by in 0..<down {
                    let h = min(bs, rows - by * bs)
                    for bx in 0..<across {
                        let n = h * min(bs, columns - bx * bs)
                        let i = by * across + bx
                        let d = Int(abs(cur[i] - ref[i])) / n
                        if d > worst { worst = d }
                    }
                }
            }
        }
        lastChange = worst
        return worst
    }
}
