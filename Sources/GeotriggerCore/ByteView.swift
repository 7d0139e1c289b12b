/// A borrowed view of bytes another object owns: a record's line or device id in a decoder's
/// read buffer, a name in the device table, formatted records on their way to a sink, a Kafka
/// message. Bytes cross the layers as a `ByteView`, so that raw pointers stay in the files that
/// own the buffers (`PaddedBuffer`, `DeviceTable`, `RecordBuffer`, `Kafka`…).
///
/// The trick: it is an `UnsafeRawBufferPointer` with a name and a checked interface. Reading
/// through it is bounds-checked (`count`, indices, slices, `elementsEqual`, `Array(view)`), but it
/// is valid only as long as its owner keeps the bytes where they are: each API that hands one
/// out says until when (most often, until the owner's next record), and none is ever stored
/// beyond that. `withUnsafeBytes` lends the pointer back to code that owns a trick of its own.
@frozen
public struct ByteView: RandomAccessCollection, @unchecked Sendable {
    @usableFromInline let raw: UnsafeRawBufferPointer

    /// A view of `raw`, which the caller's buffer keeps valid as the API it is handed to says.
    @inlinable @inline(__always)
    public init(unsafe raw: UnsafeRawBufferPointer) { self.raw = raw }

    /// No bytes. (Computed, not a stored global: every `Reading` starts with it, and a global
    /// is reached through a once-guarded accessor, a call at each reading.)
    @inlinable @inline(__always)
    public static var empty: ByteView { ByteView(unsafe: UnsafeRawBufferPointer(start: nil, count: 0)) }

    @inlinable @inline(__always) public var startIndex: Int { 0 }
    @inlinable @inline(__always) public var endIndex: Int { raw.count }
    @inlinable @inline(__always) public var count: Int { raw.count }
    @inlinable @inline(__always) public var isEmpty: Bool { raw.isEmpty }

    @inlinable @inline(__always)
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < raw.count, "ByteView index out of range")
        return raw[position]
    }

    /// The bytes in `bounds`, as a view of their own (indices from 0).
    @inlinable @inline(__always)
    public subscript(bounds: Range<Int>) -> ByteView {
        precondition(bounds.lowerBound >= 0 && bounds.upperBound <= raw.count, "ByteView range out of bounds")
        return ByteView(unsafe: UnsafeRawBufferPointer(rebasing: raw[bounds]))
    }

    /// The bytes in place, so that `Array.append(contentsOf:)`, `Array(view)` and other bulk
    /// copies are one copy, not a checked read a byte.
    @inlinable @inline(__always)
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try body(raw.assumingMemoryBound(to: UInt8.self))
    }

    /// The 8 bytes from `offset` (all within the view) as a little-endian word, checked: a hash
    /// or a decoder of binary fields reads a word at a time without a pointer of its own.
    @inlinable @inline(__always)
    public func word(at offset: Int) -> UInt64 {
        precondition(offset >= 0 && offset <= raw.count - 8, "ByteView word out of bounds")
        return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The bytes as UTF-8 text (invalid sequences replaced).
    public var string: String { String(decoding: raw, as: UTF8.self) }

    /// The pointer, for a file that owns a trick of its own (word-at-a-time reads, C calls).
    @inlinable @inline(__always)
    public var unsafeBytes: UnsafeRawBufferPointer { raw }

    /// Lends the pointer to code that reads it word at a time or hands it to C.
    @inlinable @inline(__always)
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(raw)
    }
}

extension Array where Element == UInt8 {
    /// The array's bytes as a view, valid during `body`.
    @inlinable @inline(__always)
    public func withByteView<R>(_ body: (ByteView) throws -> R) rethrows -> R {
        try withUnsafeBytes { try body(ByteView(unsafe: $0)) }
    }
}

extension String {
    /// The string's UTF-8 bytes as a view, valid during `body` (a native string lends its own;
    /// others are copied once).
    @inlinable
    public mutating func withByteView<R>(_ body: (ByteView) throws -> R) rethrows -> R {
        try withUTF8 { try body(ByteView(unsafe: UnsafeRawBufferPointer($0))) }
    }
}
