// SPDX-License-Identifier: Apache-2.0
import CLibcamera
import Platform
import Policy

/// A Raspberry Pi Camera Module (or any camera libcamera drives) through the kiosk's libcamera
/// plugin (plugins/libcamera/), loaded only when `KIOSK_CAMERA=libcamera...`.
///
/// libcamera runs the sensor, the ISP, automatic exposure and white balance; the plugin hands each
/// completed request's luma plane over with the request's metadata. The light figures feed the
/// torch (`exposure`, `lux`); with `zoomROI` the sensor is cropped to the area under the ROI
/// (`SensorZoom`) once the first frame has said what the unzoomed picture covers.
///
/// Focus and exposure (`settings`: `KIOSK_FOCUS`, `KIOSK_EXPOSURE`) go into `Camera::start()`'s
/// controls, chosen from what the camera advertises (`LibcameraControls.atStart`): a Camera
/// Module 3 started without `AfMode`/`LensPosition` parks its lens at about 1 m. With continuous
/// autofocus the AF window (`AfWindows`, sensor pixels) is the ROI, placed again on it once the
/// frames say which sensor area they show (the first frame's crop, then the zoom's).
public final class LibcameraCamera: FrameSource {
    public let camera: String
    public let requestedWidth: Int
    public let requestedHeight: Int
    public let requestedFps: Double
    public let settings: CameraSettings
    /// The ROI in the sensor's orientation (`Mount.sensorRegion`): where autofocus looks.
    public let sensorROI: NormalizedRect
    /// The ROI in the sensor's orientation (`Mount.sensorRegion`) when `KIOSK_ZOOM=1`, else nil.
    public let zoomROI: NormalizedRect?
    public private(set) var skippedFrames = 0
    public private(set) var info: LibcameraInfo?
    /// The crop in force for zoom, once set.
    public private(set) var zoomCrop: PixelRect?
    /// The light figures of the latest frame.
    public private(set) var light = SensorLight()
    /// What the start controls set and what the camera lacks (the `camera_controls` event).
    public private(set) var controls: CameraControlReport?
    /// The lens as the latest frame reports it (LensPosition, AfState, FocusFoM).
    public private(set) var lens: LensReading?

    private let plugin: LibcameraPlugin
    private let clock: Clock
    private var handle: LibcameraHandle?
    private var plan: CameraControlPlan<LibcameraControlSetting>?
    /// The AF windows in force (the start's, then those given with each request).
    private var afWindows: [LibcameraControlSetting]?
    private var sawFrame = false
    /// The sensor area the unzoomed picture shows (the first frame's ScalerCrop, else the largest).
    private var reference: PixelRect?
    private var sequence: UInt64 = 0
    private var lastFrameNs: UInt64 = 0
    /// The plugin abandoned the camera after a stall: this process cannot have it again.
    public private(set) var abandoned = false
    /// No completed request for this long and a close must not stop the camera (libcamera asserts).
    public static let stallNs: UInt64 = 2_000_000_000

    /// `sensorROI`: the ROI in the sensor's orientation (the default: the default `KIOSK_ROI`
    /// on an upright mount).
    public init(camera: String, width: Int, height: Int, fps: Double, settings: CameraSettings = CameraSettings(),
                sensorROI: NormalizedRect = Configuration().uprightROI, zoomROI: NormalizedRect? = nil,
                plugin: LibcameraPlugin = LoadedLibcameraPlugin.shared, clock: Clock = MonotonicClock()) {
        self.camera = camera
        self.requestedWidth = width
        self.requestedHeight = height
        self.requestedFps = fps
        self.settings = settings
        self.sensorROI = sensorROI
        self.zoomROI = zoomROI
        self.plugin = plugin
        self.clock = clock
    }

    deinit { close() }

    public var name: String { camera.isEmpty ? "libcamera" : "libcamera:\(camera)" }

    public func open() throws -> CameraDescription {
        guard handle == nil else { throw CameraError("\(name) is already open") }
        guard !abandoned else { throw LibcameraCamera.abandonedError }
        let (handle, info) = try plugin.open(camera: camera, width: requestedWidth, height: requestedHeight, fps: requestedFps)
        self.handle = handle
        self.info = info
        skippedFrames = 0
        sequence = 0
        zoomCrop = nil
        reference = nil
        light = SensorLight()
        lens = nil
        sawFrame = false
        controls = nil
        plan = nil
        afWindows = nil
        lastFrameNs = clock.now()
        // Before the first frame the picture's sensor area is not known: the AF window is the ROI
        // of the largest crop, placed again when a frame says which crop it shows.
        let afWindow = info.cropMaximum.isEmpty ? nil : LibcameraControls.afWindow(sensorRegion: sensorROI, crop: info.cropMaximum)
        let plan = LibcameraControls.atStart(settings, offered: info.controls, afWindow: afWindow)
        do {
            try plugin.start(handle, controls: plan.settings)
        } catch {
            close()  // the plugin can only close a camera whose start failed
            throw error
        }
        self.plan = plan
        afWindows = plan.settings.filter { $0.name == "AfWindows" }
        controls = plan.report
        return CameraDescription(device: "\(name) (\(info.id))", format: info.format, width: info.width,
                                 height: info.height, fps: info.fps)
    }

    public func nextFrame(timeoutMs: Int) throws -> FrameWait {
        guard let handle else { throw CameraError("\(name) is not open") }
        guard let got = try plugin.next(handle, timeoutMs: timeoutMs) else { return .timedOut }
        lastFrameNs = clock.now()
        light = got.light
        lens = got.lens
        let first = !sawFrame
        sawFrame = true
        if let zoomROI, zoomCrop == nil, let info, info.canCrop {
            // The unzoomed picture's sensor area is known from the first frame's metadata.
            let reference = got.crop ?? info.cropMaximum
            self.reference = reference
            let crop = SensorZoom.crop(for: zoomROI, reference: reference, maximum: info.cropMaximum,
                                       streamWidth: info.width, streamHeight: info.height)
            try plugin.setCrop(handle, crop)
            zoomCrop = crop
            try placeAFWindows(handle, region: sensorROI.relative(to: SensorZoom.view(of: crop, reference: reference)), crop: crop)
        } else if first, let info {
            try placeAFWindows(handle, region: sensorROI, crop: got.crop ?? info.cropMaximum)
        }
        // A frame shows the crop its metadata names; before the zoom is in force, the whole picture.
        var view = NormalizedRect.whole
        if let reference, let applied = got.crop, applied != reference {
            view = SensorZoom.view(of: applied, reference: reference)
        }
        let frame = Frame(luma: got.luma, sequence: sequence, timestampNs: got.timestampNs,
                          capturedNs: got.timestampNs, view: view)
        sequence += 1
        return .frame(frame)
    }

    /// The AF windows (continuous autofocus only) on `region`, the ROI as fractions of the picture
    /// that shows `crop` of the sensor: given with every request from now on when they moved.
    private func placeAFWindows(_ handle: LibcameraHandle, region: NormalizedRect, crop: PixelRect) throws {
        guard let plan, !crop.isEmpty,
              let update = LibcameraControls.afWindowsUpdate(settings, plan: plan, sensorRegion: region, crop: crop),
              update != afWindows else { return }
        try plugin.setControls(handle, update)
        afWindows = update
    }

    public var exposure: CameraExposure? { light.exposure }
    public var lux: Double? { light.lux }

    public func close() {
        guard let handle else { return }
        self.handle = nil
        // Frames stopped arriving: libcamera's Camera::stop() would hit a fatal assert. The plugin
        // abandons the camera instead, and this process cannot have it again (see `open`).
        let stalled = clock.now() &- lastFrameNs >= Self.stallNs
        if plugin.close(handle, stalled: stalled) { abandoned = true }
    }

    static let abandonedError = CameraError(
        "libcamera: the camera stopped delivering and was abandoned (libcamera cannot stop it safely); only a new process can have it again",
        needsRestart: true)
}

/// What was negotiated with libcamera.
public struct LibcameraInfo: Equatable, Sendable {
    public var id: String
    public var model: String
    public var format: String
    public var width: Int
    public var height: Int
    public var fps: Double
    /// Whether the camera takes a ScalerCrop, and its largest (sensor pixels).
    public var canCrop: Bool
    public var cropMaximum: PixelRect
    /// The controls the camera advertises (its ControlInfoMap), for the start controls.
    public var controls: [LibcameraControlOffer]

    public init(id: String, model: String = "", format: String, width: Int, height: Int, fps: Double,
                canCrop: Bool = false, cropMaximum: PixelRect = PixelRect(x: 0, y: 0, width: 0, height: 0),
                controls: [LibcameraControlOffer] = []) {
        self.id = id; self.model = model; self.format = format; self.width = width; self.height = height
        self.fps = fps; self.canCrop = canCrop; self.cropMaximum = cropMaximum; self.controls = controls
    }

    /// Whether the camera has AeMeteringMode.
    public var hasMetering: Bool { controls.contains { $0.name == "AeMeteringMode" } }
}

/// One completed request as the plugin lends it.
public struct LibcameraFrame {
    public var luma: LumaPlane
    public var timestampNs: UInt64
    public var light: SensorLight
    /// The ScalerCrop the pipeline applied to this frame, when it says.
    public var crop: PixelRect?
    /// LensPosition, AfState and FocusFoM, when the frame reports any of them.
    public var lens: LensReading?

    public init(luma: LumaPlane, timestampNs: UInt64, light: SensorLight = SensorLight(), crop: PixelRect? = nil,
                lens: LensReading? = nil) {
        self.luma = luma
        self.timestampNs = timestampNs
        self.light = light
        self.crop = crop
        self.lens = lens
    }
}

public final class LibcameraHandle: @unchecked Sendable {  // used by the frame loop's thread only
    let raw: OpaquePointer?
    public init(raw: OpaquePointer?) { self.raw = raw }
}

/// The plugin's calls, as the camera needs them (a fake one in the tests).
public protocol LibcameraPlugin: AnyObject {
    /// Acquires and configures the camera, not yet started; the info says which controls it has.
    func open(camera: String, width: Int, height: Int, fps: Double) throws -> (LibcameraHandle, LibcameraInfo)
    /// Starts it with `controls` in `Camera::start()`'s list. After a failure only `close`.
    func start(_ handle: LibcameraHandle, controls: [LibcameraControlSetting]) throws
    /// Controls given with every request queued from now on, replacing those given before.
    func setControls(_ handle: LibcameraHandle, _ controls: [LibcameraControlSetting]) throws
    func setCrop(_ handle: LibcameraHandle, _ crop: PixelRect) throws
    /// The next frame, nil on time-out.
    func next(_ handle: LibcameraHandle, timeoutMs: Int) throws -> LibcameraFrame?
    /// Stops and releases the camera; true when it had to be abandoned instead (`stalled`).
    @discardableResult
    func close(_ handle: LibcameraHandle, stalled: Bool) -> Bool
}

/// The plugin file, found and loaded at the first libcamera open.
///
/// It is looked for next to the `kiosk` executable (a development build, the VM tests), then in
/// /usr/local/lib/kiosk (built on this machine: `make -C plugins/libcamera install`), then in
/// /usr/lib/kiosk (the package's, built against Debian's libcamera).
public final class LoadedLibcameraPlugin: LibcameraPlugin, @unchecked Sendable {  // state guarded by `lock`
    public static let shared = LoadedLibcameraPlugin()
    public static let fileName = "kiosk-libcamera.so"

    private let lock = Lock()
    private var loadedPath: String?
    /// Set once a camera was abandoned: libcamera allows one CameraManager per process, and the
    /// abandoned one still holds the camera.
    private var abandoned = false

    public static func candidates(executable: String? = Files.executablePath()) -> [String] {
        var dirs: [String] = []
        if let exe = executable, let slash = exe.lastIndex(of: "/") { dirs.append(String(exe[..<slash])) }
        dirs += ["/usr/local/lib/kiosk", "/usr/lib/kiosk"]
        return dirs.map { "\($0)/\(fileName)" }
    }

    /// Loads the first candidate that exists. Throws what was tried and why each failed.
    @discardableResult
    public func load() throws -> String {
        try lock.withLock {
            if let loadedPath { return loadedPath }
            var tried: [String] = []
            for path in Self.candidates() {
                guard Files.exists(path) else { tried.append("\(path): not there"); continue }
                var err = [CChar](repeating: 0, count: 512)
                if kiosk_lc_load(path, &err, err.count) == 0 {
                    loadedPath = path
                    return path
                }
                tried.append(String(cBuffer: err))
            }
            throw CameraError("the libcamera plugin cannot be loaded (" + tried.joined(separator: "; ")
                              + "); build it for this machine's libcamera: " + Self.buildAdvice)
        }
    }

    public static let buildAdvice = "apt-get install g++ make pkg-config libcamera-dev, then make -C /usr/share/kiosk/libcamera-plugin install"

    /// The libcamera version the plugin runs against (after `load`).
    public var libcameraVersion: String? {
        lock.withLock { loadedPath == nil ? nil : String(cString: kiosk_lc_version()) }
    }

    /// The cameras libcamera lists (ids).
    public func list() throws -> [String] {
        try load()
        var buf = [CChar](repeating: 0, count: 8192)
        let n = kiosk_lc_list(&buf, buf.count)
        guard n >= 0 else { throw CameraError("libcamera: " + String(cBuffer: buf)) }
        return String(cBuffer: buf).split(separator: "\n").map(String.init)
    }

    public func open(camera: String, width: Int, height: Int, fps: Double) throws -> (LibcameraHandle, LibcameraInfo) {
        try load()
        if lock.withLock({ abandoned }) { throw LibcameraCamera.abandonedError }
        var info = kiosk_lc_info()
        var err = [CChar](repeating: 0, count: 512)
        guard let raw = kiosk_lc_open(camera, Int32(clamping: width), Int32(clamping: height), fps, &info, &err, err.count) else {
            throw CameraError("libcamera: " + String(cBuffer: err))
        }
        let result = LibcameraInfo(
            id: String(cField: info.id), model: String(cField: info.model), format: String(cField: info.format),
            width: Int(info.width), height: Int(info.height), fps: info.fps, canCrop: info.has_scaler_crop != 0,
            cropMaximum: Self.rect(info.crop_maximum), controls: Self.offers(info))
        return (LibcameraHandle(raw: raw), result)
    }

    public func start(_ handle: LibcameraHandle, controls: [LibcameraControlSetting]) throws {
        var list = try controls.map(Self.control)
        var err = [CChar](repeating: 0, count: 512)
        guard kiosk_lc_start(handle.raw, &list, Int32(list.count), &err, err.count) == 0 else {
            throw CameraError("libcamera: start with " + Self.names(controls) + ": " + String(cBuffer: err))
        }
    }

    public func setControls(_ handle: LibcameraHandle, _ controls: [LibcameraControlSetting]) throws {
        var list = try controls.map(Self.control)
        var err = [CChar](repeating: 0, count: 512)
        guard kiosk_lc_set_controls(handle.raw, &list, Int32(list.count), &err, err.count) == 0 else {
            throw CameraError("libcamera: controls " + Self.names(controls) + " for each request: " + String(cBuffer: err))
        }
    }

    public func setCrop(_ handle: LibcameraHandle, _ crop: PixelRect) throws {
        var err = [CChar](repeating: 0, count: 512)
        let r = kiosk_lc_rect(x: Int32(crop.x), y: Int32(crop.y), width: Int32(crop.width), height: Int32(crop.height))
        guard kiosk_lc_set_crop(handle.raw, r, &err, err.count) == 0 else {
            throw CameraError("libcamera: ScalerCrop \(crop): " + String(cBuffer: err))
        }
    }

    public func next(_ handle: LibcameraHandle, timeoutMs: Int) throws -> LibcameraFrame? {
        var f = kiosk_lc_frame()
        var err = [CChar](repeating: 0, count: 512)
        switch kiosk_lc_next(handle.raw, Int32(clamping: timeoutMs), &f, &err, err.count) {
        case KIOSK_LC_FRAME:
            guard let luma = f.luma, f.width > 0, f.height > 0, f.pixel_stride > 0,
                  Int(f.row_stride) >= Int(f.width - 1) * Int(f.pixel_stride) + 1 else {
                throw CameraError("libcamera: a frame with an impossible layout (\(f.width)x\(f.height), stride \(f.row_stride))")
            }
            let light = SensorLight(exposureMicroseconds: f.has_exposure != 0 ? f.exposure_us : nil,
                                    analogueGain: f.has_gain != 0 ? f.analogue_gain : nil,
                                    lux: f.has_lux != 0 ? f.lux : nil)
            var lens: LensReading?
            if f.has_lens_position != 0 || f.has_af_state != 0 || f.has_focus_fom != 0 {
                lens = LensReading(position: f.has_lens_position != 0 ? Double(f.lens_position) : nil,
                                   afState: f.has_af_state != 0 ? Self.afStates[Int(f.af_state)] ?? "\(f.af_state)" : nil,
                                   focusFoM: f.has_focus_fom != 0 ? Double(f.focus_fom) : nil)
            }
            return LibcameraFrame(luma: LumaPlane(base: luma, width: Int(f.width), height: Int(f.height),
                                                  rowStride: Int(f.row_stride), pixelStride: Int(f.pixel_stride)),
                                  timestampNs: f.timestamp_ns, light: light,
                                  crop: f.has_crop != 0 ? Self.rect(f.crop) : nil, lens: lens)
        case KIOSK_LC_TIMEOUT:
            return nil
        default:
            throw CameraError("libcamera: " + String(cBuffer: err))
        }
    }

    @discardableResult
    public func close(_ handle: LibcameraHandle, stalled: Bool) -> Bool {
        guard kiosk_lc_close(handle.raw, stalled ? 1 : 0) == KIOSK_LC_ABANDONED else { return false }
        lock.withLock { abandoned = true }
        return true
    }

    private static func rect(_ r: kiosk_lc_rect) -> PixelRect {
        PixelRect(x: Int(r.x), y: Int(r.y), width: Int(r.width), height: Int(r.height))
    }

    /// libcamera's AfState values (control_ids: AfStateIdle, Scanning, Focused, Failed).
    static let afStates = [0: "idle", 1: "scanning", 2: "focused", 3: "failed"]

    /// The advertised controls of an info (a fixed C array, `offer_count` of it used).
    static func offers(_ info: kiosk_lc_info) -> [LibcameraControlOffer] {
        withUnsafeBytes(of: info.offers) { raw in
            let all = raw.bindMemory(to: kiosk_lc_control_offer.self)
            return all.prefix(max(0, min(Int(info.offer_count), all.count))).map { o in
                LibcameraControlOffer(name: String(cField: o.name), minimum: o.numeric != 0 ? o.min : 0,
                                      maximum: o.numeric != 0 ? o.max : 0, defaultValue: o.has_def != 0 ? o.def : nil)
            }
        }
    }

    /// A setting as the plugin takes it. Throws for what the C struct cannot hold (a name of 32
    /// bytes or more, other than 1 to 4 rectangles).
    public static func control(_ setting: LibcameraControlSetting) throws -> kiosk_lc_control {
        var c = kiosk_lc_control()
        let name = Array(setting.name.utf8)
        guard !name.isEmpty, name.count < MemoryLayout.size(ofValue: c.name) else {
            throw CameraError("libcamera: a control named \"\(setting.name)\" (1 to \(MemoryLayout.size(ofValue: c.name) - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &c.name) { raw in raw.copyBytes(from: name) }
        switch setting.value {
        case .int(let v):
            c.type = KIOSK_LC_INT
            c.i = v
        case .float(let v):
            c.type = KIOSK_LC_FLOAT
            c.f = Float(v)
        case .rectangles(let rects):
            c.type = KIOSK_LC_RECTANGLES
            let capacity = MemoryLayout.size(ofValue: c.rects) / MemoryLayout<kiosk_lc_rect>.stride
            guard (1...capacity).contains(rects.count) else {
                throw CameraError("libcamera: \(setting.name) with \(rects.count) rectangles (1 to \(capacity))")
            }
            c.count = Int32(rects.count)
            withUnsafeMutableBytes(of: &c.rects) { raw in
                let slots = raw.bindMemory(to: kiosk_lc_rect.self)
                for (i, r) in rects.enumerated() {
                    slots[i] = kiosk_lc_rect(x: Int32(clamping: r.x), y: Int32(clamping: r.y),
                                             width: Int32(clamping: r.width), height: Int32(clamping: r.height))
                }
            }
        }
        return c
    }

    private static func names(_ controls: [LibcameraControlSetting]) -> String {
        controls.isEmpty ? "no controls" : controls.map(\.description).joined(separator: ", ")
    }
}
