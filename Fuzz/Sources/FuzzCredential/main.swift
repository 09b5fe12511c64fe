// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import CZlib
import Credentials
import Crypto
import Glibc
import Kiosk
import Platform
import Policy

/// The credentials' parsers of outside bytes: Base45, zlib with its cap, the strict
/// CBOR reader, COSE_Sign1, CWT claims, KT1, and the whole verifier. None may crash; CBOR reads
/// back exactly as it was written (the reader takes only the shortest, definite forms); nothing
/// is ever granted, though a key is trusted under the seeds' kid and the seeds are signed by it:
/// the clock stands after every seed's exp (2000000000 at the latest), and the one seed without
/// an exp is revoked (sub bob), so only a forged signature could be granted.
let trustedPEM = """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE5iuA/F4XK+xfwRk2R75vbUskjHoA
+muUrTkutKJZAWse/kIO5HNSUtpCAmqI2gzB1byM6du1ruH/r8QJ5f1hgA==
-----END PUBLIC KEY-----
"""

let verifier: CredentialVerifier = {
    let dir = "/tmp/kiosk-fuzz-credential-\(getpid())"
    mkdir(dir, 0o700)
    let key = TrustedKey(kid: Array("fuzz".utf8), key: try! PublicKey(pem: Array(trustedPEM.utf8)), file: "fuzz.pem")
    return CredentialVerifier(prefix: "KC1:", rules: CredentialRules(issuers: nil, audience: "door-1", skewSeconds: 30, requireSyncedClock: false),
                              antipassbackSeconds: 0, trust: CredentialTrust(keys: [key], revoked: ["bob"], secrets: []),
                              store: UsedTokenStore(directory: dir), clock: MonotonicClock(), wallClock: { 2_100_000_000 })
}()

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = CredentialVerifier.coseBytes(bytes)
    var out = [UInt8](repeating: 0, count: 4096)
    var n = 0
    let rc = kiosk_inflate(bytes, bytes.count, &out, out.count, &n)
    precondition(n <= out.count && (rc == 0 || rc == -1 || rc == -2))
    if let item = try? CBORReader.decode(bytes) {
        precondition(CBOREncoder.encode(item) == bytes, "CBOR that does not read back as it was written")
    }
    _ = try? COSESign1(bytes)
    _ = try? CWTClaims(payload: bytes)
    _ = RotatingCode(bytes)
    for payload in [bytes, Array("KC1:".utf8) + bytes] {
        precondition(!verifier.verify(payload).granted, "a credential no one signed was granted")
    }
    return 0
}

@_cdecl("FuzzCredential_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
