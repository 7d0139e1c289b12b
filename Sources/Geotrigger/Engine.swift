import GeotriggerCore
import GeotriggerGeometry
import GeotriggerMonitoring
import GeotriggerReadings

/// The geofence engine as a library: load regions, feed fixes, receive events.
///
/// Keeps the stream clock's order: timers due before a fix fire first, then the fix is applied,
/// then timers due at its time. The replay command is built on the same calls.
///
/// ```swift
/// let engine = try Engine(regions: RegionFile.load(path: "zones.geojson"))
/// engine.onEvent = { e in print(e.kind.name, engine.regionID(e.region), engine.deviceName(e.device)) }
/// engine.fix(device: "bus-7", t: 1_700_000_000, latitude: 45.78, longitude: 14.36, accuracy: 8)
/// engine.advance(to: 1_700_000_600)   // fires dwell timers due by then
/// ```
///
/// Not thread-safe (it owns a GEOS context): use one engine per thread.
public final class Engine {
    public let index: RegionIndex
    public let monitor: Monitor
    /// Called for every event, in order.
    public var onEvent: ((RegionEvent) -> Void)? {
        didSet { relay.handler = onEvent }
    }
    private let relay = Relay()

    public convenience init(regions: [Region], hysteresis: Hysteresis = .automatic, options: MonitorOptions = MonitorOptions()) throws {
        self.init(index: try RegionIndex(regions: regions, hysteresis: hysteresis), options: options)
    }

    /// An engine over an index already built. Its monitor's sink is the engine's `onEvent` relay;
    /// replacing `monitor.sink` bypasses `onEvent`.
    public init(index: RegionIndex, options: MonitorOptions = MonitorOptions()) {
        self.index = index
        monitor = Monitor(index: index, options: options)
        monitor.sink = relay
    }

    /// Applies a fix for a device given by name.
    @discardableResult
    public func fix(device: String, t: Double, latitude: Double, longitude: Double, accuracy: Double = .nan) -> Monitor.Outcome {
        fix(device: monitor.device(device), t: t, at: Coordinate(latitude: latitude, longitude: longitude), accuracy: accuracy)
    }

    /// Applies a fix for an interned device (`monitor.device(_:)`); no allocation for known devices.
    @discardableResult
    public func fix(device: Int32, t: Double, at p: Coordinate, accuracy: Double = .nan) -> Monitor.Outcome {
        monitor.fireTimers(before: t)
        let outcome = monitor.fix(device: device, t: t, at: p, accuracy: accuracy)
        monitor.advance(to: monitor.clock)
        return outcome
    }

    /// Moves the clock to `t` (never back) and fires every timer due by then.
    public func advance(to t: Double) { monitor.advance(to: t) }

    public var clock: Double { monitor.clock }
    public func regionID(_ region: Int32) -> String { index.regions[Int(region)].id }
    public func deviceName(_ device: Int32) -> String { monitor.devices.name(device) }

    private final class Relay: RegionEventSink {
        var handler: ((RegionEvent) -> Void)?
        func handle(_ event: RegionEvent) { handler?(event) }
    }
}
