// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Credentials
import Crypto
import Glibc
import Platform
import Policy

/// Passes: the `KH1:` reader, the COSE_Key reader, the cnf claim and the whole
/// verifier on any bytes. None may crash; a pass read encodes back to exactly its bytes (the
/// reader takes only the shortest, definite forms); a COSE_Key read reads again from its
/// deterministic encoding; and nothing is ever granted: the issuer and the holder of the seeds
/// (Fuzz/Corpus/pass: the bench's passes, Sources/DevTools/PassBench.swift) are trusted and the
/// clock stands in their slot, but their slot is taken before the first input, so only a forged
/// proof (or issuer's signature) could be granted.
let verifier: CredentialVerifier = {
    let dir = "/tmp/kiosk-fuzz-pass-\(getpid())"
    mkdir(dir, 0o700)
    let key = TrustedKey(kid: Array("bench-pass".utf8), key: try! PublicKey(pem: Array(PassSeeds.issuerKey.utf8)), file: "bench-pass.pem")
    let holders = try! HolderKeys.parse("bench \(PassSeeds.holderKey)\n")
    let v = CredentialVerifier(prefix: "KC1:", rules: CredentialRules(issuers: nil, audience: "door-1", skewSeconds: 30, requireSyncedClock: false),
                               antipassbackSeconds: 0, trust: CredentialTrust(keys: [key], holders: holders),
                               store: UsedTokenStore(directory: dir), clock: MonotonicClock(), wallClock: { 360_000_000 * 5 + 2 })
    for seed in PassSeeds.passes { precondition(v.verify(seed).granted, "a seed is not granted: the fuzzer's premise is wrong") }
    return v
}()

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for payload in [bytes, Array("KH1:".utf8) + bytes] {
        if let p = try? Pass(payload) {
            precondition(Pass.encode(form: p.form, credential: p.credential, slot: p.slot, proof: p.proof) == payload, "a pass that does not encode back")
        }
        let o = verifier.verify(payload)
        precondition(!o.granted, "a pass no one signed was granted")
    }
    if let k = try? HolderKey(bytes: bytes) {
        precondition((try? HolderKey(bytes: k.thumbprintInput)) == k, "a COSE_Key that does not read back")
        precondition(k.sec1.count == 65 || k.sec1.count == 33)
    }
    _ = try? Confirmation.key(payload: bytes)
    return 0
}

@_cdecl("FuzzPass_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
