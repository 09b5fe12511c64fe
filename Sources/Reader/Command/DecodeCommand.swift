// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Kiosk
import Policy
import Systemd

extension KioskCommand {
    /// `kiosk decode [--json] [--roi x,y,w,h] [--budget-ms N] FILE...`: still images through the
    /// service's decoder settings (symbologies, mount for `--roi`). `--budget-ms` replaces the extra
    /// passes' wall-clock budget per picture (`BarcodeScanner.defaultExtraBudgetMs`): with a budget
    /// no picture reaches, what is read no longer depends on how fast the CPU is (harness/arm64
    /// compares an emulated arm64 build with the amd64 one so). Exit 1 when a file cannot be read.
    static func decode(_ args: [String], environment: [String: String]) -> Int32 {
        var json = false
        var roi: NormalizedRect?
        var budget = BarcodeScanner.defaultExtraBudgetMs
        var files: [String] = []
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--json": json = true
            case "--roi":
                i += 1
                guard i < args.count else { return usageError("--roi needs x,y,w,h") }
                let reading = Configuration.read(environment: ["KIOSK_ROI": args[i]])
                guard reading.errors.isEmpty else { return usageError("--roi \(args[i]): expected \(reading.errors[0].expected)") }
                roi = reading.configuration.uprightROI
            case "--budget-ms":
                i += 1
                guard i < args.count, let v = Double(args[i]), v >= 0 else { return usageError("--budget-ms needs a number of milliseconds") }
                budget = v
            default:
                if args[i].hasPrefix("--") && args[i] != "--" { return usageError("unknown option \(args[i])") }
                files.append(args[i])
            }
            i += 1
        }
        guard !files.isEmpty else { return usageError("decode needs at least one image file") }
        guard let (config, _) = readConfiguration(environment) else { return ExitStatus.config }

        var status = ExitStatus.ok
        for file in files {
            let picture: GrayImage
            do {
                picture = try ImageFile.read(path: file)
            } catch {
                printError("kiosk: \(file): \(error)")
                status = ExitStatus.failure
                continue
            }
            for symbol in decodeStill(picture, symbologies: config.symbologies, mount: config.mount, uprightROI: roi,
                                      extraBudgetMs: budget) {
                // A setup code carries secrets (a Wi-Fi key, a password): never printed.
                if SetupCode.isSetupCode(symbol.bytes) {
                    print("\(file): \(symbol.symbology.displayName): (a setup code of \(symbol.bytes.count) bytes; kiosk setup --show \(file))")
                    continue
                }
                if json {
                    print("{\"file\":\(LogEscape.jsonString(Array(file.utf8))),\"symbology\":\(LogEscape.jsonString(Array(symbol.symbology.displayName.utf8))),\"data\":\(LogEscape.jsonString(symbol.text.map { Array($0.utf8) } ?? symbol.bytes))\(symbol.hex.map { ",\"data_hex\":\"\($0)\"" } ?? "")}")
                } else {
                    print("\(file): \(symbol.symbology.displayName): \(LogEscape.escaped(symbol.text.map { Array($0.utf8) } ?? symbol.bytes, invalidByte: { "\\x" + Format.hex($0, width: 2) }))")
                }
            }
        }
        return status
    }

    /// The decoder path of `kiosk decode`: a fresh scanner for each picture, so that nothing half
    /// read in one picture can complete a phantom code in the next.
    public static func decodeStill(_ picture: GrayImage, symbologies: [Symbology], mount: Mount = Mount(),
                                   uprightROI: NormalizedRect? = nil,
                                   extraBudgetMs: Double = BarcodeScanner.defaultExtraBudgetMs) -> [DecodedSymbol] {
        let scanner = BarcodeScanner(symbologies: symbologies, extraBudgetMs: extraBudgetMs, mount: mount)
        let region = mount.sensorROI(fromUpright: uprightROI ?? .whole, sensorWidth: picture.width, sensorHeight: picture.height)
        return scanner.scan(picture, in: region)
    }
}
