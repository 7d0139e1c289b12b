import Foundation
import Testing

/// Zone quality on the real BLE walks (../shared/datasets/ble_position_annotated_cc0; not shipped):
/// the committed scoring tool `tools/ble/evaluate.py` converts each walk (receivers as beacons at
/// known positions, the walking tag as the device), runs the built binary with default options and
/// scores the `near`-zone intervals against the true distance at every sighting.
@Suite("BLE walks: zone quality against ground truth",
       .enabled(if: FileManager.default.fileExists(atPath: CLI.shared.appendingPathComponent("ble_position_annotated_cc0/trk").path),
                "skipped: ../shared/datasets/ble_position_annotated_cc0 is absent (it is not shipped with the project)"))
struct BLEWalkQualityTests {
    struct Score: Decodable {
        var iou: Double
        var enters: Int
        var true_enters: Int
        var enter_ratio: Double
    }

    @Test("per-beacon zones meet issue 4's target; fused zones hold their measured floor")
    func quality() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "tools/ble/evaluate.py", "--binary", CLI.binary.path, "--json"]
        process.currentDirectoryURL = CLI.root
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let scores = try JSONDecoder().decode([String: Score].self, from: data)
        let perBeacon = try #require(scores["per-beacon"]), fused = try #require(scores["fused"])
        // Five walks (rectangular with and without rotation, straight 01 and 02, zigzagging): 27 true
        // visits to a `near` zone.
        #expect(perBeacon.true_enters == 27)
        // Issue 4's target without positions: IoU ≥ 0.30 with at most 2× the true enters
        // (measured on five walks: 0.322 at 1.74×; the naive EWMA baseline gets 0.29 at 3.4×).
        #expect(perBeacon.iou >= 0.30, "IoU \(perBeacon.iou)")
        #expect(perBeacon.enter_ratio <= 2.0, "enters \(perBeacon.enter_ratio)×")
        // With positions the target is IoU ≥ 0.50 at ≤ 1.5×, not met (measured on five walks: 0.473
        // at 2.04×, more enters than without positions; issue 38): these floors guard what fusion
        // reaches today, and that its overlap beats per-beacon.
        #expect(fused.iou >= 0.46, "IoU \(fused.iou)")
        #expect(fused.enter_ratio <= 2.1, "enters \(fused.enter_ratio)×")
        #expect(fused.iou > perBeacon.iou)
    }
}
