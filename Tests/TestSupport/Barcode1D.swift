// SPDX-License-Identifier: Apache-2.0
import Camera
import CZint
import Policy
import ZintDrawing

/// Draws 1D barcodes with zint, as clean black-on-white grey images for the decoder's tests.
public enum Barcode1D {
    public enum Symbology: CaseIterable {
        /// 12 digits (zint adds the check digit) or 13 with a correct check digit.
        case ean13
        /// 7 digits (zint adds the check digit) or 8 with a correct check digit.
        case ean8
        /// 11 digits (zint adds the check digit) or 12 with a correct check digit.
        case upcA
        /// Any ASCII text.
        case code128

        var zintSymbology: Int32 {
            switch self {
            // zint draws EAN-8 and EAN-13 with one symbology and picks by the data's length.
            case .ean13, .ean8: return BARCODE_EANX
            case .upcA: return BARCODE_UPCA
            case .code128: return BARCODE_CODE128
            }
        }
    }

    public struct RenderError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Renders `data` with `moduleWidth` pixels for each bar module, bars `height` pixels tall,
    /// and `quietZone` white modules left and right (no human-readable text, no guard-bar
    /// extension, so the image is exactly `height` pixels tall).
    ///
    /// The width is (symbol modules + 2 * quietZone) * moduleWidth; an EAN-13 is 95 modules.
    public static func render(symbology: Symbology, data: String, moduleWidth: Int = 2, height: Int = 80,
                              quietZone: Int = 10) throws -> GrayImage {
        precondition(moduleWidth >= 1 && height >= 1 && quietZone >= 0)
        guard let symbol = ZBarcode_Create() else {
            throw RenderError(message: "ZBarcode_Create failed")
        }
        defer { ZBarcode_Delete(symbol) }

        symbol.pointee.symbology = symbology.zintSymbology
        symbol.pointee.show_hrt = 0
        // zint's raster output draws one module as 2 * scale pixels.
        symbol.pointee.scale = Float(moduleWidth) / 2
        // Heights are in modules too.
        symbol.pointee.height = Float(height) / Float(moduleWidth)
        symbol.pointee.guard_descent = 0
        // Only the quiet zone asked for: zint's own default EAN/UPC quiet zones are turned off.
        symbol.pointee.output_options = BARCODE_NO_QUIET_ZONES
        symbol.pointee.whitespace_width = Int32(quietZone)

        // The text is UTF-8; zint turns it into the symbology's own character set (ISO-8859-1 for
        // Code 128, whose characters 128-255 it encodes with FNC4).
        symbol.pointee.input_mode = UNICODE_MODE
        let bytes = Array(data.utf8)
        let encoded = ZBarcode_Encode(symbol, bytes, Int32(bytes.count))
        // Below ZINT_ERROR the result is a warning and the symbol was made.
        if encoded >= ZINT_ERROR {
            throw RenderError(message: "zint cannot encode \(symbology) \"\(data)\": \(ZintImage.errorText(symbol))")
        }
        return try ZintImage.picture(of: symbol, what: "\(symbology) \"\(data)\"")
    }
}
