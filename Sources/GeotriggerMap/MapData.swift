import GeotriggerCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerRuntime
import GeotriggerFormats

/// What a map shows (SPEC §9): the regions, each device's track and the events, read from the
/// same files a replay reads and writes. Knows no GEOS and no engine: a map is drawn from files.
public struct MapData {
    public var regions: [Region]
    public var tracks: [Track]
    public var events: [Event]
    /// What could not be used, counted (and the first few described) so that nothing is lost
    /// silently: readings rejected by the decoders, event lines that are not events
    /// (`MapRenderer.unplacedEvents` counts events of a device with no fix to place them at).
    public var problems = Problems()

    public init(regions: [Region], tracks: [Track] = [], events: [Event] = []) {
        self.regions = regions
        self.tracks = tracks
        self.events = events
    }

    /// One device's fixes in input order.
    public struct Track {
        public var device: String
        public var t: [Double] = []
        public var latitude: [Double] = []
        public var longitude: [Double] = []

        public init(device: String) { self.device = device }

        /// The index of the last fix at or before `time` (the first fix when all are later).
        func fixIndex(at time: Double) -> Int? {
            guard !t.isEmpty else { return nil }
            var lo = 0, hi = t.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if t[mid] <= time { lo = mid + 1 } else { hi = mid }
            }
            return max(0, lo - 1)
        }
    }

    /// An event as `replay` wrote it, with the kinds a map marks.
    public struct Event {
        public enum Kind: String, CaseIterable, Sendable {
            case enter, exit, dwell, deliver
        }
        public var kind: Kind
        public var device: String
        public var region: String?
        public var t: Double
        /// The time as the event line wrote it.
        public var time: String
        public var distance: Double?
        /// A delivery's request id and title.
        public var request: String?
        public var title: String?

        public init(kind: Kind, device: String, region: String? = nil, t: Double, time: String,
                    distance: Double? = nil, request: String? = nil, title: String? = nil) {
            self.kind = kind
            self.device = device
            self.region = region
            self.t = t
            self.time = time
            self.distance = distance
            self.request = request
            self.title = title
        }
    }

    public struct Problems {
        public var rejectedReadings = 0
        /// Lines of the events file that are not JSON objects with a known time and kind.
        public var badEventLines = 0
        /// Events of other kinds (`response`, `silentPush`): not marked.
        public var otherEvents = 0
        /// The first few problems of the readings and of the events file, as FILE:LINE: reason.
        public var readingExamples: [String] = []
        public var eventExamples: [String] = []

        mutating func noteReading(_ message: String) {
            if readingExamples.count < 10 { readingExamples.append(message) }
        }

        mutating func noteEvent(_ message: String) {
            if eventExamples.count < 10 { eventExamples.append(message) }
        }
    }
}

extension MapData {
    /// Reads the fixes of every reading file (merged by time, as `replay` reads them), one track
    /// per device. Sightings and control records have no position of their own and are skipped;
    /// rejected records (and, as `replay` rejects them, fixes older than their device's previous
    /// one) are counted.
    public mutating func readTracks(paths: [String], format: ReadingFormat? = nil, device: String? = nil) throws {
        let decoders = try paths.map {
            try ReadingInput.open(path: $0, format: format, device: device, mapsFile: paths.count > 1)
        }
        let merged = MergedReadings(decoders)
        let names = DeviceTable()
        var byDevice: [Int] = []
        loop: while true {
            switch merged.next().step {
            case .end:
                break loop
            case .rejected(let reason):
                problems.rejectedReadings += 1
                problems.noteReading("\(merged.sourceName):\(merged.lineNumber): \(reason.message)")
            case .reading:
                let r = merged.current
                guard r.kind == .fix, r.latitude.isFinite, r.longitude.isFinite else { continue }
                let (id, isNew) = names.intern(r.device)
                if isNew {
                    byDevice.append(tracks.count)
                    tracks.append(Track(device: r.deviceString))
                }
                let k = byDevice[Int(id)]
                // As a replay does: a fix older than its device's previous one is rejected.
                if let last = tracks[k].t.last, r.t < last {
                    problems.rejectedReadings += 1
                    problems.noteReading("\(merged.sourceName):\(merged.lineNumber): \(RejectReason.outOfOrder.message)")
                    continue
                }
                tracks[k].t.append(r.t)
                tracks[k].latitude.append(r.latitude)
                tracks[k].longitude.append(r.longitude)
            }
        }
        if let error = merged.ioErrors.first { throw MapError.io("\(error.source): \(error.message)") }
    }

    /// Reads `replay`'s NDJSON events: enter, exit, dwell and deliver are kept; other kinds and
    /// lines that are not events are counted.
    public mutating func readEvents(bytes: [UInt8], fileName: String) {
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            let line = bytes[start..<end]
            start = end + 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            guard case .object(let o)? = try? JSONValue.parse(line),
                  case .string(let kindName)? = o["event"], case .string(let time)? = o["t"],
                  let t = RFC3339.parse(time), case .string(let device)? = o["device"] else {
                problems.badEventLines += 1
                problems.noteEvent("\(fileName):\(lineNumber): not an event line (an object with \"t\", \"event\" and \"device\")")
                continue
            }
            guard let kind = Event.Kind(rawValue: kindName) else {
                problems.otherEvents += 1
                continue
            }
            var event = Event(kind: kind, device: device, t: t, time: time)
            if case .string(let region)? = o["region"] { event.region = region }
            if case .number(let d)? = o["distance"] { event.distance = d }
            if case .string(let request)? = o["request"] { event.request = request }
            if case .object(let content)? = o["content"], case .string(let title)? = content["title"] { event.title = title }
            events.append(event)
        }
    }
}

public enum MapError: Error, CustomStringConvertible, Equatable {
    /// Reading or writing a file failed.
    case io(String)
    case usage(String)

    public var description: String {
        switch self {
        case .io(let m), .usage(let m): return m
        }
    }
}

/// Writing a map to a file: SVG or HTML, by the file's extension.
public enum MapFile {
    public enum Kind: Sendable {
        case svg, html
    }

    /// `.svg`, or `.html`/`.htm`; nil for any other name.
    public static func kind(ofPath path: String) -> Kind? {
        let lower = path.lowercased()
        if lower.hasSuffix(".svg") { return .svg }
        if lower.hasSuffix(".html") || lower.hasSuffix(".htm") { return .html }
        return nil
    }

    public static let kindProblem = "the map's file name must end in .svg or .html"

    /// Renders and writes the map; returns the bytes written.
    @discardableResult
    public static func write(_ renderer: MapRenderer, to path: String) throws(MapError) -> Int {
        guard let kind = kind(ofPath: path) else { throw .usage("\(path): \(kindProblem)") }
        let bytes = (kind == .svg ? renderer.drawing(for: .svg) : renderer.page()).bytes
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot write \(path): \(String(cString: strerror(errno)))") }
        let (n, failure) = bytes.withByteView { SystemIO.writeAll(fd, $0) }
        let closed = close(fd)
        if let failure { throw .io("cannot write \(path): \(failure)") }
        guard n == bytes.count, closed == 0 else { throw .io("cannot write \(path): \(String(cString: strerror(errno)))") }
        return n
    }
}
