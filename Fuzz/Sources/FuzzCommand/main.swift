// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// A building's command from the broker: any payload is decided without a crash
/// (numbers of any size included); a command carried out had a readable id, a known name and a
/// time within the allowed age; the same payload twice is never carried out twice; and the
/// answer's JSON reads back with the same id. The same bytes as `kiosk mode`'s line on
/// the local socket: read or refused with a reason, and a command read writes back as the same
/// line.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let payload = Array(UnsafeBufferPointer(start: data, count: size))
    switch ModeRequest.parse(payload) {
    case .success(let c):
        let line = Array(ModeRequest.line(c).utf8)
        precondition(ModeRequest.parse(line) == .success(c), "a mode request does not read back")
        precondition(payload.count <= ModeRequest.maxBytes)
    case .failure(let e): precondition(!e.text.isEmpty)
    }
    let nowMs: Int64 = 1_800_000_000_000
    var desk = FleetCommandsPolicy(maxAgeSeconds: 30, defaultOpenMilliseconds: 3000, remembered: 4)
    let first = desk.receive(payload, nowMs: nowMs)
    let answered: String?
    var ok = false
    switch first {
    case .carryOut(let id, let command):
        precondition(!id.isEmpty && id.utf8.count <= FleetCommandsPolicy.maxIDBytes && payload.count <= FleetCommandsPolicy.maxPayloadBytes)
        if case .open(let ms) = command { precondition(FleetCommandsPolicy.openMillisecondsRange.contains(ms)) }
        if case .mode(.unlock) = command, case .success(let o) = FlatJSON.object(payload) {
            precondition(o["mode"] == .string("unlock") && o["until"] != nil, "an unlock without its until")
        }
        guard case .success(let object) = FlatJSON.object(payload), case .number(let t)? = object["time"] else {
            preconditionFailure("carried out a payload that is not a flat object with a time")
        }
        precondition(abs(Double(nowMs) / 1000 - t) <= 30.5, "carried out a command \(t) s from now")
        guard case .refused(_, _, let reason) = desk.receive(payload, nowMs: nowMs), reason.hasPrefix("repeated id") else {
            preconditionFailure("the same command carried out twice")
        }
        answered = id
        ok = true
    case .refused(let id, _, let reason):
        precondition(!reason.isEmpty)
        answered = id
    }
    let answer = FleetCommandsPolicy.resultJSON(id: answered, ok: ok, reason: ok ? nil : "refused \u{1} \"quoted\"")
    guard case .success(let read) = FlatJSON.object(Array(answer.utf8)) else { preconditionFailure("the answer is not JSON: \(answer)") }
    if let answered { precondition(read["id"] == .string(answered), "the answer's id does not read back") }
    else { precondition(read["id"] == .null) }
    return 0
}

@_cdecl("FuzzCommand_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
