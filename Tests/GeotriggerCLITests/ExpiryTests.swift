import Foundation
import Geotrigger
@testable import GeotriggerMonitoring
import Testing
import GeotriggerFormats

/// `--expire S` (SPEC §7): a device silent for S seconds of the clock is forgotten. Its visits end
/// with `exit` and `"reason":"expired"` stamped last reading + S, its timers and notification
/// center are dropped, its id is reused; heard again it is a new device.
///
/// Geometry (hysteresis 0): `home` is a 100 m circle at (48.2, 16.37), `office` a 150 m one at
/// (48.21, 16.38), `annex` a 300 m one at (48.2, 16.37) given before `home`; `out` is 15 km away.
@Suite("Expiry: devices silent for S seconds are forgotten")
struct ExpiryTests {
    static let annex = Region(id: "annex", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 300))
    static let home = Region(id: "home", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 100))
    static let office = Region(id: "office", shape: .circle(center: Coordinate(latitude: 48.21, longitude: 16.38), radius: 150))
    static let (hLat, hLon) = (48.2, 16.37)
    static let (oLat, oLon) = (48.21, 16.38)
    static let (xLat, xLon) = (48.3, 16.5)
    static let t0 = 1_700_000_000.0

    static func engine(_ regions: [Region] = [home, office], dwell: Double? = nil, initial: InitialPolicy = .enter,
                       expire: Double? = 60, requests: [String] = []) throws -> Engine {
        let requests = try requests.map { try NotificationRequest(json: JSONValue.parse($0)) }
        return try Engine(regions: regions, hysteresis: .metres(0),
                          options: MonitorOptions(dwell: dwell, initial: initial, expire: expire), requests: requests)
    }

    /// Events and deliveries as "kind device region +seconds-after-t0 [reason]".
    final class Log {
        var lines: [String] = []
        init(_ engine: Engine) {
            engine.onEvent = { [unowned self, unowned engine] e in
                var line = "\(e.kind.name) \(engine.deviceName(e.device)) \(engine.regionID(e.region)) +\(e.t - ExpiryTests.t0)"
                if let r = e.reason { line += " \(r.rawValue)" }
                if e.kind == .exit { line += " in+\(e.enteredAt - ExpiryTests.t0)" }
                lines.append(line)
            }
            engine.onDeliver = { [unowned self, unowned engine] d in
                lines.append("deliver \(engine.deviceName(d.device)) \(d.id) +\(d.t - ExpiryTests.t0)")
            }
        }
    }

    @Test("silent exactly S: expired when the clock reaches last + S; a reading of its own at last + S keeps it")
    func boundary() throws {
        let t0 = Self.t0
        let e = try Self.engine()
        let log = Log(e)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "b", t: t0 + 59.999, latitude: Self.xLat, longitude: Self.xLon)
        #expect(log.lines == ["enter a home +0.0"])
        // b's reading at exactly last + S: a has been silent for S: it expires after b's reading.
        e.fix(device: "b", t: t0 + 60, latitude: Self.oLat, longitude: Self.oLon)
        #expect(log.lines == ["enter a home +0.0", "enter b office +60.0", "exit a home +60.0 expired in+0.0"])
        #expect(e.devices.liveCount == 1)

        // S + ε: the expiry (due before the reading) comes first, stamped last + S.
        let f = try Self.engine()
        let flog = Log(f)
        f.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        f.fix(device: "b", t: t0 + 60.5, latitude: Self.oLat, longitude: Self.oLon)
        #expect(flog.lines == ["enter a home +0.0", "exit a home +60.0 expired in+0.0", "enter b office +60.5"])

        // The device's own reading at exactly last + S comes before timers due then: kept, and
        // timed again from it.
        let g = try Self.engine()
        let glog = Log(g)
        g.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        g.fix(device: "a", t: t0 + 60, latitude: Self.hLat, longitude: Self.hLon)
        g.fix(device: "b", t: t0 + 119.5, latitude: Self.xLat, longitude: Self.xLon)
        #expect(glog.lines == ["enter a home +0.0"])
        g.advance(to: t0 + 120)
        #expect(glog.lines == ["enter a home +0.0", "exit a home +120.0 expired in+0.0"])
    }

    @Test("a device silent past S whose own reading comes next: expired at last + S, then that reading is a first fix")
    func ownReadingAfterSilence() throws {
        let t0 = Self.t0
        let e = try Self.engine()
        let log = Log(e)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "a", t: t0 + 100, latitude: Self.hLat, longitude: Self.hLon)
        #expect(log.lines == ["enter a home +0.0", "exit a home +60.0 expired in+0.0", "enter a home +100.0"])
        #expect(e.devices.liveCount == 1 && e.devices.count == 1)
        // Its rank is a new device's, after every one seen before.
        #expect(e.devices.rank(0) == 1)
        #expect(e.monitor.visits(of: 0).map(\.enteredAt) == [t0 + 100])
    }

    @Test("exits of an expired device come in the regions' given order, stamped last + S, without distance")
    func regionOrder() throws {
        let t0 = Self.t0
        let e = try Self.engine([Self.office, Self.annex, Self.home])
        let log = Log(e)
        var bytes: [UInt8] = []
        let out = RecordBuffer(memory: ())
        e.output = EventWriter(output: out, devices: e.devices, regions: e.index.regions)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "a", t: t0 + 30, latitude: 48.2001, longitude: 16.37)  // inside both still
        e.advance(to: t0 + 200)
        #expect(log.lines == ["enter a annex +0.0", "enter a home +0.0",
                              "exit a annex +90.0 expired in+0.0", "exit a home +90.0 expired in+0.0"])
        bytes = out.takeBytes()
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[2] == #"{"t":"2023-11-14T22:14:50.000Z","event":"exit","device":"a","region":"annex","reason":"expired","enteredAt":"2023-11-14T22:13:20.000Z"}"#)
    }

    @Test("expired exits fire no location trigger; the device's time triggers are dropped; back, its requests are added again")
    func notifications() throws {
        let t0 = Self.t0
        let e = try Self.engine(requests: [
            #"{"id":"bye","content":{"title":"bye"},"trigger":{"type":"location","region":"home","notifyOnEntry":false,"repeats":true}}"#,
            #"{"id":"tick","content":{"title":"tick"},"trigger":{"type":"timeInterval","seconds":100}}"#,
        ])
        let log = Log(e)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "b", t: t0 + 10, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "b", t: t0 + 50, latitude: Self.xLat, longitude: Self.xLon)  // a real exit delivers
        e.advance(to: t0 + 150)
        // a expires at +60 (no "bye"), so its tick (due +100) never fires; b's tick is due at +110,
        // the instant b expires (last +50): notification timers come before expiry, so it fires.
        #expect(log.lines == [
            "enter a home +0.0", "enter b home +10.0", "exit b home +50.0 in+10.0", "deliver b bye +50.0",
            "exit a home +60.0 expired in+0.0", "deliver b tick +110.0",
        ])
        #expect(e.devices.liveCount == 0)
        // a comes back: a new device, its requests added at this first reading.
        e.fix(device: "a", t: t0 + 200, latitude: Self.xLat, longitude: Self.xLon)
        e.fix(device: "a", t: t0 + 250, latitude: Self.xLat, longitude: Self.xLon)
        e.advance(to: t0 + 300)
        #expect(log.lines.suffix(1) == ["deliver a tick +300.0"])
        #expect(e.pending(device: "a").map(\.id) == ["bye"])
    }

    @Test("a dwell due at the expiry instant is emitted first; one due after it never")
    func dwellAtExpiry() throws {
        let t0 = Self.t0
        let e = try Self.engine(dwell: 60)
        let log = Log(e)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.advance(to: t0 + 1000)
        #expect(log.lines == ["enter a home +0.0", "dwell a home +60.0", "exit a home +60.0 expired in+0.0"])

        let f = try Self.engine(dwell: 70)
        let flog = Log(f)
        f.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        // b (id 1, looked up before a expires) moves the clock past a's expiry; c then takes a's
        // id 0 and enters home: a's stale dwell timer (due +70) does not fire for c (its own is
        // due +132).
        f.fix(device: "b", t: t0 + 61, latitude: Self.xLat, longitude: Self.xLon)
        f.fix(device: "c", t: t0 + 62, latitude: Self.hLat, longitude: Self.hLon)
        #expect(f.devices.count == 2 && f.monitor.device("c") == 0)
        f.fix(device: "c", t: t0 + 100, latitude: Self.hLat, longitude: Self.hLon)
        f.advance(to: t0 + 140)
        #expect(flog.lines == ["enter a home +0.0", "exit a home +60.0 expired in+0.0", "enter c home +62.0", "dwell c home +132.0"])
    }

    @Test("--initial none: a device back after expiry is first again (silent inside), its silent visit still exits")
    func initialNone() throws {
        let t0 = Self.t0
        let e = try Self.engine(initial: .none)
        let log = Log(e)
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "a", t: t0 + 100, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "a", t: t0 + 120, latitude: Self.oLat, longitude: Self.oLon)
        #expect(log.lines == ["exit a home +60.0 expired in+0.0", "exit a home +120.0 in+100.0", "enter a office +120.0"])
    }

    @Test("10,000 short-lived devices: ids reused, the device table stays small")
    func idsReused() throws {
        let t0 = Self.t0
        let e = try Self.engine(expire: 5)
        var exits = 0
        e.onEvent = { if $0.reason == .expired { exits += 1 } }
        for i in 0..<10_000 {
            let t = t0 + Double(i)
            // Each device three readings, then gone; every other one inside home.
            let (lat, lon) = i % 2 == 0 ? (Self.hLat, Self.hLon) : (Self.xLat, Self.xLon)
            e.fix(device: "dev-\(i)", t: t, latitude: lat, longitude: lon)
            if i >= 2 {
                e.fix(device: "dev-\(i - 1)", t: t + 0.25, latitude: lat, longitude: lon)
                e.fix(device: "dev-\(i - 2)", t: t + 0.5, latitude: lat, longitude: lon)
            }
        }
        #expect(e.devices.count <= 10)
        #expect(e.devices.liveCount <= 8)
        #expect(e.expiredDevices > 9_980)
        #expect(exits > 4_980)
        #expect(e.monitor.stateCount == e.devices.count)
        // Device i's last reading is at +i+2.5 (+i for the last ones): expired at +i+7.5 ≤ +9999.5.
        // Every live device is found by name under its id, ranks follow first sight.
        let live = (0..<Int32(e.devices.count)).filter { e.devices.isLive($0) }.sorted { e.devices.rank($0) < e.devices.rank($1) }
        #expect(live.map { e.deviceName($0) } == (9_993..<10_000).map { "dev-\($0)" })
        for d in live { #expect(e.devices.intern(e.deviceName(d)) == d) }
    }

    @Test("beacon visits expire too, before the silence exit, with the beacon named")
    func beacons() throws {
        let u = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let geojson = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"lobby","geometry":null,"properties":{"beacon":{"uuid":"\(u)","major":1}}},
              {"type":"Feature","id":"home","geometry":{"type":"Point","coordinates":[16.37,48.2]},"properties":{"radius":100}}
            ]}
            """
        let regions = try RegionFile.parse(bytes: Array(geojson.utf8), fileName: "b.geojson")
        var beaconOptions = BeaconOptions()
        beaconOptions.exitAfter = 300
        let e = try Engine(regions: regions, hysteresis: .metres(0), options: MonitorOptions(expire: 60), beaconOptions: beaconOptions)
        let log = Log(e)
        let (hi, lo) = BeaconID.parseUUID(u)!
        let a = e.monitor.device("a")
        let t0 = Self.t0
        _ = e.sighting(device: a, t: t0, beacon: BeaconID(uuidHigh: hi, uuidLow: lo, major: 1, minor: 4), rssi: -60)
        e.fix(device: "a", t: t0 + 5, latitude: Self.hLat, longitude: Self.hLon)
        e.advance(to: t0 + 1000)
        #expect(log.lines == ["enter a lobby +0.0", "enter a home +5.0",
                              "exit a lobby +65.0 expired in+0.0", "exit a home +65.0 expired in+5.0"])
        #expect(e.beacons.freeTracks.count == 1 && e.beacons.freeZones.count == 1)
        // Back: the freed slots are reused.
        _ = e.sighting(device: e.monitor.device("a"), t: t0 + 1001, beacon: BeaconID(uuidHigh: hi, uuidLow: lo, major: 1, minor: 4), rssi: -60)
        #expect(log.lines.last == "enter a lobby +1001.0")
        #expect(e.beacons.freeTracks.isEmpty && e.beacons.freeZones.isEmpty && e.beacons.storageCounts.tracks == 1)
    }

    @Test("--state-out lists live devices only, in first-seen order")
    func stateOut() throws {
        let t0 = Self.t0
        let e = try Self.engine()
        e.fix(device: "a", t: t0, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "b", t: t0 + 30, latitude: Self.hLat, longitude: Self.hLon)
        e.fix(device: "c", t: t0 + 70, latitude: Self.oLat, longitude: Self.oLon)  // a expires at +60
        e.fix(device: "d", t: t0 + 80, latitude: Self.hLat, longitude: Self.hLon)  // takes a's id
        let out = RecordBuffer(memory: ())
        StateWriter.write(engine: e, to: out)
        let state = String(decoding: out.takeBytes(), as: UTF8.self)
        #expect(!state.contains("\"a\""))
        let b = try #require(state.range(of: "\"b\":")), c = try #require(state.range(of: "\"c\":"))
        let d = try #require(state.range(of: "\"d\":"))
        #expect(b.lowerBound < c.lowerBound && c.lowerBound < d.lowerBound)
        #expect(e.monitor.device("d") == 0)
    }

    @Test("checkpoints with --expire: cut at every reading, restored, the same as one run (notification core)")
    func snapshotNotifications() throws {
        let steps = EngineSnapshotTests.notificationSteps
        let whole = try EngineSnapshotTests.checkCuts({ try EngineSnapshotTests.notificationEngine(expire: 25) }, steps,
                                                     cuts: 0...steps.count, end: EngineSnapshotTests.t0 + 4000)
        #expect(whole.trace.contains { $0.contains("expired") })
    }

    @Test("checkpoints with --expire: synthetic beacons, cut every 7th reading")
    func snapshotBeacons() throws {
        let steps = EngineSnapshotTests.syntheticSteps()
        let whole = try EngineSnapshotTests.checkCuts({ try EngineSnapshotTests.syntheticEngine(expire: 8) }, steps,
                                                     cuts: stride(from: 0, through: steps.count, by: 7), end: 5_000)
        #expect(whole.trace.filter { $0.contains("expired") }.count > 5)
        #expect(whole.trace.contains { $0.hasPrefix("exit") && $0.contains("b=Optional") && $0.contains("expired") })
    }

    @Test("without --expire nothing changes: the snapshot engines give the same events as before")
    func offIsOff() throws {
        let steps = EngineSnapshotTests.notificationSteps
        let a = try EngineSnapshotTests.run({ try EngineSnapshotTests.notificationEngine(expire: nil) }, steps, cut: nil, end: EngineSnapshotTests.t0 + 4000)
        let b = try EngineSnapshotTests.run(EngineSnapshotTests.notificationEngine, steps, cut: nil, end: EngineSnapshotTests.t0 + 4000)
        #expect(a == b)
        #expect(!a.trace.contains { $0.contains("expired") })
    }
}
