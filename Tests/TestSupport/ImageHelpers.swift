// SPDX-License-Identifier: Apache-2.0
import Camera
import Glibc
import Policy

/// Turns the image clockwise by `quarterTurns` * 90 degrees (negative turns go anticlockwise).
public func rotatedClockwise(_ image: GrayImage, quarterTurns: Int) -> GrayImage {
    var result = image
    for _ in 0..<(((quarterTurns % 4) + 4) % 4) {
        result = rotatedOnceClockwise(result)
    }
    return result
}

private func rotatedOnceClockwise(_ image: GrayImage) -> GrayImage {
    // The source's left column becomes the top row, read bottom to top.
    var result = GrayImage(width: image.height, height: image.width)
    for y in 0..<result.height {
        for x in 0..<result.width {
            result[x, y] = image[y, image.height - 1 - x]
        }
    }
    return result
}

/// The image as seen in a mirror: each row reversed.
public func mirroredLeftRight(_ image: GrayImage) -> GrayImage {
    var result = image
    for y in 0..<image.height {
        for x in 0..<image.width {
            result[x, y] = image[image.width - 1 - x, y]
        }
    }
    return result
}

/// `image` turned by `degrees` (clockwise on screen) about its centre, on a canvas just large
/// enough, the corners filled with `fill`; bilinear, as a camera's optics and sensor would blur it.
public func rotated(_ image: GrayImage, degrees: Double, fill: UInt8) -> GrayImage {
    let a = degrees * Double.pi / 180, c = cos(a), s = sin(a)
    let w = Double(image.width), h = Double(image.height)
    let width = Int((abs(w * c) + abs(h * s)).rounded(.up)), height = Int((abs(w * s) + abs(h * c)).rounded(.up))
    var out = GrayImage(width: width, height: height, fill: fill)
    for y in 0..<height {
        for x in 0..<width {
            let dx = Double(x) - Double(width) / 2, dy = Double(y) - Double(height) / 2
            let sx = c * dx + s * dy + w / 2, sy = -s * dx + c * dy + h / 2
            guard sx >= 0, sy >= 0, sx < w - 1, sy < h - 1 else { continue }
            let x0 = Int(sx), y0 = Int(sy), fx = sx - Double(x0), fy = sy - Double(y0)
            let v = Double(image[x0, y0]) * (1 - fx) * (1 - fy) + Double(image[x0 + 1, y0]) * fx * (1 - fy)
                + Double(image[x0, y0 + 1]) * (1 - fx) * fy + Double(image[x0 + 1, y0 + 1]) * fx * fy
            out[x, y] = UInt8(v.rounded())
        }
    }
    return out
}
