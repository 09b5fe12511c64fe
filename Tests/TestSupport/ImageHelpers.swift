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

