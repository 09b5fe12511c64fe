// SPDX-License-Identifier: Apache-2.0
import Policy

/// One frame as the camera saw it (sensor orientation, before any rotation or mirroring).
public struct Frame {
    public let luma: LumaPlane
    /// The frame's number from the source, from 0 (for a replay, the file's position in the folder, so
    /// a skipped file leaves a gap).
    public let sequence: UInt64
    /// The frame's time on the source's timeline, in nanoseconds. Every time-based decision
    /// (repeat window, torch hold) is driven by this, never by the wall clock.
    public let timestampNs: UInt64
    /// CLOCK_MONOTONIC when the frame was captured, for latency figures.
    public let capturedNs: UInt64
    /// Which part of the camera's unzoomed picture the frame shows: the whole of it, unless the
    /// camera crops its sensor to the ROI (`KIOSK_ZOOM`, `SensorZoom`).
    public let view: NormalizedRect

    public init(luma: LumaPlane, sequence: UInt64, timestampNs: UInt64, capturedNs: UInt64, view: NormalizedRect = .whole) {
        self.luma = luma
        self.sequence = sequence
        self.timestampNs = timestampNs
        self.capturedNs = capturedNs
        self.view = view
    }
}
