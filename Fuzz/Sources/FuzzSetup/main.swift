// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Glibc
import Kiosk
import Platform
import Policy

/// Setup codes (`KS1:`): the envelope, the code's site key, the payload, what a code would change
/// and the `/etc/default/kiosk` lines it writes, and the whole check on any bytes. None may crash;
/// a site key read reads again from its encoding and its PEM gives back its DER; every value a
/// payload carries is written as a line that reads back exactly; and no code is ever taken for a
/// door whose pinned site key (a fresh one: nobody has its private half) did not sign it.
let door: SetupDoor = {
    let root = "/tmp/kiosk-fuzz-setup-\(getpid())"
    mkdir(root, 0o700); mkdir(root + "/etc", 0o700); mkdir(root + "/etc/default", 0o700); mkdir(root + "/etc/kiosk", 0o700)
    let pinned = SetupSiteKey(kind: .ed25519([UInt8](repeating: 0x5a, count: 32)))
    try! SmallFile.replace(root + "/etc/kiosk/site-key.pem", with: Array(pinned.pem.utf8), mode: 0o644)
    try! SmallFile.replace(root + "/etc/default/kiosk", with: Array("KIOSK_SITE_KEY=/etc/kiosk/site-key.pem\n".utf8), mode: 0o644)
    return SetupDoor(root: root, hostname: "door-1")
}()

func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for payload in [bytes, Array("KS1:".utf8) + bytes] {
        if let envelope = try? SetupCode.envelope(payload), let key = try? SetupCode.claimedSiteKey(envelope) {
            precondition((try? SetupSiteKey(key.item)) == key, "a site key that does not read back")
            precondition(SetupSiteKey.der(pem: key.pem) == key.subjectPublicKeyInfo, "a PEM that does not give back its key")
            check(envelope.payload)
        }
        precondition((try? SetupVerifier.verify(payload, door: door, opening: .button, now: 1_800_000_000)) == nil,
                     "a code the pinned site key did not sign was taken")
    }
    check(bytes)
    return 0
}

/// A payload as if its signature had verified: what it would change, and the lines written.
func check(_ payload: [UInt8]) {
    guard let p = try? SetupPayload(verifiedPayload: payload) else { return }
    for (name, value) in p.env {
        precondition(EnvironmentFile.values(EnvironmentFile.line(name, value))[name] == value, "a value that does not read back from its line")
    }
    if let plan = try? SetupPlan(p, current: [:], pinsSiteKey: true, isExecutableFile: { _ in false }) {
        precondition(!plan.variables.contains { $0.name == "KIOSK_ON_SCAN" }, "a code set a program")
        let text = EnvironmentFile.rewrite("#KIOSK_ROI=0.25,0.25,0.5,0.5\nOTHER=1\n", setting: plan.variables)
        let values = EnvironmentFile.values(text)
        precondition(values["OTHER"] == "1", "a line the rewrite did not keep")
        for (name, value) in plan.variables { precondition(values[name] == value, "a setting that does not read back") }
        let shown = plan.lines.joined(separator: "\n")
        if let k = p.wifi?.psk, k.utf8.count >= 8 { precondition(!shown.contains(k), "the Wi-Fi key shown") }
    }
}

@_cdecl("FuzzSetup_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
