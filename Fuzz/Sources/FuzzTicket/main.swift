// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Credentials
import Crypto
import Glibc
import Kiosk
import Platform
import Policy

/// Event tickets' parsers of outside bytes: the pretix_sig1 framing (reversed base64,
/// version, lengths), the payload's protobuf reader, and the whole verifier. None may crash; a
/// secret read is written back as exactly the same text (one ticket, one text); a payload read
/// keeps its promises (an item, no time before 1970); framing any payload and signature and
/// reading them back gives them again; and nothing is ever granted, though an event's key is
/// trusted and the seeds are signed by it (pretix 2026.8.0, Tests/Peers/pretix_tickets.py): the
/// clock stands after the dated seed's validity, the open-ended seed is revoked, the third seed
/// is a group pretix signed, so only a forged signature could be granted.
let eventPEM = """
-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA7mSljW5MFm/trH5v6eTEOutGkHoBrqdBAwe4A31cZzc=
-----END PUBLIC KEY-----
"""
let revokedSeed = "=Ewh5L2ZtSkaJXa1XyfQh7atRHEw9DxudWh3WbCSAK/DUU2obwJo1BahOBkQBHSaD7hFF+r7Hj2Kg7rzEVBo90AAwAAKrAxdmpGZyJncB1WCKAEARAQA"

let verifier: CredentialVerifier = {
    let dir = "/tmp/kiosk-fuzz-ticket-\(getpid())"
    mkdir(dir, 0o700)
    let key = TicketKey(name: "fuzz", key: try! PublicKey(pem: Array(eventPEM.utf8)), file: "fuzz.pem")
    return CredentialVerifier(prefix: "KC1:", rules: CredentialRules(skewSeconds: 30, requireSyncedClock: false, ticketEntries: 0),
                              antipassbackSeconds: 0, trust: CredentialTrust(revoked: [revokedSeed], ticketKeys: [key]),
                              store: UsedTokenStore(directory: dir), clock: MonotonicClock(), wallClock: { 2_100_000_000 })
}()

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let s = PretixSecret(bytes) {
        precondition(Array(PretixSecret.text(payload: s.payload, signature: s.signature).utf8) == bytes, "a secret read back differently")
        precondition(s.signature.count == 64 && !s.payload.isEmpty)
        precondition(CodeKind.of(bytes, signedPrefix: "KC1:") == .credential(.ticket))
    }
    if let t = try? PretixTicket(payload: bytes) {
        precondition(t.item > 0 && t.item <= UInt64(Int64.max) && t.variation <= UInt64(Int64.max) && t.subevent <= UInt64(Int64.max))
        precondition((t.validFrom ?? 1) > 0 && (t.validUntil ?? 1) > 0)
    }
    // Any payload and any 64 bytes framed as pretix frames them read back as they were.
    if !bytes.isEmpty && bytes.count <= 600 {
        let signature = Array((bytes + [UInt8](repeating: 0x5a, count: 64)).prefix(64))
        let text = PretixSecret.text(payload: bytes, signature: signature)
        let read = PretixSecret(Array(text.utf8))
        if text.utf8.count <= PretixSecret.maxTextBytes {
            precondition(read?.payload == bytes && read?.signature == signature, "a framing that does not read back")
        } else {
            precondition(read == nil)
        }
        precondition(!verifier.verify(Array(text.utf8)).granted, "a payload no one signed was granted")
    }
    precondition(!verifier.verify(bytes).granted, "a ticket no one signed was granted")
    return 0
}

@_cdecl("FuzzTicket_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
