// SPDX-License-Identifier: Apache-2.0
import Policy

/// The readers' symbols (zbar's and zxing's) made from the bytes they read.
extension DecodedSymbol {
    /// A symbol from its bytes, with their text as `PayloadText` reads them. What kind of code it
    /// is (a pass's CBOR is binary, never text) is decided once, when it is reported (`CodeKind`).
    public init(symbology: Symbology, bytes: [UInt8], location: [PixelPoint], quality: Int) {
        self.init(symbology: symbology, bytes: bytes, text: PayloadText.text(bytes), location: location, quality: quality)
    }
}
