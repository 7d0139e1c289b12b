import Foundation
import Testing
@testable import GeotriggerFormats

@Suite struct ReadingInputTests {
    @Test(arguments: [
        ("a.ndjson", ReadingFormat.ndjson), ("a.jsonl", .ndjson), ("a.NDJSON", .ndjson), ("dir.d/a.csv", .csv),
        ("a.gpx", .gpx), ("/fleet/logs.v2/D17.Nmea", .nmea), (".csv", .csv), ("a.b.jsonl", .ndjson),
        ("fahrt/straße.gpx", .gpx), ("journée/é.NMEA", .nmea),
    ])
    func formatFromExtension(_ path: String, _ format: ReadingFormat) {
        #expect(ReadingFormat(pathExtensionOf: path) == format)
    }

    @Test func anExtensionThatSaysNothingLeavesItToTheContent() {
        #expect(ReadingFormat(pathExtensionOf: "a.txt") == nil)
        #expect(ReadingFormat(pathExtensionOf: "dir.csv/a") == nil)
        #expect(ReadingFormat(pathExtensionOf: "données.csv/a") == nil)
        #expect(ReadingFormat(pathExtensionOf: "a") == nil)
        #expect(ReadingFormat(pathExtensionOf: "a.") == nil)
        #expect(ReadingFormat(pathExtensionOf: "") == nil)
        // A directory's name, as the path names it.
        #expect(ReadingFormat(pathExtensionOf: "logs.csv/") == .csv)
        #expect(ReadingFormat(pathExtensionOf: "a.nmea") == .nmea)
        // NDJSON, NMEA after a comment and a binary packet, and something else (NDJSON's to reject).
        let ndjson = TempFile("{\"t\":1,\"device\":\"a\",\"lat\":1,\"lon\":2}\n", name: "a.txt")
        #expect((try? ReadingInput.open(path: ndjson.path)) is NDJSONDecoder)
        let nmea = TempFile("# a logger's note\n\u{1}\u{2}b\n$GPGGA,093802,5213.1439,N,02100.6511,E,2,10,0.9,137.2,M,36.2,M,,*43\n", name: "b.log")
        #expect((try? ReadingInput.open(path: nmea.path)) is NMEADecoder)
        let other = TempFile("x", name: "c.txt")
        #expect((try? ReadingInput.open(path: other.path)) is NDJSONDecoder)
        let d = try? ReadingInput.open(path: other.path, format: .csv)
        #expect(d is CSVDecoder)
        // `.json`: readings or a saved `gpspipe -w` stream, as the content says.
        #expect(ReadingFormat(pathExtensionOf: "a.json") == nil)
        let readings = TempFile("{\"t\":1,\"device\":\"a\",\"lat\":1,\"lon\":2}\n", name: "r.json")
        #expect((try? ReadingInput.open(path: readings.path)) is NDJSONDecoder)
        let reports = TempFile(#"{"class":"VERSION","release":"3.22"}"# + "\n", name: "gpspipe.json")
        #expect((try? ReadingInput.open(path: reports.path)) is GPSDDecoder)
    }

    @Test func aDirectoryIsTheFilesInIt() throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("geotrigger-fleet-\(UUID().uuidString)")
        try fm.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: dir) }
        for name in ["van10.nmea", "van2.nmea", "Van1.log", ".hidden", "sub/inner.nmea"] {
            try Data("x".utf8).write(to: dir.appendingPathComponent(name))
        }
        // Its regular files, not hidden ones or subdirectories, in byte order (as `DIR/*` in the C
        // locale); other paths as given, around it.
        let paths = try ReadingInput.expandingDirectories(["a.ndjson", dir.path, "-"])
        #expect(paths == ["a.ndjson"] + ["Van1.log", "van10.nmea", "van2.nmea"].map { dir.path + "/" + $0 } + ["-"])
        #expect(try ReadingInput.expandingDirectories([dir.path + "/"]).count == 3)
        // A directory with nothing to read is an error, not standard input.
        let empty = dir.appendingPathComponent("sub/empty")
        try fm.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: ReadingInputError.unreadable(path: empty.path, reason: "a directory with no files in it")) {
            try ReadingInput.expandingDirectories([empty.path])
        }
    }

    @Test func missingFile() {
        let path = "/nonexistent-dir-\(UUID().uuidString)/r.ndjson"
        #expect(throws: ReadingInputError.missing(path: path)) { try ReadingInput.open(path: path) }
        // A missing file is "missing" even when its extension names no format.
        let odd = "/nonexistent-\(UUID().uuidString).txt"
        #expect(throws: ReadingInputError.missing(path: odd)) { try ReadingInput.open(path: odd) }
        #expect(ReadingInputError.missing(path: path).exitCode == 66)
    }

    @Test func directoryIsUnreadable() {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("geotrigger-dir-\(UUID().uuidString).ndjson").path
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            _ = try ReadingInput.open(path: dir)
            Issue.record("a directory must not open")
        } catch let e as ReadingInputError {
            guard case .unreadable = e else { Issue.record("\(e)"); return }
            #expect(e.exitCode == 74)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test(.enabled(if: getuid() != 0, "running as root, which can read any file; skipping"))
    func permissionDeniedIsUnreadable() throws {
        let file = TempFile("{}", name: "locked.ndjson")
        chmod(file.path, 0)
        #expect(throws: ReadingInputError.self) { try ReadingInput.open(path: file.path) }
        do { _ = try ReadingInput.open(path: file.path) } catch let e as ReadingInputError { #expect(e.exitCode == 74) }
    }

    @Test func opensEachFormat() throws {
        let nd = TempFile(#"{"t":1,"device":"d","lat":1,"lon":2}"#, name: "r.jsonl")
        let nDecoder = try ReadingInput.open(path: nd.path)
        #expect(nDecoder is NDJSONDecoder && nDecoder.sourceName == nd.path)
        #expect(drain(nDecoder).map(\.step) == [.reading])
        let csv = TempFile("t,lat,lon\n1,1,2\n", name: "r.csv")
        let cDecoder = try ReadingInput.open(path: csv.path, device: "fallback")
        #expect(drain(cDecoder).map(\.device) == ["fallback"])
    }
}
