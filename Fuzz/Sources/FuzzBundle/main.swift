// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Credentials
import Policy

/// Site bundles: any bytes as a bundle (COSE_Sign1) checked with a site key, and as a
/// verified payload. None may crash; a refusal says why; a payload read keeps its promises (a
/// version above 0, at most 256 files, each a listed name within its kind's limit, in name
/// order) and, written again, reads back the same; and nothing but what the site signed is
/// taken: the seeds are two bundles signed by the key below (deploy/examples/site-bundle), whose
/// private key was thrown away, so a bundle taken must carry one of their payloads.
let sitePEM = """
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYPMCDc5/mkWWt0819N5/jlB37IGp
Y2uLxofUCBlgsHyJRVXcax7y/+0YHQ4dbxxGI/luFN22n1rWaredX5EZ/g==
-----END PUBLIC KEY-----
"""
let siteKey = try! SiteKey(pem: Array(sitePEM.utf8), path: "fuzz.pem")
/// The payloads the seeds carry (versions 7 and 8).
let signedVersions: Set<UInt64> = [7, 8]

func check(_ payload: [UInt8]) {
    let bundle: SiteBundle
    do {
        bundle = try SiteBundle(verifiedPayload: payload)
    } catch {
        precondition(!error.detail.isEmpty, "a refusal without a reason")
        return
    }
    precondition(bundle.version > 0 && bundle.issued >= 0)
    precondition(bundle.files.count <= SiteBundle.maxFiles)
    var previous: String?
    for f in bundle.files {
        precondition(SiteBundle.kind(ofName: f.name) == f.kind, "a name not from the list")
        precondition(!f.name.hasPrefix("/") && !f.name.utf8.contains(0) && !f.name.hasPrefix("..") && !f.name.hasSuffix("/"))
        for part in f.name.split(separator: "/", omittingEmptySubsequences: false) { precondition(part != ".." && part != "." && !part.isEmpty) }
        precondition(f.bytes.count <= SiteBundle.maxBytes(of: f.kind))
        if let previous { precondition(previous.utf8.lexicographicallyPrecedes(f.name.utf8), "files out of order or twice") }
        previous = f.name
    }
    let again = CBOREncoder.encode(.map([
        CBORPair(.text("version"), .unsigned(bundle.version)), CBORPair(.text("issued"), .unsigned(UInt64(bundle.issued))),
        CBORPair(.text("files"), .map(bundle.files.map { CBORPair(.text($0.name), .bytes($0.bytes)) })),
    ]))
    precondition((try? SiteBundle(verifiedPayload: again)) == bundle, "a bundle that does not read back")
}

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    check(bytes)
    if let envelope = try? SiteBundle.envelope(bytes) { check(envelope.payload) }
    do {
        let taken = try siteKey.open(bytes)
        precondition(signedVersions.contains(taken.version), "a bundle the site never signed was taken")
    } catch {
        precondition(!error.detail.isEmpty, "a refusal without a reason")
    }
    return 0
}

@_cdecl("FuzzBundle_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
