import Foundation
import Geotrigger
import Testing

/// The README's library example, kept true: it must give the oracle's events.
@Suite("Library API (README example)")
struct LibraryExampleTests {
    @Test("Engine fed from a GPX decoder gives the independent oracle's exact-mode events")
    func readmeExample() throws {
        let here = FileManager.default.currentDirectoryPath
        FileManager.default.changeCurrentDirectoryPath(CLI.root.path)
        defer { FileManager.default.changeCurrentDirectoryPath(here) }

        // --- README example begins ---
        let regions = try RegionFile.load(path: "datasets/regions/slovenia-croatia.geojson")
        // Exact mode: no hysteresis, no accuracy gate.
        let engine = try Engine(regions: regions, hysteresis: .metres(0), options: MonitorOptions(maxAccuracy: 0))
        var log: [String] = []
        engine.onEvent = { [unowned engine] e in
            log.append("\(RFC3339.format(e.t)) \(e.kind.name) \(engine.deviceName(e.device)) \(engine.regionID(e.region))")
        }
        let track = try ReadingInput.open(path: "datasets/gpxpy_tracks/cerknicko-jezero.gpx")
        reading: while true {
            switch track.next() {
            case .reading:
                let r = track.current
                engine.fix(device: r.deviceString, t: r.t, latitude: r.latitude, longitude: r.longitude)
            case .rejected(let why):
                print("\(track.sourceName):\(track.lineNumber): \(why.message)")
            case .end:
                break reading
            }
        }
        // --- README example ends ---

        let expected = try String(contentsOf: CLI.fixtures.appendingPathComponent("gpx-cerknicko-jezero.expected.ndjson"), encoding: .utf8)
            .split(separator: "\n").compactMap { EventKey(line: String($0))?.description }
        #expect(expected.count > 10)
        #expect(log == expected)
    }

    @Test("a library sink (RecordCallback) gets each event's line as it ends, the bytes `replay` writes to a file")
    func callbackSink() throws {
        let regionsPath = CLI.root.appendingPathComponent("datasets/regions/slovenia-croatia.geojson").path
        let trackPath = CLI.root.appendingPathComponent("datasets/gpxpy_tracks/cerknicko-jezero.gpx").path
        let engine = try Engine(regions: RegionFile.load(path: regionsPath), hysteresis: .metres(0), options: MonitorOptions(maxAccuracy: 0))
        var lines: [String] = []
        var eventsSoFar: [Int] = []
        engine.onEvent = { _ in eventsSoFar.append(lines.count) }
        engine.output = EventWriter(output: RecordBuffer(sink: RecordCallback { line in
            lines.append(String(decoding: line, as: UTF8.self))
        }), engine: engine)
        let track = try ReadingInput.open(path: trackPath)
        while case .reading = track.next() {
            let r = track.current
            engine.fix(device: r.deviceString, t: r.t, latitude: r.latitude, longitude: r.longitude)
        }

        let replay = try CLI.run(["replay", "--regions", regionsPath, "--hysteresis", "0", "--max-accuracy", "0", trackPath])
        #expect(replay.status == 0)
        #expect(lines.count > 10)
        #expect(lines == replay.stdout.split(separator: "\n").map(String.init))
        // Each line reached the callback as its event was written, before `onEvent` saw it: the
        // sink holds nothing back (`blockSize` 0).
        #expect(eventsSoFar == Array(1...max(1, eventsSoFar.count)))
    }

    @Test("the README's notification-center example: add, deliver on the clock, pending, delivered, remove")
    func schedulingExample() throws {
        let here = FileManager.default.currentDirectoryPath
        FileManager.default.changeCurrentDirectoryPath(CLI.root.path)
        defer { FileManager.default.changeCurrentDirectoryPath(here) }
        let regions = try RegionFile.load(path: "datasets/regions/slovenia-croatia.geojson")
        let requestsPath = "Tests/GeotriggerCLITests/Fixtures/cerknicko-requests.json"
        var printed: [String] = []

        // --- README example begins (requests.json is the fixture here; print collects) ---
        let engine = try Engine(regions: regions, requests: try RequestsFile.parse(
            bytes: RegionFile.readFile(path: requestsPath), fileName: requestsPath,
            knownRegion: { id in regions.contains { $0.id == id } }))
        engine.onDeliver = { d in printed.append("\(d.id) \(d.trigger.kind) \(d.content.title ?? "")") }
        try engine.add(NotificationRequest(id: "tea", content: NotificationContent(title: "Tea"),
                                           trigger: .timeInterval(seconds: 600, repeats: false)), device: "d1", at: 0)
        engine.advance(to: 600)                                   // delivers "tea"
        let pending = engine.pending(device: "d1"), delivered = engine.delivered(device: "d1")
        engine.removePending(ids: ["tea"], device: "d1"); engine.removeDelivered(ids: ["tea"], device: "d1")
        // --- README example ends ---

        #expect(printed == ["tea timeInterval Tea"])
        #expect(pending.isEmpty)
        #expect(delivered.map(\.request.id) == ["tea"] && delivered.first?.date == 600)
        #expect(engine.delivered(device: "d1").isEmpty)
    }

    @Test("the README's notification-model example: a payload push, a text response through onResponse")
    func notificationModelExample() throws {
        let here = FileManager.default.currentDirectoryPath
        FileManager.default.changeCurrentDirectoryPath(CLI.root.path)
        defer { FileManager.default.changeCurrentDirectoryPath(here) }

        // --- README example begins ---
        let engine = try Engine(regions: RegionFile.load(path: "datasets/regions/slovenia-croatia.geojson"))
        var answers: [String] = []
        engine.onResponse = { r in answers.append("\(r.id) \(r.action) \(r.text ?? "")") }
        engine.setCategories([NotificationCategory(id: "invite", actions: [
            NotificationAction(id: "reply", title: "Reply", textInput: .init(button: "Send", placeholder: ""))])], device: "ann")
        try engine.add(NotificationRequest(id: "hi", content: NotificationContent(title: "Hi"), trigger: .push), device: "ann")
        // Delivered with the payload's content, under the pending push request "hi".
        engine.push(id: "hi", payload: try RemotePayload(json: JSONValue.parse(#"{"aps":{"alert":"Hello","category":"invite"}}"#)),
                    device: "ann")
        try engine.respond(id: "hi", action: "reply", text: "Hello back", device: "ann")
        // answers == ["hi reply Hello back"]; engine.delivered(device: "ann") is empty again
        // --- README example ends ---

        #expect(answers == ["hi reply Hello back"])
        #expect(engine.delivered(device: "ann").isEmpty)
        #expect(engine.pending(device: "ann").isEmpty)
    }
}
