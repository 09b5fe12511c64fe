// SPDX-License-Identifier: Apache-2.0
import Policy

/// The readers' symbols (zbar's and zxing's) made from the bytes they read.
extension DecodedSymbol {
    /// A symbol from its bytes, with their text as `PayloadText` reads them; a pass (`KH1:` + CBOR,
    /// a pass) is binary: its bytes as encoded, no text guessed.
    public init(symbology: Symbology, bytes: [UInt8], location: [PixelPoint], quality: Int) {
        self.init(symbology: symbology, bytes: bytes, text: Pass.isPass(bytes) ? nil : PayloadText.text(bytes), location: location, quality: quality)
    }
}
