// SPDX-License-Identifier: Apache-2.0
import CFuzzDriver
import Policy

/// A door's rules file, and the holders file's lines (`holders`): any bytes are read or refused without a crash; a refusal
/// names a line of the file and says what is accepted; rules read are whole (every schedule an
/// allow or unlock line names is defined, every window within a day) and read the same again;
/// and the decision at any minute of a week, the day after a closed one included, never crashes
/// and keeps its promises (no group: no access; always: granted; a lockdown: lockdown-allow only);
/// an event ticket a pretix line names gets the group of a line that matches it.
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    holders(text)
    let rules: AccessRules
    do throws(AccessRulesError) {
        rules = try AccessRules.parse(text)
    } catch {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        precondition((0...lines).contains(error.line) && !error.reason.isEmpty, "\(error)")
        return 0
    }
    precondition((try? AccessRules.parse(text)) == rules, "read differently twice")
    for a in rules.allows { precondition(a.schedule == AccessRules.always || rules.schedules[a.schedule] != nil) }
    for u in rules.unlocks { precondition(u.schedule == AccessRules.always || rules.schedules[u.schedule] != nil) }
    for s in rules.schedules.values {
        precondition(!s.windows.isEmpty)
        for w in s.windows { precondition(w.days != 0 && (0..<1440).contains(w.start) && (0...1440).contains(w.end) && w.start != w.end) }
    }
    let groups = Array(Set(rules.allows.map(\.group) + rules.lockdownAllow)).sorted().prefix(8)
    let monday = LocalDate(year: 2026, month: 3, day: 2)
    let closed: Set<LocalDate> = [monday.adding(days: 2)]
    for g in groups {
        for step in stride(from: 0, to: 7 * 1440, by: 97) {
            let clock = WallClock(date: monday.adding(days: step / 1440), minute: step % 1440)
            let r = rules.decide(groups: [g], at: clock, holidays: closed, clockSynced: step % 2 == 0)
            let allowed = rules.allows.contains { $0.group == g }
            precondition(allowed || r == .noAccess)
            if rules.allows.contains(where: { $0.group == g && $0.schedule == AccessRules.always }) { precondition(r == .granted) }
            let l = rules.decide(groups: [g], at: clock, holidays: closed, clockSynced: true, lockdown: true)
            precondition((l == .granted) == rules.lockdownAllow.contains(g))
        }
    }
    precondition(rules.decide(groups: [], at: WallClock(date: monday, minute: 0), holidays: [], clockSynced: true) == .noAccess)
    // A ticket named by a pretix line gets a group of a pretix line that matches it.
    for p in rules.pretix {
        let got = rules.groups(forTicket: p.item, variation: p.variation ?? 0, subevent: p.subevent ?? 0)
        precondition(got.count == 1 && rules.pretix.contains { $0.group == got[0] && $0.matches(item: p.item, variation: p.variation ?? 0, subevent: p.subevent ?? 0) })
    }
    return 0
}

/// The same text as a holders file (`KIOSK_HOLDERS_FILE`): read or refused naming a
/// line of it; a file read is whole and its holders' lines (`fileLine`) read back the same.
func holders(_ text: String) {
    switch PassHolder.parseFile(text) {
    case .failure(let e):
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        precondition((1...max(1, lines)).contains(e.line) && !e.reason.isEmpty, "\(e)")
    case .success(let list):
        precondition(Set(list.map(\.name)).count == list.count, "a name twice")
        guard case .success(let again) = PassHolder.parseFile(list.map(\.fileLine).joined(separator: "\n")) else {
            preconditionFailure("the holders' lines do not read back")
        }
        precondition(again.map(\.name) == list.map(\.name) && again.map(\.key) == list.map(\.key) && again.map(\.groups) == list.map(\.groups))
    }
}

@_cdecl("FuzzAccess_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { fuzz($0, $1) }
}
