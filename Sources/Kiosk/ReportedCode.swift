// SPDX-License-Identifier: Apache-2.0
import Camera
import Platform
import Policy
import Reader

/// A code past the repeat filter, as every feature hears it (`ScanListener.codeReported`): its
/// symbol, what it is (`CodeKind`, decided once, when it is reported) and who judges it. The
/// door, which hears it first, opens its wait for the verdict (`verdict`); the verdict, once given,
/// travels one way: from its judge (the verifier, the scan program, the deadline) to the door,
/// which acts on it and then tells the listeners (`ScanListener.verdictGiven`).
public final class ReportedCode: @unchecked Sendable {  // `verdict` set by the door on the frame loop before anyone else reads it
    /// Who decides whether the code opens the door.
    public enum Judge: Equatable, Sendable {
        /// A credential: the verifier, off the frame loop. Its bytes never reach the log, the
        /// broker or the scan program.
        case verifier
        /// Credentials mode with no `KIOSK_ON_SCAN`: a code that is no credential is denied.
        case notACredential
        /// The code as it is: the scan program's exit status (hook mode), or no one.
        case program
        /// A setup code (`KS1:`): the setup desk, off the frame loop; no listener hears of it and
        /// no verdict is given (the desk beeps and logs its own `setup` event).
        case setup
    }

    public let symbol: DecodedSymbol
    public let kind: CodeKind
    public let judge: Judge
    /// The frame it was decoded from.
    public let frame: Frame
    /// From the frame's capture to its report.
    public let latencyMs: Double
    /// The door's wait for its verdict; nil when no verdict is given (`KIOSK_VERDICT=none`, no
    /// door, or the door already shut).
    public internal(set) var verdict: VerdictWait?
    /// Who hears the verdict once the door has acted on it: the frame loop's listeners.
    let listeners: ListenerList

    init(symbol: DecodedSymbol, kind: CodeKind, judge: Judge, frame: Frame, latencyMs: Double, listeners: ListenerList) {
        self.symbol = symbol
        self.kind = kind
        self.judge = judge
        self.frame = frame
        self.latencyMs = latencyMs
        self.listeners = listeners
    }

    public var bytes: [UInt8] { symbol.bytes }
    public var symbology: String { symbol.symbology.displayName }

    /// What the door, the broker and the controller may carry of it: a credential's bytes never.
    public var shownBytes: [UInt8] { judge == .verifier || judge == .setup ? [] : symbol.bytes }

    /// The door acted on `verdict`: every listener hears it, in order (from the thread that gave it).
    func given(_ verdict: Verdict) {
        for listener in listeners.all { listener.verdictGiven(verdict, for: self) }
    }
}

/// The listeners, handed to the verifier's and the verdicts' threads (set before the loop runs,
/// never changed after).
struct ListenerList: @unchecked Sendable {
    let all: [ScanListener]
    init(_ all: [ScanListener]) { self.all = all }
}
