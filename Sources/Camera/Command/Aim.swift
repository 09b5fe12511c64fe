// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Glibc
import Kiosk
import Platform
import Policy

/// `kiosk aim`: the installer's live view over SSH (interface.md 0.4). The configured camera,
/// opened with the service's focus and exposure settings; the upright picture with the ROI drawn,
/// and once a second (of the frames' time) the ROI's brightness, clipped share, sharpness, the
/// lens, the last code with its module size, and a hint. `--json`: one object a second and a
/// last one at the end, no drawing. `--seconds N` ends it; a replay ends it at its last frame.
/// `--sweep`: a USB camera with `focus_absolute` is stepped through its range and the sharpest N
/// is said, for `KIOSK_FOCUS=v4l2:N`.
enum Aim {
    struct Options {
        var json = false
        var seconds: Double?
        var sweep = false
    }

    /// What is shown once a second.
    struct Report {
        var timeS: Double
        var figures: AimFigures
        var sharpness: Double
        var sharpnessSource: String
        var code: DecodedSymbol?
        /// What may be printed of the code: nil for a credential (a token is never printed).
        var payload: [UInt8]?
        var modulePx: Double?
        var lens: LensReading?
        var hint: String
    }

    static func parse(_ args: [String]) -> Options? {
        var o = Options()
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--json": o.json = true
            case "--sweep": o.sweep = true
            case "--seconds":
                guard i + 1 < args.count, let s = Double(args[i + 1]), s > 0, s <= 86_400 else { return nil }
                o.seconds = s
                i += 1
            default: return nil
            }
            i += 1
        }
        return o
    }

    static func run(_ args: [String], environment: [String: String]) -> Int32 {
        guard let options = parse(args) else {
            return KioskCommand.usageError("aim takes [--json] [--seconds N] [--sweep] (N: seconds, above 0)")
        }
        guard let (config, _) = KioskCommand.readConfiguration(environment) else { return ExitStatus.config }
        let source = KioskService.makeSource(config, clock: MonotonicClock())
        do {
            _ = try source.open()
        } catch {
            KioskCommand.printError("kiosk aim: " + openFailure(config.camera, error))
            return CommandFrames.cameraFailureStatus
        }
        defer { source.close() }
        let stop = StopSignal()
        let signals = SignalHandling(stop: stop) { _exit(ExitStatus.ok) }
        defer { withExtendedLifetime(signals) {} }
        if options.sweep {
            return sweep(source, config: config, options: options, stop: stop)
        }
        return live(source, config: config, options: options, stop: stop)
    }

    static let credentialNotShown = "(a credential: not shown)"

    /// The code's payload as aim may print it, or nil for a credential: in credentials mode every
    /// code is a token for the verifier, and a payload with a credential's prefix, or in the form of
    /// an event ticket's secret (pretix_sig1), is one anywhere.
    /// The installer sees that it read and its module size, never the token (as the journal).
    static func shownPayload(_ symbol: DecodedSymbol, config: Configuration) -> [UInt8]? {
        let payload = symbol.text.map { Array($0.utf8) } ?? symbol.bytes
        if config.verdict == .credentials || CodeKind.of(payload, signedPrefix: config.credentialPrefix) != .plain { return nil }
        return payload
    }

    /// Why the camera did not open, in the installer's words: busy is the usual case over SSH.
    static func openFailure(_ camera: CameraSetting, _ error: Error) -> String {
        // libcamera's plugin says "busy" or "in use" in its message, V4L2 gives EBUSY.
        let busy = (error as? CameraError)?.errno == Errno(EBUSY) || mentions("\(error)", "busy") || mentions("\(error)", "in use")
        guard busy else { return "cannot open the camera \(camera): \(error)" }
        return "the camera \(camera) is in use by another program, most likely the kiosk service: "
            + "stop it while you aim (sudo systemctl stop kiosk), then start it again (sudo systemctl start kiosk). (\(error))"
    }

    static func live(_ source: FrameSource, config: Configuration, options: Options, stop: StopSignal) -> Int32 {
        let scanner = BarcodeScanner(symbologies: config.symbologies, mount: config.mount)
        var first: UInt64?
        var nextReportS = 1.0
        var last: (symbol: DecodedSymbol, module: Double?, fits: Bool, atS: Double)?
        var latest: (figures: AimFigures, picture: GrayImage, roi: PixelRect)?
        var timeS = 0.0
        var frames = CommandFrames(source, command: "kiosk aim", camera: config.camera, stop: stop)
        if !options.json { print("\u{1B}[2J", terminator: "") }
        func report(final: Bool) {
            guard let latest else { return }
            let recent = last.flatMap { timeS - $0.atS <= 1.0 ? $0 : nil }
            let lens = source.lens
            let fom = lens?.focusFoM
            let hint = AimFigures.hint(latest.figures, readNow: recent != nil, module: recent?.module, codeFits: recent?.fits ?? true,
                                       fixedFocus: source.controls?.fixedFocus ?? false)
            let r = Report(timeS: timeS, figures: latest.figures, sharpness: fom ?? latest.figures.sharpness,
                           sharpnessSource: fom == nil ? "gradient" : "FocusFoM", code: last?.symbol,
                           payload: last.flatMap { shownPayload($0.symbol, config: config) }, modulePx: last?.module,
                           lens: lens, hint: hint)
            if options.json { print(json(r, final: final)) } else { draw(r, picture: latest.picture, roi: latest.roi, controls: source.controls) }
            fflush(nil)  // all streams: stdout is not concurrency-safe to name in Swift 6
        }
        while stop.requested == nil {
            guard let next = frames.next() else { return CommandFrames.cameraFailureStatus }
            switch next {
            case .ended:
                report(final: true)
                return ExitStatus.ok
            case .frame(let frame):
                let start = first ?? frame.timestampNs
                first = start
                timeS = Double(frame.timestampNs &- start) / 1e9
                let roi = config.mount.sensorROI(fromUpright: config.uprightROI, sensorWidth: frame.luma.width,
                                                 sensorHeight: frame.luma.height, view: frame.view)
                let figures = AimFigures.measure(frame.luma, roi: roi)
                if figures.holdsEdges, let symbol = scanner.scan(frame.luma, in: roi).first {
                    let fits = symbol.location.allSatisfy { roi.contains(x: $0.x, y: $0.y) }
                    last = (symbol, AimFigures.modulePixels(frame.luma, outline: symbol.location), fits, timeS)
                }
                if timeS + 1e-9 >= nextReportS || latest == nil {
                    let upright = config.mount.uprightImage(of: frame.luma)
                    let uprightROI = config.uprightROI.relative(to: config.mount.uprightRegion(fromSensor: frame.view))
                        .pixels(width: upright.width, height: upright.height)
                    latest = (figures, upright, uprightROI)
                    if timeS + 1e-9 >= nextReportS {
                        report(final: false)
                        nextReportS = (timeS + 1).rounded(.down)
                    }
                } else {
                    latest?.figures = figures
                }
                if let limit = options.seconds, timeS >= limit {
                    report(final: true)
                    return ExitStatus.ok
                }
            }
        }
        report(final: true)
        return ExitStatus.ok
    }

    static func json(_ r: Report, final: Bool) -> String {
        func num(_ d: Double?, _ digits: Int) -> String { d.map { Format.fixed($0, digits) } ?? "null" }
        func str(_ s: String?) -> String { s.map { LogEscape.jsonString(Array($0.utf8)) } ?? "null" }
        let code = r.code.map { _ in r.payload ?? Array(credentialNotShown.utf8) }
        return "{\"time_s\":\(num(r.timeS, 2)),\"brightness\":\(num(r.figures.brightness, 1)),\"clipped\":\(num(r.figures.clipped, 4)),"
            + "\"sharpness\":\(num(r.sharpness, 1)),\"sharpness_source\":\(str(r.sharpnessSource)),"
            + "\"code\":\(code.map { LogEscape.jsonString($0) } ?? "null"),\"symbology\":\(str(r.code?.symbology.displayName)),"
            + "\"credential\":\(r.code != nil && r.payload == nil),\"module_px\":\(num(r.modulePx, 1)),\"lens_position\":\(num(r.lens?.position, 2)),\"af_state\":\(str(r.lens?.afState)),"
            + "\"focus_fom\":\(num(r.lens?.focusFoM, 0)),\"hint\":\(str(r.hint)),\"final\":\(final)}"
    }

    /// The terminal view: the picture in the terminal's width (80 columns when it does not say),
    /// then the figures. Redrawn in place.
    static func draw(_ r: Report, picture: GrayImage, roi: PixelRect, controls: CameraControlReport?) {
        var size = winsize()
        let columns = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        let cols = max(20, min(columns, 120))
        let rows = max(6, Int((Double(cols) * Double(picture.height) / Double(picture.width) / 2).rounded()))
        var out = "\u{1B}[H"
        for line in AimTerminal.render(picture, roi: roi, columns: cols, rows: rows) { out += line + "\u{1B}[K\n" }
        func line(_ s: String) { out += s + "\u{1B}[K\n" }
        line("brightness \(Format.fixed(r.figures.brightness, 0))   clipped \(Format.fixed(100 * r.figures.clipped, 1))%   "
             + "sharpness \(Format.fixed(r.sharpness, 1)) (\(r.sharpnessSource))   t \(Format.fixed(r.timeS, 0)) s")
        var lens = "lens: "
        if let l = r.lens {
            lens += l.position.map { "position \(Format.fixed($0, 2))" } ?? "position unknown"
            if let s = l.afState { lens += ", autofocus \(s)" }
        } else {
            lens += controls?.fixedFocus == true ? "fixed focus (no lens motor)" : "not reported"
        }
        line(lens)
        if let code = r.code {
            let text = r.payload.map { LogEscape.escaped($0, invalidByte: { "\\x" + Format.hex($0, width: 2) }) } ?? credentialNotShown
            let room = max(8, cols - 40)
            let shown = text.count > room ? String(text.prefix(room - 3)) + "..." : text
            line("last code: \(code.symbology.displayName) \(shown)" + (r.modulePx.map { "  modules \(Format.fixed($0, 1)) px" } ?? ""))
        } else {
            line("last code: none yet")
        }
        line("hint: \(r.hint)")
        line("(Ctrl-C ends)")
        print(out, terminator: "")
    }

    /// `--sweep`: focus_absolute stepped through its range, the sharpness of each step measured on
    /// a few frames after the lens settled; the sharpest is said.
    static func sweep(_ source: FrameSource, config: Configuration, options: Options, stop: StopSignal) -> Int32 {
        guard let camera = source as? V4L2Camera, let range = camera.focusRange else {
            KioskCommand.printError("kiosk aim --sweep: the camera \(config.camera) has no focus_absolute to step "
                                    + "(a USB camera with manual focus is needed; a Camera Module 3 takes KIOSK_FOCUS=Ncm)")
            return ExitStatus.failure
        }
        var results: [(focus: Int, sharpness: Double)] = []
        for value in FocusSweep.values(range) {
            guard stop.requested == nil else { break }
            let set: Int
            do { set = try camera.setFocusAbsolute(value) } catch {
                KioskCommand.printError("kiosk aim --sweep: focus_absolute=\(value) refused: \(error)")
                return ExitStatus.failure
            }
            var seen: [Double] = []
            var settleFrames = FocusSweep.settleFrames
            let settleNs = results.isEmpty ? FocusSweep.firstSettleNs : FocusSweep.settleNs
            var firstFrameNs: UInt64?
            var frames = CommandFrames(source, command: "kiosk aim --sweep", camera: config.camera, stop: stop)
            while seen.count < FocusSweep.measuredFrames && stop.requested == nil {
                guard let next = frames.next() else { return CommandFrames.cameraFailureStatus }
                guard case .frame(let frame) = next else { break }
                let since = frame.timestampNs &- (firstFrameNs ?? frame.timestampNs)
                if firstFrameNs == nil { firstFrameNs = frame.timestampNs }
                if settleFrames > 0 || since < settleNs { settleFrames -= 1; continue }
                let roi = config.mount.sensorROI(fromUpright: config.uprightROI, sensorWidth: frame.luma.width,
                                                 sensorHeight: frame.luma.height, view: frame.view)
                seen.append(AimFigures.measure(frame.luma, roi: roi).sharpness)
            }
            let mean = seen.isEmpty ? 0 : seen.reduce(0, +) / Double(seen.count)
            results.append((set, mean))
            if options.json {
                print("{\"focus_absolute\":\(set),\"sharpness\":\(Format.fixed(mean, 1))}")
            } else {
                print("focus_absolute \(set): sharpness \(Format.fixed(mean, 1))")
            }
            fflush(nil)  // all streams: stdout is not concurrency-safe to name in Swift 6
        }
        guard let best = FocusSweep.best(results) else { return ExitStatus.failure }
        if options.json {
            print("{\"best\":\(best),\"setting\":\"KIOSK_FOCUS=v4l2:\(best)\",\"final\":true}")
        } else {
            print("sharpest at focus_absolute \(best): set KIOSK_FOCUS=v4l2:\(best) (in /etc/default/kiosk) and restart the service")
        }
        return ExitStatus.ok
    }
}

