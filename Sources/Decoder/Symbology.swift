// SPDX-License-Identifier: Apache-2.0
import CZbar
import Policy

/// zbar's own numbers for the kiosk's symbologies.
extension Symbology {
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
}
