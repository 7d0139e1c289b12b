import Foundation
import GeotriggerCore
@testable import GeotriggerMonitoring
import Testing

let uuidA = BeaconID.parseUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
let uuidB = BeaconID.parseUUID("F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

func beacon(_ u: (UInt64, UInt64), _ major: Int32, _ minor: Int32) -> BeaconID {
    BeaconID(uuidHigh: u.0, uuidLow: u.1, major: major, minor: minor)
}

func beaconRegion(_ id: String, _ identity: BeaconID, zone: BeaconRegion.Zone = .near, power: Double? = nil,
                  at position: Coordinate? = nil) -> Region {
    Region(id: id, shape: .beacon(BeaconRegion(identity: identity, zone: zone, measuredPower: power, position: position)))
}

/// RSSI that the log-distance model (P = −59, n = 2) maps to `metres`.
func rssi(at metres: Double, power: Double = -59) -> Double { power - 20 * log10(metres) }

final class BeaconRecorder: RegionEventSink {
    var events: [RegionEvent] = []
    func handle(_ e: RegionEvent) { events.append(e) }
    var log: String {
        events.map { "\($0.kind.name)@\(Int($0.t))" + ($0.reason.map { ":\($0.rawValue)" } ?? "") }.joined(separator: ",")
    }
}

extension BeaconOptions {
    /// The defaults but a zone entered at the first sighting or fused update that wants it: the
    /// tests of everything but the minimum visit.
    static var enteringAtOnce: BeaconOptions {
        var options = BeaconOptions()
        options.minimumVisit = 0
        return options
    }
}

struct BeaconHarness {
    let monitor: BeaconMonitor
    let recorder = BeaconRecorder()
    init(_ regions: [Region], options: BeaconOptions = .enteringAtOnce) {
        monitor = BeaconMonitor(regions: regions, options: options)
        monitor.sink = recorder
    }
    /// Feeds sightings of one beacon at 1 Hz, as the engine does (timers before, at).
    func feed(_ id: BeaconID, metres: [Double], from t0: Double = 0, device: Int32 = 0, tx: Double = .nan) {
        for (i, m) in metres.enumerated() {
            let t = t0 + Double(i)
            monitor.fireTimers(before: t)
            _ = monitor.sighting(device: device, t: t, beacon: id, rssi: rssi(at: m), tx: tx)
            monitor.advance(to: t)
        }
    }
}

@Suite("Beacon regions")
struct BeaconMonitorTests {
    @Test("identity matching as Core Location: exact, major wildcard, UUID wildcard")
    func matching() {
        let regions = [
            beaconRegion("exact", beacon(uuidA, 1, 7)),
            beaconRegion("major", beacon(uuidA, 1, -1)),
            beaconRegion("uuid", beacon(uuidA, -1, -1)),
            beaconRegion("other", beacon(uuidB, -1, -1)),
            Region(id: "circle", shape: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 5)),
        ]
        let m = BeaconMatcher(regions: regions)
        #expect(m.count == 4)
        #expect(m.matches(beacon(uuidA, 1, 7)) == [0, 1, 2])
        #expect(m.matches(beacon(uuidA, 1, 8)) == [1, 2])
        #expect(m.matches(beacon(uuidA, 2, 7)) == [2])
        #expect(m.matches(beacon(uuidB, 9, 9)) == [3])
        #expect(m.matches(beacon((1, 2), 1, 7)).isEmpty)
    }

    @Test("visits(of:) lists each device's current visits, zones made after an earlier call included")
    func visitsPerDevice() {
        let regions = (0..<3).map { beaconRegion("b\($0)", beacon(uuidA, 1, Int32($0))) }
        let h = BeaconHarness(regions)
        h.feed(beacon(uuidA, 1, 0), metres: [1, 1], device: 0)
        h.feed(beacon(uuidA, 1, 1), metres: [1, 1], device: 1)
        #expect(h.monitor.visits(of: 0).map(\.region) == [0])
        #expect(h.monitor.visits(of: 1).map(\.region) == [1])
        #expect(h.monitor.visits(of: 2).isEmpty)
        // Zones made after that call: device 0 enters b2, device 2 appears and enters b1.
        h.feed(beacon(uuidA, 1, 2), metres: [1, 1], from: 2, device: 0)
        h.feed(beacon(uuidA, 1, 1), metres: [1, 1], from: 2, device: 2)
        let zero = h.monitor.visits(of: 0)
        #expect(zero.map(\.region) == [0, 2])
        #expect(zero.map(\.beacon) == [beacon(uuidA, 1, 0), beacon(uuidA, 1, 2)])
        #expect(zero.map(\.enteredAt) == [0, 2])
        #expect(h.monitor.visits(of: 2).map(\.region) == [1])
        #expect(h.monitor.visits(of: 1).map(\.region) == [1])
    }

    @Test("enter when estimated within the zone; exit by distance once the smoothed estimate is beyond it")
    func enterExitByDistance() throws {
        let h = BeaconHarness([beaconRegion("lobby", beacon(uuidA, 1, 7))])
        h.feed(beacon(uuidA, 1, 7), metres: Array(repeating: 1.0, count: 10) + Array(repeating: 20.0, count: 20))
        #expect(h.recorder.events.map(\.kind.name) == ["enter", "exit"])
        let enter = h.recorder.events[0], exit = h.recorder.events[1]
        #expect(enter.t == 0 && enter.proximity == .near && abs(enter.distance - 1) < 1e-9)
        #expect(enter.beacon == beacon(uuidA, 1, 7))
        #expect(exit.reason == .distance && exit.t > 10 && exit.t < 20 && exit.enteredAt == 0)
    }

    @Test("exit by silence, stamped last sighting + --beacon-exit, fired by the clock alone")
    func exitBySilence() {
        var options = BeaconOptions.enteringAtOnce
        options.exitAfter = 30
        let h = BeaconHarness([beaconRegion("lobby", beacon(uuidA, 1, 7))], options: options)
        h.feed(beacon(uuidA, 1, 7), metres: [1, 1, 1])        // t 0, 1, 2
        h.monitor.advance(to: 31.9)
        #expect(h.recorder.log == "enter@0")
        h.monitor.advance(to: 100)
        #expect(h.recorder.log == "enter@0,exit@32:silence")
    }

    @Test("noise around the boundary does not flap: decisions use the estimate's 1σ bounds")
    func hysteresis() {
        let h = BeaconHarness([beaconRegion("lobby", beacon(uuidA, 1, 7))])
        // Clearly inside at 1 m (even RSSI − σ is within 3 m), then readings alternating 2.8 and
        // 4 m: the smoothed distance hovers around 3.3 m, but RSSI + σ stays inside, so no exit.
        h.feed(beacon(uuidA, 1, 7), metres: [1, 1, 1, 1, 1] + (0..<40).map { $0 % 2 == 0 ? 4.0 : 2.8 })
        #expect(h.recorder.log == "enter@0")
        // Truly far (20 m) for a while: then it leaves.
        h.feed(beacon(uuidA, 1, 7), metres: Array(repeating: 20, count: 10), from: 45)
        #expect(h.recorder.log.hasPrefix("enter@0,exit@4"))
    }

    @Test("a wildcard region's events name the concrete beacon")
    func wildcardNamesBeacon() {
        let h = BeaconHarness([beaconRegion("store", beacon(uuidA, -1, -1), zone: .any)])
        h.feed(beacon(uuidA, 4, 2), metres: [8])
        h.monitor.advance(to: 100)
        #expect(h.recorder.events.map { $0.beacon } == [beacon(uuidA, 4, 2), beacon(uuidA, 4, 2)])
        #expect(h.recorder.log == "enter@0,exit@30:silence")
    }

    @Test("P₁ₘ comes from the sighting's tx, else the region's measuredPower, else −59")
    func measuredPowerPrecedence() {
        // Region says −70 dBm at 1 m; RSSI −70 → 1 m (near). With tx −50 the same RSSI is 10 m (far).
        let byRegion = BeaconHarness([beaconRegion("r", beacon(uuidA, 1, 1), power: -70)])
        _ = byRegion.monitor.sighting(device: 0, t: 0, beacon: beacon(uuidA, 1, 1), rssi: -70, tx: .nan)
        #expect(byRegion.recorder.log == "enter@0")
        let byTx = BeaconHarness([beaconRegion("r", beacon(uuidA, 1, 1), power: -70)])
        _ = byTx.monitor.sighting(device: 0, t: 0, beacon: beacon(uuidA, 1, 1), rssi: -70, tx: -50)
        #expect(byTx.recorder.log == "")
        let byDefault = BeaconHarness([beaconRegion("r", beacon(uuidA, 1, 1))])
        _ = byDefault.monitor.sighting(device: 0, t: 0, beacon: beacon(uuidA, 1, 1), rssi: -70, tx: .nan)
        #expect(byDefault.recorder.log == "")   // −70 with −59 at 1 m is 3.5 m: outside near
    }

    @Test("unmatched beacons are reported, not silently dropped")
    func unmatched() {
        let h = BeaconHarness([beaconRegion("r", beacon(uuidA, 1, 1))])
        #expect(h.monitor.sighting(device: 0, t: 0, beacon: beacon(uuidB, 1, 1), rssi: -60, tx: .nan) == .unmatched)
        #expect(h.monitor.sighting(device: 0, t: 0, beacon: beacon(uuidA, 1, 1), rssi: -60, tx: .nan) == .applied)
    }

    /// Four positioned beacons at the corners of a 10 m square (local metres → lat/lon near 45°N
    /// 14°E) and a device standing at `device` for `seconds`, each beacon heard once a second.
    static func squareWalk(options: BeaconOptions, device: (Double, Double) = (1.0, 1.5), seconds: Int = 6,
                           shadow: (beacon: Int, metres: Double)? = nil)
        -> (regions: [Region], recorder: BeaconRecorder, monitor: BeaconMonitor) {
        let origin = Coordinate(latitude: 45, longitude: 14)
        func place(_ x: Double, _ y: Double) -> Coordinate {
            Coordinate(latitude: origin.latitude + y / 111_132.0, longitude: origin.longitude + x / (111_320.0 * cos(45 * .pi / 180)))
        }
        let corners = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)]
        let regions = corners.enumerated().map { i, c in
            beaconRegion("b\(i)", beacon(uuidA, 1, Int32(i)), zone: .near, at: place(c.0, c.1))
        }
        let h = BeaconHarness(regions, options: options)
        for step in 0..<seconds {
            for (i, c) in corners.enumerated() {
                let t = Double(step) + Double(i) * 0.1
                var d = ((device.0 - c.0) * (device.0 - c.0) + (device.1 - c.1) * (device.1 - c.1)).squareRoot()
                if let shadow, shadow.beacon == i { d = shadow.metres }
                _ = h.monitor.sighting(device: 0, t: t, beacon: beacon(uuidA, 1, Int32(i)), rssi: rssi(at: d), tx: .nan)
            }
        }
        return (regions, h.recorder, h.monitor)
    }

    @Test("fusion: four positioned beacons locate the device; only the zone it is in is entered")
    func fusion() {
        let (regions, recorder, _) = Self.squareWalk(options: .enteringAtOnce)   // 1.8 m from b0, far from the others
        #expect(recorder.events.map { "\($0.kind.name):\(regions[Int($0.region)].id)" } == ["enter:b0"])
    }

    @Test("a minimum visit: a zone is entered once its enter rule has held at every sighting for S, a shorter stay not at all")
    func minimumVisitPerBeacon() {
        var options = BeaconOptions.enteringAtOnce
        options.minimumVisit = 1.5
        let lobby = beacon(uuidA, 1, 7)
        // Near from t = 0 on: wanted at 0 and 1, held 2 s at t = 2 ≥ 1.5 → entered then.
        let stays = BeaconHarness([beaconRegion("lobby", lobby)], options: options)
        stays.feed(lobby, metres: [1, 1, 1, 1])
        #expect(stays.recorder.log == "enter@2")
        // Near for 1 s only (t 0 and 1), then 6 m away (a step the filter's gate lets through, so
        // the estimate's weak end leaves the zone at t = 2): never entered, so no exit either.
        let grazes = BeaconHarness([beaconRegion("lobby", lobby)], options: options)
        grazes.feed(lobby, metres: [1, 1] + Array(repeating: 6, count: 10))
        grazes.monitor.advance(to: 100)
        #expect(grazes.recorder.log == "")
        // A sighting that does not want the zone breaks the wait: it starts again after it.
        let fades = BeaconHarness([beaconRegion("lobby", lobby)], options: options)
        fades.feed(lobby, metres: [1, 1, 6] + Array(repeating: 1, count: 8))
        #expect(fades.recorder.events.map(\.kind) == [.enter])
        #expect(fades.recorder.events[0].t >= 3 + 1.5)
        // With 0 the first sighting enters, as before.
        let atOnce = BeaconHarness([beaconRegion("lobby", lobby)])
        atOnce.feed(lobby, metres: [1, 1, 1, 1])
        #expect(atOnce.recorder.log == "enter@0")
    }

    @Test("a minimum visit in a wildcard region: the wait goes on with another beacon, and one gone silent holds nothing up")
    func minimumVisitWildcard() {
        var options = BeaconOptions.enteringAtOnce
        options.minimumVisit = 1.5
        let h = BeaconHarness([beaconRegion("wing", beacon(uuidA, 1, -1), zone: .near)], options: options)
        let a = beacon(uuidA, 1, 1), b = beacon(uuidA, 1, 2)
        h.feed(a, metres: [1])                 // t 0: beacon a near, then never heard again
        h.feed(b, metres: [1, 1, 1], from: 1)  // t 1, 2, 3: beacon b near
        #expect(h.recorder.log == "enter@2", "\(h.recorder.log)")
        #expect(h.recorder.events.first?.beacon == b)
        // A beacon heard far away does not break another's wait.
        let far = BeaconHarness([beaconRegion("wing", beacon(uuidA, 1, -1), zone: .near)], options: options)
        for second in 0..<4 {
            let t = Double(second)
            _ = far.monitor.sighting(device: 0, t: t, beacon: a, rssi: rssi(at: 1), tx: .nan)
            _ = far.monitor.sighting(device: 0, t: t + 0.5, beacon: b, rssi: rssi(at: 20), tx: .nan)
        }
        #expect(far.recorder.log == "enter@2", "\(far.recorder.log)")
    }

    @Test("a minimum visit delays enters only: the exit of a visit comes when it would without one")
    func minimumVisitLeavesExitsAlone() {
        var options = BeaconOptions.enteringAtOnce
        options.minimumVisit = 1.5
        let lobby = beacon(uuidA, 1, 7)
        let walk = Array(repeating: 1.0, count: 10) + Array(repeating: 20.0, count: 20)
        let waiting = BeaconHarness([beaconRegion("lobby", lobby)], options: options)
        waiting.feed(lobby, metres: walk)
        let atOnce = BeaconHarness([beaconRegion("lobby", lobby)])
        atOnce.feed(lobby, metres: walk)
        #expect(waiting.recorder.events.map(\.kind) == [.enter, .exit])
        #expect(atOnce.recorder.events.map(\.kind) == [.enter, .exit])
        #expect(waiting.recorder.events[0].t == 2 && atOnce.recorder.events[0].t == 0)
        #expect(waiting.recorder.events[1].t == atOnce.recorder.events[1].t)
        #expect(waiting.recorder.events[1].enteredAt == 2)
    }

    @Test("a fused position enters a zone only while one of its beacons is within it by its own signal too")
    func fusedEnterNeedsItsBeacon() {
        // Standing 1.8 m from b0, but b0 heard as if 2.5 m away (the body between them): the
        // fused position stays within b0's 3 m, while b0's own estimate at its weak end (RSSI − σ)
        // lies beyond them. No enter.
        let shadowed = Self.squareWalk(options: .enteringAtOnce, seconds: 8, shadow: (0, 2.5))
        #expect(shadowed.recorder.events.isEmpty, "\(shadowed.recorder.log)")
        let b0 = shadowed.monitor.localPositions[0]!, p = shadowed.monitor.fusedPositions[0]!.point
        let d = ((p.east - b0.east) * (p.east - b0.east) + (p.north - b0.north) * (p.north - b0.north)).squareRoot()
        #expect(d < 3, "the fused position is \(d) m from b0: the case tests nothing")
        // Heard as it is, b0 is entered (the fusion test above).
        let clear = Self.squareWalk(options: .enteringAtOnce, seconds: 8)
        #expect(clear.recorder.events.map(\.kind) == [.enter])
    }

    @Test("a walk past 100 positioned beacons: every zone entered in turn, samples kept only for those just heard")
    func corridorKeepsFewWindows() {
        // Beacons every 5 m along a corridor, zig-zag on its two walls 2 m apart; the device walks
        // down the middle at 1 m/s and hears each beacon within 16 m once a second (fusion takes
        // ranges up to 10 m: three or four beacons at a time).
        let origin = Coordinate(latitude: 45, longitude: 14)
        func place(_ x: Double, _ y: Double) -> Coordinate {
            Coordinate(latitude: origin.latitude + y / 111_132.0, longitude: origin.longitude + x / (111_320.0 * cos(45 * .pi / 180)))
        }
        // Three more beacons beyond the walk's end: at a corridor's end the fused position has
        // too few anchors within 10 m to follow the device (and it lags behind the last beacon,
        // while that beacon's own estimate, the other half of a fused enter, lags on the approach).
        let beacons = (0..<103).map { (x: Double($0) * 5, y: $0 % 2 == 0 ? 0.0 : 2.0) }
        let regions = beacons.enumerated().map { i, b in beaconRegion("b\(i)", beacon(uuidA, 2, Int32(i)), zone: .near, at: place(b.x, b.y)) }
        let h = BeaconHarness(regions)
        for second in 0...510 {
            let t = Double(second), x = Double(second) - 5
            h.monitor.fireTimers(before: t)
            for (i, b) in beacons.enumerated() where abs(b.x - x) <= 16 {
                let d = ((b.x - x) * (b.x - x) + (b.y - 1) * (b.y - 1)).squareRoot()
                _ = h.monitor.sighting(device: 0, t: t, beacon: beacon(uuidA, 2, Int32(i)), rssi: rssi(at: d), tx: .nan)
            }
            h.monitor.advance(to: t)
        }
        let enters = h.recorder.events.filter { $0.kind == .enter }.map { regions[Int($0.region)].id }
        #expect(Array(enters.prefix(100)) == regions.prefix(100).map(\.id))
        // A track for every beacon, but sample windows only for those heard within the fusion
        // window at one time: slots are given back and reused.
        let counts = h.monitor.storageCounts
        #expect(counts.tracks == 103)
        #expect(counts.windows <= 10, "\(counts)")
    }

    @Test("dwell once per beacon visit, at enter + S, cancelled by an earlier exit")
    func dwell() {
        var options = BeaconOptions.enteringAtOnce
        options.exitAfter = 30
        options.dwell = 10
        let h = BeaconHarness([beaconRegion("lobby", beacon(uuidA, 1, 7))], options: options)
        h.feed(beacon(uuidA, 1, 7), metres: Array(repeating: 1, count: 15))   // t 0…14: dwell at 10
        h.monitor.advance(to: 100)                                                // silence exit at 44
        h.feed(beacon(uuidA, 1, 7), metres: [1, 1, 1], from: 200)               // new visit at 200
        h.monitor.advance(to: 205)                                                // leaves? no: still inside
        #expect(h.recorder.log == "enter@0,dwell@10,exit@44:silence,enter@200")
        h.monitor.advance(to: 300)                                                // dwell at 210, exit at 232
        #expect(h.recorder.log == "enter@0,dwell@10,exit@44:silence,enter@200,dwell@210,exit@232:silence")
        #expect(h.recorder.events[1].enteredAt == 0 && h.recorder.events[1].beacon == beacon(uuidA, 1, 7))
    }
}
