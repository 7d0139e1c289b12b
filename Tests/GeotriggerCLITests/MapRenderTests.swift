import Foundation
import Testing

/// `geotrigger map` and `replay --map` as a user sees them: the README's demo drawn as SVG and
/// HTML, rendered to PNG by headless Chromium (Debian's `chromium`, which `.ci/run` installs), and
/// the pictures read back by `tools/map/png_stats.py` (the standard library's zlib, nothing of
/// Geotrigger's) to check they are not blank and show the markers' and tracks' colours and text.
@Suite("Maps rendered in Chromium", .serialized)
struct MapRenderTests {
    static let regions = "datasets/regions/slovenia-croatia.geojson"
    static let demo = ["datasets/gpxpy_tracks/cerknicko-jezero.gpx", "examples/demo/pushes.ndjson"]
    static let replayOptions = ["--requests", "examples/demo/requests.json", "--dwell", "600"]
    /// Enter, exit, dwell, deliver markers; the first track's colour.
    static let enter = "#2ca02c", exit = "#d62728", dwell = "#ff9f1c", deliver = "#6a3d9a", track = "#4e79a7"

    /// Chromium's path, or a failure that says how to get it.
    static func chromium() throws -> String {
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
                let path = "\(dir)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        Issue.record("headless Chromium is needed to render the maps: `apt-get install chromium` (.ci/run installs it)")
        throw CancellationError()
    }

    /// Runs a program to the end; its standard output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = CLI.root
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Renders `page` (a file URL, maybe with a fragment) to a PNG of `width` × `height`.
    static func screenshot(_ page: String, to png: URL, width: Int = 1200, height: Int = 900) throws {
        let (status, _) = try run(try chromium(), ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                                   "--window-size=\(width),\(height)", "--screenshot=\(png.path)", page])
        #expect(status == 0, "chromium exited \(status) on \(page)")
    }

    /// The page's DOM after its scripts ran.
    static func dom(_ page: String) throws -> String {
        try run(try chromium(), ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=2000", "--dump-dom", page]).stdout
    }

    struct Stats: Decodable {
        var width: Int
        var height: Int
        var background: Double
        var colours: [String: Double]
        var dark: [String: Double]
    }

    static func stats(_ png: URL, colours: [String], boxes: [String] = []) throws -> Stats {
        var arguments = ["python3", "tools/map/png_stats.py", png.path]
        for c in colours { arguments += ["--colour", c] }
        for b in boxes { arguments += ["--box", b] }
        let (status, out) = try run("/usr/bin/env", arguments)
        #expect(status == 0, "png_stats.py failed on \(png.path)")
        return try JSONDecoder().decode(Stats.self, from: Data(out.utf8))
    }

    @Test("replay --map draws the README's demo as SVG: Chromium shows regions, the track, every kind of marker and the title")
    func demoSVG() throws {
        let dir = try CLI.temporaryDirectory()
        let svg = dir.appendingPathComponent("demo.svg"), png = dir.appendingPathComponent("demo.png")
        let r = try CLI.run(["replay", "--regions", Self.regions] + Self.replayOptions + ["--map", svg.path] + Self.demo)
        #expect(r.status == 0, "\(r.stderr)")
        // The events still go to standard output, and the map's summary names what it drew.
        #expect(r.lines.contains { $0.contains(#""event":"deliver""#) })
        #expect(r.stderr.contains("geotrigger: map \(svg.path): 31 regions"), "\(r.stderr)")
        let text = try String(contentsOf: svg, encoding: .utf8)
        for label in ["Geotrigger replay", "Vanishing Lake", "notification delivered", "track of cerknicko-jezero", "1 km"] {
            #expect(text.contains(label), "the SVG has no \(label)")
        }
        try Self.screenshot(svg.absoluteString, to: png)
        let s = try Self.stats(png, colours: [Self.enter, Self.exit, Self.dwell, Self.deliver, Self.track],
                               boxes: ["12,8,420,50", "500,300,560,360"])
        #expect(s.width == 1200 && s.height == 900)
        // Not blank: no colour covers most of the picture.
        #expect(s.background < 0.6, "background covers \(s.background)")
        for (name, colour) in [("enter", Self.enter), ("exit", Self.exit), ("dwell", Self.dwell), ("deliver", Self.deliver),
                               ("track", Self.track)] {
            #expect((s.colours[colour] ?? 0) > 0.00005, "\(name) (\(colour)) barely shows: \(s.colours[colour] ?? 0)")
        }
        // The title's text is there, top left, in dark pixels.
        #expect((s.dark["12,8,420,50"] ?? 0) > 0.03, "no title text: \(s.dark)")
    }

    @Test("map --events draws HTML whose slider shows the replay up to a moment, with the script's clock and each marker's tooltip")
    func demoHTML() throws {
        let dir = try CLI.temporaryDirectory()
        let events = dir.appendingPathComponent("events.ndjson"), html = dir.appendingPathComponent("demo.html")
        let replay = try CLI.run(["replay", "--regions", Self.regions] + Self.replayOptions + ["-o", events.path] + Self.demo)
        #expect(replay.status == 0, "\(replay.stderr)")
        let r = try CLI.run(["map", "--regions", Self.regions, "--events", events.path, "-o", html.path] + Self.demo)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOf: html, encoding: .utf8)
        // Self-contained: nothing fetched from anywhere.
        #expect(!page.contains("http://") || page.components(separatedBy: "http://").dropFirst().allSatisfy { $0.hasPrefix("www.w3.org/2000/svg") })
        #expect(!page.contains("https://"))

        // The script ran: it set the clock to the end of the span, and placed the device's dot.
        let dom = try Self.dom(html.absoluteString)
        #expect(dom.contains("up to 2010-08-05 16:23:49 UTC"), "the clock was not set")
        #expect(dom.contains(#"class="pos""#))
        #expect(try Self.dom(html.absoluteString + "#t=0").contains("up to 2010-08-05 14:23:59 UTC"), "#t=0 is not the start")
        // Every marker's tooltip details: kind, device, region, time.
        let json = try #require(page.components(separatedBy: #"<script type="application/json" id="map-data">"#).last?
            .components(separatedBy: "</script>").first)
        let details = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let markers = try #require(details["markers"] as? [[Any]])
        let indices = page.components(separatedBy: #"data-m=""#).dropFirst().compactMap { Int($0.prefix { $0 != "\"" }) }
        #expect(indices.count == markers.count && Set(indices) == Set(0..<markers.count))
        let kinds = Set(markers.compactMap { $0.first as? String })
        #expect(kinds == ["enter", "exit", "dwell", "deliver"])
        #expect(markers.allSatisfy { ($0[1] as? String) == "cerknicko-jezero" && ($0[3] as? String)?.hasPrefix("2010-08-05T") == true })
        // The tooltip, as hovering shows it, opened by its link (#m=N): the welcome delivery.
        let welcome = try #require(markers.firstIndex { ($0[0] as? String) == "deliver" && ($0[5] as? String) == "welcome" })
        let linked = try Self.dom(html.absoluteString + "#m=\(welcome)")
        let tip = try #require(linked.components(separatedBy: #"<div id="tip""#).last?.components(separatedBy: "</div>").first)
        #expect(tip.contains("display: block"), "\(tip)")
        for detail in ["<b>deliver</b>", "device cerknicko-jezero", "region cerknica", "2010-08-05T14:23:59.000Z",
                       "request welcome", "Welcome to Cerknica"] {
            #expect(tip.contains(detail), "the tooltip lacks \(detail): \(tip)")
        }

        let end = dir.appendingPathComponent("end.png"), start = dir.appendingPathComponent("start.png")
        try Self.screenshot(html.absoluteString, to: end, width: 1240, height: 1000)
        try Self.screenshot(html.absoluteString + "#t=0", to: start, width: 1240, height: 1000)
        let colours = [Self.enter, Self.exit, Self.dwell, Self.deliver, Self.track]
        let atEnd = try Self.stats(end, colours: colours), atStart = try Self.stats(start, colours: colours)
        #expect(atEnd.background < 0.6)
        for colour in colours { #expect((atEnd.colours[colour] ?? 0) > 0.00005, "\(colour) missing at the end") }
        // At the first moment only the first fix's events show: the dwell markers (the legend's
        // swatch stays) and the track (but for its faint whole) come later. A marker is about
        // 50 pixels of 1,240,000 (4e-5); the track hundreds.
        func gain(_ colour: String) -> Double { (atEnd.colours[colour] ?? 0) - (atStart.colours[colour] ?? 0) }
        #expect(gain(Self.dwell) > 3e-5, "dwell markers shown before any dwell: \(gain(Self.dwell))")
        #expect(gain(Self.track) > 5e-4, "the track is drawn ahead of time: \(gain(Self.track))")
        #expect(gain(Self.deliver) > 3e-5, "deliveries shown ahead of time: \(gain(Self.deliver))")
    }

    @Test("a dense city: beyond --max-regions the regions become a density layer, and the picture still renders")
    func denseCity() throws {
        let dir = try CLI.temporaryDirectory()
        let city = dir.appendingPathComponent("city")
        let made = try CLI.run(["scenario", "city", "--seed", "5", "--regions", "20000", "--devices", "200", "--seconds", "100",
                                "--out", city.path])
        #expect(made.status == 0, "\(made.stderr)")
        let regions = city.appendingPathComponent("regions.csv").path, readings = city.appendingPathComponent("readings.ndjson").path
        let svg = dir.appendingPathComponent("city.svg"), png = dir.appendingPathComponent("city.png")
        let r = try CLI.run(["replay", "--regions", regions, "--map", svg.path, "-q", readings, "-o", dir.appendingPathComponent("e.ndjson").path])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try String(contentsOf: svg, encoding: .utf8)
        #expect(text.contains(#"<g id="density""#), "no density layer for 20,000 regions")
        // What a pixel cannot show is thinned: 20,000 fixes of 200 devices, 20,000 regions, in
        // a few megabytes at most.
        let bytes = try FileManager.default.attributesOfItem(atPath: svg.path)[.size] as? Int ?? 0
        #expect(bytes < 4_000_000, "\(bytes) bytes")
        try Self.screenshot(svg.absoluteString, to: png)
        let s = try Self.stats(png, colours: ["#5b6b8c", Self.enter, Self.exit])
        #expect(s.background < 0.8)
        #expect((s.colours["#5b6b8c"] ?? 0) > 0.01, "the density layer does not show")
        #expect((s.colours[Self.enter] ?? 0) > 0.0005 && (s.colours[Self.exit] ?? 0) > 0.0005)
    }

    @Test("map refuses what it cannot draw, with the exit statuses of replay")
    func refusals() throws {
        let noKind = try CLI.run(["map", "--regions", Self.regions, "-o", "/tmp/map.png"])
        #expect(noKind.status == 64 && noKind.stderr.contains("must end in .svg or .html"))
        let stdin = try CLI.run(["replay", "--regions", Self.regions, "--map", "/tmp/m.svg"])
        #expect(stdin.status == 64 && stdin.stderr.contains("--map needs reading files"))
        let dir = try CLI.temporaryDirectory()
        let missing = try CLI.run(["map", "--regions", "no-such.geojson", "-o", dir.appendingPathComponent("m.svg").path])
        #expect(missing.status == 66)
        let noEvents = try CLI.run(["map", "--regions", Self.regions, "--events", "no-such.ndjson", "-o", dir.appendingPathComponent("m.svg").path])
        #expect(noEvents.status == 66)
        // Bad lines in the events file are counted and reported, and the map is still drawn.
        let events = dir.appendingPathComponent("bad.ndjson")
        try "not json\n{\"t\":\"2010-08-05T14:30:00Z\",\"event\":\"enter\",\"device\":\"cerknicko-jezero\",\"region\":\"cerknica\"}\n"
            .write(to: events, atomically: true, encoding: .utf8)
        let drawn = try CLI.run(["map", "--regions", Self.regions, "--events", events.path, "-o", dir.appendingPathComponent("m.svg").path]
                                + Self.demo)
        #expect(drawn.status == 0)
        #expect(drawn.stderr.contains("bad.ndjson:1: not an event line"), "\(drawn.stderr)")
        #expect(drawn.stderr.contains("1 line of the events file skipped: not events"), "\(drawn.stderr)")
        // A fix older than its device's previous one is rejected as a replay rejects it: not in
        // the track (every point is dated 1901-12-13T20:45:52.2073437Z but the second, written
        // 0.34 ms earlier, which the replay rejects too).
        let mojstrovka = dir.appendingPathComponent("mojstrovka.svg")
        let old = try CLI.run(["map", "--regions", Self.regions, "datasets/gpxpy_tracks/Mojstrovka.gpx", "-o", mojstrovka.path])
        #expect(old.status == 0)
        #expect(old.stderr.contains("Mojstrovka.gpx:16: older than the device's previous reading"), "\(old.stderr)")
        #expect(old.stderr.contains("1 reading rejected (not drawn)"), "\(old.stderr)")
        #expect(old.stderr.contains("1 track (183 fixes,"), "\(old.stderr)")
    }
}
