// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The tests' independent issuer (Tests/Peers/credentials.py on PyPI's cwt, pycose and pyotp, in
/// the venv `make peers` makes; its python is KIOSK_PEERS_PYTHON): one Python process a test,
/// one JSON request and answer a line.
public final class CredentialPeer {
    public static var python: String? { ProcessInfo.processInfo.environment["KIOSK_PEERS_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } }
    public static var script: String { Checkout.root.appendingPathComponent("Tests/Peers/credentials.py").path }

    private let peer: PeerProcess

    public typealias Failure = PeerProcess.Failure

    public init(python: String) throws {
        peer = try PeerProcess(python: python, script: CredentialPeer.script, name: "peer")
    }

    /// One request; the answer's fields (an `error` answer throws).
    @discardableResult
    public func ask(_ request: [String: Any]) throws -> [String: Any] { try peer.ask(request) }

    /// A key pair: the private key's file (for `sign`), the public key written to `publicPath`.
    public func keygen(_ alg: String, privatePath: String, publicPath: String) throws {
        try ask(["op": "keygen", "alg": alg, "private": privatePath, "public": publicPath])
    }

    /// A credential's text (PREFIX + Base45 ...). Claims by CWT number; a cti as ["hex": ...].
    public func sign(lib: String = "cwt", privatePath: String, alg: String, kid: Any, claims: [String: Any], zlib: Bool = true,
                     prefix: String = "KC1:", tagged: Bool = false) throws -> String {
        let a = try ask(["op": "sign", "lib": lib, "private": privatePath, "alg": alg, "kid": kid, "claims": claims, "zlib": zlib,
                         "prefix": prefix, "tagged": tagged])
        return a["text"] as! String
    }

    /// A rotating code `KT1:HOLDER:TIME:DIGITS` as pyotp computes it.
    public func totp(secret: String, holder: String, time: Int, digits: Int = 6, period: Int = 30) throws -> String {
        try ask(["op": "totp", "secret": secret, "holder": holder, "time": time, "digits": digits, "period": period])["text"] as! String
    }
}
