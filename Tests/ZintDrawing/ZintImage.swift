// SPDX-License-Identifier: Apache-2.0
import CZint
import Policy

/// Matrix and stacked codes drawn by zint (Aztec, Data Matrix, PDF417, Micro QR) as clean
/// black-on-white grey images: for the decoder's tests and the bench's workloads. Never linked
/// into the shipped kiosk.
public enum ZintImage {
    public enum Kind: Sendable {
        case aztec, dataMatrix, pdf417, microQR

        var zintSymbology: Int32 {
            switch self {
            case .aztec: return BARCODE_AZTEC
            case .dataMatrix: return BARCODE_DATAMATRIX
            case .pdf417: return BARCODE_PDF417
            case .microQR: return BARCODE_MICROQR
            }
        }
    }

    public struct RenderError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `text` (UTF-8; zint encodes it in the symbology's default character set, ISO-8859-1, or
    /// with an ECI when it needs one) with `moduleSize` pixels a module and `quietZone` white
    /// modules around it.
    public static func render(_ kind: Kind, text: String, moduleSize: Int = 4, quietZone: Int = 4) throws -> GrayImage {
        try render(kind, bytes: Array(text.utf8), unicode: true, moduleSize: moduleSize, quietZone: quietZone)
    }

    /// Raw `bytes` in the symbology's byte mode, no ECI.
    public static func render(_ kind: Kind, bytes: [UInt8], moduleSize: Int = 4, quietZone: Int = 4) throws -> GrayImage {
        try render(kind, bytes: bytes, unicode: false, moduleSize: moduleSize, quietZone: quietZone)
    }

    static func render(_ kind: Kind, bytes: [UInt8], unicode: Bool, moduleSize: Int, quietZone: Int) throws -> GrayImage {
        precondition(moduleSize >= 1 && quietZone >= 0)
        guard let symbol = ZBarcode_Create() else { throw RenderError(description: "ZBarcode_Create failed") }
        defer { ZBarcode_Delete(symbol) }
        symbol.pointee.symbology = kind.zintSymbology
        // zint's raster output draws one module as 2 * scale pixels.
        symbol.pointee.scale = Float(moduleSize) / 2
        symbol.pointee.show_hrt = 0
        symbol.pointee.whitespace_width = Int32(quietZone)
        symbol.pointee.whitespace_height = Int32(quietZone)
        symbol.pointee.input_mode = unicode ? UNICODE_MODE : DATA_MODE
        if ZBarcode_Encode(symbol, bytes, Int32(bytes.count)) >= ZINT_ERROR {
            throw RenderError(description: "zint cannot encode \(kind) (\(bytes.count) bytes): \(errorText(symbol))")
        }
        return try picture(of: symbol, what: "\(kind)")
    }

    /// An encoded symbol drawn (ZBarcode_Buffer) and its RGB raster made grey: the one place that
    /// turns zint's bitmap into a `GrayImage` (Barcode1D uses it too). `what` names it in errors.
    public static func picture(of symbol: UnsafeMutablePointer<zint_symbol>, what: String) throws -> GrayImage {
        if ZBarcode_Buffer(symbol, 0) >= ZINT_ERROR {
            throw RenderError(description: "zint cannot draw \(what): \(errorText(symbol))")
        }
        guard let bitmap = symbol.pointee.bitmap else { throw RenderError(description: "zint returned no bitmap for \(what)") }
        let width = Int(symbol.pointee.bitmap_width), rows = Int(symbol.pointee.bitmap_height)
        // RGB, 3 bytes a pixel; the full luma formula keeps this right for any colours.
        var image = GrayImage(width: width, height: rows)
        for i in 0..<(width * rows) {
            let r = Int(bitmap[3 * i]), g = Int(bitmap[3 * i + 1]), b = Int(bitmap[3 * i + 2])
            image.pixels[i] = UInt8((299 * r + 587 * g + 114 * b + 500) / 1000)
        }
        return image
    }

    public static func errorText(_ symbol: UnsafeMutablePointer<zint_symbol>) -> String {
        withUnsafeBytes(of: symbol.pointee.errtxt) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
