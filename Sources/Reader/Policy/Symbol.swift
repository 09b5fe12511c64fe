// SPDX-License-Identifier: Apache-2.0
/// A barcode symbology the kiosk can be told to read (`KIOSK_SYMBOLOGIES`), named as zbar's own
/// configuration names them (`zbarimg -S`); the ones zbar cannot read (Aztec, Data Matrix,
/// PDF417, Micro QR: zxing-cpp reads them) in the same style. Which reader reads which is the
/// decoder's business (`Decoder/Symbology.swift`).
public enum Symbology: String, CaseIterable, Sendable {
    case qrcode, ean13, ean8, upca, upce, isbn10, isbn13, i25, codabar, code39, code93, code128
    case databar
    case databarExp = "databar-exp"
    case aztec, datamatrix, pdf417, microqr

    /// A linear (1D) code: read along scan lines, so a reading must be confirmed (docs/design/reading-codes.md).
    public var isLinear: Bool {
        switch self {
        case .qrcode, .aztec, .datamatrix, .pdf417, .microqr: return false
        default: return true
        }
    }

    /// The name zbar prints (`QR-Code`, `EAN-13`, `CODE-128`): what the `scan` event carries; for
    /// the codes only zxing-cpp reads, zxing's name (`Aztec`, `DataMatrix`, `PDF417`, `MicroQRCode`).
    /// (The decoder's tests hold this table to zbar's `zbar_get_symbol_name` and zxing's names.)
    public var displayName: String {
        switch self {
        case .qrcode: return "QR-Code"
        case .ean13: return "EAN-13"
        case .ean8: return "EAN-8"
        case .upca: return "UPC-A"
        case .upce: return "UPC-E"
        case .isbn10: return "ISBN-10"
        case .isbn13: return "ISBN-13"
        case .i25: return "I2/5"
        case .codabar: return "Codabar"
        case .code39: return "CODE-39"
        case .code93: return "CODE-93"
        case .code128: return "CODE-128"
        case .databar: return "DataBar"
        case .databarExp: return "DataBar-Exp"
        case .aztec: return "Aztec"
        case .datamatrix: return "DataMatrix"
        case .pdf417: return "PDF417"
        case .microqr: return "MicroQRCode"
        }
    }
}

/// One code a reader found in a frame.
public struct DecodedSymbol: Equatable, Sendable {
    public var symbology: Symbology
    /// The payload's bytes: for QR codes exactly as encoded in the symbol (zbar is told
    /// `ZBAR_CFG_BINARY`), for Code 128 the re-read text as UTF-8, else as zbar returned them.
    /// A stranger printed it: treat it as data.
    public let bytes: [UInt8]
    /// The payload as text (the decoder's `PayloadText`: UTF-8, else Shift-JIS, ISO-8859-1, EUC-JP or GB2312 by
    /// the QR specification's rules), or nil when it is not text (control bytes): then see `hex`.
    public let text: String?
    /// The bytes as lowercase hex when the payload is not text, else nil.
    public var hex: String? { text == nil ? PayloadBytes.hex(bytes) : nil }
    /// The symbol's outline in sensor pixels (zbar's location polygon).
    public var location: [PixelPoint]
    /// zbar's relative quality figure (higher is better; for 1D codes the number of scan lines that agreed).
    public var quality: Int

    public init(symbology: Symbology, bytes: [UInt8], text: String?, location: [PixelPoint], quality: Int) {
        self.symbology = symbology
        self.bytes = bytes
        self.text = text
        self.location = location
        self.quality = quality
    }
}

public struct PixelPoint: Equatable, Sendable {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) { self.x = x; self.y = y }
}

/// A payload's bytes as the log shows them.
public enum PayloadBytes {
    /// Lowercase hex, two digits a byte.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The longest prefix of the UTF-8 `bytes`, at most `limit` long, that ends between two
    /// characters (never inside a multi-byte sequence).
    public static func utf8Boundary(in bytes: [UInt8], atMost limit: Int) -> Int {
        guard limit < bytes.count else { return bytes.count }
        var cut = max(0, limit)
        // A continuation byte (10xxxxxx) at the cut belongs to the character before it.
        while cut > 0 && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return cut
    }
}
