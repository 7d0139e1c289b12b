import Foundation
import Geotrigger
import GeotriggerScenarios

/// A generated scenario on disk, cached by kind, seed and sizes under the data folder.
public struct ScenarioFiles: Sendable {
    public var scenario: Scenario
    public var directory: String
    public var regionsPath: String { "\(directory)/\(scenario.regionsFileName)" }
    public var readingsPath: String { "\(directory)/readings.ndjson" }
    public var readingCount: Int { scenario.devices * scenario.seconds }

    /// Generates the files unless a complete copy is cached (SCENARIO.txt is written last).
    /// `placesPath` is the GeoNames CSV the world scenario centres its circles on.
    public static func prepare(_ scenario: Scenario, dataDirectory: String, placesPath: String,
                               regionsOnly: Bool = false) throws -> ScenarioFiles {
        let s = scenario
        let name = "\(s.kind.rawValue)-seed\(s.seed)-r\(s.regions)" + (regionsOnly ? "" : "-d\(s.devices)-s\(s.seconds)")
        let files = ScenarioFiles(scenario: s, directory: "\(dataDirectory)/\(name)")
        let marker = "\(files.directory)/SCENARIO.txt"
        if FileManager.default.fileExists(atPath: marker) { return files }
        try FileManager.default.createDirectory(atPath: files.directory, withIntermediateDirectories: true)
        let places = s.kind == .world ? try Scenario.loadPlaces(path: placesPath) : []
        try s.writeRegions(to: RecordBuffer(path: files.regionsPath), places: places)
        if !regionsOnly {
            try s.writeReadings(to: RecordBuffer(path: files.readingsPath), places: places)
        }
        let note = "geotrigger scenario \(s.kind.rawValue) --seed \(s.seed) --regions \(s.regions) "
            + "--devices \(s.devices) --seconds \(s.seconds)\(regionsOnly ? " (regions only)" : "")\n"
        try note.write(toFile: marker, atomically: true, encoding: .utf8)
        return files
    }

    /// The first `count` lines of the readings, for baselines too slow for the whole file.
    public func readingsPrefix(_ count: Int) throws -> String {
        if count >= readingCount { return readingsPath }
        let path = "\(directory)/readings-first\(count).ndjson"
        if FileManager.default.fileExists(atPath: path) { return path }
        try FileChunks.copyLines(count, from: readingsPath, to: path + ".tmp")
        try FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        return path
    }
}
