import Foundation
import Testing

@testable import GeotriggerCore
import GeotriggerFormats

@Suite("Regions files on disk")
struct RegionFileLoadTests {
    private func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil))
        return url.path
    }

    @Test func loadsGeoJSON() throws {
        let regions = try RegionFile.load(path: try fixture("vienna-regions.geojson"))
        #expect(regions.map(\.id) == ["stephansplatz", "rathauspark"])
        #expect(regions[1].notifyOnExit == false)
    }

    @Test func loadsCSV() throws {
        let regions = try RegionFile.load(path: try fixture("vienna-regions.csv"))
        #expect(regions.map(\.id) == ["stephansplatz", "prater"])
    }

    @Test func reportsAMissingFile() {
        do {
            _ = try RegionFile.load(path: "/nonexistent/regions.geojson")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.kind == .fileNotFound)
            #expect(error.description.hasPrefix("/nonexistent/regions.geojson: cannot open:"))
        }
    }

    @Test func reportsADirectoryAsUnreadable() {
        do {
            _ = try RegionFile.load(path: NSTemporaryDirectory())
            Issue.record("loaded a directory")
        } catch {
            #expect(error.kind == .unreadable)
        }
    }
}
