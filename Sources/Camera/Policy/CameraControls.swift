// SPDX-License-Identifier: Apache-2.0
/// What the kiosk asks of the camera's lens and exposure (`KIOSK_FOCUS`, `KIOSK_EXPOSURE`,
/// `KIOSK_MAINS_HZ`), as pure plans: the controls a camera offers in, the ordered settings to
/// apply and the ones it lacks out. The camera code (Camera/) carries them out; nothing here
/// touches a device.
///
/// Sources (../shared/docs/camera-at-the-door.md): the Raspberry Pi IPA parks a Camera Module 3's
/// lens at 1.0 dioptre (about 1 m) unless `AfMode` manual and `LensPosition` come with
/// `Camera::start()`; `LensPosition` is in dioptres (1/m); `AfWindows` are in `ScalerCropMaximum`
/// coordinates. A UVC camera takes `focus_absolute` only with its autofocus off, set in a separate
/// call first; Logitech firmware resets focus at stream start (read back after STREAMON).

/// Where codes are held (`KIOSK_FOCUS`).
public enum FocusSetting: Equatable, Sendable, CustomStringConvertible {
    /// `Ncm`: a lens motor focused at N centimetres and held there.
    case distance(centimetres: Int)
    /// `auto`: continuous autofocus on the ROI, near range.
    case auto
    /// `v4l2:N`: a USB camera's autofocus off and `focus_absolute` = N (the camera's own units).
    case v4l2(Int)
    /// `camera`: focus left alone.
    case camera

    public static let distanceRange = 5...100
    public static let accepted = "Ncm with N from 5 to 100 (where codes are held), auto, v4l2:N (a USB camera's focus_absolute) or camera"

    public static func parse(_ text: String) -> FocusSetting? {
        switch text {
        case "auto": return .auto
        case "camera": return .camera
        default: break
        }
        if text.hasPrefix("v4l2:"), let n = Int(text.dropFirst(5)), n >= 0, text.count <= 15 { return .v4l2(n) }
        if text.hasSuffix("cm"), let n = Int(text.dropLast(2)), distanceRange.contains(n) { return .distance(centimetres: n) }
        return nil
    }

    /// The lens position for a distance, in dioptres (100 / cm).
    public var dioptres: Double? {
        if case .distance(let cm) = self { return 100 / Double(cm) }
        return nil
    }

    public var description: String {
        switch self {
        case .distance(let cm): return "\(cm)cm"
        case .auto: return "auto"
        case .v4l2(let n): return "v4l2:\(n)"
        case .camera: return "camera"
        }
    }
}

/// `KIOSK_EXPOSURE`.
public enum ExposureSetting: String, Equatable, Sendable, CaseIterable {
    /// Exposure that keeps a self-lit phone screen from washing out.
    case screens
    /// The camera's own defaults.
    case camera
}

/// The camera settings the kiosk applies at open.
public struct CameraSettings: Equatable, Sendable {
    public var focus: FocusSetting
    public var exposure: ExposureSetting
    /// 50, 60 or 0 (no filter): the V4L2 power-line filter.
    public var mainsHz: Int

    public init(focus: FocusSetting = .distance(centimetres: 15), exposure: ExposureSetting = .screens, mainsHz: Int = 50) {
        self.focus = focus
        self.exposure = exposure
        self.mainsHz = mainsHz
    }
}

/// The outcome of a plan: what to set, in order, and what the camera lacks of what was wanted
/// (the `camera_controls` event's `set` and `missing`).
public struct CameraControlPlan<Setting: Equatable & Sendable>: Equatable, Sendable {
    public var settings: [Setting] = []
    public var missing: [String] = []
    /// The camera offers no focus control at all: its focus is fixed (or turned by hand).
    public var fixedFocus = false

    public init(settings: [Setting] = [], missing: [String] = [], fixedFocus: Bool = false) {
        self.settings = settings
        self.missing = missing
        self.fixedFocus = fixedFocus
    }
}

/// What was set and what is missing, as the `camera_controls` event and `doctor` say it.
public struct CameraControlReport: Equatable, Sendable {
    public var set: [String]
    public var missing: [String]
    public var fixedFocus: Bool
    /// Settings the camera refused (name and why), applied no further.
    public var refused: [String]
    /// Settings the camera changed after the stream started, set again.
    public var reapplied: [String] = []

    public init(set: [String], missing: [String], fixedFocus: Bool, refused: [String] = []) {
        self.set = set
        self.missing = missing
        self.fixedFocus = fixedFocus
        self.refused = refused
    }
}

// MARK: - V4L2 (USB cameras)

/// The V4L2 controls the kiosk may set, by the kernel's id (Camera/ maps each to its V4L2_CID_*;
/// newer kernels renamed some, so names are only for the log: the kernel's current ones).
public enum V4L2CameraControl: String, CaseIterable, Sendable {
    case focusAuto = "focus_automatic_continuous"
    case focusAbsolute = "focus_absolute"
    case autoFocusRange = "auto_focus_range"
    case exposureAutoPriority = "exposure_dynamic_framerate"
    case backlightCompensation = "backlight_compensation"
    case powerLineFrequency = "power_line_frequency"
}

/// A control as VIDIOC_QUERYCTRL describes it.
public struct V4L2ControlOffer: Equatable, Sendable {
    public var minimum: Int
    public var maximum: Int
    public var step: Int
    public var defaultValue: Int

    public init(minimum: Int, maximum: Int, step: Int = 1, defaultValue: Int) {
        self.minimum = minimum
        self.maximum = maximum
        self.step = max(1, step)
        self.defaultValue = defaultValue
    }

    /// `value` within the range and on a step (rounded to the nearest).
    public func clamp(_ value: Int) -> Int {
        let v = min(maximum, max(minimum, value))
        let steps = (v - minimum + step / 2) / step
        return min(maximum, minimum + steps * step)
    }
}

/// One VIDIOC_S_CTRL.
public struct V4L2ControlSetting: Equatable, Sendable, CustomStringConvertible {
    public var control: V4L2CameraControl
    public var value: Int
    public init(_ control: V4L2CameraControl, _ value: Int) {
        self.control = control
        self.value = value
    }
    public var description: String { "\(control.rawValue)=\(value)" }
}

public enum V4L2CameraControls {
    /// V4L2_AUTO_FOCUS_RANGE_MACRO.
    static let macroRange = 2

    /// The settings for `settings` on a camera that offers `offered`, in the order they must be
    /// set, each its own call: autofocus off before `focus_absolute` (cameras refuse the absolute
    /// value while autofocus runs).
    public static func plan(_ settings: CameraSettings,
                            offered: [V4L2CameraControl: V4L2ControlOffer]) -> CameraControlPlan<V4L2ControlSetting> {
        var plan = CameraControlPlan<V4L2ControlSetting>()
        func set(_ control: V4L2CameraControl, _ value: Int) {
            guard let offer = offered[control] else { plan.missing.append(control.rawValue); return }
            plan.settings.append(V4L2ControlSetting(control, offer.clamp(value)))
        }
        let hasAuto = offered[.focusAuto] != nil, hasAbsolute = offered[.focusAbsolute] != nil
        plan.fixedFocus = !hasAuto && !hasAbsolute
        switch settings.focus {
        case .camera:
            break
        case .v4l2(let n):
            if hasAbsolute {
                if hasAuto { set(.focusAuto, 0) }
                set(.focusAbsolute, n)
            } else {
                plan.missing.append(V4L2CameraControl.focusAbsolute.rawValue)
            }
        case .distance, .auto:
            // A USB camera's focus units are its own: a distance cannot be turned into them, so
            // its autofocus is kept, in near range where it has one (`kiosk aim --sweep` finds a
            // fixed N instead).
            if hasAuto {
                set(.focusAuto, 1)
                if let range = offered[.autoFocusRange], (range.minimum...range.maximum).contains(macroRange) {
                    set(.autoFocusRange, macroRange)
                } else {
                    plan.missing.append(V4L2CameraControl.autoFocusRange.rawValue)
                }
            } else {
                plan.missing.append(V4L2CameraControl.focusAuto.rawValue)
            }
        }
        if settings.exposure == .screens {
            // A constant frame rate: in dim light the camera would otherwise halve it.
            set(.exposureAutoPriority, 0)
            // Backlight compensation brightens a dark subject: the opposite of what a screen needs.
            if let offer = offered[.backlightCompensation] { set(.backlightCompensation, offer.minimum) } else {
                plan.missing.append(V4L2CameraControl.backlightCompensation.rawValue)
            }
        }
        // V4L2_CID_POWER_LINE_FREQUENCY: 0 disabled, 1 50 Hz, 2 60 Hz.
        set(.powerLineFrequency, settings.mainsHz == 50 ? 1 : settings.mainsHz == 60 ? 2 : 0)
        return plan
    }

    /// The settings to apply again after the stream started: those the camera changed (read back
    /// as `readBack`), in the plan's order. A control that cannot be read is not set again.
    /// `focus_absolute` is set again with autofocus off before it, whether or not the camera
    /// turned autofocus back on too.
    public static func drifted(_ plan: [V4L2ControlSetting], readBack: [V4L2CameraControl: Int]) -> [V4L2ControlSetting] {
        var again = plan.filter { setting in readBack[setting.control].map { $0 != setting.value } ?? false }
        if again.contains(where: { $0.control == .focusAbsolute }),
           let off = plan.first(where: { $0.control == .focusAuto }), !again.contains(off) {
            again.insert(off, at: 0)
        }
        return again
    }
}

// MARK: - libcamera (Raspberry Pi cameras)

/// A control as the camera's ControlInfoMap describes it (enums as their integer range).
public struct LibcameraControlOffer: Equatable, Sendable {
    public var name: String
    public var minimum: Double
    public var maximum: Double
    public var defaultValue: Double?

    public init(name: String, minimum: Double, maximum: Double, defaultValue: Double? = nil) {
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
    }

    func offers(_ value: Double) -> Bool { value >= minimum && value <= maximum }
}

public enum LibcameraControlValue: Equatable, Sendable {
    case int(Int32)
    case float(Double)
    case rectangles([PixelRect])
}

/// One control of the list given to `Camera::start()` (or to a request).
public struct LibcameraControlSetting: Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: LibcameraControlValue
    /// The enum's name for the log (libcamera's, without the control's prefix), when it is one.
    public var label: String?

    public init(_ name: String, _ value: LibcameraControlValue, label: String? = nil) {
        self.name = name
        self.value = value
        self.label = label
    }

    public var description: String {
        if let label { return "\(name)=\(label)" }
        switch value {
        case .int(let v): return "\(name)=\(v)"
        case .float(let v): return "\(name)=\(Format.fixed(v, 2))"
        case .rectangles(let r): return "\(name)=" + r.map(\.description).joined(separator: ";")
        }
    }
}

public enum LibcameraControls {
    // The enum values of libcamera's control_ids (stable since 0.0.x).
    static let afModeManual: Int32 = 0, afModeContinuous: Int32 = 2
    static let afRangeMacro: Int32 = 1, afSpeedFast: Int32 = 1, afMeteringWindows: Int32 = 1
    static let aeConstraintHighlight: Int32 = 1, aeExposureShort: Int32 = 1, meteringCentreWeighted: Int32 = 0

    /// The controls for `Camera::start()`. `afWindow`: the ROI in `ScalerCropMaximum` coordinates
    /// (`afWindow(sensorRegion:crop:)`), used by `auto`.
    public static func atStart(_ settings: CameraSettings, offered list: [LibcameraControlOffer],
                               afWindow: PixelRect?) -> CameraControlPlan<LibcameraControlSetting> {
        var offered: [String: LibcameraControlOffer] = [:]
        for o in list { offered[o.name] = o }
        var plan = CameraControlPlan<LibcameraControlSetting>()
        /// Sets an enum control when the camera offers that value; else it is missing.
        func setEnum(_ name: String, _ value: Int32, _ label: String) {
            guard let o = offered[name], o.offers(Double(value)) else { plan.missing.append(name); return }
            plan.settings.append(LibcameraControlSetting(name, .int(value), label: label))
        }
        let hasLens = offered["LensPosition"] != nil && offered["AfMode"] != nil
        plan.fixedFocus = offered["LensPosition"] == nil && offered["AfMode"] == nil
        switch settings.focus {
        case .camera:
            break
        case .v4l2:
            // A USB camera's units mean nothing to a libcamera lens.
            plan.missing.append("focus_absolute")
        case .distance:
            guard hasLens, let lens = offered["LensPosition"] else {
                plan.missing += ["AfMode", "LensPosition"].filter { offered[$0] == nil }
                break
            }
            // AfMode first: LensPosition is ignored unless the mode is manual.
            setEnum("AfMode", afModeManual, "manual")
            let wanted = settings.focus.dioptres ?? 0
            plan.settings.append(LibcameraControlSetting("LensPosition", .float(min(lens.maximum, max(lens.minimum, wanted)))))
        case .auto:
            guard hasLens, let mode = offered["AfMode"], mode.offers(Double(afModeContinuous)) else {
                plan.missing += ["AfMode", "LensPosition"].filter { offered[$0] == nil }
                if offered["AfMode"] != nil { plan.missing.append("AfMode=continuous") }
                break
            }
            setEnum("AfMode", afModeContinuous, "continuous")
            setEnum("AfRange", afRangeMacro, "macro")
            setEnum("AfSpeed", afSpeedFast, "fast")
            if let afWindow, offered["AfWindows"] != nil {
                setEnum("AfMetering", afMeteringWindows, "windows")
                plan.settings.append(LibcameraControlSetting("AfWindows", .rectangles([afWindow])))
            } else {
                plan.missing.append("AfWindows")
            }
        }
        if settings.exposure == .screens {
            setEnum("AeMeteringMode", meteringCentreWeighted, "centre-weighted")
            setEnum("AeConstraintMode", aeConstraintHighlight, "highlight")
            setEnum("AeExposureMode", aeExposureShort, "short")
        }
        return plan
    }

    /// The ROI (`sensorRegion`: fractions of the picture in the sensor's orientation) in sensor
    /// pixels, given the crop the picture shows (`ScalerCrop` in force, or `ScalerCropMaximum`).
    public static func afWindow(sensorRegion r: NormalizedRect, crop: PixelRect) -> PixelRect {
        let x0 = crop.x + Int((r.x * Double(crop.width)).rounded())
        let y0 = crop.y + Int((r.y * Double(crop.height)).rounded())
        let x1 = crop.x + Int(((r.x + r.width) * Double(crop.width)).rounded())
        let y1 = crop.y + Int(((r.y + r.height) * Double(crop.height)).rounded())
        return PixelRect(x: x0, y: y0, width: max(1, x1 - x0), height: max(1, y1 - y0))
    }

    /// The settings to give with each request after the crop changed (zoom): the AF window
    /// follows the ROI; nil when focus is not `auto` or the camera has no `AfWindows`.
    public static func afWindowsUpdate(_ settings: CameraSettings, plan: CameraControlPlan<LibcameraControlSetting>,
                                       sensorRegion: NormalizedRect, crop: PixelRect) -> [LibcameraControlSetting]? {
        guard settings.focus == .auto, plan.settings.contains(where: { $0.name == "AfWindows" }) else { return nil }
        return [LibcameraControlSetting("AfWindows", .rectangles([afWindow(sensorRegion: sensorRegion, crop: crop)]))]
    }
}

extension CameraControlPlan where Setting: CustomStringConvertible {
    public var report: CameraControlReport {
        CameraControlReport(set: settings.map { "\($0)" }, missing: missing, fixedFocus: fixedFocus)
    }
}
