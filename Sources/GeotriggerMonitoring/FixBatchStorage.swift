import CBoxes

/// One allocation for a `FixBatch`'s fixed-size arrays, freed when the last batch holding it goes.
///
/// The batch keeps typed views into it (`BatchArray`, from `Carver.next`), so the hot path
/// indexes plain pointers with no reference to follow; the arrays live exactly as long as this
/// object. It is sized for the largest layout the batch asks for: every array at the strictest
/// alignment.
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

        /// Room for `count` plain values of `type`, uninitialized (the batch writes before it
        /// reads).
        mutating func next<T>(_ type: T.Type, _ count: Int) -> BatchArray<T> {
            precondition(MemoryLayout<T>.alignment <= 64 && _isPOD(T.self))
            let size = MemoryLayout<T>.stride * count
            precondition(offset + size <= storage.byteCount, "FixBatchStorage is too small for the batch's arrays")
            let p = (storage.base + offset).bindMemory(to: T.self, capacity: count)
            offset += (size + 63) & ~63
            return BatchArray(base: p, count: count)
        }
    }

    func carver() -> Carver { Carver(storage: self) }
}

/// One of a batch's fixed-size arrays of plain values, in its `FixBatchStorage`, which the batch
/// keeps alive. Elements are edited in place; indices are checked by `assert` (debug builds,
/// which also keep the count); a release build indexes the memory directly.
struct BatchArray<Element> {
    private let base: UnsafeMutablePointer<Element>
    #if DEBUG
    private let count: Int
    #endif

    fileprivate init(base: UnsafeMutablePointer<Element>, count: Int) {
        self.base = base
        #if DEBUG
        self.count = count
        #endif
    }

    @inline(__always) private func check(_ i: Int, _ n: Int = 1) {
        #if DEBUG
        assert(i >= 0 && n >= 0 && i + n <= count, "batch array index out of range")
        #endif
    }

    subscript(i: Int) -> Element {
        @inline(__always) unsafeAddress {
            check(i)
            return UnsafePointer(base + i)
        }
        @inline(__always) nonmutating unsafeMutableAddress {
            check(i)
            return base + i
        }
    }

    /// Sets the first `n` elements to `value`.
    @inline(__always) func fill(_ value: Element, count n: Int) {
        check(0, n)
        base.update(repeating: value, count: n)
    }
}

extension BatchArray<Int32> {
    /// Whether `value` is among the first `n` elements (`geotrigger_contains_i32`, four at a time).
    @inline(__always) func contains(_ value: Int32, inFirst n: Int) -> Bool {
        check(0, n)
        return geotrigger_contains_i32(base, Int32(n), value) != 0
    }
}
