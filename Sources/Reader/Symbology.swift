// SPDX-License-Identifier: Apache-2.0
import CZbar
import CZXing
import Policy

/// Which reader reads which symbology: one list (`KIOSK_SYMBOLOGIES`), each name routed here.
///
/// zbar reads QR and the 1D codes first (it is cheap and confirms 1D codes by its scan lines);
/// zxing-cpp reads what zbar cannot (Aztec, Data Matrix, PDF417: zbar 0.23's PDF417 decoder was
/// never finished; Micro QR) and is the second opinion for QR and 1D codes zbar did not read.
/// ISBN-10 and ISBN-13 are zbar's alone (zxing reports them as EAN-13).
extension Symbology {
    /// zbar's number for the symbology, nil when zbar does not read it.
    public var zbarType: zbar_symbol_type_t? {
        switch self {
        case .qrcode: return ZBAR_QRCODE
        case .ean13: return ZBAR_EAN13
        case .ean8: return ZBAR_EAN8
        case .upca: return ZBAR_UPCA
        case .upce: return ZBAR_UPCE
        case .isbn10: return ZBAR_ISBN10
        case .isbn13: return ZBAR_ISBN13
        case .i25: return ZBAR_I25
        case .codabar: return ZBAR_CODABAR
        case .code39: return ZBAR_CODE39
        case .code93: return ZBAR_CODE93
        case .code128: return ZBAR_CODE128
        case .databar: return ZBAR_DATABAR
        case .databarExp: return ZBAR_DATABAR_EXP
        case .aztec, .datamatrix, .pdf417, .microqr: return nil
        }
    }

    public init?(zbarType: zbar_symbol_type_t) {
        guard let match = Symbology.allCases.first(where: { $0.zbarType == zbarType }) else { return nil }
        self = match
    }

    /// The shim's number for the symbology (`KIOSK_ZX_*`), nil when zxing does not read it.
    public var zxingFormat: UInt32? {
        switch self {
        case .qrcode: return KIOSK_ZX_QRCODE
        case .ean13: return KIOSK_ZX_EAN13
        case .ean8: return KIOSK_ZX_EAN8
        case .upca: return KIOSK_ZX_UPCA
        case .upce: return KIOSK_ZX_UPCE
        case .i25: return KIOSK_ZX_ITF
        case .codabar: return KIOSK_ZX_CODABAR
        case .code39: return KIOSK_ZX_CODE39
        case .code93: return KIOSK_ZX_CODE93
        case .code128: return KIOSK_ZX_CODE128
        case .databar: return KIOSK_ZX_DATABAR
        case .databarExp: return KIOSK_ZX_DATABAR_EXPANDED
        case .aztec: return KIOSK_ZX_AZTEC
        case .datamatrix: return KIOSK_ZX_DATAMATRIX
        case .pdf417: return KIOSK_ZX_PDF417
        case .microqr: return KIOSK_ZX_MICROQR
        case .isbn10, .isbn13: return nil
        }
    }

    public init?(zxingFormat: UInt32) {
        guard let match = Symbology.allCases.first(where: { $0.zxingFormat == zxingFormat }) else { return nil }
        self = match
    }

    /// The reader that reads it first: zbar where it can.
    public var firstReader: ReaderLibrary { zbarType != nil ? .zbar : .zxing }
}
