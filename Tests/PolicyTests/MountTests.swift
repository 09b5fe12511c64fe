// SPDX-License-Identifier: Apache-2.0
@testable import Policy
import XCTest

final class MountTests: XCTestCase {
    func testEveryMountIsUndoneByItsInverse() {
        let points = [NormalizedPoint(x: 0.1, y: 0.2), NormalizedPoint(x: 0.9, y: 0.05), NormalizedPoint(x: 0.5, y: 0.5)]
        for mount in Mount.all {
            for p in points {
                let back = mount.sensorPoint(fromUpright: mount.uprightPoint(fromSensor: p))
                XCTAssertEqual(back.x, p.x, accuracy: 1e-12, "\(mount)")
                XCTAssertEqual(back.y, p.y, accuracy: 1e-12, "\(mount)")
            }
        }
        XCTAssertEqual(Mount.all.count, 8)
    }

    /// Where the sensor's top-left corner ends up in the upright picture, worked out by hand from
    /// interface.md: mirror left-right first, then turn clockwise.
    func testSensorTopLeftCornerLandsWhereTheDefinitionSays() {
        let topLeft = NormalizedPoint(x: 0, y: 0)
        let expected: [(Mount, NormalizedPoint)] = [
            (Mount(rotation: .none, mirrored: false), NormalizedPoint(x: 0, y: 0)),
            (Mount(rotation: .quarter, mirrored: false), NormalizedPoint(x: 1, y: 0)),
            (Mount(rotation: .half, mirrored: false), NormalizedPoint(x: 1, y: 1)),
            (Mount(rotation: .threeQuarters, mirrored: false), NormalizedPoint(x: 0, y: 1)),
            (Mount(rotation: .none, mirrored: true), NormalizedPoint(x: 1, y: 0)),
            (Mount(rotation: .quarter, mirrored: true), NormalizedPoint(x: 1, y: 1)),
            (Mount(rotation: .half, mirrored: true), NormalizedPoint(x: 0, y: 1)),
            (Mount(rotation: .threeQuarters, mirrored: true), NormalizedPoint(x: 0, y: 0)),
        ]
        for (mount, corner) in expected {
            XCTAssertEqual(mount.uprightPoint(fromSensor: topLeft), corner, "\(mount)")
        }
    }

    func testROIInTheUprightTopLeftQuarterMapsToTheRightSensorPixels() {
        let roi = NormalizedRect(x: 0, y: 0, width: 0.5, height: 0.25)
        // Upright 640x480 from a camera turned 90 degrees: the sensor is 480x640.
        let quarter = Mount(rotation: .quarter, mirrored: false)
        XCTAssertEqual(quarter.sensorSize(uprightWidth: 640, uprightHeight: 480).width, 480)
        // The upright top rows are the sensor's left columns; upright left is the sensor's bottom.
        XCTAssertEqual(quarter.sensorROI(fromUpright: roi, sensorWidth: 480, sensorHeight: 640),
                       PixelRect(x: 0, y: 320, width: 120, height: 320))
        XCTAssertEqual(Mount().sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480),
                       PixelRect(x: 0, y: 0, width: 320, height: 120))
        XCTAssertEqual(Mount(rotation: .half, mirrored: true).sensorROI(fromUpright: roi, sensorWidth: 640, sensorHeight: 480),
                       PixelRect(x: 0, y: 360, width: 320, height: 120))
    }

    func testRegionsRoundOutwardAndClamp() {
        let r = NormalizedRect(x: 0.3333, y: 0.1, width: 0.3334, height: 0.9)
        let p = r.pixels(width: 100, height: 10)
        XCTAssertEqual(p, PixelRect(x: 33, y: 1, width: 34, height: 9))
        XCTAssertEqual(NormalizedRect.whole.pixels(width: 641, height: 479), PixelRect(x: 0, y: 0, width: 641, height: 479))
    }
}
