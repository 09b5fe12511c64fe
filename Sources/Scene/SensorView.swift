// SPDX-License-Identifier: Apache-2.0
import Camera
import Reader
import Policy

/// Turns upright pictures into what a camera mounted with `mount` would deliver.
///
/// The mapping from each sensor pixel to the upright pixel it shows is computed once for a size,
/// from the same `Mount` transform the decoder uses for the ROI, so the simulated camera and the
/// kiosk agree by construction only if that transform is right both ways - which the ROI tests
/// check by decoding.
public struct SensorView {
    public let mount: Mount
    public let uprightWidth: Int
    public let uprightHeight: Int
    public let sensorWidth: Int
    public let sensorHeight: Int
    /// For each sensor pixel (row-major), the index of the upright pixel it shows.
    private let sourceIndex: [Int32]

    public init(mount: Mount, uprightWidth: Int, uprightHeight: Int) {
        self.mount = mount
        self.uprightWidth = uprightWidth
        self.uprightHeight = uprightHeight
        let sensor = mount.sensorSize(uprightWidth: uprightWidth, uprightHeight: uprightHeight)
        sensorWidth = sensor.width
        sensorHeight = sensor.height
        var index = [Int32](repeating: 0, count: sensor.width * sensor.height)
        for sy in 0..<sensor.height {
            for sx in 0..<sensor.width {
                // The centre of the sensor pixel, carried to the upright picture.
                let p = mount.uprightPoint(fromSensor: NormalizedPoint(x: (Double(sx) + 0.5) / Double(sensor.width),
                                                                     y: (Double(sy) + 0.5) / Double(sensor.height)))
                let ux = min(uprightWidth - 1, Int(p.x * Double(uprightWidth)))
                let uy = min(uprightHeight - 1, Int(p.y * Double(uprightHeight)))
                index[sy * sensor.width + sx] = Int32(uy * uprightWidth + ux)
            }
        }
        sourceIndex = index
    }

    /// Writes the sensor's view of `upright` into `sensor` (reused between frames).
    public func render(_ upright: GrayImage, into sensor: inout GrayImage) {
        precondition(upright.width == uprightWidth && upright.height == uprightHeight)
        precondition(sensor.width == sensorWidth && sensor.height == sensorHeight)
        upright.pixels.withUnsafeBufferPointer { src in
            sensor.pixels.withUnsafeMutableBufferPointer { dst in
                sourceIndex.withUnsafeBufferPointer { idx in
                    for i in 0..<idx.count { dst[i] = src[Int(idx[i])] }
                }
            }
        }
    }

    public func sensorImage(of upright: GrayImage) -> GrayImage {
        var sensor = GrayImage(width: sensorWidth, height: sensorHeight)
        render(upright, into: &sensor)
        return sensor
    }
}
