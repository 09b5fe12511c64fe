// SPDX-License-Identifier: Apache-2.0
import Camera
import Kiosk
import Platform
import Policy

/// The frames a command takes from the camera (`snapshot`, `aim`, `aim --sweep`), with one rule
/// for a camera that gives none: no frame for 5 s, or a failure of the camera, and the command
/// says so on stderr and exits `cameraFailureStatus`: 1, as interface.md gives `kiosk snapshot` for any
/// failure (`kiosk run` says 69 for a camera it cannot have; the contract keeps 1 for the tools).
struct CommandFrames {
    /// The exit status of a command whose camera cannot be opened or gave no frame.
    static let cameraFailureStatus = ExitStatus.failure
    /// Seconds without a frame after which the camera counts as unavailable.
    static let silenceLimitS = 5

    enum Next {
        case frame(Frame)
        /// A replay's last frame has gone, or a stop was asked for.
        case ended
    }

    let source: FrameSource
    /// The command's name as its messages start: "kiosk aim".
    let command: String
    let camera: CameraSetting
    let stop: StopSignal?
    private var silentS = 0

    init(_ source: FrameSource, command: String, camera: CameraSetting, stop: StopSignal? = nil) {
        self.source = source
        self.command = command
        self.camera = camera
        self.stop = stop
    }

    /// The next frame, or the end; nil when the camera failed or gave no frame for 5 s (said on
    /// stderr): the command then returns `cameraFailureStatus`.
    mutating func next() -> Next? {
        while stop?.requested == nil {
            let wait: FrameWait
            do { wait = try source.nextFrame(timeoutMs: 1000) } catch {
                KioskCommand.printError("\(command): \(error)")
                return nil
            }
            switch wait {
            case .frame(let frame):
                silentS = 0
                return .frame(frame)
            case .ended:
                return .ended
            case .timedOut:
                silentS += 1
                if silentS >= Self.silenceLimitS {
                    KioskCommand.printError("\(command): no frame from \(camera) in \(Self.silenceLimitS) s")
                    return nil
                }
            }
        }
        return .ended
    }
}
