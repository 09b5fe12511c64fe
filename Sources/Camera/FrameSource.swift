// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy

/// What the frame loop asks of a camera. V4L2 devices, replayed image folders and the simulated
/// scene all sit behind it.
public protocol FrameSource: AnyObject {
    /// Opens the device and starts streaming. Throws `CameraError`.
    func open() throws -> CameraDescription
    /// Waits up to `timeoutMs` for the next frame. The frame's memory stays valid until the next
    /// call to `nextFrame` or `close`.
    func nextFrame(timeoutMs: Int) throws -> FrameWait
    /// Stops streaming and releases everything. Safe to call more than once, and after a failure.
    func close()
    /// Frames dropped since `open` because they were corrupt or unreadable (never fatal).
    var skippedFrames: Int { get }
    /// The camera's current exposure and gain, when it reports them (read at most about once a
    /// second, never slowing the frame loop); nil when it does not.
    var exposure: CameraExposure? { get }
    /// The scene's illuminance as the camera estimates it (libcamera's `Lux` on a Raspberry Pi
    /// camera), for `doctor` and the torch event; nil when the camera has no such figure.
    var lux: Double? { get }
    /// What `open` set of the camera's focus and exposure controls (`KIOSK_FOCUS`,
    /// `KIOSK_EXPOSURE`, `KIOSK_MAINS_HZ`) and what the camera lacks: the `camera_controls`
    /// event. Nil for a source without controls (a replay).
    var controls: CameraControlReport? { get }
    /// The lens as the latest frame reports it (`kiosk aim`), when the camera says.
    var lens: LensReading? { get }
}

extension FrameSource {
    public var lux: Double? { nil }
    public var controls: CameraControlReport? { nil }
    public var lens: LensReading? { nil }
}

/// A lens's figures from a frame's metadata (libcamera: `LensPosition`, `AfState`, `FocusFoM`; a
/// V4L2 camera: `focus_absolute`, read about once a second). Nil where not reported.
public struct LensReading: Equatable, Sendable {
    /// Dioptres (libcamera) or the camera's own units (V4L2 `focus_absolute`).
    public var position: Double?
    /// `idle`, `scanning`, `focused` or `failed` (libcamera's AfState), or nil.
    public var afState: String?
    /// libcamera's FocusFoM: larger is sharper, relative to the same scene only.
    public var focusFoM: Double?

    public init(position: Double? = nil, afState: String? = nil, focusFoM: Double? = nil) {
        self.position = position
        self.afState = afState
        self.focusFoM = focusFoM
    }
}

public enum FrameWait {
    case frame(Frame)
    /// Nothing arrived within the timeout; ask again.
    case timedOut
    /// The source has no more frames (a replay folder played to its end).
    case ended
}

/// What was negotiated with the camera, for the `camera_open` event.
public struct CameraDescription: Equatable {
    public var device: String
    /// A fourcc such as "YUYV", or a name such as "PGM/PNG" for a replay.
    public var format: String
    public var width: Int
    public var height: Int
    public var fps: Double

    public init(device: String, format: String, width: Int, height: Int, fps: Double) {
        self.device = device
        self.format = format
        self.width = width
        self.height = height
        self.fps = fps
    }
}

public struct CameraError: Error, Equatable, CustomStringConvertible {
    /// The errno behind the failure, when there is one (ENODEV, EIO, EBUSY, ...).
    public var errno: Errno?
    public var message: String
    /// The camera cannot be had again by this process (libcamera after a camera stopped
    /// delivering): reopening is pointless; the service exits 69 and systemd restarts it.
    public var needsRestart = false

    public init(_ message: String, errno: Errno? = nil, needsRestart: Bool = false) {
        self.message = message
        self.errno = errno
        self.needsRestart = needsRestart
    }

    /// With glibc's number, as a call just set it or as a constant (`errno: ENODEV`).
    public init(_ message: String, errno code: Int32) { self.init(message, errno: Errno(code)) }

    public var description: String {
        guard let errno else { return message }
        return "\(message): \(errno)"
    }
}

import Glibc
