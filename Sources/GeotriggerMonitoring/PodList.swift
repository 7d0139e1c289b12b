/// A growable list of plain values (no references) in one malloc'd buffer, for the per-device
/// lists of `Monitor`: 16 bytes in the device state instead of an array reference, no reference
/// counting or uniqueness checks on the hot path, and capacity that grows by half (not double),
/// so a device keeps little slack. A value type with manual ownership: whoever holds the one live
/// copy calls `free()` once; copies are views and must not outlive an edit that reallocates.
struct PodList<Element> {
    private(set) var base: UnsafeMutablePointer<Element>?
    private(set) var count: Int32 = 0
    private(set) var capacity: Int32 = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    subscript(i: Int) -> Element {
        @inline(__always) get { base.unsafelyUnwrapped[i] }
        @inline(__always) nonmutating set { base.unsafelyUnwrapped[i] = newValue }
    }

    var buffer: UnsafeMutableBufferPointer<Element> {
        @inline(__always) get { UnsafeMutableBufferPointer(start: base, count: Int(count)) }
    }

    /// Makes room for `n` elements, growing by at least half the capacity.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if n > Int(capacity) { grow(to: n) }
    }

    @inline(never)
    private mutating func grow(to n: Int) {
        precondition(n <= Int(Int32.max), "list too long")
        let target = min(Int(Int32.max), max(n, 4, Int(capacity) + Int(capacity) / 2))
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: target)
        if let base {
            grown.moveInitialize(from: base, count: Int(count))
            base.deallocate()
        }
        base = grown
        capacity = Int32(target)
    }

    @inline(__always)
    mutating func append(_ e: Element) {
        reserve(Int(count) + 1)
        (base.unsafelyUnwrapped + Int(count)).initialize(to: e)
        count += 1
    }

    mutating func insert(_ e: Element, at i: Int) {
        reserve(Int(count) + 1)
        let p = base.unsafelyUnwrapped
        (p + i + 1).moveInitialize(from: p + i, count: Int(count) - i)
        (p + i).initialize(to: e)
        count += 1
    }

    mutating func remove(at i: Int) {
        let p = base.unsafelyUnwrapped
        (p + i).moveInitialize(from: p + i + 1, count: Int(count) - i - 1)
        count -= 1
    }

    @inline(__always)
    mutating func removeAll() { count = 0 }

    /// Replaces the contents with `other`'s.
    mutating func assign(_ other: PodList<Element>) {
        count = 0
        reserve(Int(other.count))
        if other.count > 0 { base.unsafelyUnwrapped.initialize(from: other.base.unsafelyUnwrapped, count: Int(other.count)) }
        count = other.count
    }

    var array: [Element] { Array(buffer) }

    mutating func free() {
        base?.deallocate()
        base = nil
        count = 0
        capacity = 0
    }
}
