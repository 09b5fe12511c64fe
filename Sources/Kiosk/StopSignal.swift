import Dispatch
import Foundation
import Glibc

/// Asks the frame loop to stop. Set by SIGTERM/SIGINT (or by a test); read by the loop between
/// frames and while it waits for the camera, which it never does for long.
public final class StopSignal: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var reason: String?

    public init() {}

    public func request(_ why: String) {
        lock.lock()
        defer { lock.unlock() }
        if reason == nil { reason = why }
    }

    public var requested: String? {
        lock.lock()
        defer { lock.unlock() }
        return reason
    }
}

/// Routes SIGTERM and SIGINT to a `StopSignal`. A second signal while stopping ends the process
/// at once (`onSecondSignal`): whoever sends two means it. SIGHUP, which asks many daemons to
/// reload, is logged and ignored: the configuration is read once, at start. SIGPIPE is ignored so
/// that a `KIOSK_ON_SCAN` program that exits without reading its input cannot kill the kiosk.
public final class SignalHandling {
    private var sources: [DispatchSourceSignal] = []

    public init(stop: StopSignal, logger: Logger? = nil, onSecondSignal: @escaping @Sendable () -> Void = { _exit(1) }) {
        signal(SIGPIPE, SIG_IGN)
        for (signo, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler {
                if stop.requested != nil { onSecondSignal() }
                stop.request(name)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGHUP, SIG_IGN)
        let hup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        hup.setEventHandler {
            logger?.info("signal_ignored", ["signal": "SIGHUP",
                                            "reason": "the configuration is read once at start: restart the service to change it"])
        }
        hup.resume()
        sources.append(hup)
    }
}
