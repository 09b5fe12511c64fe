// SPDX-License-Identifier: Apache-2.0
import Crypto
import Glibc
import Platform
import Policy

/// What a door is, for a setup code: its `/etc/default/kiosk` (under `root`: `/` on the door, an
/// SD card's root for `--root`), whether that sets any `KIOSK_` variable (a new door sets none),
/// its pinned site key, its audience and host name.
public struct SetupDoor: Sendable {
    public let root: String
    public let defaultsText: String
    public let current: [String: String]
    /// The pinned site key's DER (`KIOSK_SITE_KEY`'s PEM); nil: none pinned.
    public let pinned: [UInt8]?
    /// `KIOSK_SITE_KEY` names a file that holds no public key: refuse every code (nothing to
    /// compare with, and a code must not take a door over by it).
    public let pinnedProblem: String?
    public let hostname: String

    public static let defaultsPath = "/etc/default/kiosk"

    public var isNew: Bool { !EnvironmentFile.setsKioskVariable(defaultsText) }
    public var audience: String? { current["KIOSK_CREDENTIAL_AUDIENCE"] }

    /// `siteKeyOverride`: the kiosk's own `KIOSK_SITE_KEY` (its environment), when the file does not say.
    public init(root: String = "/", hostname: String? = nil, siteKeyOverride: String? = nil) {
        self.root = root
        let base = root == "/" ? "" : root
        let text = (try? SmallFile.read(base + SetupDoor.defaultsPath, limit: 1 << 20)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        defaultsText = text
        current = EnvironmentFile.values(text)
        var pinned: [UInt8]?, problem: String?
        if let path = current["KIOSK_SITE_KEY"] ?? siteKeyOverride, !path.isEmpty {
            let pem = (try? SmallFile.read(base + path, limit: 65_536)).flatMap { $0 }
            pinned = pem.flatMap { SetupSiteKey.der(pem: String(decoding: $0, as: UTF8.self)) }
            if pinned == nil { problem = "KIOSK_SITE_KEY=\(path) holds no public key this door can compare" }
        }
        self.pinned = pinned
        pinnedProblem = problem
        if let hostname {
            self.hostname = hostname
        } else if root == "/" {
            self.hostname = Files.hostname()
        } else {
            let named = (try? SmallFile.read(base + "/etc/hostname", limit: 256)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
            self.hostname = named.map { String($0.split(separator: "\n").first ?? "") } ?? ""
        }
    }
}

/// A setup code checked for a door: the envelope, the site (`SetupSite`), the signature with
/// OpenSSL over the exact bytes, and only then the payload, its date, its door, and what it would
/// change (`SetupPlan`). The kiosk checks a code with it when it is shown, `kiosk setup --apply`
/// again before it changes anything, `--show` to say what a code would do.
public enum SetupVerifier {
    /// `opening`: how setup is open (the kiosk's window; `--apply` and `--show` pass `.button`:
    /// the kiosk, or root, already decided). `now`: Unix seconds.
    public static func verify(_ bytes: [UInt8], door: SetupDoor, opening: SetupWindow.Opening, now: Int64,
                              isExecutableFile: (String) -> Bool = Files.isExecutableFile) throws(SetupRefusal) -> SetupPlan {
        let envelope = try SetupCode.envelope(bytes)
        let key = try SetupCode.claimedSiteKey(envelope)
        if let problem = door.pinnedProblem { throw SetupRefusal(.site, problem) }
        let pins = try SetupSite.check(codeKey: key.subjectPublicKeyInfo, pinned: door.pinned, doorIsNew: door.isNew, opening: opening)
        let verified: Bool
        do {
            try Crypto.load()
            verified = try PublicKey(pem: Array(key.pem.utf8)).verify(message: envelope.toBeSigned, signature: envelope.signature)
        } catch {
            throw SetupRefusal(.signature, "the site_key cannot check a signature: \(error)")
        }
        guard verified else { throw SetupRefusal(.signature, "the signature does not verify with the code's site key") }
        let payload = try SetupPayload(verifiedPayload: envelope.payload)
        guard payload.isInDate(now: now) else { throw SetupRefusal(.expired, "expired at \(payload.exp); now \(now)") }
        guard payload.isFor(audience: door.audience, hostname: door.hostname) else {
            throw SetupRefusal(.wrongDoor, "for the door \(payload.door ?? ""), this is \(door.audience ?? door.hostname)")
        }
        return try SetupPlan(payload, current: door.current, pinsSiteKey: pins, isExecutableFile: isExecutableFile)
    }

    /// Unix seconds now.
    public static func wallClock() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// Nanoseconds since the system booted (suspends included): the window's clock.
    public static func bootNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
