// SPDX-License-Identifier: Apache-2.0
import Camera
import CQRencode
import Glibc
import Policy

public struct CodeRenderError: Error, CustomStringConvertible {
    public var description: String
}

/// Draws QR codes with libqrencode: the demo's codes and the tests' codes come from a real encoder.
public enum QRCodeImage {
    /// A black-on-white QR code of `text`, `moduleSize` pixels a module, with the standard quiet
    /// zone of four modules.
    public static func render(_ text: String, moduleSize: Int = 4, quietZone: Int = 4) throws -> GrayImage {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw CodeRenderError(description: "libqrencode cannot encode \(text.utf8.count) bytes: \(String(cString: strerror(errno)))")
        }
        defer { QRcode_free(code) }
        return draw(code, moduleSize: moduleSize, quietZone: quietZone)
    }
}

extension QRCodeImage {
    /// A black-on-white QR code of raw `bytes` in libqrencode's 8-bit mode, optionally after an
    /// ECI designator (`eci`): for payloads in other character sets than UTF-8.
    public static func render(bytes: [UInt8], eci: UInt32? = nil, moduleSize: Int = 4, quietZone: Int = 4) throws -> GrayImage {
        guard let input = QRinput_new2(0, QR_ECLEVEL_M) else { throw CodeRenderError(description: "QRinput_new2 failed") }
        defer { QRinput_free(input) }
        if let eci, QRinput_appendECIheader(input, eci) != 0 {
            throw CodeRenderError(description: "libqrencode refuses ECI \(eci)")
        }
        guard QRinput_append(input, QR_MODE_8, Int32(bytes.count), bytes) == 0,
              let code = QRcode_encodeInput(input) else {
            throw CodeRenderError(description: "libqrencode cannot encode \(bytes.count) bytes: \(String(cString: strerror(errno)))")
        }
        defer { QRcode_free(code) }
        return draw(code, moduleSize: moduleSize, quietZone: quietZone)
    }

    /// libqrencode's module matrix as black modules on white, with the quiet zone.
    static func draw(_ code: UnsafeMutablePointer<QRcode>, moduleSize: Int, quietZone: Int) -> GrayImage {
        let modules = Int(code.pointee.width)
        let side = (modules + 2 * quietZone) * moduleSize
        var image = GrayImage(width: side, height: side, fill: 255)
        for my in 0..<modules {
            for mx in 0..<modules where code.pointee.data[my * modules + mx] & 1 == 1 {
                let x0 = (mx + quietZone) * moduleSize, y0 = (my + quietZone) * moduleSize
                for y in y0..<(y0 + moduleSize) {
                    for x in x0..<(x0 + moduleSize) { image[x, y] = 0 }
                }
            }
        }
        return image
    }
}
