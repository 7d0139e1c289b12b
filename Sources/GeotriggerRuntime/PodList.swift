import CPrefetch
import GeotriggerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable list of plain values (no references) in one malloc'd buffer: the per-device lists
/// of `Monitor` (16 bytes in the device state instead of an array reference), a tree query's
/// results, `DeviceTable`'s name bytes. No reference counting or uniqueness checks on the hot
/// path, and capacity that grows by half (not double), so little slack is kept. A value type with
/// manual ownership: whoever holds the one live copy calls `free()` once; copies are views and
/// must not outlive an edit that reallocates. At most `Int32.max` elements.
@frozen
public struct PodList<Element> {
    // Public (not `package`) with @inlinable members: this toolchain specialises a generic's
    // @inlinable code in other modules only when it is public, and these lists are the hot path.
    @usableFromInline var storage: UnsafeMutablePointer<Element>?
    @usableFromInline var used: Int32 = 0
    @usableFromInline var room: Int32 = 0

    @inlinable package var base: UnsafeMutablePointer<Element>? { storage }
    @inlinable public var count: Int32 { used }
    @inlinable public var capacity: Int32 { room }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { used == 0 }

    @inlinable public subscript(i: Int) -> Element {
        @inline(__always) get { storage.unsafelyUnwrapped[i] }
        @inline(__always) nonmutating set { storage.unsafelyUnwrapped[i] = newValue }
    }

    @inlinable package var buffer: UnsafeMutableBufferPointer<Element> {
        @inline(__always) get { UnsafeMutableBufferPointer(start: storage, count: Int(used)) }
    }

    /// Makes room for `n` elements, growing by at least half the capacity.
    @inlinable @inline(__always)
    public mutating func reserve(_ n: Int) {
        if n > Int(room) { grow(to: n) }
    }

    @usableFromInline @inline(never)
    mutating func grow(to n: Int) {
        precondition(n <= Int(Int32.max), "list too long")
        let target = min(Int(Int32.max), max(n, 4, Int(room) + Int(room) / 2))
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: target)
        if let storage {
            grown.moveInitialize(from: storage, count: Int(used))
            storage.deallocate()
        }
        storage = grown
        room = Int32(target)
    }

    @inlinable @inline(__always)
    public mutating func append(_ e: Element) {
        reserve(Int(used) + 1)
        (storage.unsafelyUnwrapped + Int(used)).initialize(to: e)
        used += 1
    }

    /// Appends every element of `elements`.
    @inlinable
    package mutating func append(contentsOf elements: UnsafeBufferPointer<Element>) {
        guard let source = elements.baseAddress, elements.count > 0 else { return }
        reserve(Int(used) + elements.count)
        (storage.unsafelyUnwrapped + Int(used)).initialize(from: source, count: elements.count)
        used += Int32(elements.count)
    }

    @inlinable
    public mutating func insert(_ e: Element, at i: Int) {
        reserve(Int(used) + 1)
        let p = storage.unsafelyUnwrapped
        (p + i + 1).moveInitialize(from: p + i, count: Int(used) - i)
        (p + i).initialize(to: e)
        used += 1
    }

    @inlinable
    public mutating func remove(at i: Int) {
        let p = storage.unsafelyUnwrapped
        (p + i).moveInitialize(from: p + i + 1, count: Int(used) - i - 1)
        used -= 1
    }

    @inlinable @inline(__always)
    public mutating func removeAll() { used = 0 }

    /// Removes and returns the last element (the list must not be empty).
    @inlinable @inline(__always)
    public mutating func removeLast() -> Element {
        precondition(used > 0, "removeLast on an empty list")
        used -= 1
        return storage.unsafelyUnwrapped[Int(used)]
    }

    /// Replaces the contents with `other`'s.
    @inlinable
    public mutating func assign(_ other: PodList<Element>) {
        used = 0
        append(contentsOf: UnsafeBufferPointer(other.buffer))
    }

    @inlinable public var array: [Element] { Array(buffer) }

    public mutating func free() {
        storage?.deallocate()
        storage = nil
        used = 0
        room = 0
    }
}

extension PodList {
    /// Appends `element(k)` for each bit k set in the 16-bit `mask`, in order, with no branch on
    /// the bits: all 16 are written and the count moves by each bit (a loop over the set bits
    /// mispredicts its exit whenever their number changes, as it does fix to fix).
    @inlinable @inline(__always)
    public mutating func appendBits(_ mask: UInt32, _ element: (Int) -> Element) {
        reserve(Int(used) + 16)
        let out = storage.unsafelyUnwrapped + Int(used)
        var w = 0
        for k in 0..<16 {
            out[w] = element(k)
            w &+= Int((mask >> UInt32(k)) & 1)
        }
        used &+= Int32(w)
    }
}

extension PodList where Element == UInt8 {
    // A byte list is an arena of names (`DeviceTable`): these hand its bytes out as views and
    // compare them in place, so the table itself handles no pointer.

    /// The `count` bytes from `offset`, as a view valid until the list next grows or is freed.
    @inlinable @inline(__always)
    public func view(from offset: Int, count: Int) -> ByteView {
        assert(offset >= 0 && count >= 0 && offset + count <= Int(used), "PodList view out of bounds")
        return ByteView(unsafe: UnsafeRawBufferPointer(start: storage.map { $0 + offset }, count: count))
    }

    /// Appends the bytes of `bytes`.
    @inlinable
    public mutating func append(contentsOf bytes: ByteView) {
        append(contentsOf: bytes.unsafeBytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Starts loading the byte at `offset` into the cache (a hint: nothing depends on it).
    @inlinable @inline(__always)
    public func prefetch(at offset: Int) {
        geotrigger_prefetch(storage.map { $0 + offset })
    }

    /// Whether the `bytes.count` bytes from `offset` equal `bytes`. Up to 16 bytes (most device
    /// ids) as two overlapping words of 8, 4 or 2 bytes (or one byte), reading nothing outside
    /// either run; longer ones by `memcmp`.
    @inlinable @inline(__always)
    public func bytesEqual(from offset: Int, _ bytes: ByteView) -> Bool {
        let n = bytes.count
        assert(offset >= 0 && offset + n <= Int(used), "PodList comparison out of bounds")
        if n == 0 { return true }
        let a = UnsafeRawPointer(storage.unsafelyUnwrapped + offset)
        let b = bytes.unsafeBytes.baseAddress.unsafelyUnwrapped
        @inline(__always) func pair<W: FixedWidthInteger>(_: W.Type) -> Bool {
            let last = n - MemoryLayout<W>.size
            return a.loadUnaligned(as: W.self) == b.loadUnaligned(as: W.self)
                && a.loadUnaligned(fromByteOffset: last, as: W.self) == b.loadUnaligned(fromByteOffset: last, as: W.self)
        }
        if n >= 8 { return n <= 16 ? pair(UInt64.self) : Self.sameLongBytes(a, b, n) }
        if n >= 4 { return pair(UInt32.self) }
        if n >= 2 { return pair(UInt16.self) }
        return a.load(as: UInt8.self) == b.load(as: UInt8.self)
    }

    @usableFromInline
    static func sameLongBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool { memcmp(a, b, n) == 0 }
}
