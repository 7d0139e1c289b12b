import Foundation
import Geotrigger
import GeotriggerScenarios
import Testing

/// Plain fixes go through the monitor in batches of distinct devices (`Monitor.batchAppend`,
/// `applyBatch`) where the engine allows it (`Engine.batchesFixes`): every event must be the
/// one, in the same order, that applying the fixes one at a time gives. Checked on scenarios
/// of both kinds of geometry workload, in default and exact mode, on readings disturbed so that
/// batches end every way they can: a device coming again within a batch, a fix older than its
/// device's last reading (rejected between batches), a fix too inaccurate to count.
@Suite("Batched fixes")
struct BatchTests {
    struct Fix {
        var device: String
        var t: Double
        var point: Coordinate
        var accuracy: Double
    }

    /// A scenario's readings as fixes, disturbed: every 97th fix goes back a minute (older than
    /// its device's last), every 89th is followed by another of its device half a second later
    /// and 30 m north (so a device comes again within a batch, somewhere else), every 53rd is
    /// 500 m inaccurate.
    static func fixes(_ kind: Scenario.Kind) throws -> (regions: [Region], fixes: [Fix]) {
        let dir = try CLI.temporaryDirectory()
        let scenario = Scenario(kind: kind, seed: 5, regions: 20_000, devices: 150, seconds: kind == .world ? 200 : 60)
        let places = kind == .world ? try Scenario.loadPlaces(path: ScenarioTests.places) : []
        let regionsPath = dir.appendingPathComponent("regions.csv").path
        let readingsPath = dir.appendingPathComponent("readings.ndjson").path
        try scenario.writeRegions(to: RecordBuffer(path: regionsPath), places: places)
        try scenario.writeReadings(to: RecordBuffer(path: readingsPath), places: places)
        let decoder = try ReadingInput.open(path: readingsPath)
        var fixes: [Fix] = []
        while case .reading = decoder.next() {
            let r = decoder.current
            var fix = Fix(device: String(decoding: r.device, as: UTF8.self), t: r.t,
                          point: Coordinate(latitude: r.latitude, longitude: r.longitude), accuracy: r.accuracy)
            let n = fixes.count
            if n % 53 == 0 { fix.accuracy = 500 }
            if n % 97 == 0 { fix.t -= 60 }
            fixes.append(fix)
            if n % 89 == 0 {
                var again = fix
                again.t += 0.5
                again.point.latitude += 30.0 / 111_000
                fixes.append(again)
            }
        }
        return (try RegionFile.load(path: regionsPath), fixes)
    }

    /// Every event of the replay, with its outcome counts: fixes applied, ignored, rejected.
    static func events(_ regions: [Region], _ fixes: [Fix], exact: Bool, batched: Bool) throws
        -> (events: [String], counts: [Int])
    {
        let index = try RegionIndex(regions: regions, hysteresis: exact ? .metres(0) : .automatic, order: .spatial)
        let options = MonitorOptions(maxAccuracy: exact ? 0 : 200)
        let engine = try Engine(index: index, options: options)
        #expect(engine.batchesFixes)
        var events: [String] = []
        engine.onEvent = { e in
            events.append("\(e.kind.name) \(e.t) \(e.device) \(e.region) \(e.distance.bitPattern) \(e.enteredAt.bitPattern)")
        }
        var counts = [0, 0, 0]
        func one(_ d: Int32, _ f: Fix) {
            switch engine.fix(device: d, t: f.t, at: f.point, accuracy: f.accuracy) {
            case .applied: counts[0] += 1
            case .ignoredForAccuracy: counts[1] += 1
            case .rejected: counts[2] += 1
            }
        }
        let monitor = engine.monitor
        var batches = 0
        func apply() {
            let n = monitor.batchCount
            guard n > 0 else { return }
            let ignored = monitor.applyBatch()
            counts[0] += n - ignored
            counts[1] += ignored
            batches += 1
        }
        for f in fixes {
            let d = monitor.device(f.device)
            guard batched else {
                one(d, f)
                continue
            }
            if monitor.batchAppend(device: d, t: f.t, at: f.point, accuracy: f.accuracy) { continue }
            apply()
            if !monitor.batchAppend(device: d, t: f.t, at: f.point, accuracy: f.accuracy) { one(d, f) }
        }
        apply()
        if batched { #expect(batches > fixes.count / 40, "the fixes went through many batches") }
        return (events, counts)
    }

    @Test("batches give the events of one fix at a time",
          arguments: [(Scenario.Kind.city, true), (.city, false), (.world, true), (.world, false)])
    func sameEvents(kind: Scenario.Kind, exact: Bool) throws {
        let (regions, fixes) = try Self.fixes(kind)
        let one = try Self.events(regions, fixes, exact: exact, batched: false)
        let batched = try Self.events(regions, fixes, exact: exact, batched: true)
        #expect(one.events.count > 200, "the scenario should cross many boundaries")
        #expect(one.counts[1] > 0 && one.counts[2] > 0 || exact && one.counts[2] > 0, "ignored and rejected fixes both occur")
        #expect(batched.counts == one.counts)
        #expect(batched.events.count == one.events.count)
        if let k = batched.events.indices.first(where: { k in k < one.events.count && batched.events[k] != one.events[k] }) {
            Issue.record("event \(k): batched \(batched.events[k]), one at a time \(one.events[k])")
        }
    }

    /// What stops batching: dwell timers, polygons, beacon regions, requests added at a device's
    /// first reading.
    @Test func batchingNeedsNothingOnTheClock() throws {
        let circle = Region(id: "c", shape: .circle(center: Coordinate(latitude: 48, longitude: 16), radius: 100))
        let square = Region(id: "p", shape: .polygons([[[Coordinate(latitude: 48, longitude: 16), Coordinate(latitude: 48, longitude: 16.1),
                                                         Coordinate(latitude: 48.1, longitude: 16.1), Coordinate(latitude: 48, longitude: 16)]]]))
        #expect(try Engine(regions: [circle]).batchesFixes)
        #expect(try !Engine(regions: [circle], options: MonitorOptions(dwell: 60)).batchesFixes)
        #expect(try !Engine(regions: [circle, square]).batchesFixes)
    }
}
