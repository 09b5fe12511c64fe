// SPDX-License-Identifier: Apache-2.0
import Commands
import Glibc
import Kiosk
import Policy

/// `kiosk-dev`: the development tools, kept out of the kiosk that ships (no package installs it).
public enum DevCommand {
    public static let helpText = """
    kiosk-dev \(kioskVersion): the kiosk's development tools (not installed on the door)

    Usage:
      kiosk-dev bench [--json] [--quick] [--density N] [--size WxH] [--workload a,b,c,d] [--symbologies LIST]
                          the frame loop against zbar on every full frame (make bench)
      kiosk-dev accuracy --corpus DIR [--json] [--passes a,b|none] [--budget-ms N] [--symbologies LIST] [--verbose]
                          a photo corpus through the decoder and plain zbar (make accuracy)
      kiosk-dev zoom [--sensor WxH] [--runs N]
                          what KIOSK_ZOOM=1 buys: the smallest QR code read with and without
                          the sensor crop (make bench-zoom)
      kiosk-dev wiegand-jitter [--pulse-us N --interval-us M]... [--bits N]
                          the Wiegand sender's pulse width and interval on this machine's clock
                          (make bench-wiegand; default 50/2000, 20/200 and 100/20000 us)
      kiosk-dev osdp-reply [--polls N]
                          the OSDP link's reply time to POLL at 9600 and 115200 baud, plaintext
                          and Secure Channel, on a pseudo-terminal (make bench-osdp)
      kiosk-dev credentials [--json] [--iterations N] [--count KIND]
                          one credential's verification (ES256, Ed25519, passes), a PIN's check and
                          an idle frame with credentials mode on and off (make bench-credentials);
                          --count: only KIND's, N times, untimed (kc1, pass1, pass1-compressed, pass2,
                          point, point-compressed, pin, pin-logn10, pin-logn12: make
                          bench-credentials-arm64 counts its instructions)
      kiosk-dev screens [--json] [--frames N] [--looks LIST]
                          what each attempt wins and costs on the drawn phone screens, and the
                          frames the frame loop takes to report them (make bench-screens)
      kiosk-dev passes [--json] [--sizes WxH,...] [--modules PX,...] [--looks LIST] [--forms 1,2,3] [--seeds N] [--roi x,y,w,h] [--stages]
                          how small a phone pass (KH1:, form 1 and 2) the frame loop reads, by
                          resolution and module size, the bytes compared (the reading distance);
                          --stages: which stage reads each frame, and zbar and zxing alone on the
                          ROI and on its middle in a smaller and a larger picture
      kiosk-dev twod [--dump DIR] [--budget-ms N]
                          the 2D bench: 60 drawn Aztec, Data Matrix and PDF417 pictures through
                          the kiosk's still path and zxing-cpp alone (make bench-2d)
      kiosk-dev speech [--phrases N | --count N] [--voice V] [--cache DIR] [--json]
                          what saying a phrase costs: from the verdict to its first sample
                          written to ALSA (spoke's ms), and the CPU a phrase (make bench-speech;
                          --count: untimed, for make bench-arm64 BENCH_ARGS=--speech)
      kiosk-dev charsets [--samples N] [--verbose]
                          what the payload's text rule makes of short texts in GB2312, Shift_JIS,
                          EUC-JP and ISO-8859-1: right, left as bytes, wrong
      kiosk-dev count dump|kiosk|read WORKLOAD WxH FILE
                          a bench workload's frames into FILE, and the frame loop over them,
                          for instruction counts under qemu-aarch64 (make bench-arm64)
      kiosk-dev sharpness [--json]
                          what kiosk aim's figures (sharpness) cost a frame, against the
                          decode gate on the same ROI (make bench runs it too)
      kiosk-dev variables
                          every KIOSK_* variable the kiosk reads, one a line: NAME, default and
                          what it accepts, tab-separated (make docs makes the manual's table
                          and kiosk.conf(5) from it)
    """

    public static func main(arguments: [String]) -> Int32 {
        let args = Array(arguments.dropFirst())
        switch args.first {
        case "bench":
            return Bench.main(Array(args.dropFirst()))
        case "accuracy" where args.count >= 2 && args[1] == "--corpus":
            return AccuracyBench.main(corpusArguments: Array(args.dropFirst(2)))
        case "zoom":
            return ZoomBench.main(Array(args.dropFirst()))
        case "credentials":
            return CredentialBench.main(Array(args.dropFirst()))
        case "wiegand-jitter":
            return WiegandJitter.main(Array(args.dropFirst()))
        case "osdp-reply":
            return OSDPReplyBench.main(Array(args.dropFirst()))
        case "count":
            return CountBench.main(Array(args.dropFirst()))
        case "twod":
            return TwoDBench.main(Array(args.dropFirst()))
        case "speech":
            return SpeechBench.main(Array(args.dropFirst()))
        case "charsets":
            return CharsetBench.main(Array(args.dropFirst()))
        case "screens":
            return ScreenBench.main(Array(args.dropFirst()))
        case "passes":
            return PassReadingBench.main(Array(args.dropFirst()))
        case "sharpness":
            return SharpnessBench.main(Array(args.dropFirst()))
        case "variables" where args.count == 1:
            for row in ConfigurationReference.rows {
                print([row.name, row.defaultText, row.accepted].joined(separator: "\t"))
            }
            return 0
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

    /// A `--symbologies` argument read as `KIOSK_SYMBOLOGIES` is (nil when missing or not such a list).
    static func symbologies(_ args: [String], at i: Int) -> [Symbology]? {
        guard i < args.count else { return nil }
        let reading = Configuration.read(environment: ["KIOSK_SYMBOLOGIES": args[i]])
        return reading.errors.isEmpty ? reading.configuration.symbologies : nil
    }
}
