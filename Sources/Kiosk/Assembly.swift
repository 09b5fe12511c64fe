// SPDX-License-Identifier: Apache-2.0
import Platform
import Policy

/// What every concern's assembler is given (`KioskService.run`): the configuration, the
/// environment, the log, the one clock of the service, and the service's own parts (the stop
/// signal, the outputs a second signal silences, what SIGHUP reloads).
public struct Assembly {
    public let config: Configuration
    public let environment: [String: String]
    public let logger: Logger
    /// The one clock: every part that waits or times itself takes it.
    public let clock: Clock
    public let demo: Bool
    let stop: StopSignal
    /// Outputs to silence if a second signal ends the process at once.
    let outputs: OutputsOnExit
    /// What SIGHUP and the building's `reload` command reload (the credentials' files; the
    /// features that keep lists add theirs); empty: SIGHUP is ignored.
    public let reloadables: Reloadables

    init(config: Configuration, environment: [String: String], logger: Logger, clock: Clock, demo: Bool) {
        self.config = config
        self.environment = environment
        self.logger = logger
        self.clock = clock
        self.demo = demo
        stop = StopSignal()
        outputs = OutputsOnExit()
        reloadables = Reloadables()
    }
}

/// An assembler's way out: the reasons are logged; the service exits with `status`.
public struct ServiceExit: Error {
    public let status: Int32
    public init(_ status: Int32) { self.status = status }
}

/// What must stop on every way out, in the order it must: the service's shutdown contract, in one
/// place. Each part is added as it starts; they stop in the reverse order (the last started
/// stops first: the scan program before the lines, the lines before the verifier and the broker),
/// told how the loop ended (nil: it never ran).
final class Shutdown {
    private var steps: [(StopReason?) -> Void] = []

    func add(_ step: @escaping (StopReason?) -> Void) { steps.append(step) }

    func run(after reason: StopReason?) {
        for step in steps.reversed() { step(reason) }
        steps = []
    }
}
