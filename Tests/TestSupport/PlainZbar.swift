// SPDX-License-Identifier: Apache-2.0
import CZbar
import Policy
import Reader

/// zbar as anyone would call it, the reference the kiosk's reader is measured against (`kiosk-dev
/// accuracy`, the reader's tests): zbar's default configuration with only the given symbologies
/// enabled, the whole image, zbar's text taken as UTF-8. No region of interest, no agreement
/// rule, no second reader. Never linked into the shipped kiosk.
///
/// One instance is one zbar scanner: reused across pictures it carries zbar's state from one to
/// the next, as zbar's video mode does; `PlainZbar.read` uses a fresh one for each picture.
public final class PlainZbar {
    private let scanner: OpaquePointer

    public init(symbologies: [Symbology]) {
        scanner = zbar_image_scanner_create()!
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for s in symbologies {
            if let type = s.zbarType { zbar_image_scanner_set_config(scanner, type, ZBAR_CFG_ENABLE, 1) }
        }
    }

    deinit { zbar_image_scanner_destroy(scanner) }

    /// The texts this scanner reads in `picture`.
    public func read(_ picture: GrayImage) -> [String] {
        let image = zbar_image_create()!
        defer { zbar_image_destroy(image) }
        zbar_image_set_format(image, 0x3030_3859)  // Y800
        zbar_image_set_size(image, UInt32(picture.width), UInt32(picture.height))
        return picture.pixels.withUnsafeBufferPointer { buf in
            zbar_image_set_data(image, buf.baseAddress, UInt(buf.count), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            guard zbar_scan_image(scanner, image) > 0 else { return [] }
            var texts: [String] = []
            var symbol = zbar_image_first_symbol(image)
            while let s = symbol {
                texts.append(String(decoding: UnsafeRawBufferPointer(start: zbar_symbol_get_data(s),
                                                                    count: Int(zbar_symbol_get_data_length(s))), as: UTF8.self))
                symbol = zbar_symbol_next(s)
            }
            return texts
        }
    }

    /// What a fresh scanner reads in `picture`.
    public static func read(_ picture: GrayImage, symbologies: [Symbology]) -> [String] {
        PlainZbar(symbologies: symbologies).read(picture)
    }
}
