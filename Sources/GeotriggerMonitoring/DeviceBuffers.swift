import CPrefetch

// The monitor's per-device buffers in raw memory, behind typed accessors.
//
// Why raw memory: a device's state and lists are read and edited on every reading. As arrays
// each access would check uniqueness and each list would cost a reference (and its count and
// capacity twice over); here the states sit in one 64-byte-aligned buffer edited in place, and
// a device's lists are a pointer and two 32-bit counts in its state, with columns the hot loops
// read (a block of 16 clearances, a run of keys) packed together. Value types with manual
// ownership, as `PodList`: whoever holds the one live copy calls `free` once; other copies are
// views that must not outlive an edit. Every accessor checks its bounds with `assert` (debug
// builds); release builds read the memory directly. Elements are plain values or, for
// `AlignedBuffer`, moved as a whole.

/// A growable array in one 64-byte-aligned buffer, edited in place: reading or editing one field
/// of an element touches that field alone. Grows by half (at least 64); nothing is allocated
/// before the first element.
struct AlignedBuffer<Element> {
    private var storage: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private var capacity = 0

    init() {}

    /// The buffer; only read for an index below `count`, so there is one.
    private var base: UnsafeMutablePointer<Element> {
        @inline(__always) get { storage.unsafelyUnwrapped }
    }

    /// Element `i`, in place.
    subscript(i: Int) -> Element {
        @inline(__always) unsafeAddress {
            assert(i >= 0 && i < count, "element out of range")
            return UnsafePointer(base + i)
        }
        @inline(__always) nonmutating unsafeMutableAddress {
            assert(i >= 0 && i < count, "element out of range")
            return base + i
        }
    }

    mutating func append(_ element: Element) {
        if count == capacity {
            let grown = Self.allocate(max(64, capacity + capacity / 2))
            if let storage {
                grown.moveInitialize(from: storage, count: count)
                UnsafeMutableRawPointer(storage).deallocate()
            }
            storage = grown
            capacity = max(64, capacity + capacity / 2)
        }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Starts loading, for writing, the line of element `i` at `byteOffset` in it.
    @inline(__always)
    func prefetchForWriting(_ i: Int, byteOffset: Int) {
        assert(i >= 0 && i < count && byteOffset >= 0 && byteOffset < MemoryLayout<Element>.stride,
               "element out of range")
        geotrigger_prefetch_write(UnsafeRawPointer(base + i) + byteOffset)
    }

    /// Hands each element to `release` (what it holds of its own), then frees them all.
    mutating func free(_ release: (inout Element) -> Void) {
        guard let storage else { return }
        for i in 0..<count { release(&storage[i]) }
        storage.deinitialize(count: count)
        UnsafeMutableRawPointer(storage).deallocate()
        self.storage = nil
        count = 0
        capacity = 0
    }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<Element>.stride, alignment: 64)
            .bindMemory(to: Element.self, capacity: capacity)
    }
}

/// Two columns of 4-byte plain values in one buffer, `room` entries each: the first column, then
/// the second (a device's neighbourhood: clearances and keys; its visits: keys and entry times'
/// codes). 12 bytes, so a list type adds its 4-byte count and takes 16. The owner keeps the
/// count and calls `free()` once.
struct TwoColumns<First, Second> {
    private var storage: UnsafeMutableRawPointer?
    /// Entries each column has room for.
    private(set) var room: Int32 = 0

    init() {
        assert(MemoryLayout<First>.stride == 4 && MemoryLayout<Second>.stride == 4
               && _isPOD(First.self) && _isPOD(Second.self))
    }

    @inline(__always) private var firsts: UnsafeMutablePointer<First> {
        storage.unsafelyUnwrapped.assumingMemoryBound(to: First.self)
    }

    @inline(__always) private var seconds: UnsafeMutablePointer<Second> {
        (storage.unsafelyUnwrapped + Int(room) * 4).assumingMemoryBound(to: Second.self)
    }

    /// Entry `i` of the first column (`i < room`).
    @inline(__always) func first(_ i: Int) -> First {
        assert(i >= 0 && i < Int(room), "entry out of range")
        return firsts[i]
    }

    /// Entry `i` of the second column (`i < room`).
    @inline(__always) func second(_ i: Int) -> Second {
        assert(i >= 0 && i < Int(room), "entry out of range")
        return seconds[i]
    }

    @inline(__always) func setFirst(_ i: Int, _ v: First) {
        assert(i >= 0 && i < Int(room), "entry out of range")
        firsts[i] = v
    }

    @inline(__always) func setSecond(_ i: Int, _ v: Second) {
        assert(i >= 0 && i < Int(room), "entry out of range")
        seconds[i] = v
    }

    /// Calls `body` with the first column from entry `i`, `n` entries of it (a C routine's input).
    @inline(__always)
    func withFirsts<R>(from i: Int, count n: Int, _ body: (UnsafePointer<First>) -> R) -> R {
        assert(i >= 0 && n >= 0 && i + n <= Int(room), "entries out of range")
        return body(firsts + i)
    }

    /// Moves entries `i..<i + n` of both columns to start at `j` (the ranges may overlap).
    @inline(__always)
    func moveEntries(from i: Int, to j: Int, count n: Int) {
        assert(i >= 0 && j >= 0 && n >= 0 && max(i, j) + n <= Int(room), "entries out of range")
        UnsafeMutableRawPointer(firsts + j).copyMemory(from: firsts + i, byteCount: n * 4)
        UnsafeMutableRawPointer(seconds + j).copyMemory(from: seconds + i, byteCount: n * 4)
    }

    /// Copies the first `n` entries of `other`'s columns over this one's.
    @inline(__always)
    func copyEntries(from other: TwoColumns, count n: Int) {
        assert(n >= 0 && n <= Int(room) && n <= Int(other.room), "entries out of range")
        UnsafeMutableRawPointer(firsts).copyMemory(from: other.firsts, byteCount: n * 4)
        UnsafeMutableRawPointer(seconds).copyMemory(from: other.seconds, byteCount: n * 4)
    }

    /// Room for exactly `target` entries each, keeping the first `keeping` (a new buffer at
    /// `alignment`).
    mutating func resize(to target: Int, keeping n: Int, alignment: Int) {
        precondition(target <= Int(Int32.max) / 8, "list too long")
        assert(n >= 0 && n <= target && n <= Int(room), "entries out of range")
        let grown = UnsafeMutableRawPointer.allocate(byteCount: target * 8, alignment: alignment)
        if let storage, n > 0 {
            grown.copyMemory(from: storage, byteCount: n * 4)
            (grown + target * 4).copyMemory(from: storage + Int(room) * 4, byteCount: n * 4)
        }
        storage?.deallocate()
        storage = grown
        room = Int32(target)
    }

    /// Starts loading the bytes at offsets `a` and `b` of the first column; nothing without a
    /// buffer. A hint: an offset may lie past the column (a prefetch never faults).
    @inline(__always) func prefetchFirsts(_ a: Int, _ b: Int) {
        guard let storage else { return }
        geotrigger_prefetch(storage + a)
        geotrigger_prefetch(storage + b)
    }

    /// Starts loading the bytes at offsets `a` and `b` of each column (as `prefetchFirsts`).
    @inline(__always) func prefetchBoth(_ a: Int, _ b: Int) {
        guard let storage else { return }
        let seconds = storage + Int(room) * 4
        geotrigger_prefetch(storage + a)
        geotrigger_prefetch(storage + b)
        geotrigger_prefetch(seconds + a)
        geotrigger_prefetch(seconds + b)
    }

    mutating func free() {
        storage?.deallocate()
        storage = nil
        room = 0
    }
}
