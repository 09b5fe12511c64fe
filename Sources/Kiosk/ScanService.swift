import Camera
import Decoder
import GPIO

/// Why the frame loop ended, and the exit status that follows (interface.md).
public enum StopReason: Equatable {
    case signal(String)
    case sourceEnded
    case cameraLost(String)

    public var logText: String {
        switch self {
        case .signal(let name): return name
        case .sourceEnded: return "end of frames"
        case .cameraLost: return "camera lost"
        }
    }

    public var exitStatus: Int32 {
        switch self {
        case .signal, .sourceEnded: return ExitStatus.ok
        case .cameraLost: return ExitStatus.unavailable
        }
    }
}

public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    /// EX_UNAVAILABLE: the camera or a GPIO line cannot be had.
    public static let unavailable: Int32 = 69
    /// EX_CONFIG: the configuration is wrong; systemd must not restart into it.
    public static let config: Int32 = 78
}

/// The frame loop: frame → decode inside the ROI → repeat filter → `scan` event → beep.
public final class ScanService {
    public let configuration: Configuration
    let source: FrameSource
    let logger: Logger
    let stop: StopSignal
    let buzzer: Buzzer?
    let processStartNs: UInt64
    /// Called for each reported code after it is logged (the demo counts them; tests watch them).
    public var onReport: (DecodedSymbol, Frame) -> Void = { _, _ in }

    private let scanner: BarcodeScanner
    private var repeatFilter: RepeatFilter
    /// The sensor ROI for the frame size it was computed for; frames of one camera share a size,
    /// so this is computed once, and again only if a replayed picture has another size.
    private var sensorROI: (width: Int, height: Int, rect: PixelRect)?

    public private(set) var frames = 0
    public private(set) var decoded = 0

    public init(configuration: Configuration, source: FrameSource, buzzer: Buzzer?, logger: Logger,
                stop: StopSignal, processStartNs: UInt64 = monotonicNanoseconds()) {
        self.configuration = configuration
        self.source = source
        self.buzzer = buzzer
        self.logger = logger
        self.stop = stop
        self.processStartNs = processStartNs
        scanner = BarcodeScanner(symbologies: configuration.symbologies)
        repeatFilter = RepeatFilter(windowMilliseconds: configuration.repeatMs)
    }

    /// How long the loop waits for a frame before it looks at the stop signal again.
    static let pollMilliseconds = 100

    /// Opens the camera, runs until stopped, closes the camera. Returns why it stopped.
    /// Throws the camera's error when it cannot be opened.
    public func run() throws -> StopReason {
        let openStart = monotonicNanoseconds()
        let camera = try source.open()
        defer { source.close() }
        logger.info("camera_open", [
            "device": .text(camera.device), "format": .text(camera.format),
            "size": .text("\(camera.width)x\(camera.height)"), "fps": .number(camera.fps, digits: 1),
            "ms": .ms(Double(monotonicNanoseconds() - openStart) / 1e6),
        ])
        return loop()
    }

    private func loop() -> StopReason {
        while true {
            if let name = stop.requested { return .signal(name) }
            let wait: FrameWait
            do {
                wait = try source.nextFrame(timeoutMs: ScanService.pollMilliseconds)
            } catch {
                logger.warning("camera_lost", ["error": .text(String(describing: error))])
                return .cameraLost(String(describing: error))
            }
            switch wait {
            case .timedOut:
                continue
            case .ended:
                return .sourceEnded
            case .frame(let frame):
                process(frame)
            }
        }
    }

    func process(_ frame: Frame) {
        frames += 1
        let roi = sensorROI(width: frame.luma.width, height: frame.luma.height)
        let symbols = scanner.scan(frame.luma, in: roi)
        if frames == 1 {
            logger.info("ready", ["ms": .ms(Double(monotonicNanoseconds() - processStartNs) / 1e6)])
        }
        for symbol in repeatFilter.admit(symbols, at: frame.timestampNs) {
            decoded += 1
            let latencyMs = Double(monotonicNanoseconds() &- frame.capturedNs) / 1e6
            logger.info("scan", [
                "symbology": .text(symbol.symbology.displayName), "data": .bytes(symbol.bytes),
                "frame": .int(Int(frame.sequence)), "latency_ms": .ms(max(0, latencyMs)),
            ])
            if let buzzer {
                buzzer.beep()
                logger.debug("beep", ["ms": .int(buzzer.beepMilliseconds)])
            }
            onReport(symbol, frame)
        }
    }

    func sensorROI(width: Int, height: Int) -> PixelRect {
        if let cached = sensorROI, cached.width == width, cached.height == height { return cached.rect }
        let rect = configuration.mount.sensorROI(fromUpright: configuration.uprightROI, sensorWidth: width, sensorHeight: height)
        sensorROI = (width, height, rect)
        logger.debug("roi", ["upright": .text(configuration.uprightROI.description), "sensor": .text(rect.description)])
        return rect
    }
}
