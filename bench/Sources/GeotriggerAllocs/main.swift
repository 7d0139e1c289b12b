// Counts heap allocations per reading in the engine's steady state.
//
// Run with the interposer preloaded (geotrigger-bench does this):
//   LD_PRELOAD=.build/release/libMallocInterposerSwift.so geotrigger-allocs REGIONS READINGS [MODE] [LIMIT]
// The first half of the readings warms the engine up (devices interned, per-device state grown);
// mallocs are counted over the second half. Prints one JSON object.
import BenchSupport
import Geotrigger
import MallocInterposerSwift
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: geotrigger-allocs REGIONS READINGS [fast|plain|exactFast|exactPlain] [LIMIT]")
    exit(64)
}
let mode = arguments.count > 3 ? EngineMode(rawValue: arguments[3]) ?? .fast : .fast
let limit = arguments.count > 4 ? Int(arguments[4]) ?? .max : .max

let workload = try Workload(readingsPath: arguments[2], limit: limit)
let engine = try mode.engine(regions: RegionFile.load(path: arguments[1]))
var events = 0
engine.onEvent = { _ in events += 1 }
let ids = workload.intern(into: engine)
let half = workload.count / 2
workload.replay(0..<half, into: engine, ids: ids)

MallocInterposerSwift.initialize()
MallocInterposerSwift.hook()
workload.replay(half..<workload.count, into: engine, ids: ids)
MallocInterposerSwift.unhook()
let stats = MallocInterposerSwift.getStatistics()
let counted = workload.count - half
print("{\"readings\":\(counted),\"mallocs\":\(stats.mallocCount),\"bytes\":\(stats.mallocBytesCount),"
    + "\"perReading\":\(counted > 0 ? Double(stats.mallocCount) / Double(counted) : 0),\"events\":\(events)}")
