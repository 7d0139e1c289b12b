import GeotriggerCore
import GeotriggerFormats

/// Readings written back out, as `geotrigger convert` writes them: NDJSON (SPEC §3's fields,
/// control records as they came), CSV (one header naming the fields of fixes and sightings; a
/// row leaves empty what its kind has not), or GPX (fixes only, one track per device). Numbers
/// are written in the fewest digits that read back as the same double, times in RFC 3339 with
/// milliseconds, as events write them.
public final class ReadingWriter {
    public enum Format: String, Sendable {
        case ndjson, csv, gpx

        /// The format an output path's extension names: `.csv`, `.gpx`, NDJSON otherwise
        /// (standard output included).
        public init(path: String?) {
            let lower = (path ?? "-").lowercased()
            if lower.hasSuffix(".csv") { self = .csv } else if lower.hasSuffix(".gpx") { self = .gpx } else { self = .ndjson }
        }
    }

    public let format: Format
    let output: RecordBuffer
    /// What a format cannot hold (GPX: sightings and control records; CSV: control records),
    /// counted for the summary.
    public private(set) var skipped = 0
    public private(set) var written = 0
    /// GPX: each device's points, in the order the devices first came, written at `finish`
    /// (a track is a device's; the file holds them one after another).
    private var tracks: [(device: [UInt8], points: [(t: Double, latitude: Double, longitude: Double)])] = []
    private var trackOf: [[UInt8]: Int] = [:]

    public init(format: Format, output: RecordBuffer) {
        self.format = format
        self.output = output
        if format == .csv { output.append("t,device,lat,lon,accuracy,uuid,major,minor,rssi,tx\n") }
    }

    /// Writes one reading (a control record only as NDJSON, its line as it came).
    public func write(_ r: Reading) throws {
        switch format {
        case .ndjson: writeNDJSON(r)
        case .csv: writeCSV(r)
        case .gpx: keepForGPX(r)
        }
        try output.endRecord()
    }

    private func writeNDJSON(_ r: Reading) {
        let o = output
        if r.kind == .control {
            o.append(r.line)
        } else {
            o.append("{\"t\":")
            o.appendTime(r.t)
            o.append(",\"device\":")
            o.appendJSONString(r.device)
            if r.kind == .fix {
                o.append(",\"lat\":")
                o.append(string: Self.number(r.latitude))
                o.append(",\"lon\":")
                o.append(string: Self.number(r.longitude))
                if !r.accuracy.isNaN {
                    o.append(",\"accuracy\":")
                    o.append(string: Self.number(r.accuracy))
                }
            } else {
                o.append(",\"uuid\":")
                o.appendJSONString(r.beacon.uuidString)
                o.append(",\"major\":")
                o.appendInteger(Int64(r.beacon.major))
                o.append(",\"minor\":")
                o.appendInteger(Int64(r.beacon.minor))
                o.append(",\"rssi\":")
                o.append(string: Self.number(r.rssi))
                if !r.tx.isNaN {
                    o.append(",\"tx\":")
                    o.append(string: Self.number(r.tx))
                }
            }
            o.append("}")
        }
        o.append(UInt8(ascii: "\n"))
        written += 1
    }

    private func writeCSV(_ r: Reading) {
        let o = output
        guard r.kind != .control else { return skipped += 1 }
        o.append(string: RFC3339.format(r.t))
        o.append(",")
        o.append(string: Self.csvCell(r.device))
        if r.kind == .fix {
            o.append(string: "," + Self.number(r.latitude) + "," + Self.number(r.longitude) + ",")
            if !r.accuracy.isNaN { o.append(string: Self.number(r.accuracy)) }
            o.append(",,,,,\n")
        } else {
            o.append(string: ",,,," + r.beacon.uuidString + ",\(r.beacon.major),\(r.beacon.minor)," + Self.number(r.rssi) + ",")
            if !r.tx.isNaN { o.append(string: Self.number(r.tx)) }
            o.append("\n")
        }
        written += 1
    }

    private func keepForGPX(_ r: Reading) {
        guard r.kind == .fix else { return skipped += 1 }
        let name = Array(r.device)
        let k: Int
        if let known = trackOf[name] {
            k = known
        } else {
            k = tracks.count
            trackOf[name] = k
            tracks.append((name, []))
        }
        tracks[k].points.append((r.t, r.latitude, r.longitude))
        written += 1
    }

    /// Ends the output: GPX writes its tracks here. Then flushes.
    public func finish() throws {
        if format == .gpx {
            let o = output
            o.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            o.append("<gpx version=\"1.1\" creator=\"geotrigger convert\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n")
            for track in tracks {
                o.append("  <trk><name>")
                o.append(string: Self.xmlEscaped(String(decoding: track.device, as: UTF8.self)))
                o.append("</name><trkseg>\n")
                for p in track.points {
                    o.append(string: "    <trkpt lat=\"" + Self.number(p.latitude) + "\" lon=\"" + Self.number(p.longitude) + "\"><time>")
                    o.append(string: RFC3339.format(p.t))
                    o.append("</time></trkpt>\n")
                    try o.endRecord()
                }
                o.append("  </trkseg></trk>\n")
            }
            o.append("</gpx>\n")
        }
        try output.flush()
    }

    /// The fewest digits that read back as `x` (integers without a fraction), as JSON writes it.
    static func number(_ x: Double) -> String {
        var bytes: [UInt8] = []
        JSONValue.writeNumber(x, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A device id as a CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a
    /// line break.
    static func csvCell(_ bytes: ByteView) -> String {
        let s = bytes.string
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        var quoted = "\""
        for c in s { quoted += c == "\"" ? "\"\"" : String(c) }
        return quoted + "\""
    }

    static func xmlEscaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
