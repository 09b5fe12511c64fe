// SPDX-License-Identifier: Apache-2.0
#if canImport(XCTest)  // TestSupport is also built by `swift build` without the tests, where XCTest is not
import Foundation
import XCTest

/// A pass test's folder: `trust` (holding the issuer's public key, kid `issuer-1`), `state`, the
/// `holders` file's path, the peer and the issuer's private key (`issuer.key`). Skips the test when
/// the peers' venv is not there (make test sets KIOSK_PEERS_PYTHON).
public final class PassFolder {
    public let path: String
    public var trust: String { path + "/trust" }
    public var state: String { path + "/state" }
    public var holders: String { path + "/holders" }
    public private(set) var peer: PassPeer!

    public init(name: String) throws {
        guard let python = CredentialPeer.python else { throw XCTSkip("KIOSK_PEERS_PYTHON is not set (make test sets it after make peers)") }
        path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString.prefix(8))"
        for d in [path + "/trust", path + "/state"] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        peer = try PassPeer(python: python)
        try peer.issuer(privatePath: path + "/issuer.key", publicPath: trust + "/issuer-1.pem")
    }

    /// The peer stopped and the folder removed (tearDown).
    public func remove() {
        peer = nil
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A CWT for alice from `acme` valid from a minute before `now` for an hour, `claims` on top,
    /// signed with the key in `key` (in this folder), bound to `holder` when given.
    public func credential(_ claims: [String: Any] = [:], key: String = "issuer.key", holder: PassPeer.Holder?, now: Int) throws -> [UInt8] {
        var all: [String: Any] = ["1": "acme", "2": "alice", "4": now + 3600, "5": now - 60, "6": now - 60]
        all.merge(claims) { _, b in b }
        return try peer.credential(privatePath: path + "/" + key, kid: "issuer-1", claims: all, holderKey: holder?.key).bytes
    }
}
#endif
