// SPDX-License-Identifier: Apache-2.0
import Foundation
import Policy

/// The tests' independent holder and issuer of passes (harness/pass/peer.py on PyPI's
/// `cryptography`, `cbor2` and `cwt`, no code of the kiosk's), in the peers' venv
/// (KIOSK_PEERS_PYTHON): one Python process a test, one JSON request and answer a line.
public final class PassPeer {
    public static var script: String { Checkout.root.appendingPathComponent("harness/pass/peer.py").path }

    private let peer: PeerProcess

    public init(python: String) throws {
        peer = try PeerProcess(python: python, script: PassPeer.script, name: "pass peer")
    }

    /// A holder's new key (its private key kept in `privatePath`): its COSE_Key as base64url, the
    /// page's link to it, its key_id (hex).
    public struct Holder {
        public let privatePath: String
        public let key: String
        public let link: String
        public let keyID: String
    }

    public func holder(privatePath: String, compressed: Bool = false) throws -> Holder {
        let a = try peer.ask(["op": "holder", "private": privatePath, "compressed": compressed])
        return Holder(privatePath: privatePath, key: a["key"] as! String, link: a["link"] as! String, keyID: a["key_id"] as! String)
    }

    /// An ES256 issuer's key pair.
    public func issuer(privatePath: String, publicPath: String) throws {
        try peer.ask(["op": "issuer", "private": privatePath, "public": publicPath])
    }

    /// A CWT signed by cwt with `claims` (by number; a cti as ["hex": ...]), bound to `holderKey`
    /// (`cnf`) when given: the untagged COSE_Sign1's bytes and the page's `#c=` link.
    public func credential(privatePath: String, kid: String, claims: [String: Any], holderKey: String?) throws -> (bytes: [UInt8], link: String) {
        var r: [String: Any] = ["op": "credential", "private": privatePath, "kid": kid, "claims": claims]
        if let holderKey { r["holder_key"] = holderKey }
        let a = try peer.ask(r)
        return (PassPeer.bytes(hex: a["hex"] as! String), a["link"] as! String)
    }

    /// A pass's payload (`KH1:` + CBOR): form 1 with `credential`, form 2 with `holder`'s key_id;
    /// the proof by `signer`'s key (another key's for a forged proof); `malleate`: (r, n-s).
    public func pass(form: Int, credential: [UInt8]? = nil, holder: Holder, signer: Holder? = nil, slot: Int64, malleate: Bool = false) throws -> [UInt8] {
        var r: [String: Any] = ["op": "pass", "form": form, "slot": slot, "private": (signer ?? holder).privatePath, "malleate": malleate]
        if form == 1 { r["credential"] = (credential ?? []).map { String(format: "%02x", $0) }.joined() } else { r["key"] = holder.key }
        return PassPeer.bytes(hex: try peer.ask(r)["hex"] as! String)
    }

    /// The bytes of a hex string the code itself wrote (a bad one is a programming error).
    public static func bytes(hex: String) -> [UInt8] { Hex.bytes(hex)! }
}
