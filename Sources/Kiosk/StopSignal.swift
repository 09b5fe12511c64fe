// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import Platform

/// Routes SIGTERM and SIGINT to a `StopSignal`. A second signal while stopping ends the process
/// at once (`onSecondSignal`): whoever sends two means it. SIGHUP runs the `Reloadables` (the
/// credentials' files) when any are registered, else is logged and ignored: the configuration itself is
/// read once, at start. SIGPIPE is ignored so
/// that a `KIOSK_ON_SCAN` program that exits without reading its input cannot kill the kiosk.
///
/// The signals are blocked in every thread (create this before any other thread) and taken by
/// one thread waiting in sigwait(2): a signal that arrives at any moment, even before that thread
/// runs, stays pending until it is taken, never lost and never handled by a default action.
public final class SignalHandling {
    /// `reloadables`: what SIGHUP reloads, when anything is registered there; with
    /// nothing registered SIGHUP is logged and ignored as before.
    public init(stop: StopSignal, logger: Logger? = nil, reloadables: Reloadables? = nil,
                onSecondSignal: @escaping @Sendable () -> Void = { _exit(1) }) {
        signal(SIGPIPE, SIG_IGN)
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, s) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let waited = set
        startThread(name: "kiosk.signals") {
            var set = waited
            while true {
                var signo: Int32 = 0
                guard sigwait(&set, &signo) == 0 else { continue }
                switch signo {
                case SIGHUP:
                    if let reloadables, let logger, !reloadables.isEmpty {
                        reloadables.reloadAndLog(via: "SIGHUP", logger: logger)
                        continue
                    }
                    logger?.info("signal_ignored", ["signal": "SIGHUP",
                                                    "reason": "the configuration is read once at start: restart the service to change it"])
                default:
                    if stop.requested != nil { onSecondSignal() }
                    stop.request(signo == SIGTERM ? "SIGTERM" : "SIGINT")
                }
            }
        }
    }
}

