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

    public init(kind: Kind, t: Double, device: Int32, region: Int32, distance: Double = .nan, enteredAt: Double = .nan) {
        self.kind = kind
        self.t = t
        self.device = device
        self.region = region
        self.distance = distance
        self.enteredAt = enteredAt
    }
}

/// Receives events as the monitor produces them, in the order they happen.
public protocol RegionEventSink: AnyObject {
    func handle(_ event: RegionEvent)
}
