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

    @Test("issue 38's targets: ≤ 1.3× the true enters without and with positions, IoU ≥ 0.33 and ≥ 0.42, fusion never entering more")
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
        // Default options (their constants chosen by leaving one walk out, docs/beacons.md): measured
        // 0.342 at 1.04× without positions, 0.478 at 0.96× with them (held out: 0.333 at 1.07×,
        // 0.469 at 0.96×); before the minimum visit and the fused enter's beacon check, 0.322 at
        // 1.74× and 0.473 at 2.04×.
        #expect(perBeacon.iou >= 0.33, "IoU \(perBeacon.iou)")
        #expect(perBeacon.enter_ratio <= 1.3, "enters \(perBeacon.enter_ratio)×")
        #expect(fused.iou >= 0.42, "IoU \(fused.iou)")
        #expect(fused.enter_ratio <= 1.3, "enters \(fused.enter_ratio)×")
        // Fusion only helps: no more enters with positions than without, and a better overlap.
        #expect(fused.enters <= perBeacon.enters, "\(fused.enters) enters with positions, \(perBeacon.enters) without")
        #expect(fused.iou > perBeacon.iou)
    }
}
