import GeotriggerCore
import GeotriggerGeometry
@testable import GeotriggerMonitoring
import Testing
import Foundation
import GeotriggerFormats

/// Collects events as "kind" or "kind@t" strings so whole sequences compare as one string.
final class Recorder: RegionEventSink {
    var events: [RegionEvent] = []
    func handle(_ event: RegionEvent) { events.append(event) }
    var kinds: String { events.map(\.kind.name).joined(separator: ",") }
    var timed: String { events.map { "\($0.kind.name)@\(Int($0.t))" }.joined(separator: ",") }
}

/// A point `metres` north of (lat, lon) along the meridian, using the meridional radius of
/// curvature: accurate to well under a metre for the distances used here, and every test distance
/// keeps several metres from any boundary.
func north(of lat: Double, _ lon: Double, metres: Double) -> Coordinate {
    let a = 6378137.0, e2 = 0.00669437999014
    let phi = lat * .pi / 180
    let m = a * (1 - e2) / pow(1 - e2 * sin(phi) * sin(phi), 1.5)
    return Coordinate(latitude: lat + metres / m * 180 / .pi, longitude: lon)
}

struct Harness {
    let monitor: Monitor
    let recorder = Recorder()
    let device: Int32

    init(regions: [Region], hysteresis: Hysteresis, options: MonitorOptions) throws {
        monitor = Monitor(index: try RegionIndex(regions: regions, hysteresis: hysteresis), options: options)
        monitor.sink = recorder
        device = monitor.device("d1")
    }

    /// Feeds a fix as the replay driver does: timers due before it, the fix, then timers due at it.
    @discardableResult
    func feed(_ t: Double, _ p: Coordinate, accuracy: Double = .nan, device: Int32? = nil) -> Monitor.Outcome {
        monitor.fireTimers(before: t)
        let outcome = monitor.fix(device: device ?? self.device, t: t, at: p, accuracy: accuracy)
        monitor.advance(to: monitor.clock)
        return outcome
    }

    /// Feeds fixes 10 s apart at the given distances north of the first region's centre.
    func walk(_ distances: [Double], from t0: Double = 0) {
        for (i, d) in distances.enumerated() { feed(t0 + Double(i) * 10, north(of: 48.2, 16.37, metres: d)) }
    }
}

let circle100 = Region(id: "c", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 100))

@Suite("State machine")
struct MonitorTests {
    @Test("a device's state stays within its budget: 104 bytes before its lists")
    func deviceStateSize() {
        // SPEC's budget is 512 bytes per active device, lists included; the state is the part
        // every device pays for whether or not it is near anything.
        #expect(MemoryLayout<Monitor.DeviceState>.stride == 104)
    }

    @Test("exact mode: events are the boundary crossings", arguments: [
        ([200.0, 50, 150, 50], "enter,exit,enter"),
        ([50.0, 60, 99, 101, 102, 99], "enter,exit,enter"),
        ([200.0, 150, 120], ""),
        ([99.0], "enter"),
    ])
    func exactMode(distances: [Double], expected: String) throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(maxAccuracy: 0))
        h.walk(distances)
        #expect(h.recorder.kinds == expected)
    }

    @Test("default hysteresis max(20 m, 10 %) keeps a device inside until radius + margin")
    func hysteresisDefault() throws {
        let h = try Harness(regions: [circle100], hysteresis: .automatic, options: MonitorOptions())
        // r = 100 → margin 20 m: 110 and 118 stay inside, 125 leaves, 105 is outside again (> r).
        h.walk([200, 50, 110, 118, 125, 105, 90])
        #expect(h.recorder.timed == "enter@10,exit@40,enter@60")
    }

    @Test("hysteresis of 10 % applies to large circles")
    func hysteresisLarge() throws {
        let big = Region(id: "big", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 1000))
        let h = try Harness(regions: [big], hysteresis: .automatic, options: MonitorOptions())
        h.walk([900, 1050, 1090, 1110])  // margin 100 m: exit only beyond 1,100 m
        #expect(h.recorder.timed == "enter@0,exit@30")
    }

    @Test("a fix less accurate than --max-accuracy changes no state")
    func accuracyGate() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(maxAccuracy: 50))
        #expect(h.feed(0, north(of: 48.2, 16.37, metres: 10), accuracy: 5) == .applied)
        #expect(h.feed(10, north(of: 48.2, 16.37, metres: 500), accuracy: 80) == .ignoredForAccuracy)
        #expect(h.feed(20, north(of: 48.2, 16.37, metres: 500), accuracy: 50) == .applied)
        #expect(h.recorder.timed == "enter@0,exit@20")
    }

    @Test("--initial enter reports a first fix inside; --initial none stays silent but still exits")
    func initialPolicy() throws {
        let loud = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(initial: .enter))
        loud.walk([10, 300])
        #expect(loud.recorder.kinds == "enter,exit")
        let quiet = try Harness(regions: [circle100], hysteresis: .metres(0),
                                options: MonitorOptions(dwell: 5, initial: .none))
        quiet.walk([10, 20, 300, 10])
        quiet.monitor.advance(to: 100)
        // No enter and no dwell for the silent first visit; its exit is reported; later visits are normal.
        #expect(quiet.recorder.timed == "exit@20,enter@30,dwell@35")
    }

    @Test("a fix older than the device's previous one is rejected; equal times are fine")
    func outOfOrder() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions())
        #expect(h.feed(100, north(of: 48.2, 16.37, metres: 300)) == .applied)
        #expect(h.feed(99, north(of: 48.2, 16.37, metres: 10)) == .rejected(.outOfOrder))
        #expect(h.feed(100, north(of: 48.2, 16.37, metres: 10)) == .applied)
        #expect(h.recorder.timed == "enter@100")
    }

    @Test("another device's older reading is applied (clock does not go back)")
    func otherDeviceOlder() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions())
        let d2 = h.monitor.device("d2")
        h.feed(100, north(of: 48.2, 16.37, metres: 10))
        #expect(h.feed(50, north(of: 48.2, 16.37, metres: 10), device: d2) == .applied)
        #expect(h.monitor.clock == 100)
        #expect(h.recorder.timed == "enter@100,enter@50")
    }

    @Test("dwell fires once per visit at enter + S, from the stream clock")
    func dwell() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 25))
        h.walk([50, 40, 30, 20, 10])           // t 0…40: dwell due at 25, fired before the fix at 30
        #expect(h.recorder.timed == "enter@0,dwell@25")
        #expect(h.recorder.events[1].enteredAt == 0)
    }

    @Test("an exit before the dwell time cancels the dwell; a new visit arms a new one")
    func dwellCancelled() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 25))
        h.walk([50, 40, 300, 50, 50, 50, 50])   // exit at 20 < 25; re-enter at 30 → dwell at 55
        #expect(h.recorder.timed == "enter@0,exit@20,enter@30,dwell@55")
    }

    @Test("a visit that ends and begins again dwells once, from its own entry time")
    func dwellAfterReentry() throws {
        /// In at 0, out at `t`, in again at `t` (metres north of the centre); dwell 25.
        func reenter(at t: Double) throws -> Recorder {
            let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 25))
            for (time, metres) in [(0, 50.0), (t, 300), (t, 50)] { h.feed(time, north(of: 48.2, 16.37, metres: metres)) }
            h.monitor.advance(to: 100)
            return h.recorder
        }
        // Out and back in before the first visit's dwell time: that visit's timer (due at 25)
        // must not fire for the new visit, whose own timer is due at 10 + 25.
        let later = try reenter(at: 10)
        #expect(later.timed == "enter@0,exit@10,enter@10,dwell@35")
        #expect(later.events[3].enteredAt == 10)
        // In, out and in again at one instant: two timers are due at 25 for what is, by its
        // entry time, the same visit; exactly one dwell is reported.
        #expect(try reenter(at: 0).timed == "enter@0,exit@0,enter@0,dwell@25")
    }

    @Test("a fix exactly at the dwell time is applied first: leaving then means no dwell")
    func dwellBoundary() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 20))
        h.walk([50, 50, 300])
        #expect(h.recorder.timed == "enter@0,exit@20")
    }

    @Test("advance(to:) fires timers when no more fixes arrive")
    func advanceFiresTimers() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions(dwell: 600))
        h.walk([50])
        #expect(h.recorder.kinds == "enter")
        h.monitor.advance(to: 599)
        #expect(h.recorder.kinds == "enter")
        h.monitor.advance(to: 600)
        #expect(h.recorder.timed == "enter@0,dwell@600")
    }

    @Test("exit carries enteredAt and the distance")
    func exitFields() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions())
        h.walk([300, 50, 60, 250])
        let exit = try #require(h.recorder.events.last)
        #expect(exit.kind == .exit && exit.enteredAt == 10 && exit.t == 30)
        #expect(abs(exit.distance - 250) < 1)
        #expect(abs(h.recorder.events[0].distance - 50) < 1)
    }

    @Test("events at one fix come in region-file order")
    func regionOrder() throws {
        let c = Coordinate(latitude: 48.2, longitude: 16.37)
        let regions = (0..<6).map { i in Region(id: "r\(i)", shape: .circle(center: c, radius: Double(600 - i * 100))) }
        let h = try Harness(regions: regions, hysteresis: .metres(0), options: MonitorOptions())
        h.walk([50, 1000])
        let ids = h.recorder.events.map { "\($0.kind.name):\(regions[Int($0.region)].id)" }
        #expect(ids == ["enter:r0", "enter:r1", "enter:r2", "enter:r3", "enter:r4", "enter:r5",
                        "exit:r0", "exit:r1", "exit:r2", "exit:r3", "exit:r4", "exit:r5"])
    }

    @Test("a region's notifyOnEntry / notifyOnExit false silences those events but keeps the state")
    func regionNotifyFlags() throws {
        var noExit = circle100
        noExit.notifyOnExit = false
        let quietExit = try Harness(regions: [noExit], hysteresis: .metres(0), options: MonitorOptions())
        quietExit.walk([50, 300, 50])
        #expect(quietExit.recorder.timed == "enter@0,enter@20")
        var noEntry = circle100
        noEntry.notifyOnEntry = false
        let quietEntry = try Harness(regions: [noEntry], hysteresis: .metres(0), options: MonitorOptions(dwell: 5))
        quietEntry.walk([50, 60, 300])
        #expect(quietEntry.recorder.timed == "dwell@5,exit@20")
        #expect(quietEntry.recorder.events.last?.enteredAt == 0)
    }

    @Test("a region added live with a notify flag off is silenced, whether or not the set's own regions silence anything")
    func liveRegionNotifyFlags() throws {
        // The live region: a 300 m circle around the same centre, its exit silenced.
        var quiet = Region(id: "live", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 300))
        quiet.notifyOnExit = false
        var noEntry = circle100
        noEntry.notifyOnEntry = false
        for given in [[circle100], [noEntry]] {
            let h = try Harness(regions: given, hysteresis: .metres(0), options: MonitorOptions())
            let r = try h.monitor.index.append(quiet)
            h.monitor.regionAdded(r)
            // A live region with both flags on, after it: reported in full.
            let loud = try h.monitor.index.append(Region(id: "loud", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 500)))
            h.monitor.regionAdded(loud)
            h.walk([50, 400, 1000])
            let seen = h.recorder.events.map { e in "\(e.kind.name):\(h.monitor.index.regions[Int(e.region)].id)@\(Int(e.t))" }
            let first = given[0].notifyOnEntry ? ["enter:c@0"] : []
            #expect(seen == first + ["enter:live@0", "enter:loud@0", "exit:c@10", "exit:loud@20"])
        }
    }

    @Test("devices are independent")
    func devicesIndependent() throws {
        let h = try Harness(regions: [circle100], hysteresis: .metres(0), options: MonitorOptions())
        let d2 = h.monitor.device("d2")
        h.feed(0, north(of: 48.2, 16.37, metres: 10))
        h.feed(1, north(of: 48.2, 16.37, metres: 500), device: d2)
        h.feed(2, north(of: 48.2, 16.37, metres: 10), device: d2)
        h.feed(3, north(of: 48.2, 16.37, metres: 500))
        #expect(h.recorder.events.map { "\($0.kind.name)\($0.device)" } == ["enter0", "enter1", "exit0"])
    }

    @Test("polygons: boundary counts as inside, holes are outside")
    func polygon() throws {
        func ring(_ pts: [(Double, Double)]) -> [Coordinate] { pts.map { Coordinate(latitude: $0.1, longitude: $0.0) } }
        let square = Region(id: "sq", shape: .polygons([[
            ring([(0, 0), (2, 0), (2, 2), (0, 2), (0, 0)]),
            ring([(0.5, 0.5), (1, 0.5), (1, 1), (0.5, 1), (0.5, 0.5)]),
        ]]))
        let h = try Harness(regions: [square], hysteresis: .automatic, options: MonitorOptions())
        let path: [(Double, Double)] = [(-1, 1), (0, 1), (1.5, 1.5), (0.75, 0.75), (1.5, 1.5), (2, 2), (2.1, 2)]
        for (i, p) in path.enumerated() { h.feed(Double(i), Coordinate(latitude: p.1, longitude: p.0)) }
        #expect(h.recorder.timed == "enter@1,exit@3,enter@4,exit@6")
    }

    @Test("an invalid polygon stops index construction with GEOS's reason")
    func invalidPolygon() throws {
        let bowtie = Region(id: "bow", shape: .polygons([[[
            Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 1),
            Coordinate(latitude: 0, longitude: 1), Coordinate(latitude: 1, longitude: 0),
            Coordinate(latitude: 0, longitude: 0),
        ]]]), featureIndex: 3)
        do {
            _ = try RegionIndex(regions: [circle100, bowtie])
            Issue.record("expected an error")
        } catch let error as RegionFileError {
            #expect(error.featureIndex == 3 && error.id == "bow")
            #expect(error.reason.contains("Self-intersection"))
        }
    }
}
