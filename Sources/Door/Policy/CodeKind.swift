// SPDX-License-Identifier: Apache-2.0
/// What a code shown at the door is, decided once when it is reported, by its bytes alone (no
/// cryptography, on the frame loop): the one place where a new kind of code is added. The frame
/// loop routes each code by it, the reader's log shows a binary kind as bytes, and the verifier is
/// told the kind rather than asking again.
public enum CodeKind: Equatable, Sendable {
    /// A credential the verifier judges: signed, rotating, an event ticket, a phone's pass.
    case credential(CredentialKind)
    /// A setup code (`KS1:`, `SetupCode`): taken by the setup desk off the frame loop, in every
    /// `KIOSK_VERDICT` mode; never shown, never a verdict, never the scan program's.
    case setup
    /// Anything else: shown as it is (the scan program decides; credentials mode denies it).
    case plain

    /// `signedPrefix`: `KIOSK_CREDENTIAL_PREFIX` (the rotating codes' and the passes' prefixes
    /// are fixed). A setup code first (no credential prefix may begin `KS1:`), then the signed
    /// prefix: a site may choose any other.
    public static func of(_ payload: [UInt8], signedPrefix: String) -> CodeKind {
        if SetupCode.isSetupCode(payload) { return .setup }  // no credential prefix may begin so
        if payload.starts(with: signedPrefix.utf8) { return .credential(.signed) }
        if payload.starts(with: CredentialKind.rotatingPrefix.utf8) { return .credential(.rotating) }
        if Pass.isPass(payload) { return .credential(.pass) }
        if PretixSecret(payload) != nil { return .credential(.ticket) }
        return .plain
    }

    /// The credential's kind, or `.none` for a plain code.
    public var credential: CredentialKind {
        if case .credential(let kind) = self { return kind }
        return .none
    }

    /// A binary framing whose bytes are never guessed as text (a pass's CBOR): the log shows them
    /// escaped and in hex.
    public var isBinary: Bool { self == .credential(.pass) || self == .setup }
}
