// SPDX-License-Identifier: Apache-2.0
import Commands
import Glibc
import Kiosk

/// `kiosk-dev`: the development tools, kept out of the kiosk that ships (no package installs it).
public enum DevCommand {
    public static let helpText = """
    kiosk-dev \(kioskVersion): the kiosk's development tools (not installed on the door)

    Usage:
      kiosk-dev bench [--json] [--quick] [--density N] [--size WxH] [--workload a,b,c,d] [--symbologies LIST]
                          the frame loop against zbar on every full frame (make bench)
      kiosk-dev accuracy --corpus DIR [--json] [--passes a,b|none] [--budget-ms N] [--symbologies LIST] [--verbose]
                          a photo corpus through the decoder and plain zbar (make accuracy)
    """

    public static func main(arguments: [String]) -> Int32 {
        let args = Array(arguments.dropFirst())
        switch args.first {
        case "bench":
            return Bench.main(Array(args.dropFirst()))
        case "accuracy" where args.count >= 2 && args[1] == "--corpus":
            return AccuracyBench.main(corpusArguments: Array(args.dropFirst(2)))
        case "--help", "-h", "help":
            print(helpText)
            return 0
        default:
            return usageError(args.first.map { "unknown command '\($0)'" } ?? "a command is needed")
        }
    }

    static func printError(_ message: String) {
        Logger.writeToStandardError(message)
    }

    static func usageError(_ message: String) -> Int32 {
        printError("kiosk-dev: \(message)\n\(helpText)")
        return ExitStatus.usage
    }
}
