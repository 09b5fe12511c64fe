// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Kiosk
import Platform
import Policy
import Reader

/// `kiosk setup --apply FILE [--root DIR]`, `--show FILE [--root DIR]`, `--forget-site [--root DIR]`:
/// the root side of setup by a signed code. `--apply` (root; started by `kiosk-setup.path` on the
/// file the kiosk wrote) checks the code again, and what it would change, before it changes
/// anything; then each step in turn, each saying what it did; a step that fails leaves the earlier
/// ones and says so (exit 1). With `--root DIR` it writes the files of the system under DIR (an
/// SD card's root before its first boot) and says what it left for that boot. `--show` changes
/// nothing. No secret of a code reaches stdout, stderr or the log: each is `(hidden)`.
enum SetupCommand {
    static let usage = "usage: kiosk setup --apply FILE [--root DIR] | --show FILE [--root DIR] | --forget-site [--root DIR]"
    static let connectionName = "kiosk-setup"

    static func run(_ args: [String], environment: [String: String]) -> Int32 {
        var action: String?, file: String?, root = "/"
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--apply", "--show":
                guard action == nil, i + 1 < args.count else { return usageFailure() }
                action = args[i]; file = args[i + 1]; i += 1
            case "--forget-site":
                guard action == nil else { return usageFailure() }
                action = args[i]
            case "--root":
                guard i + 1 < args.count, args[i + 1].hasPrefix("/") else { return usageFailure("--root needs an absolute path") }
                root = args[i + 1]; i += 1
            default:
                return usageFailure("unknown argument \(LogEscape.escaped(Array(args[i].utf8), invalidByte: { "\\x" + Format.hex($0, width: 2) }))")
            }
            i += 1
        }
        let logger = Logger(level: .info, format: .logfmt, priorityPrefix: environment["JOURNAL_STREAM"] != nil)
        let target = SetupTarget(root: root)
        switch action {
        case "--show"?: return show(file!, target: target)
        case "--apply"?: return apply(file!, target: target, logger: logger)
        case "--forget-site"?: return forgetSite(target: target)
        default: return usageFailure()
        }
    }

    static func usageFailure(_ why: String? = nil) -> Int32 {
        KioskCommand.printError("kiosk setup: \(why.map { $0 + "\n" } ?? "")\(usage)")
        return ExitStatus.usage
    }

    /// The code's bytes: the file as it is, or the setup code a PNG (or PGM) shows.
    static func codeBytes(_ path: String, checkOwner: Bool) -> Result<[UInt8], SetupRefusal> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return .failure(SetupRefusal(.malformed, "\(path): \(Errno.current.message)")) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return .failure(SetupRefusal(.malformed, "\(path): not a regular file")) }
        if checkOwner {
            let kiosk = getpwnam("kiosk").map { $0.pointee.pw_uid }
            guard st.st_uid == 0 || st.st_uid == kiosk else {
                return .failure(SetupRefusal(.malformed, "\(path): written by uid \(st.st_uid), neither root nor the kiosk user"))
            }
        }
        guard st.st_size <= 16 << 20, let bytes = try? SmallFile.read("/proc/self/fd/\(fd)", limit: 16 << 20) else {
            return .failure(SetupRefusal(.malformed, "\(path): cannot be read"))
        }
        if SetupCode.isSetupCode(bytes) { return .success(bytes) }
        guard let picture = try? ImageFile.read(path: "/proc/self/fd/\(fd)") else {
            return .failure(SetupRefusal(.malformed, "\(path): neither a setup code (KS1:) nor a picture of one"))
        }
        let codes = KioskCommand.decodeStill(picture, symbologies: [.qrcode]).map(\.bytes).filter { SetupCode.isSetupCode($0) }
        guard let code = codes.first else { return .failure(SetupRefusal(.malformed, "\(path): no setup code (KS1:) in the picture")) }
        return .success(code)
    }

    /// The code checked for the door under `target.root`; what it would change, or why not.
    static func checked(_ path: String, target: SetupTarget, checkOwner: Bool) -> Result<SetupPlan, SetupRefusal> {
        let bytes: [UInt8]
        switch codeBytes(path, checkOwner: checkOwner) {
        case .success(let b): bytes = b
        case .failure(let r): return .failure(r)
        }
        let door = SetupDoor(root: target.root)
        do throws(SetupRefusal) {
            let plan = try SetupVerifier.verify(bytes, door: door, opening: .button, now: SetupVerifier.wallClock())
            if let tz = plan.payload.tz, !target.hasZone(tz) { throw SetupRefusal(.refused("tz"), "no zone \(tz) in \(target.zoneinfo)") }
            return .success(plan)
        } catch {
            return .failure(error)
        }
    }

    static func show(_ path: String, target: SetupTarget) -> Int32 {
        switch checked(path, target: target, checkOwner: false) {
        case .failure(let r):
            print("refused: \(r)")
            return ExitStatus.failure
        case .success(let plan):
            print("a setup code for this door (\(target.root == "/" ? "this system" : target.root)); it would change:")
            for line in plan.lines { print("  \(line)") }
            print("nothing was changed (--show)")
            return ExitStatus.ok
        }
    }

    static func apply(_ path: String, target: SetupTarget, logger: Logger) -> Int32 {
        guard target.root != "/" || getuid() == 0 else {
            KioskCommand.printError("kiosk setup --apply: needs root (or --root DIR for an SD card's root)")
            return ExitStatus.failure
        }
        let plan: SetupPlan
        let result = checked(path, target: target, checkOwner: true)
        // The kiosk's hand-over (`$RUNTIME_DIRECTORY/setup/code`) is consumed whatever the outcome:
        // the path unit must not start this again for it, and a code is taken once.
        if path.hasSuffix("/setup/" + SetupDesk.fileName) { unlink(path) }
        switch result {
        case .failure(let r):
            print("refused: \(r)")
            logger.log(.warning, "setup", fields: [("result", "refused"), ("reason", .text(r.reason.text)), ("error", .text(r.detail))])
            return ExitStatus.failure
        case .success(let p): plan = p
        }
        var done: [String] = []
        for step in target.steps(for: plan) {
            switch step.run() {
            case .success(let said):
                print("done: \(said)")
                done += step.changes
            case .failure(let error):
                print("FAILED: \(step.name): \(error)")
                print("the steps before it stay done: \(done.isEmpty ? "none" : done.joined(separator: ","))")
                logger.log(.error, "setup", fields: [("result", "applied"), ("changed", .text(done.joined(separator: ","))),
                                                     ("failed", .text(step.name)), ("error", .text(error.description))])
                return ExitStatus.failure
            }
        }
        if target.root != "/" {
            for left in target.leftForFirstBoot(plan) { print("left for the first boot: \(left)") }
        }
        logger.log(.info, "setup", fields: [("result", "applied"), ("changed", .text(plan.changed.joined(separator: ",")))])
        return ExitStatus.ok
    }

    static func forgetSite(target: SetupTarget) -> Int32 {
        guard target.root != "/" || getuid() == 0 else {
            KioskCommand.printError("kiosk setup --forget-site: needs root")
            return ExitStatus.failure
        }
        switch target.forgetSite() {
        case .failure(let e):
            print("FAILED: \(e)")
            return ExitStatus.failure
        case .success(let said):
            for line in said { print("done: \(line)") }
            print("the next code this door takes after its exit button is held 5 s decides its site")
            return ExitStatus.ok
        }
    }
}
