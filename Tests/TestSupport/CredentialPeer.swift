// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The tests' independent issuer (Tests/Peers/credentials.py on PyPI's cwt, pycose and pyotp, in
/// the venv `make peers` makes; its python is KIOSK_PEERS_PYTHON): one Python process a test,
/// one JSON request and answer a line.
public final class CredentialPeer {
    public static var python: String? { ProcessInfo.processInfo.environment["KIOSK_PEERS_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } }
    public static var script: String { Checkout.root.appendingPathComponent("Tests/Peers/credentials.py").path }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    public struct Failure: Error, CustomStringConvertible { public let description: String }

    public init(python: String) throws {
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [CredentialPeer.script]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// One request; the answer's fields (an `error` answer throws).
    @discardableResult
    public func ask(_ request: [String: Any]) throws -> [String: Any] {
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(0x0a)
        input.fileHandleForWriting.write(line)
        while !buffer.contains(0x0a) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw Failure(description: "the peer ended") }
            buffer.append(chunk)
        }
        let end = buffer.firstIndex(of: 0x0a)!
        let answer = buffer[buffer.startIndex..<end]
        buffer = Data(buffer[(end + 1)...])
        let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any] ?? [:]
        if let e = object["error"] { throw Failure(description: "peer: \(e)") }
        return object
    }

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
