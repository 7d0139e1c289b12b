/// One allocation for a `FixBatch`'s fixed-size arrays, freed when the last batch holding it goes.
///
/// The batch keeps typed pointers into it (`Carver.next`), so the hot path indexes plain
/// pointers with no reference to follow; the arrays live exactly as long as this object. It is
/// sized for the largest layout the batch asks for: every array at the strictest alignment.
final class FixBatchStorage {
    private let base: UnsafeMutableRawPointer
    private let byteCount: Int

    /// Room for a batch of `capacity` fixes: the filter and 19 arrays of at most `capacity` + 1
    /// elements of at most 64 bytes each (the largest, a refresh plan, takes 56), each started
    /// at a 64-byte line.
    init(capacity: Int) {
        byteCount = 20 * (64 + (capacity + 1) * 64)
        base = .allocate(byteCount: byteCount, alignment: 64)
    }

    deinit { base.deallocate() }

    /// Hands out consecutive arrays of the storage, each at a cache line of its own.
    struct Carver {
        fileprivate let storage: FixBatchStorage
        fileprivate var offset = 0

        /// Room for `count` values of `type`, uninitialized (the batch writes before it reads).
        mutating func next<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
            precondition(MemoryLayout<T>.alignment <= 64)
            let size = MemoryLayout<T>.stride * count
            precondition(offset + size <= storage.byteCount, "FixBatchStorage is too small for the batch's arrays")
            let p = (storage.base + offset).bindMemory(to: T.self, capacity: count)
            offset += (size + 63) & ~63
            return p
        }
    }

    func carver() -> Carver { Carver(storage: self) }
}
