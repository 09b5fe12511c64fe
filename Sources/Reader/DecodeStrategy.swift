// SPDX-License-Identifier: Apache-2.0
// The decoding strategy's two lists: the extra passes tried on a region plain zbar did not read
// (`ExtraPass`), and the attempts a presentation that did not read gets on its later frames
// (`Attempt`). What the scanner does with them is `BarcodeScanner`'s.

/// The passes tried on a region after plain zbar found nothing in it, and what they cost and won.
///
/// The zbar passes turn the region's luma (gathered once into a reusable buffer) into another
/// picture in a second reusable buffer and hand that to zbar; the zxing pass reads the region
/// itself with zxing-cpp. Which passes are kept, and in which order, was measured on the photo
/// corpus (`kiosk-dev accuracy --corpus`, docs/measurements/accuracy.md).
public enum ExtraPass: String, CaseIterable, Sendable {
    /// zxing-cpp on the region, upright: the only reader of Aztec, Data Matrix, PDF417 and Micro
    /// QR, and a second opinion for the QR and 1D codes plain zbar did not read.
    case zxing
    /// 3x3 sharpening (2 x centre - mean of the 4 neighbours): blurred and shadowed bars get their
    /// edges back. The largest win on the photo corpus (13 of the 28 regions plain zbar missed).
    case sharpen
    /// Bilinear 2x enlargement, then `sharpen`: small QR modules and thin bars get enough pixels
    /// for zbar's finder (8 more of the 28, after `sharpen`).
    case upscaleSharpen = "up2sharp"

    /// The passes, in the order they are tried. Measured on the corpus (docs/measurements/accuracy.md): a
    /// global contrast stretch, a local (adaptive) threshold, a 2x2 downscale, a 3x3 blur and a
    /// plain 2x upscale won nothing that these do not, and were removed. Inversion, which won
    /// nothing on the corpus either, is an `Attempt`: tried on a later frame of a
    /// presentation, not on every decode.
    public static let kept: [ExtraPass] = [.zxing, .sharpen, .upscaleSharpen]

    /// How many times larger the pass's picture is than the region, each way.
    var scale: Int { self == .upscaleSharpen ? 2 : 1 }
}

/// What a presentation that did not read on its first decode is given on each later decoded
/// frame, one a frame (`AttemptSchedule` in Policy says which), before the extra passes:
/// a picture made from the region for what a phone screen does to a code, read by zbar (and by
/// zxing where said). Measured on the drawn screens (`kiosk-dev screens`, docs/measurements/phone-screens.md): seven candidates were tried; a 2x2 area average, a 3x3 closing against the
/// pixel grid, the local stretch alone and zxing's global-histogram binariser read no frame that
/// these three do not, and were removed.
public enum Attempt: String, CaseIterable, Sendable {
    /// A local contrast stretch (`PassImage.stretch`: each pixel between the darkest and lightest
    /// of the 3x3 blocks around it), then a 3x3 minimum (each dark module grows by a pixel all
    /// round), read by zbar. An overexposed screen's light spills into its dark modules before
    /// the sensor clips it (bloom): they come out a pixel or two thinner than the light ones, in
    /// 35-55 levels of contrast, and neither reader finds a QR code's finder pattern in
    /// proportion (1:1:3:1:1); the stretch gives the contrast back and the minimum the pixels.
    /// It also reads most codes whose moiré or pixel grid defeats plain zbar (the grid's light
    /// dots inside dark modules are the same thinning).
    case bloom
    /// Each row stretched on its own (`PassImage.rowStretch`: between the darkest and lightest
    /// pixel of the row within a twentieth of the region's width), read by zbar: a dimmed
    /// screen's PWM seen through a rolling shutter darkens whole rows in bands; a glare spot's
    /// slope flattens too.
    case rows
    /// 255 - luma, read by zbar and then zxing: light-on-dark codes (a phone's dark mode), which
    /// neither reads as they are (zxing-cpp 1.4 has no inverted reading; 2.x's is turned off in
    /// the shim so that both versions read alike). zxing here reads the dark-mode screens whose
    /// moiré zbar misses: without it one in four of the drawn ones was read, late, not at all.
    case invert

    /// The attempts in the order a presentation gets them, one a frame: by the frames each reads
    /// that no attempt before it read, a millisecond of its cost, each look counted alike
    /// (docs/measurements/phone-screens.md).
    public static let kept: [Attempt] = [.bloom, .rows, .invert]
}
