// SPDX-License-Identifier: Apache-2.0
import CZbar

/// A barcode symbology the kiosk can be told to read (`KIOSK_SYMBOLOGIES`), named as zbar's own
/// configuration names them (`zbarimg -S`).
public enum Symbology: String, CaseIterable, Sendable {
    case qrcode, ean13, ean8, upca, upce, isbn10, isbn13, i25, codabar, code39, code93, code128
    case databar
    case databarExp = "databar-exp"

    public var zbarType: zbar_symbol_type_t {
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
        }
    }

    public init?(zbarType: zbar_symbol_type_t) {
        guard let match = Symbology.allCases.first(where: { $0.zbarType == zbarType }) else { return nil }
        self = match
    }

    /// The name zbar prints (`QR-Code`, `EAN-13`, `CODE-128`): what the `scan` event carries.
    public var displayName: String {
        String(cString: zbar_get_symbol_name(zbarType))
    }
}
