import Foundation
@testable import GeotriggerEngine
import GeotriggerRuntime
import GeotriggerFormats
import Geotrigger
import Testing

/// Checkpoints (`replay --checkpoint`): an engine's state written between readings and restored
/// into a fresh engine built the same way must carry on exactly as the uninterrupted engine does.
///
/// Each case runs a stream once without a cut, then once for each cut point: up to the cut on one
/// engine, `writeSnapshot`, `restoreSnapshot` into a new engine, the rest on that one. Compared:
/// every event and delivery with all its fields (Doubles by bit pattern), the bytes the event
/// writer makes of them, and the final state (the `--state-out` bytes, and every device's
/// visits, beacon visits, pending and delivered lists, with the Doubles' bits).
@Suite("Checkpoints: restore and continue as if never stopped")
struct EngineSnapshotTests {
    /// One input of the stream, as the replay applies it.
    enum Step {
        case fix(String, t: Double, lat: Double, lon: Double)
        case sighting(String, t: Double, beacon: BeaconID, rssi: Double, tx: Double = .nan)
        /// A control record's JSON line, applied as `ReadingApplier` does (touch, then the record).
        case control(String, t: Double, op: ControlOp, line: String)
        /// `Engine.add` (the library's way, which may name devices).
        case add(String, t: Double, request: NotificationRequest)
        case advance(Double)
    }

    /// What a run produced.
    struct Run: Equatable {
        var trace: [String] = []
        var eventBytes: [UInt8] = []
        var state: String = ""
        /// Requests, compared with `==` (content, userInfo, trigger, devices).
        var pending: [[NotificationRequest]] = []
        var delivered: [[NotificationRequest]] = []
    }

    /// Collects an engine's events and deliveries and, through an `EventWriter`, their bytes.
    final class Recorder {
        var run = Run()
        var memory = RecordBuffer(memory: ())

        func attach(_ engine: Engine) {
            if memory.count > 0 { run.eventBytes += memory.takeBytes() }
            memory = RecordBuffer(memory: ())
            engine.output = EventWriter(output: memory, devices: engine.devices, regions: engine.index.regions)
            engine.onEvent = { [unowned self, unowned engine] e in
                run.trace.append("\(e.kind.name) t=\(e.t.bitPattern) \(engine.deviceName(e.device)) \(engine.regionID(e.region)) "
                    + "d=\(e.distance.bitPattern) in=\(e.enteredAt.bitPattern) b=\(String(describing: e.beacon)) "
                    + "p=\(String(describing: e.proximity)) r=\(String(describing: e.reason))")
            }
            engine.onDeliver = { [unowned self, unowned engine] d in
                run.trace.append("deliver t=\(d.t.bitPattern) \(engine.deviceName(d.device)) \(d.id) \(d.trigger) "
                    + "\(d.trigger.seconds?.bitPattern ?? 0) r=\(d.region) \(d.content.json.serialized()) "
                    + "\(d.content.relevanceScore?.bitPattern ?? 0) \(d.presented.names) \(d.listed) \(d.actions)")
            }
            engine.onResponse = { [unowned self, unowned engine] r in
                run.trace.append("response t=\(r.t.bitPattern) \(engine.deviceName(r.device)) \(r.id) \(r.action) \(r.text ?? "-") \(r.foreground)")
            }
        }

        func finish(_ engine: Engine) -> Run {
            run.eventBytes += memory.takeBytes()
            let state = RecordBuffer(memory: ())
            StateWriter.write(engine: engine, to: state)
            run.state = String(decoding: state.takeBytes(), as: UTF8.self)
            run.state += "\nclock \(engine.clock.bitPattern)"
            // Live devices only: `--expire` frees ids.
            for d in 0..<Int32(engine.devices.count) where engine.devices.isLive(d) {
                var line = "\n\(engine.deviceName(d)) last=\(engine.monitor.lastReading(of: d).bitPattern)"
                for v in engine.monitor.visits(of: d) {
                    line += " visit \(v.region) \(v.enteredAt.bitPattern) \(v.silent) \(v.dwelled)"
                }
                for v in engine.beacons.visits(of: d) {
                    line += " beacon \(v.region) \(v.enteredAt.bitPattern) \(String(describing: v.beacon))"
                }
                for n in engine.scheduler.delivered(device: d) { line += " delivered \(n.request.id) \(n.date.bitPattern)" }
                run.state += line
                run.pending.append(engine.scheduler.pending(device: d))
                run.delivered.append(engine.scheduler.delivered(device: d).map(\.request))
            }
            return run
        }
    }

    static func apply(_ step: Step, to engine: Engine) throws {
        switch step {
        case .fix(let device, let t, let lat, let lon):
            engine.fix(device: device, t: t, latitude: lat, longitude: lon)
        case .sighting(let device, let t, let beacon, let rssi, let tx):
            _ = engine.sighting(device: engine.monitor.device(device), t: t, beacon: beacon, rssi: rssi, tx: tx)
        case .control(let device, let t, let op, let line):
            let d = engine.monitor.device(device)
            guard engine.touch(device: d, t: t) == nil else { return }
            let problem = Array(line.utf8).withByteView {
                ControlRecord.apply(op, line: $0, t: t, device: d, to: engine.scheduler)
            }
            _ = problem  // some records are meant to be refused (a push without content for nothing pending)
        case .add(let device, let t, let request):
            let d = engine.monitor.device(device)
            guard engine.touch(device: d, t: t) == nil else { return }
            try engine.add(request, device: device, at: t)
        case .advance(let t):
            engine.advance(to: t)
        }
    }

    /// Runs `steps` to the end (then advances the clock to `end`), cutting before step `cut`.
    /// Also checks that a restored engine writes the very snapshot it was restored from.
    static func run(_ make: () throws -> Engine, _ steps: [Step], cut: Int?, end: Double) throws -> Run {
        var engine = try make()
        let recorder = Recorder()
        recorder.attach(engine)
        for (i, step) in steps.enumerated() {
            if i == cut { engine = try restored(engine, make, recorder) }
            try apply(step, to: engine)
        }
        if cut == steps.count { engine = try restored(engine, make, recorder) }
        engine.advance(to: end)
        return recorder.finish(engine)
    }

    static func restored(_ engine: Engine, _ make: () throws -> Engine, _ recorder: Recorder) throws -> Engine {
        var w = SnapshotWriter()
        engine.writeSnapshot(to: &w)
        let fresh = try make()
        var r = SnapshotReader(w.bytes)
        try fresh.restoreSnapshot(from: &r)
        #expect(r.isAtEnd)
        var again = SnapshotWriter()
        fresh.writeSnapshot(to: &again)
        let same = again.bytes == w.bytes
        #expect(same, "a restored engine writes another snapshot")
        recorder.attach(fresh)
        return fresh
    }

    /// Runs every cut in `cuts` and compares each with the uninterrupted run.
    static func checkCuts(_ make: () throws -> Engine, _ steps: [Step], cuts: some Sequence<Int>, end: Double,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> Run {
        let whole = try run(make, steps, cut: nil, end: end)
        for cut in cuts {
            let resumed = try run(make, steps, cut: cut, end: end)
            if resumed != whole {
                let k = zip(resumed.trace, whole.trace).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(resumed.trace.count, whole.trace.count)
                Issue.record("""
                    cut before step \(cut) of \(steps.count): runs differ (trace \(resumed.trace.count) vs \(whole.trace.count) \
                    entries, first difference at \(k): \(k < resumed.trace.count ? resumed.trace[k] : "-") vs \
                    \(k < whole.trace.count ? whole.trace[k] : "-"); events bytes equal: \(resumed.eventBytes == whole.eventBytes); \
                    state equal: \(resumed.state == whole.state))
                    """, sourceLocation: sourceLocation)
                return whole
            }
        }
        return whole
    }

    static func request(_ json: String) throws -> NotificationRequest {
        try NotificationRequest(json: JSONValue.parse(json))
    }

    // MARK: (a) The notification core

    static let home = Region(id: "home", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 100))
    static let office = Region(id: "office", shape: .circle(center: Coordinate(latitude: 48.21, longitude: 16.38), radius: 150))

    static func notificationEngine() throws -> Engine { try notificationEngine(expire: nil) }

    static func notificationEngine(expire: Double?) throws -> Engine {
        let requests = try [
            request(#"{"id":"tick","content":{"title":"tick"},"trigger":{"type":"timeInterval","seconds":90,"repeats":true}}"#),
            request(#"""
                {"id":"once","content":{"title":"once","badge":3,"interruptionLevel":"timeSensitive","relevanceScore":0.30000000000000004,
                 "userInfo":{"k":[1,2.5,{"x":null,"y":true}],"s":"é\n"}},
                 "trigger":{"type":"timeInterval","seconds":45.1},"devices":["a","b"]}
                """#),
            request(#"{"id":"cal","content":{"body":"minute"},"trigger":{"type":"calendar","components":{"second":20},"timeZone":"Europe/Vienna","repeats":true}}"#),
            request(#"{"id":"arrive","trigger":{"type":"location","region":"home","notifyOnExit":false,"repeats":true}}"#),
            request(#"{"id":"leave","trigger":{"type":"location","region":"office","notifyOnEntry":false}}"#),
            request(#"{"id":"pushme","content":{"title":"pushed"},"trigger":{"type":"push"},"devices":["b"]}"#),
        ]
        return try Engine(regions: [home, office], hysteresis: .metres(0), options: MonitorOptions(dwell: 40, expire: expire),
                          requests: requests)
    }

    static let t0 = 1_700_000_000.0

    static var notificationSteps: [Step] {
        let t0 = Self.t0
        let (hLat, hLon) = (48.2, 16.37), (oLat, oLon) = (48.21, 16.38), (xLat, xLon) = (48.3, 16.5)
        return [
            .fix("a", t: t0, lat: hLat, lon: hLon),
            .fix("b", t: t0 + 5, lat: xLat, lon: xLon),
            .control("a", t: t0 + 10, op: .add, line: #"""
                {"t":0,"device":"a","op":"add","request":{"id":"tea","content":{"title":"Tea","relevanceScore":0.1,
                 "userInfo":{"n":1e-7,"list":[0.1,0.2,0.30000000000000004]}},"trigger":{"type":"timeInterval","seconds":30.000000000000004}}}
                """#),
            .fix("c", t: t0 + 12, lat: oLat, lon: oLon),
            .control("b", t: t0 + 20, op: .push, line: #"{"op":"push","id":"pushme","content":{"title":"own content","badge":1}}"#),
            .fix("a", t: t0 + 30, lat: xLat, lon: xLon),
            .control("c", t: t0 + 33, op: .add, line: #"{"op":"add","request":{"id":"rep","trigger":{"type":"timeInterval","seconds":61.5,"repeats":true}}}"#),
            // SPEC §5.1's settings and answers, which the snapshot carries too.
            .control("a", t: t0 + 34, op: .setCategories, line: #"{"op":"setCategories","categories":[{"id":"invite","actions":[{"id":"ok","title":"OK","textInput":{"button":"Send","placeholder":""}}],"options":["customDismissAction"]}]}"#),
            .control("a", t: t0 + 35, op: .push, line: #"{"op":"push","id":"surprise","content":{"title":"walk-in","categoryIdentifier":"invite"}}"#),
            .control("a", t: t0 + 36, op: .respond, line: #"{"op":"respond","id":"surprise","action":"ok","text":"yes"}"#),
            .control("b", t: t0 + 37, op: .authorize, line: #"{"op":"authorize","options":["badge"],"granted":true}"#),
            .control("b", t: t0 + 38, op: .push, line: #"{"op":"push","id":"apns","payload":{"aps":{"alert":"p","badge":1},"k":1}}"#),
            .control("c", t: t0 + 39, op: .appState, line: #"{"op":"appState","state":"foreground","presentation":["alert"]}"#),
            .control("c", t: t0 + 40, op: .push, line: #"{"op":"push","id":"quiet","payload":{"aps":{"content-available":1}}}"#),
            .fix("b", t: t0 + 41, lat: hLat, lon: hLon),
            .control("b", t: t0 + 44, op: .push, line: #"{"op":"push","id":"nothing"}"#),
            .add("c", t: t0 + 50, request: NotificationRequest(
                id: "lib", content: NotificationContent(title: "library", userInfo: .object(["a": .array([.number(0.1), .bool(false)])])),
                trigger: .calendar(components: CalendarComponents(minute: 15, second: 5), timeZone: "America/New_York", repeats: false),
                devices: ["c", "z"])),
            .fix("c", t: t0 + 60, lat: xLat, lon: xLon),
            .control("a", t: t0 + 62, op: .add, line: #"{"op":"add","request":{"id":"back","trigger":{"type":"location","region":"home","notifyOnExit":false}}}"#),
            .control("c", t: t0 + 70, op: .removePending, line: #"{"op":"removePending","ids":["cal"]}"#),
            .fix("a", t: t0 + 75, lat: hLat, lon: hLon),
            .control("a", t: t0 + 80, op: .add, line: #"{"op":"add","request":{"id":"tea","content":{"title":"Tea again"},"trigger":{"type":"timeInterval","seconds":120}}}"#),
            .fix("b", t: t0 + 95, lat: oLat, lon: oLon),
            .control("b", t: t0 + 100, op: .removeDelivered, line: #"{"op":"removeDelivered","ids":["once"]}"#),
            .fix("d", t: t0 + 101, lat: hLat, lon: hLon),
            .fix("b", t: t0 + 130, lat: xLat, lon: xLon),
            .control("c", t: t0 + 140, op: .push, line: #"{"op":"push","id":"surprise","content":{"title":"again","relevanceScore":0.7}}"#),
            .fix("a", t: t0 + 150, lat: xLat, lon: xLon),
            .control("d", t: t0 + 155, op: .removeAllPending, line: #"{"op":"removeAllPending"}"#),
            .advance(t0 + 200),
            .fix("d", t: t0 + 230, lat: oLat, lon: oLon),
            .fix("a", t: t0 + 250, lat: hLat, lon: hLon),
            .control("a", t: t0 + 251, op: .removeAllDelivered, line: #"{"op":"removeAllDelivered"}"#),
            .fix("c", t: t0 + 300, lat: hLat, lon: hLon),
        ]
    }

    @Test("notification core: time, calendar, location and push triggers, control records; a cut at every reading")
    func notificationCore() throws {
        let steps = Self.notificationSteps
        let whole = try Self.checkCuts(Self.notificationEngine, steps, cuts: 0...steps.count, end: Self.t0 + 4000)
        // The stream covers what it is meant to: each trigger kind delivers, pushes with their own
        // content, and repeating timers are pending across cuts.
        let deliveries = whole.trace.filter { $0.hasPrefix("deliver") }
        for kind in ["timeInterval", "calendar", "location", "push"] {
            #expect(deliveries.contains { $0.contains(kind) }, "no \(kind) delivery")
        }
        for id in [" tick ", " once ", " tea ", " rep ", " surprise ", " pushme ", " cal ", " arrive ", " leave ", " back ", " lib "] {
            #expect(deliveries.contains { $0.contains(id) }, "\(id) never delivered")
        }
        #expect(whole.trace.contains { $0.hasPrefix("dwell") })
        #expect(whole.state.contains("own content") && whole.state.contains("again"))
        #expect(whole.trace.contains { $0.contains("walk-in") })
        #expect(whole.pending.contains { !$0.isEmpty })
        // §5.1: the response, the badge-only presentation, the silent push, the settings in the state.
        #expect(whole.trace.contains { $0.hasPrefix("response") && $0.contains(" surprise ok yes false") })
        #expect(whole.trace.contains { $0.contains(" apns ") && $0.contains(#"["badge"] false"#) })
        #expect(String(decoding: whole.eventBytes, as: UTF8.self).contains(#""event":"silentPush","device":"c","request":"quiet","contentAvailable":true"#))
        #expect(whole.state.contains(#""categories":[{"actions""#) && whole.state.contains(#""authorized":["badge"]"#)
                && whole.state.contains(#""appState":{"state":"foreground","presentation":["alert"]}"#))
    }

    // MARK: (b) Beacons

    static func lobbyEngine() throws -> Engine {
        let regions = try RegionFile.load(path: CLI.root.appendingPathComponent("datasets/beacons/lobby.geojson").path)
        let path = CLI.root.appendingPathComponent("datasets/beacons/requests.json").path
        let requests = try RequestsFile.parse(bytes: RegionFile.readFile(path: path), fileName: path,
                                              knownRegion: { id in regions.contains { $0.id == id } })
        return try Engine(regions: regions, options: MonitorOptions(dwell: 5), requests: requests)
    }

    /// The lobby walk, and the same walk by a second phone a little later and weaker, merged in time order.
    static func lobbySteps() throws -> [Step] {
        let input = try ReadingInput.open(path: CLI.root.appendingPathComponent("datasets/beacons/walk.ndjson").path)
        var walk: [(t: Double, beacon: BeaconID, rssi: Double, tx: Double)] = []
        reading: while true {
            switch input.next() {
            case .reading:
                let r = input.current
                guard r.kind == .sighting else { continue }
                walk.append((r.t, r.beacon, r.rssi, r.tx))
            case .rejected(let why):
                Issue.record("walk.ndjson: \(why.message)")
            case .end:
                break reading
            }
        }
        var steps: [(Double, Int, Step)] = []
        for (k, s) in walk.enumerated() {
            steps.append((s.t, 2 * k, .sighting("phone", t: s.t, beacon: s.beacon, rssi: s.rssi, tx: s.tx)))
            steps.append((s.t + 3.013, 2 * k + 1, .sighting("tablet", t: s.t + 3.013, beacon: s.beacon, rssi: s.rssi - 2, tx: s.tx)))
        }
        return steps.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }

    @Test("beacons: the lobby walk (positioned beacons, fusion, wildcard store) by two phones, cut every 17th reading")
    func lobbyWalk() throws {
        let steps = try Self.lobbySteps()
        #expect(steps.count > 1000)
        let end = 1_763_800_200.0
        let whole = try Self.checkCuts(Self.lobbyEngine, steps, cuts: stride(from: 0, through: steps.count, by: 17), end: end)
        #expect(whole.trace.contains { $0.hasPrefix("enter") && $0.contains("cafe") })
        #expect(whole.trace.contains { $0.hasPrefix("dwell") })
        #expect(whole.trace.contains { $0.contains("silence") })
        #expect(whole.trace.contains { $0.hasPrefix("deliver") && $0.contains("coffee") })
    }

    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func syntheticEngine() throws -> Engine { try syntheticEngine(expire: nil) }

    /// The synthetic engine with every beacon zone entered at its first wanting sighting: with
    /// random RSSIs, a zone's rule rarely holds for the default minimum visit.
    static func syntheticEngineEnteringAtOnce() throws -> Engine {
        var beacons = BeaconOptions()
        beacons.minimumVisit = 0
        return try syntheticEngine(expire: nil, beacons: beacons)
    }

    static func syntheticEngine(expire: Double?, beacons: BeaconOptions = BeaconOptions()) throws -> Engine {
        let u = uuid
        let geojson = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"lobby","geometry":null,"properties":{"beacon":{"uuid":"\(u)","major":1,"minor":7},"proximity":"near"}},
              {"type":"Feature","id":"wing","geometry":null,"properties":{"beacon":{"uuid":"\(u)","major":2},"proximity":"immediate"}},
              {"type":"Feature","id":"store","geometry":null,"properties":{"beacon":{"uuid":"\(u)"}}},
              {"type":"Feature","id":"far","geometry":null,"properties":{"beacon":{"uuid":"\(u)","major":2},"proximity":"far"}},
              {"type":"Feature","id":"kiosk","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"beacon":{"uuid":"\(u)","major":9,"minor":9},"radius":10}},
              {"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[16.4,48.2]},"properties":{"radius":100}}
            ]}
            """
        let regions = try RegionFile.parse(bytes: Array(geojson.utf8), fileName: "synthetic.geojson")
        let requests = try [
            request(#"{"id":"hello","content":{"title":"lobby"},"trigger":{"type":"location","region":"lobby","notifyOnExit":false,"repeats":true}}"#),
            request(#"{"id":"bye","content":{"title":"store"},"trigger":{"type":"location","region":"store","notifyOnEntry":false,"repeats":true}}"#),
            request(#"{"id":"kiosk","trigger":{"type":"location","region":"kiosk"}}"#),
        ]
        return try Engine(regions: regions, options: MonitorOptions(dwell: 20, expire: expire), beaconOptions: beacons,
                          requests: requests)
    }

    /// Three devices hearing exact, major-wildcard and unknown beacons at random, with gaps long
    /// enough for silence exits, and fixes in and out of the kiosk's circle and the park.
    static func syntheticSteps() -> [Step] {
        guard let (high, low) = BeaconID.parseUUID(uuid) else { return [] }
        let beacons = [BeaconID(uuidHigh: high, uuidLow: low, major: 1, minor: 7),
                       BeaconID(uuidHigh: high, uuidLow: low, major: 2, minor: 1),
                       BeaconID(uuidHigh: high, uuidLow: low, major: 2, minor: 2),
                       BeaconID(uuidHigh: high, uuidLow: low, major: 3, minor: 5),
                       BeaconID(uuidHigh: high, uuidLow: low, major: 9, minor: 9),
                       BeaconID(uuidHigh: 1, uuidLow: 2, major: 1, minor: 1)]
        let places = [(48.2, 16.37), (48.20003, 16.37), (48.2, 16.4), (48.3, 16.5)]
        var random = SplitMix64(seed: 23)
        var t = 1_000.0
        var steps: [Step] = []
        for _ in 0..<700 {
            // Mostly short gaps; now and then a silence of 20 to 60 s.
            t += random.unit() < 0.03 ? random.uniform(20, 60) : random.uniform(0.05, 1.5)
            let device = ["p1", "p2", "p3"][Int(random.next() % 3)]
            if random.unit() < 0.12 {
                let (lat, lon) = places[Int(random.next() % UInt64(places.count))]
                steps.append(.fix(device, t: t, lat: lat, lon: lon))
            } else {
                let b = beacons[Int(random.next() % UInt64(beacons.count))]
                let rssi = (random.uniform(-95, -45)).rounded()
                let tx = random.unit() < 0.3 ? -59.0 : .nan
                steps.append(.sighting(device, t: t, beacon: b, rssi: rssi, tx: tx))
            }
        }
        return steps
    }

    @Test("beacons: wildcard regions, silence exits, a positioned region entered by fixes, dwell; cut every 17th reading")
    func syntheticBeacons() throws {
        let steps = Self.syntheticSteps()
        // With the default minimum visit (zones waiting on a beacon at some cuts), then without it
        // (the immediate zone entered too).
        let whole = try Self.checkCuts(Self.syntheticEngine, steps, cuts: stride(from: 0, through: steps.count, by: 17), end: 5_000)
        let atOnce = try Self.checkCuts(Self.syntheticEngineEnteringAtOnce, steps,
                                        cuts: stride(from: 0, through: steps.count, by: 29), end: 5_000)
        #expect(atOnce.trace.contains { $0.hasPrefix("enter") && $0.contains(" wing ") })
        #expect(whole.trace.contains { $0.contains("silence") })
        #expect(whole.trace.contains { $0.hasPrefix("enter") && $0.contains(" kiosk ") })
        #expect(whole.trace.contains { $0.hasPrefix("dwell") && $0.contains(" store ") })
        #expect(whole.trace.contains { $0.hasPrefix("deliver") && $0.contains(" bye ") })
    }

    // MARK: Bad snapshots

    @Test("a truncated or corrupt snapshot is refused with an error, never a crash")
    func truncated() throws {
        var engines: [(make: () throws -> Engine, steps: [Step])] = [
            (Self.notificationEngine, Self.notificationSteps),
            (Self.syntheticEngine, Array(Self.syntheticSteps().prefix(300))),
        ]
        engines.append((Self.lobbyEngine, Array(try Self.lobbySteps().prefix(400))))
        for (make, steps) in engines {
            let engine = try make()
            for step in steps { try Self.apply(step, to: engine) }
            var w = SnapshotWriter()
            engine.writeSnapshot(to: &w)
            let bytes = w.bytes
            // Every prefix, up to a few hundred of them spread over the snapshot.
            for length in Array(stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300))) + [bytes.count - 1] {
                var r = SnapshotReader(Array(bytes[..<length]))
                #expect(throws: SnapshotError.self) { try make().restoreSnapshot(from: &r) }
            }
            // And a restore into an engine that has read already.
            var r = SnapshotReader(bytes)
            #expect(throws: SnapshotError.self) { try engine.restoreSnapshot(from: &r) }
        }
    }

    @Test("a snapshot restored into an engine built from other requests is refused")
    func otherRequests() throws {
        let engine = try Self.notificationEngine()
        for step in Self.notificationSteps { try Self.apply(step, to: engine) }
        var w = SnapshotWriter()
        engine.writeSnapshot(to: &w)
        let other = try Engine(regions: [Self.home, Self.office], hysteresis: .metres(0), options: MonitorOptions(dwell: 40))
        var r = SnapshotReader(w.bytes)
        #expect(throws: SnapshotError.self) { try other.restoreSnapshot(from: &r) }
    }
}

extension NotificationTrigger {
    /// A time interval's seconds, for comparing their bits.
    fileprivate var seconds: Double? {
        if case .timeInterval(let s, _) = self { return s }
        return nil
    }
}
