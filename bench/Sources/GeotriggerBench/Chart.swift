import Foundation

/// Line charts as hand-written SVG (no dependencies): fixes/s against a size, both axes log-scaled
/// (the region sweep spans 30 k to 50 M fixes/s: on a linear axis its large sets sit on the floor).
enum Chart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    static func regions(_ sweep: [Results.SweepPoint]) -> String {
        svg(title: "Engine fixes/s vs number of regions (city circles, one core)", xLabel: "regions (log scale)",
            series: series(sweep))
    }

    static func devices(_ sweep: [Results.SweepPoint]) -> String {
        svg(title: "Engine fixes/s vs number of active devices (city scenario regions, one core)",
            xLabel: "devices (log scale)", series: series(sweep))
    }

    static func series(_ sweep: [Results.SweepPoint]) -> [Series] {
        [Series(name: "fast path", color: "#1f77b4", points: sweep.map { (Double($0.size), $0.fixesPerSecond) }),
         Series(name: "plain GEOS-tree path", color: "#ff7f0e", points: sweep.map { (Double($0.size), $0.plainFixesPerSecond) })]
    }

    static func svg(title: String, xLabel: String, series: [Series]) -> String {
        let width = 640.0, height = 400.0, left = 80.0, right = 20.0, top = 40.0, bottom = 60.0
        let plotW = width - left - right, plotH = height - top - bottom
        let all = series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 }
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2)" y="20" text-anchor="middle" font-size="14">\(escape(title))</text>

            """
        guard let minX = all.map(\.x).min(), let maxX = all.map(\.x).max(), let minY = all.map(\.y).min(),
              let maxY = all.map(\.y).max() else {
            return out + "<text x=\"\(width / 2)\" y=\"\(height / 2)\" text-anchor=\"middle\">not measured in this run</text>\n</svg>\n"
        }
        let logMin = log10(minX), logMax = max(log10(maxX), logMin + 1)
        let yLogMin = floor(log10(minY)), yLogMax = max(ceil(log10(maxY)), yLogMin + 1)
        func px(_ x: Double) -> Double { left + (log10(x) - logMin) / (logMax - logMin) * plotW }
        func py(_ y: Double) -> Double { top + plotH - (log10(y) - yLogMin) / (yLogMax - yLogMin) * plotH }
        // Axes, decade ticks on x; on y decades, and 2 and 5 times each in a lighter line.
        out += "<line x1=\"\(left)\" y1=\"\(top + plotH)\" x2=\"\(left + plotW)\" y2=\"\(top + plotH)\" stroke=\"black\"/>\n"
        out += "<line x1=\"\(left)\" y1=\"\(top)\" x2=\"\(left)\" y2=\"\(top + plotH)\" stroke=\"black\"/>\n"
        var decade = pow(10, floor(logMin))
        while decade <= pow(10, logMax) * 1.0001 {
            if decade >= minX * 0.9999 {
                let x = px(decade)
                out += "<line x1=\"\(x)\" y1=\"\(top)\" x2=\"\(x)\" y2=\"\(top + plotH)\" stroke=\"#ddd\"/>\n"
                out += "<text x=\"\(x)\" y=\"\(top + plotH + 16)\" text-anchor=\"middle\">\(compact(decade))</text>\n"
            }
            decade *= 10
        }
        var power = pow(10, yLogMin)
        while power <= pow(10, yLogMax) * 1.0001 {
            for (multiple, shade) in [(1.0, "#ccc"), (2, "#eee"), (5, "#eee")] where multiple * power <= pow(10, yLogMax) * 1.0001 {
                let value = multiple * power, y = py(value)
                out += "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(left + plotW)\" y2=\"\(y)\" stroke=\"\(shade)\"/>\n"
                out += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\">\(compact(value))</text>\n"
            }
            power *= 10
        }
        out += "<text x=\"\(left + plotW / 2)\" y=\"\(height - 20)\" text-anchor=\"middle\">\(escape(xLabel))</text>\n"
        out += "<text x=\"16\" y=\"\(top + plotH / 2)\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(top + plotH / 2))\">fixes/s (log scale)</text>\n"
        for (k, s) in series.enumerated() {
            let points = s.points.filter { $0.x > 0 && $0.y > 0 }
            let path = points.map { "\(px($0.x)),\(py($0.y))" }.joined(separator: " ")
            out += "<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            for p in points {
                out += "<circle cx=\"\(px(p.x))\" cy=\"\(py(p.y))\" r=\"3\" fill=\"\(s.color)\"><title>\(compact(p.x)): \(Int(p.y)) fixes/s</title></circle>\n"
            }
            let ly = top + 14 + Double(k) * 16
            out += "<line x1=\"\(left + plotW - 170)\" y1=\"\(ly - 4)\" x2=\"\(left + plotW - 150)\" y2=\"\(ly - 4)\" stroke=\"\(s.color)\" stroke-width=\"2\"/>\n"
            out += "<text x=\"\(left + plotW - 145)\" y=\"\(ly)\">\(escape(s.name))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// 1k, 2.5M, 300.
    static func compact(_ v: Double) -> String {
        for (unit, scale) in [("M", 1e6), ("k", 1e3)] where v >= scale {
            let n = v / scale
            return (n == n.rounded() ? String(Int(n)) : String(format: "%.1f", n)) + unit
        }
        return v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
