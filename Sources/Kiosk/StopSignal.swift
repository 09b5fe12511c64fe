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
/// at once: whoever sends two means it.
public final class SignalHandling {
    private var sources: [DispatchSourceSignal] = []

    public init(stop: StopSignal, onSecondSignal: @escaping @Sendable () -> Void = { _exit(1) }) {
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
    }
}
