// SPDX-License-Identifier: Apache-2.0
import Foundation

/// pretix itself as the tests' ticket issuer: Tests/Peers/pretix_tickets.py on PyPI's
/// `pretix`, in the venv `make peers` makes beside the other peers' (`.cache/peers/pretix`, found
/// from KIOSK_PEERS_PYTHON: pretix cannot share the others' venv). One Python process a test, one
/// JSON request and answer a line, as `CredentialPeer`.
public final class PretixPeer {
    /// `.cache/peers/pretix/bin/python` beside KIOSK_PEERS_PYTHON's `.cache/peers/bin/python`.
    public static var python: String? {
        guard let peers = CredentialPeer.python else { return nil }
        let venv = URL(fileURLWithPath: peers).deletingLastPathComponent().deletingLastPathComponent()
        return venv.appendingPathComponent("pretix/bin/python").path
    }

    public static var script: String { Checkout.root.appendingPathComponent("Tests/Peers/pretix_tickets.py").path }

    private let peer: PeerProcess

    public typealias Failure = PeerProcess.Failure

    public init(python: String) throws {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no \(python): run `make peers` (it installs pretix there)")
        }
        peer = try PeerProcess(python: python, script: PretixPeer.script, name: "pretix peer")
    }

    @discardableResult
    public func ask(_ request: [String: Any]) throws -> [String: Any] { try peer.ask(request) }

    /// pretix's version (`pretix.__version__`).
    public func version() throws -> String { try ask(["op": "version"])["pretix"] as! String }

    /// A new event with its own key pair (pretix's `_generate_keys`): the key as pretix's API
    /// gives it in `valid_keys.pretix_sig1` (base64 of the PEM), and the PEM.
    public func event(_ name: String) throws -> (validKey: String, pem: String) {
        let a = try ask(["op": "event", "name": name])
        return (a["valid_key"] as! String, a["pem"] as! String)
    }

    /// A ticket's secret as pretix's `generate_secret` returns it (times in Unix seconds).
    public func mint(event: String, item: Int, variation: Int = 0, subevent: Int = 0, validFrom: Int? = nil, validUntil: Int? = nil) throws -> String {
        try ask(["op": "mint", "event": event, "item": item, "variation": variation, "subevent": subevent,
                 "valid_from": validFrom as Any? ?? NSNull(), "valid_until": validUntil as Any? ?? NSNull()])["secret"] as! String
    }

    /// Any payload, framed and signed by pretix's `_sign_payload`, base64 and reversed.
    public func sign(event: String, payload: [UInt8]) throws -> String {
        try ask(["op": "sign", "event": event, "payload_hex": payload.map { String(format: "%02x", $0) }.joined()])["secret"] as! String
    }
}
