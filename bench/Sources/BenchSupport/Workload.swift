import Geotrigger
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A scenario's readings decoded once into memory, so the engine loop times the engine alone.
///
/// Devices are numbered in order of first appearance; each engine interns the same names in the
/// same order (`intern(into:)`), so a reading's device is one array lookup away.
public struct Workload {
    /// A GPS fix, 40 bytes, so SPEC §6's 10 million fit in memory beside the engine.
    public struct Fix {
        public var device: Int32
        public var accuracy: Float
        public var t: Double
        public var point: Coordinate
    }

    public struct Sighting {
        public var device: Int32
        public var t: Double
        public var beacon: BeaconID
        public var rssi: Double
        public var tx: Double
    }

    /// The scenarios are homogeneous: all fixes (city, world) or all sightings (beacons).
    public private(set) var fixes: [Fix] = []
    public private(set) var sightings: [Sighting] = []
    public private(set) var deviceNames: [String] = []

    /// Decodes up to `limit` readings of an NDJSON file (rejected and control records are skipped).
    public init(readingsPath: String, limit: Int = .max) throws {
        let decoder = try ReadingInput.open(path: readingsPath)
        var ids: [String: Int32] = [:]
        while count < limit {
            switch decoder.next() {
            case .end: return
            case .rejected: continue
            case .reading:
                let r = decoder.current
                guard r.kind == .fix || r.kind == .sighting else { continue }
                let name = r.deviceString
                let id = ids[name] ?? {
                    let new = Int32(deviceNames.count)
                    ids[name] = new
                    deviceNames.append(name)
                    return new
                }()
                if r.kind == .fix {
                    fixes.append(Fix(device: id, accuracy: Float(r.accuracy), t: r.t,
                                     point: Coordinate(latitude: r.latitude, longitude: r.longitude)))
                } else {
                    sightings.append(Sighting(device: id, t: r.t, beacon: r.beacon, rssi: r.rssi, tx: r.tx))
                }
            }
        }
    }

    public var count: Int { fixes.count + sightings.count }

    /// The engine's ids for this workload's devices, by workload id.
    public func intern(into engine: Engine) -> [Int32] {
        deviceNames.map { engine.device($0) }
    }

    /// Applies readings `range` (positions in this workload) to `engine`, calling `each` after every one.
    @inline(__always)
    public func replay(_ range: Range<Int>, into engine: Engine, ids: [Int32], each: () -> Void = {}) {
        for i in range.clamped(to: 0..<fixes.count) {
            let f = fixes[i]
            _ = engine.fix(device: ids[Int(f.device)], t: f.t, at: f.point, accuracy: Double(f.accuracy))
            each()
        }
        for i in range.clamped(to: 0..<sightings.count) {
            let s = sightings[i]
            _ = engine.sighting(device: ids[Int(s.device)], t: s.t, beacon: s.beacon, rssi: s.rssi, tx: s.tx)
            each()
        }
    }
}

/// Seconds on the monotonic clock.
public func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Nanoseconds on the monotonic clock, for per-reading latency.
@inline(__always)
public func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// This process's resident set now, in bytes (`/proc/self/statm`), after returning free heap
/// pages to the system so differences measure live data. 0 where /proc is missing.
public func residentBytes() -> Int {
    #if canImport(Glibc)
    _ = glibcMallocTrim(0)
    #endif
    guard let f = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(f) }
    var size = 0, resident = 0
    guard withVaList([withUnsafeMutablePointer(to: &size) { $0 }, withUnsafeMutablePointer(to: &resident) { $0 }], {
        vfscanf(f, "%ld %ld", $0)
    }) == 2 else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

#if canImport(Glibc)
/// glibc's `malloc_trim`, which the Glibc module does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
