import CBoxes
import GeotriggerCore
import GeotriggerRuntime

/// A device's neighbourhood (`Monitor`'s fast path): the regions whose boundary lay within the
/// reach of where it was taken, in region order, each with the odometer reading at which it must
/// be retested (`Monitor.NearRegion`).
///
/// Kept as two columns in one buffer (`TwoColumns`), `room` Float clearances and then `room` keys
/// (16-byte aligned: 64-byte alignment cost glibc about 90 bytes a device on city, with no
/// measurable gain in time), with `room` a multiple of 4 and the clearances past `count` set to
/// +∞: a fix finds the regions due a block of 16 at a time, with one compare per 4
/// (`geotrigger_due`), and retests them in place, in region order, so the list is never sorted
/// or merged. (Rooms of whole
/// blocks of 16 left 6 entries, 46 bytes, unused in a city device's list of 12.) A value type
/// with manual ownership, as `PodList`: whoever holds the live copy calls `free()` once; copies
/// are views.
struct Neighbourhood {
    private var columns = TwoColumns<Float, UInt32>()
    private(set) var count: Int32 = 0
    private var room: Int32 { @inline(__always) get { columns.room } }

    init() {}

    /// Blocks of 16 entries that hold the list.
    @inline(__always) var blocks: Int { (Int(count) + 15) >> 4 }

    /// The key of entry `i` (`i < count`).
    @inline(__always) func key(_ i: Int) -> UInt32 { columns.second(i) }

    /// Entry `i` (`i < count`).
    @inline(__always) subscript(i: Int) -> Monitor.NearRegion {
        get { Monitor.NearRegion(key: columns.second(i), clearance: columns.first(i)) }
        nonmutating set {
            columns.setSecond(i, newValue.key)
            columns.setFirst(i, newValue.clearance)
        }
    }

    /// The entries of block `b` due at `limit` (clearance ≤ limit), as bit k for entry 16b + k;
    /// `rest` is lowered to the smallest clearance in the block above `limit`.
    @inline(__always)
    func due(block b: Int, limit: Float, rest: inout Float) -> UInt32 {
        let groups = min(4, (Int(room) - 16 * b) >> 2)
        let found = columns.withFirsts(from: 16 * b, count: 4 * groups) {
            geotrigger_due($0, Int32(groups), limit, rest)
        }
        rest = found.rest
        return found.mask
    }

    /// The region of the lowest entry in `due` (bits of block `b`), or of the block's last entry
    /// when `due` is 0: a region to prefetch, read without a branch on how many are due.
    @inline(__always)
    func dueRegion(block b: Int, _ due: UInt32) -> Int32 {
        let last = min(15, Int(room) - 16 * b - 1)
        return Monitor.NearRegion.region(ofKey: columns.second(16 * b + min(due.trailingZeroBitCount, last)))
    }

    /// `list`'s entries (the neighbourhood a refresh collected), which must be in region order.
    mutating func assign(_ list: PodList<Monitor.NearRegion>) {
        let n = Int(list.count)
        count = 0
        guard n > 0 else { return }
        let padded = (n + 3) & ~3
        if padded > Int(room) || Int(room) - padded > Self.slack { resize(to: padded) }
        let c = columns
        for i in 0..<n {
            let entry = list[i]
            c.setFirst(i, entry.clearance)
            c.setSecond(i, entry.key)
        }
        // The rest of the room is never due (and names region 0, for `dueRegion`).
        for i in n..<Int(room) {
            c.setFirst(i, .infinity)
            c.setSecond(i, 0)
        }
        count = Int32(n)
    }

    /// Entries of room kept unused before a list is moved to a smaller buffer: a list replaced by
    /// one a little shorter keeps its buffer (most lists change by a few entries: reallocating at
    /// every change of size made 0.051 allocations a city reading instead of 0.036, for 10 bytes
    /// a device), but a device that once crossed a dense spot does not keep that room.
    static let slack = 4

    /// Room for exactly `padded` entries (a device's list is replaced whole).
    private mutating func resize(to padded: Int) {
        columns.resize(to: padded, keeping: 0, alignment: 16)
    }

    /// Prefetches the first block's clearances and keys, with no branch on the list's length:
    /// the first and last byte of each, as a list of up to 16 entries (most are) may straddle a
    /// line (its buffer is 16-byte aligned), so the retests that follow miss on neither.
    @inline(__always)
    func prefetch() {
        columns.prefetchBoth(0, min(Int(room), 16) * 4 - 1)
    }

    mutating func free() {
        columns.free()
        count = 0
    }
}
