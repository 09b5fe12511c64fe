// SPDX-License-Identifier: Apache-2.0
/// Zoom to the region of interest, done the way a camera with a scaler can (`KIOSK_ZOOM=1`, the
/// seeds' pinch-zoom): the camera crops its sensor to the area under the ROI (libcamera's
/// `ScalerCrop`) and scales only that to the stream, so the ROI is read at the sensor's resolution
/// instead of being cut out of a downscaled frame.
///
/// Two things follow from a crop, and both are here so that the frame loop, `snapshot` and the
/// tests agree: which sensor rectangle to ask for, and, for a frame made from a crop, which part
/// of the unzoomed picture it shows (its `view`), from which the ROI inside that frame follows.
public enum SensorZoom {
    /// Room left around the ROI on each side, as a fraction of its size: a code held at the ROI's
    /// edge is still whole in the cropped frame.
    public static let margin = 0.05

    /// The crop for an ROI. `roi` is in the sensor's orientation (`Mount.sensorRegion`), as
    /// fractions of `reference`, the sensor area the unzoomed picture shows (the crop the camera
    /// applies before zoom; else its largest crop). The crop is the ROI with `margin` around it,
    /// grown to the stream's aspect ratio (so the picture is not stretched), kept inside `maximum`
    /// (sliding before shrinking), in whole sensor pixels.
    public static func crop(for roi: NormalizedRect, reference: PixelRect, maximum: PixelRect,
                            streamWidth: Int, streamHeight: Int) -> PixelRect {
        guard !reference.isEmpty, !maximum.isEmpty, streamWidth > 0, streamHeight > 0 else { return maximum }
        let refW = Double(reference.width), refH = Double(reference.height)
        var w = roi.width * (1 + 2 * margin) * refW
        var h = roi.height * (1 + 2 * margin) * refH
        let cx = Double(reference.x) + (roi.x + roi.width / 2) * refW
        let cy = Double(reference.y) + (roi.y + roi.height / 2) * refH
        let aspect = Double(streamWidth) / Double(streamHeight)
        if w / h < aspect { w = h * aspect } else { h = w / aspect }
        // Too big for the sensor: the largest crop of that aspect (the ROI then is most of the view).
        let scale = min(1, Double(maximum.width) / w, Double(maximum.height) / h)
        w *= scale
        h *= scale
        let width = max(1, min(maximum.width, Int(w.rounded())))
        let height = max(1, min(maximum.height, Int(h.rounded())))
        let x = min(max(maximum.x, Int((cx - Double(width) / 2).rounded())), maximum.x + maximum.width - width)
        let y = min(max(maximum.y, Int((cy - Double(height) / 2).rounded())), maximum.y + maximum.height - height)
        return PixelRect(x: x, y: y, width: width, height: height)
    }

    /// The part of the unzoomed picture (`reference`, in sensor pixels) that a frame made from
    /// `crop` shows, as fractions of it.
    public static func view(of crop: PixelRect, reference: PixelRect) -> NormalizedRect {
        guard !reference.isEmpty else { return .whole }
        return NormalizedRect(x: Double(crop.x - reference.x) / Double(reference.width),
                              y: Double(crop.y - reference.y) / Double(reference.height),
                              width: Double(crop.width) / Double(reference.width),
                              height: Double(crop.height) / Double(reference.height))
    }
}

extension NormalizedRect {
    /// This region (fractions of the whole picture) as fractions of `view`, a part of the picture:
    /// where it lies in a frame that shows only `view`. It may reach outside 0...1 where the
    /// region is not all in view; `pixels` clamps it to the frame.
    public func relative(to view: NormalizedRect) -> NormalizedRect {
        guard view != .whole, view.width > 0, view.height > 0 else { return self }
        return NormalizedRect(x: (x - view.x) / view.width, y: (y - view.y) / view.height,
                              width: width / view.width, height: height / view.height)
    }
}

extension Mount {
    /// The sensor pixels to scan in a frame that shows `view` of the unzoomed picture (the whole
    /// of it without zoom): the ROI mapped to the sensor, then into the frame's own fractions.
    public func sensorROI(fromUpright r: NormalizedRect, sensorWidth: Int, sensorHeight: Int,
                          view: NormalizedRect) -> PixelRect {
        sensorRegion(fromUpright: r).relative(to: view).pixels(width: sensorWidth, height: sensorHeight)
    }
}
