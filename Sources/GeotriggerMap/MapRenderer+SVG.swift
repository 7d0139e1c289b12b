import GeotriggerCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MapRenderer {
    /// Where the SVG goes: a file of its own (markers carry `<title>` tooltips while there are
    /// few enough), or inside the HTML page (markers carry their event's index for the script).
    enum Target {
        case svg
        case html
    }

    /// The map as a standalone SVG document.
    public func svg() -> String { drawing(for: .svg).string }

    func drawing(for target: Target) -> MarkupWriter {
        let w = options.width, h = options.height
        var o = MarkupWriter(capacity: 1 << 20)
        o.raw(#"<svg xmlns="http://www.w3.org/2000/svg" id="geotrigger-map" width=""#)
        o.number(w)
        o.raw(#"" height=""#)
        o.number(h)
        o.raw(#"" viewBox="0 0 "#)
        o.number(w)
        o.raw(" ")
        o.number(h)
        o.raw(#"" font-family="DejaVu Sans, Verdana, Arial, sans-serif">"#)
        o.raw("\n<style>")
        o.raw(".halo{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}")
        o.raw(".region{fill:\(Self.regionColour);fill-opacity:.05;stroke:\(Self.regionColour);stroke-opacity:.5;stroke-width:1}")
        o.raw(".region.hit{fill-opacity:.1;stroke-opacity:.85;stroke-width:1.3}")
        o.raw(".region.outline{fill:none}")
        o.raw(".beacon{fill:\(Self.beaconColour);fill-opacity:.08;stroke:\(Self.beaconColour);stroke-dasharray:4 3}")
        o.raw(".track{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}")
        o.raw(".mk{stroke:#fff;stroke-width:1.2}")
        o.raw("</style>\n")
        o.raw(#"<defs><clipPath id="frame"><rect width=""#)
        o.number(w)
        o.raw(#"" height=""#)
        o.number(h)
        o.raw("\"/></clipPath></defs>\n")
        o.raw(##"<rect width="100%" height="100%" fill="#f7f5f0"/>"##)
        o.raw("\n<g clip-path=\"url(#frame)\">\n")
        drawDensity(&o)
        drawRegions(&o)
        drawTracks(&o, target: target)
        drawMarkers(&o, target: target)
        drawLabels(&o)
        o.raw("</g>\n")
        drawTitle(&o)
        drawScaleBar(&o)
        drawNorthArrow(&o)
        drawLegend(&o)
        o.raw("</svg>\n")
        return o
    }

    // MARK: Layers

    private func drawDensity(_ o: inout MarkupWriter) {
        guard !regionPlan.density.isEmpty else { return }
        o.raw(#"<g id="density" fill=""#)
        o.raw(Self.regionColour)
        o.raw("\">\n")
        for (cell, count) in regionPlan.density.sorted(by: { $0.key < $1.key }) {
            let col = cell % regionPlan.densityColumns, row = cell / regionPlan.densityColumns
            o.raw("<rect x=\"")
            o.number(Double(col) * Self.densityCell)
            o.raw("\" y=\"")
            o.number(Double(row) * Self.densityCell)
            o.raw("\" width=\"8\" height=\"8\" fill-opacity=\"")
            o.number(min(0.7, 0.1 + 0.12 * log2(1 + Double(count))) )
            o.raw("\"/>\n")
        }
        o.raw("</g>\n")
    }

    private func drawRegions(_ o: inout MarkupWriter) {
        o.raw("<g id=\"regions\">\n")
        for k in regionPlan.shapes {
            let region = data.regions[k]
            let hit = regionPlan.regionsWithEvents.contains(k)
            // A region much larger than the picture is context: its outline, without a fill that
            // would veil everything under it.
            let huge = regionBoxes[k].map {
                ($0.maxX - $0.minX) * ($0.maxY - $0.minY) > 4 * options.width * options.height
            } ?? false
            let cls = (hit ? "region hit" : "region") + (huge ? " outline" : "")
            switch region.shape {
            case .circle(let c, let r):
                circlePath(&o, latitude: c.latitude, longitude: c.longitude, radius: r, cls: cls, id: region.id)
            case .beacon(let b):
                guard let c = b.position else { continue }
                circlePath(&o, latitude: c.latitude, longitude: c.longitude, radius: b.zone.radius, cls: "beacon", id: region.id)
            case .polygons(let polygons):
                o.raw("<path class=\"")
                o.raw(cls)
                o.raw("\" fill-rule=\"evenodd\" data-id=\"")
                o.escaped(region.id)
                o.raw("\" d=\"")
                for ring in polygons.flatMap({ $0 }) {
                    var first = true
                    var last = (x: Double.nan, y: Double.nan)
                    for (n, q) in ring.enumerated() {
                        let p = projection.project(latitude: q.latitude, longitude: q.longitude)
                        let far = abs(p.x - last.x) + abs(p.y - last.y) >= 0.7
                        guard first || far || n == ring.count - 1 else { continue }
                        o.raw(first ? "M" : "L")
                        o.number(p.x)
                        o.raw(" ")
                        o.number(p.y)
                        first = false
                        last = p
                    }
                    o.raw("Z")
                }
                o.raw("\"/>\n")
            }
        }
        o.raw("</g>\n")
    }

    /// A geodesic circle as a closed path: enough boundary points for its size in pixels.
    private func circlePath(_ o: inout MarkupWriter, latitude: Double, longitude: Double, radius: Double, cls: String, id: String) {
        let pixels = radius * projection.scale
        let count = max(16, min(120, Int(2 * Double.pi * pixels / 4)))
        o.raw("<path class=\"")
        o.raw(cls)
        o.raw("\" data-id=\"")
        o.escaped(id)
        o.raw("\" d=\"")
        for (n, q) in LocalProjection.circleBoundary(latitude: latitude, longitude: longitude, radius: radius, count: count).enumerated() {
            let p = projection.project(latitude: q.latitude, longitude: q.longitude)
            o.raw(n == 0 ? "M" : "L")
            o.number(p.x)
            o.raw(" ")
            o.number(p.y)
        }
        o.raw("Z\"/>\n")
    }

    private func drawTracks(_ o: inout MarkupWriter, target: Target) {
        o.raw("<g id=\"tracks\">\n")
        for (k, track) in tracks.enumerated() where !track.x.isEmpty {
            if target == .html {
                // The whole track faintly under the part the time slider has reached.
                trackPath(&o, track, extra: #" class="track ghost" stroke-opacity=".25""#)
            }
            trackPath(&o, track, extra: target == .html ? " class=\"track now\" data-track=\"\(k)\" pathLength=\"1000\"" : #" class="track""#)
            // Direction: an arrowhead every 90 px along the path, pointing the way the device went.
            o.raw("<g stroke=\"#fff\" stroke-width=\"1\" fill=\"")
            o.raw(track.colour)
            o.raw(target == .html ? "\" class=\"arrows\" data-track=\"\(k)\">" : "\">")
            var next = 45.0
            for j in 1..<max(1, track.x.count) {
                let a = track.length[j - 1], b = track.length[j]
                guard b > a else { continue }
                let angle = atan2(track.y[j] - track.y[j - 1], track.x[j] - track.x[j - 1]) * 180 / .pi
                while next <= b {
                    let f = (next - a) / (b - a)
                    o.raw("<path d=\"M-5 -4.5L4.5 0L-5 4.5Z\" transform=\"translate(")
                    o.number(track.x[j - 1] + f * (track.x[j] - track.x[j - 1]))
                    o.raw(" ")
                    o.number(track.y[j - 1] + f * (track.y[j] - track.y[j - 1]))
                    o.raw(") rotate(")
                    o.number(angle)
                    o.raw(")\"")
                    if target == .html {
                        o.raw(" data-l=\"")
                        o.number(next)
                        o.raw("\"")
                    }
                    o.raw("/>")
                    next += 90
                }
            }
            o.raw("</g>\n")
            // Start: a hollow dot.
            o.raw("<circle r=\"3.5\" fill=\"#fff\" stroke-width=\"2\" stroke=\"")
            o.raw(track.colour)
            o.raw("\" cx=\"")
            o.number(track.x[0])
            o.raw("\" cy=\"")
            o.number(track.y[0])
            o.raw("\"/>\n")
        }
        o.raw("</g>\n")
    }

    private func trackPath(_ o: inout MarkupWriter, _ track: DrawnTrack, extra: String) {
        o.raw("<path")
        o.raw(extra)
        o.raw(" stroke=\"")
        o.raw(track.colour)
        o.raw("\" d=\"")
        for j in track.x.indices {
            o.raw(j == 0 ? "M" : "L")
            o.number(track.x[j])
            o.raw(" ")
            o.number(track.y[j])
        }
        if track.x.count == 1 { o.raw("l0.1 0") }
        o.raw("\"/>\n")
    }

    /// Tooltips as `<title>` in a standalone SVG while there are at most this many markers.
    static let svgTooltipLimit = 20_000

    private func drawMarkers(_ o: inout MarkupWriter, target: Target) {
        o.raw("<g id=\"events\">\n")
        let titles = target == .svg && markers.count <= Self.svgTooltipLimit
        // Thousands of markers at full size would hide the map under them: they shrink with
        // their number (to 0.4 of full size at about 19,000 and beyond).
        let k = min(1, max(0.4, (3000 / Double(max(1, markers.count))).squareRoot()))
        func n(_ x: Double) -> String {
            var w = MarkupWriter(capacity: 8)
            w.number(x)
            return w.string
        }
        let enterR = n(4.5 * k), exitR = n(4 * k), exitW = n(max(1, 2.2 * k)), side = 8 * k, half = 6.5 * k
        // Deliveries last, on top: they are what a trigger was for.
        for kind in [MapData.Event.Kind.exit, .enter, .dwell, .deliver] {
            for (m, marker) in markers.enumerated() where data.events[marker.event].kind == kind {
                let colour = Self.eventColours[kind]!
                switch kind {
                case .enter:
                    o.raw("<circle class=\"mk enter\" r=\"\(enterR)\" fill=\"\(colour)\" cx=\"")
                    o.number(marker.x)
                    o.raw("\" cy=\"")
                    o.number(marker.y)
                case .exit:
                    o.raw("<circle class=\"mk exit\" r=\"\(exitR)\" fill=\"#fff\" style=\"stroke:\(colour);stroke-width:\(exitW)\" cx=\"")
                    o.number(marker.x)
                    o.raw("\" cy=\"")
                    o.number(marker.y)
                case .dwell:
                    o.raw("<rect class=\"mk dwell\" width=\"\(n(side))\" height=\"\(n(side))\" fill=\"\(colour)\" x=\"")
                    o.number(marker.x - side / 2)
                    o.raw("\" y=\"")
                    o.number(marker.y - side / 2)
                case .deliver:
                    o.raw("<path class=\"mk deliver\" fill=\"\(colour)\" d=\"M")
                    o.number(marker.x)
                    o.raw(" ")
                    o.number(marker.y - half)
                    o.raw("l\(n(half)) \(n(half))l-\(n(half)) \(n(half))l-\(n(half)) -\(n(half))z")
                }
                o.raw("\"")
                if target == .html {
                    o.raw(" data-m=\"")
                    o.integer(m)
                    o.raw("\"")
                }
                if titles {
                    o.raw("><title>")
                    o.escaped(describe(marker))
                    o.raw("</title></")
                    o.raw(kind == .dwell ? "rect" : kind == .deliver ? "path" : "circle")
                    o.raw(">\n")
                } else {
                    o.raw("/>\n")
                }
            }
        }
        o.raw("</g>\n")
    }

    /// A marker's event in words (the SVG's tooltip).
    func describe(_ marker: Marker) -> String {
        let e = data.events[marker.event]
        var s = "\(e.kind.rawValue) · \(e.device)"
        if let region = e.region { s += " · \(region)" }
        s += " · \(e.time)"
        if let d = e.distance { s += " · \(Int(d.rounded())) m from the centre" }
        if let r = e.request { s += " · request \(r)" }
        if let title = e.title { s += " · “\(title)”" }
        if marker.count > 1 { s += " (and \(marker.count - 1) more here)" }
        return s
    }

    /// Region names, larger regions and those with events first, skipping any that would
    /// overlap one placed already.
    private func drawLabels(_ o: inout MarkupWriter) {
        var candidates: [(priority: Double, text: String, x: Double, y: Double)] = []
        for k in regionPlan.shapes {
            let region = data.regions[k]
            guard let box = regionBoxes[k] else { continue }
            let size = max(box.maxX - box.minX, box.maxY - box.minY)
            let x = (box.minX + box.maxX) / 2
            // Above a small circle; inside a large one, near its top.
            let y = size < 60 ? box.minY - 3 : box.minY + 16
            let priority = (regionPlan.regionsWithEvents.contains(k) ? 1e9 : 0) + size
            candidates.append((priority, Self.label(region), x, y))
        }
        candidates.sort { $0.priority > $1.priority }
        var placed: [Box] = []
        var grid: [Int: [Int]] = [:]
        let cell = 64.0
        o.raw("<g id=\"labels\" font-size=\"11\" fill=\"#2b2b2b\" text-anchor=\"middle\">\n")
        for c in candidates where placed.count < options.maxLabels {
            let width = Double(c.text.count) * 6.3 + 4
            let box = Box(minX: c.x - width / 2, minY: c.y - 11, maxX: c.x + width / 2, maxY: c.y + 3)
            guard box.minX >= 0, box.maxX <= options.width, box.minY >= 40, box.maxY <= options.height else { continue }
            let cols = Int(box.minX / cell)...Int(box.maxX / cell), rows = Int(box.minY / cell)...Int(box.maxY / cell)
            var overlaps = false
            search: for col in cols {
                for row in rows {
                    for j in grid[row * 1000 + col] ?? [] {
                        let p = placed[j]
                        if p.minX < box.maxX && box.minX < p.maxX && p.minY < box.maxY && box.minY < p.maxY {
                            overlaps = true
                            break search
                        }
                    }
                }
            }
            if overlaps { continue }
            for col in cols { for row in rows { grid[row * 1000 + col, default: []].append(placed.count) } }
            placed.append(box)
            o.raw("<text class=\"halo\" x=\"")
            o.number(c.x)
            o.raw("\" y=\"")
            o.number(c.y)
            o.raw("\">")
            o.escaped(c.text)
            o.raw("</text>\n")
        }
        o.raw("</g>\n")
    }

    // MARK: Furniture

    /// "Geotrigger replay" (or `--title`), then what is shown and over what time.
    var titleText: String { options.title ?? "Geotrigger replay" }

    var subtitleText: String {
        let fixes = data.tracks.reduce(0) { $0 + $1.t.count }
        var s = "\(plural(data.tracks.count, "device")) · \(plural(fixes, "fix", "fixes")) · "
            + "\(plural(data.events.count, "event")) · \(plural(data.regions.count, "region"))"
        if let (a, b) = span { s += " · " + Self.shortTime(a) + " – " + Self.shortTime(b) + " UTC" }
        return s
    }

    /// "2010-08-05 14:23".
    static func shortTime(_ t: Double) -> String {
        let full = RFC3339.format(t)
        return String(full.prefix(16).map { $0 == "T" ? " " : $0 })
    }

    private func plural(_ n: Int, _ one: String, _ many: String? = nil) -> String {
        "\(grouped(n)) \(n == 1 ? one : many ?? one + "s")"
    }

    private func drawTitle(_ o: inout MarkupWriter) {
        o.raw("<g id=\"title\"><text class=\"halo\" x=\"16\" y=\"28\" font-size=\"18\" font-weight=\"bold\" fill=\"#1d1d1d\">")
        o.escaped(titleText)
        o.raw("</text><text class=\"halo\" x=\"16\" y=\"47\" font-size=\"12\" fill=\"#444\">")
        o.escaped(subtitleText)
        o.raw("</text></g>\n")
    }

    /// A bar of a round length (1, 2 or 5 × 10ⁿ m) near 150 px, true at the centre latitude.
    private func drawScaleBar(_ o: inout MarkupWriter) {
        let target = 150 / projection.scale
        var length = pow(10, floor(log10(target)))
        for m in [1.0, 2, 5, 10] where m * pow(10, floor(log10(target))) <= target { length = m * pow(10, floor(log10(target))) }
        let px = length * projection.scale
        let x = 20.0, y = options.height - 24
        let label = length >= 1000 ? "\(Self.trimmed(length / 1000)) km" : "\(Self.trimmed(length)) m"
        o.raw("<g id=\"scale\" font-size=\"11\" fill=\"#222\"><rect x=\"")
        o.number(x - 6)
        o.raw("\" y=\"")
        o.number(y - 20)
        o.raw("\" width=\"")
        o.number(px + 12)
        o.raw("\" height=\"30\" fill=\"#fff\" fill-opacity=\".8\" rx=\"3\"/><path d=\"M")
        o.number(x)
        o.raw(" ")
        o.number(y - 4)
        o.raw("v4h")
        o.number(px)
        o.raw("v-4\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"/><text x=\"")
        o.number(x + px / 2)
        o.raw("\" y=\"")
        o.number(y - 8)
        o.raw("\" text-anchor=\"middle\">")
        o.raw(label)
        o.raw("</text></g>\n")
    }

    static func trimmed(_ x: Double) -> String {
        x == x.rounded() ? String(Int(x)) : String(x)
    }

    private func drawNorthArrow(_ o: inout MarkupWriter) {
        let x = options.width - 30, y = 30.0
        o.raw("<g id=\"north\" transform=\"translate(")
        o.number(x)
        o.raw(" ")
        o.number(y)
        o.raw(")\"><circle r=\"17\" fill=\"#fff\" fill-opacity=\".85\" stroke=\"#999\"/>")
        o.raw("<path d=\"M0 -13L6 5L0 1L-6 5Z\" fill=\"#222\"/>")
        o.raw("<text y=\"15\" font-size=\"9\" text-anchor=\"middle\" fill=\"#222\">N</text></g>\n")
    }

    private func drawLegend(_ o: inout MarkupWriter) {
        var counts: [MapData.Event.Kind: Int] = [:]
        for e in data.events { counts[e.kind, default: 0] += 1 }
        let shownTracks = min(tracks.count, 8)
        let rows = 4 + shownTracks + (tracks.count > shownTracks ? 1 : 0) + 1 + (regionPlan.density.isEmpty ? 0 : 1)
        let width = 210.0, height = Double(rows) * 17 + 14
        let x = options.width - width - 12, y = options.height - height - 12
        o.raw("<g id=\"legend\" font-size=\"11\" fill=\"#222\" transform=\"translate(")
        o.number(x)
        o.raw(" ")
        o.number(y)
        o.raw(")\"><rect width=\"")
        o.number(width)
        o.raw("\" height=\"")
        o.number(height)
        o.raw("\" fill=\"#fff\" fill-opacity=\".9\" stroke=\"#bbb\" rx=\"4\"/>\n")
        var row = 0
        func line(_ symbol: String, _ text: String) {
            let cy = 16 + Double(row) * 17
            o.raw("<g transform=\"translate(16 ")
            o.number(cy)
            o.raw(")\">")
            o.raw(symbol)
            o.raw("<text x=\"16\" y=\"4\">")
            o.escaped(text)
            o.raw("</text></g>\n")
            row += 1
        }
        let c = Self.eventColours
        line("<circle r=\"4.5\" fill=\"\(c[.enter]!)\"/>", "enter (\(grouped(counts[.enter] ?? 0)))")
        line("<circle r=\"4\" fill=\"#fff\" stroke=\"\(c[.exit]!)\" stroke-width=\"2.2\"/>", "exit (\(grouped(counts[.exit] ?? 0)))")
        line("<rect x=\"-4\" y=\"-4\" width=\"8\" height=\"8\" fill=\"\(c[.dwell]!)\"/>", "dwell (\(grouped(counts[.dwell] ?? 0)))")
        line("<path d=\"M0 -6.5l6.5 6.5l-6.5 6.5l-6.5 -6.5z\" fill=\"\(c[.deliver]!)\"/>",
             "notification delivered (\(grouped(counts[.deliver] ?? 0)))")
        for k in 0..<shownTracks {
            line("<path d=\"M-7 0h14\" stroke=\"\(tracks[k].colour)\" stroke-width=\"3\"/>", "track of " + data.tracks[k].device)
        }
        if tracks.count > shownTracks { line("", "and \(grouped(tracks.count - shownTracks)) more devices") }
        line("<circle r=\"6\" fill=\"\(Self.regionColour)\" fill-opacity=\".15\" stroke=\"\(Self.regionColour)\"/>",
             "region (\(grouped(regionPlan.shapes.count)) drawn)")
        if !regionPlan.density.isEmpty {
            line("<rect x=\"-5\" y=\"-5\" width=\"10\" height=\"10\" fill=\"\(Self.regionColour)\" fill-opacity=\".5\"/>",
                 "more regions: density (\(grouped(regionPlan.inView - regionPlan.shapes.count)))")
        }
        o.raw("</g>\n")
    }
}
