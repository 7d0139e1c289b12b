import GeotriggerCore

/// A region event for one device.
///
/// Devices and regions are numbers: the device id from the monitor's `DeviceTable`, the region its
/// position in the index. Output layers turn them into names.
public struct RegionEvent: Sendable {
    public enum Kind: UInt8, Sendable, CaseIterable {
        case enter
        case exit
        case dwell

        public var name: String {
            switch self {
            case .enter: return "enter"
            case .exit: return "exit"
            case .dwell: return "dwell"
            }
        }
    }

    public var kind: Kind
    /// Unix seconds: the fix that caused it, or a timer's due time.
    public var t: Double
    public var device: Int32
    public var region: Int32
    /// Geodesic distance from a circle's centre in metres (NaN for polygons and dwell).
    public var distance: Double
    /// For `exit` and `dwell`: when the visit began (NaN otherwise).
    public var enteredAt: Double
    /// For beacon regions: the concrete beacon (a wildcard region's events name it).
    public var beacon: BeaconID?
    /// For beacon regions: the estimated proximity (`immediate`, `near`, `far`), if known. An
    /// enum, not its name, so that the event holds no reference: copying one (every event is
    /// handed on a few times) then costs no reference counting.
    public var proximity: Proximity?
    /// For beacon exits, exits of a forgotten device (any region) and exits of a region removed
    /// or replaced live: why the visit ended.
    /// Nil for a geographic exit decided by a fix (the event carries no `reason`).
    public var reason: ExitReason?

    /// Why a visit ended (written as the exit's `reason`).
    public enum ExitReason: String, Sendable {
        /// Every matching beacon was estimated beyond the zone (with hysteresis).
        case distance
        /// No qualifying sighting for `--beacon-exit` seconds.
        case silence
        /// The device was silent for `--expire` seconds of the clock and was forgotten: stamped
        /// its last reading + S.
        case expired
        /// A `removeRegion` record removed the region: stamped at the record's time.
        case removed
        /// An `addRegion` record replaced the region (same id): stamped at the record's time.
        case replaced
    }

    public init(kind: Kind, t: Double, device: Int32, region: Int32, distance: Double = .nan, enteredAt: Double = .nan) {
        self.kind = kind
        self.t = t
        self.device = device
        self.region = region
        self.distance = distance
        self.enteredAt = enteredAt
    }

    public init(kind: Kind, t: Double, device: Int32, region: Int32, distance: Double, enteredAt: Double,
                beacon: BeaconID?, proximity: Proximity?, reason: ExitReason?) {
        self.init(kind: kind, t: t, device: device, region: region, distance: distance, enteredAt: enteredAt)
        self.beacon = beacon
        self.proximity = proximity
        self.reason = reason
    }
}

/// Receives events as the monitor produces them, in the order they happen.
public protocol RegionEventSink: AnyObject {
    func handle(_ event: RegionEvent)
}
