// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Setup codes (`KS1:`, interface 0.6) made from the spec by PyPI's `cbor2` and `cryptography` in
/// the peers' venv (KIOSK_PEERS_PYTHON), not by the kiosk's code nor `site-setup`: keys, and codes
/// with any claims, signed by one key while naming another's (a forgery).
public struct SetupPeer {
    public struct PeerFailure: Error, CustomStringConvertible { public let description: String }
    public let python: String
    public let folder: String

    /// `python`: the peers' (CredentialPeer.python; a test skips without it).
    public init(python: String, folder: String) {
        self.python = python
        self.folder = folder
    }

    static let script = #"""
import json, sys, cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
req = json.loads(sys.argv[1])
if req["op"] == "keygen":
    k = ec.generate_private_key(ec.SECP256R1()) if req["alg"] == "ES256" else ed25519.Ed25519PrivateKey.generate()
    open(req["private"], "wb").write(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    open(req["public"], "wb").write(k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    sys.exit(0)
def load(p): return serialization.load_pem_private_key(open(p, "rb").read(), None)
def cose_key(pub):
    if isinstance(pub, ec.EllipticCurvePublicKey):
        n = pub.public_numbers()
        return {1: 2, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")}
    return {1: 1, -1: 6, -2: pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)}
signer = load(req["signer"])
named = load(req.get("named", req["signer"]))
claims = req["claims"]
claims["cti"] = bytes.fromhex(claims["cti"])
claims["site_key"] = cose_key(named.public_key())
alg = -7 if isinstance(signer, ec.EllipticCurvePrivateKey) else -8
protected = cbor2.dumps({1: alg})
payload = cbor2.dumps(claims)
tbs = cbor2.dumps(["Signature1", protected, b"", payload])
if alg == -7:
    r, s = decode_dss_signature(signer.sign(tbs, ec.ECDSA(hashes.SHA256())))
    sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
else:
    sig = signer.sign(tbs)
sys.stdout.write((b"KS1:" + cbor2.dumps([protected, {}, payload, sig])).hex())
"""#

    func run(_ request: [String: Any]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", SetupPeer.script, String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)]
        let out = try Child.run(p)
        guard out.status == 0 else { throw PeerFailure(description: "the setup peer failed: \(out.errors)") }
        return out.output
    }

    /// A site key pair: NAME.key (private), NAME.pem (public); ES256 or EdDSA.
    @discardableResult
    public func keygen(_ name: String, alg: String = "ES256") throws -> (privatePath: String, publicPath: String) {
        let paths = (folder + "/" + name + ".key", folder + "/" + name + ".pem")
        _ = try run(["op": "keygen", "alg": alg, "private": paths.0, "public": paths.1])
        return paths
    }

    /// A code signed by `signer`'s key (NAME.key), naming `named`'s key as its `site_key`
    /// (default: the signer's). `claims`: iat, exp, cti (hex) and any others as JSON.
    public func code(signer: String, named: String? = nil, claims: [String: Any]) throws -> [UInt8] {
        var request: [String: Any] = ["op": "code", "signer": folder + "/" + signer + ".key", "claims": claims]
        if let named { request["named"] = folder + "/" + named + ".key" }
        let hex = try run(request)
        var bytes: [UInt8] = []
        var chars = Array(hex.utf8)[...]
        while chars.count >= 2 {
            bytes.append(UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16)!)
            chars = chars.dropFirst(2)
        }
        return bytes
    }
}
