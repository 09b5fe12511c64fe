// SPDX-License-Identifier: Apache-2.0
import CZbar
import Policy

/// zbar's reading for the scanner: its image scanner made for the kiosk's symbologies (afresh
/// before every scan), on a crop of the frame, on the gathered region or on a picture made from
/// it (the pass buffer), its symbols as the kiosk's.
extension BarcodeScanner {
    static func makeZbarScanner(_ symbologies: [Symbology], density: Int) -> OpaquePointer {
        let scanner = zbar_image_scanner_create()!
        // Everything off, then exactly what was asked for: fewer decoders, less CPU, fewer false reads.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for s in symbologies {
            if let type = s.zbarType { zbar_image_scanner_set_config(scanner, type, ZBAR_CFG_ENABLE, 1) }
        }
        // QR payloads as the symbol's bytes: the text is made by `PayloadText`, not by zbar's guess.
        if symbologies.contains(.qrcode) {
            zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(density))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(density))
        return scanner
    }

    func zbarSymbols(_ luma: LumaPlane, in r: PixelRect) -> [DecodedSymbol] {
        if luma.pixelStride == 1 {
            // zbar has no row stride: present the padded rows as a wider image and crop them away.
            let length = luma.rowStride * (luma.height - 1) + luma.width
            zbar_image_set_size(image, UInt32(luma.rowStride), UInt32(luma.height))
            zbar_image_set_data(image, luma.base, UInt(length), nil)
            zbar_image_set_crop(image, UInt32(r.x), UInt32(r.y), UInt32(r.width), UInt32(r.height))
            defer { zbar_image_set_data(image, nil, 0, nil) }
            return runScanner()
        }
        // Packed luma (YUYV): gather just the region's luma bytes.
        gather(luma, r)
        return gathered.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(r.width), UInt32(r.height))
            zbar_image_set_crop(image, 0, 0, UInt32(r.width), UInt32(r.height))
            zbar_image_set_data(image, buf.baseAddress, UInt(r.width * r.height), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            return runScanner().map { s in
                var moved = s
                moved.location = s.location.map { PixelPoint(x: $0.x + r.x, y: $0.y + r.y) }
                return moved
            }
        }
    }

    /// zbar on the first `ow` x `oh` bytes of `passBuffer`, a picture made from region `r` at
    /// `scale` (its pixels : the region's), as readings in sensor pixels.
    func zbarReadingsOfPassBuffer(width ow: Int, height oh: Int, scale: (Int, Int), region r: PixelRect) -> [Reading] {
        passBuffer.withUnsafeBufferPointer { buf in
            zbar_image_set_size(image, UInt32(ow), UInt32(oh))
            zbar_image_set_crop(image, 0, 0, UInt32(ow), UInt32(oh))
            zbar_image_set_data(image, buf.baseAddress, UInt(ow * oh), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            let symbols = runScanner()
            let plane = LumaPlane(base: buf.baseAddress!, width: ow, height: oh, rowStride: ow)
            return readings(symbols, luma: plane, region: PixelRect(x: 0, y: 0, width: ow, height: oh),
                            scale: scale, origin: (r.x, r.y), within: r)
        }
    }

    /// zbar's symbols in the image's own pixel coordinates. zbar's decoder keeps half-read EAN
    /// codes from one image to the next, and the public API has no way to reset the decoder of
    /// an image scanner (setting a configuration again does not clear them: measured, see
    /// AccuracyCorpusTests), and half-codes are kept without any symbol being reported, so every
    /// scan after the first gets a fresh zbar scanner: each starts clean. That costs zbar's own
    /// few allocations (decoder, line scanner, QR reader), about 10 microseconds a scan.
    private func runScanner() -> [DecodedSymbol] {
        if dirty {
            zbar_image_scanner_destroy(scanner)
            scanner = BarcodeScanner.makeZbarScanner(symbologies, density: density)
            dirty = false
        }
        dirty = true
        let found = zbar_scan_image(scanner, image)
        guard found > 0 else { return [] }
        var symbols: [DecodedSymbol] = []
        var symbol = zbar_image_first_symbol(image)
        while let s = symbol {
            defer { symbol = zbar_symbol_next(s) }
            guard let symbology = Symbology(zbarType: zbar_symbol_get_type(s)) else { continue }
            let length = Int(zbar_symbol_get_data_length(s))
            let bytes: [UInt8] = zbar_symbol_get_data(s).map { data in
                data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
            } ?? []
            var location: [PixelPoint] = []
            for i in 0..<zbar_symbol_get_loc_size(s) {
                location.append(PixelPoint(x: Int(zbar_symbol_get_loc_x(s, i)), y: Int(zbar_symbol_get_loc_y(s, i))))
            }
            symbols.append(DecodedSymbol(symbology: symbology, bytes: bytes, location: location,
                                         quality: Int(zbar_symbol_get_quality(s))))
        }
        return symbols
    }
}
