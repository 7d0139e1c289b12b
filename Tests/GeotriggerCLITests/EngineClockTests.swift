import Foundation
import Geotrigger
import Testing

/// The engine keeps one clock for dwell timers (monitoring) and notification timers (scheduling).
@Suite("Engine: one clock for both timer queues")
struct EngineClockTests {
    static let home = Region(id: "home", shape: .circle(center: Coordinate(latitude: 48.2, longitude: 16.37), radius: 100))

    func trace(_ engine: Engine) -> () -> [String] {
        var log: [String] = []
        engine.onEvent = { [unowned engine] e in log.append("\(e.kind.name):\(engine.regionID(e.region))@\(Int(e.t))") }
        engine.onDeliver = { d in log.append("deliver:\(d.id)@\(Int(d.t))") }
        return { log }
    }

    @Test("dwell and notification timers interleave in time order, before the next fix's events")
    func interleaving() throws {
        let requests = try [
            NotificationRequest(json: JSONValue.parse(#"{"id":"early","trigger":{"type":"timeInterval","seconds":50}}"#)),
            NotificationRequest(json: JSONValue.parse(#"{"id":"same","trigger":{"type":"timeInterval","seconds":60}}"#)),
            NotificationRequest(json: JSONValue.parse(#"{"id":"late","trigger":{"type":"timeInterval","seconds":70}}"#)),
        ]
        let engine = try Engine(regions: [Self.home], hysteresis: .metres(0), options: MonitorOptions(dwell: 60), requests: requests)
        let log = trace(engine)
        engine.fix(device: "d1", t: 0, latitude: 48.2, longitude: 16.37)      // enter at 0 → dwell due 60
        engine.fix(device: "d1", t: 100, latitude: 48.3, longitude: 16.37)    // exit at 100
        // At 60 the dwell comes before the delivery due at the same instant.
        #expect(log() == ["enter:home@0", "deliver:early@50", "dwell:home@60", "deliver:same@60", "deliver:late@70", "exit:home@100"])
    }

    @Test("timers due at the same instant fire in device first-seen order, not in the order they were set (replay --jobs relies on it)")
    func tiesByDevice() throws {
        let engine = try Engine(regions: [Self.home], hysteresis: .metres(0), options: MonitorOptions(dwell: 60))
        var log: [String] = []
        engine.onEvent = { [unowned engine] e in log.append("\(e.kind.name):\(engine.deviceName(e.device))@\(Int(e.t))") }
        engine.fix(device: "a", t: 0, latitude: 48.3, longitude: 16.37)   // seen first, outside
        engine.fix(device: "b", t: 10, latitude: 48.2, longitude: 16.37)  // b's dwell (due 70) is set first
        engine.fix(device: "a", t: 10, latitude: 48.2, longitude: 16.37)  // a's dwell, also due 70
        engine.advance(to: 100)
        #expect(log == ["enter:b@10", "enter:a@10", "dwell:a@70", "dwell:b@70"])
    }

    @Test("an every-device location request is in place for the device's first fix")
    func firstFixFiresLocationTrigger() throws {
        let request = try NotificationRequest(json: JSONValue.parse(#"{"id":"hi","trigger":{"type":"location","region":"home"}}"#))
        let engine = try Engine(regions: [Self.home], requests: [request])
        let log = trace(engine)
        engine.fix(device: "d1", t: 5, latitude: 48.2, longitude: 16.37)
        #expect(log() == ["enter:home@5", "deliver:hi@5"])
    }

    @Test("time triggers of every-device requests count from each device's first reading")
    func perDeviceStart() throws {
        let request = try NotificationRequest(json: JSONValue.parse(#"{"id":"t","trigger":{"type":"timeInterval","seconds":30}}"#))
        let engine = try Engine(regions: [Self.home], requests: [request])
        var log: [String] = []
        engine.onDeliver = { [unowned engine] d in log.append("\(engine.deviceName(d.device))@\(Int(d.t))") }
        engine.fix(device: "a", t: 10, latitude: 0, longitude: 0)
        engine.fix(device: "b", t: 25, latitude: 0, longitude: 0)
        engine.advance(to: 1000)
        #expect(log == ["a@40", "b@55"])
    }
}
