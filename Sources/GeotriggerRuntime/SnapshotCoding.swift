import HeapModule
import GeotriggerCore

/// The bytes of a checkpoint's state (`replay --checkpoint`): little-endian fixed-width numbers,
/// Doubles as their bit patterns (so a restored value is the same value, NaN payloads and signed
/// zeros included), counts and lengths as LEB128 varints, strings as a length and their UTF-8.
///
/// Each part of the engine writes its own state (`writeSnapshot(to:)`) and reads it back into a
/// fresh instance built from the same regions, requests and options (`restoreSnapshot(from:)`);
/// what can be derived again (hash tables over ids, caches, the fast path's neighbourhoods) is
/// not written. The file around these bytes (header, checksum, versions) is the replay's.
/// The version of the engine's snapshot bytes, written by both containers of them: a replay's
/// checkpoint files and `consume`'s partition snapshots. One number, raised when any part's
/// `writeSnapshot` changes, so neither container can read another version's state.
public enum SnapshotFormat {
    public static let version: UInt32 = 3
}

public struct SnapshotWriter {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    public mutating func u32(_ v: UInt32) { bytes.appendLittleEndian(v) }

    public mutating func u64(_ v: UInt64) { bytes.appendLittleEndian(v) }

    public mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    public mutating func f64(_ v: Double) { u64(v.bitPattern) }
    public mutating func f32(_ v: Float) { u32(v.bitPattern) }

    /// An unsigned number in 1 to 10 bytes, 7 bits a byte (small counts take one).
    public mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    public mutating func count(_ n: Int) { varint(UInt64(n)) }

    /// A signed number as a varint of its zigzag code (small magnitudes take one byte).
    public mutating func zigzag(_ v: Int64) { varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    /// Bytes another object owns: their count, then them.
    package mutating func raw(_ b: ByteView) {
        count(b.count)
        bytes.append(contentsOf: b)
    }

    package mutating func raw(_ b: [UInt8]) {
        count(b.count)
        bytes.append(contentsOf: b)
    }

    public mutating func string(_ s: String) {
        var s = s
        s.withByteView { raw($0) }
    }

    /// A list: its count, then each element as `element` writes it.
    public mutating func list<C: Collection>(_ c: C, _ element: (inout SnapshotWriter, C.Element) -> Void) {
        count(c.count)
        for e in c { element(&self, e) }
    }

    /// A value that may be absent: a flag, then the value.
    public mutating func optional<T>(_ v: T?, _ value: (inout SnapshotWriter, T) -> Void) {
        bool(v != nil)
        if let v { value(&self, v) }
    }

    /// A tag that a reader checks (`SnapshotReader.expect`), so that state read out of step
    /// with what was written stops at the first part that differs, with its name.
    public mutating func tag(_ name: StaticString) {
        u32(Self.tagCode(name))
    }

    static func tagCode(_ name: StaticString) -> UInt32 {
        var h: UInt32 = 0x811c_9dc5
        name.withUTF8Buffer { for b in $0 { h = (h ^ UInt32(b)) &* 0x0100_0193 } }
        return h
    }
}

/// A snapshot that cannot be read: truncated, from another version, or not what it claims.
public struct SnapshotError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Reads what `SnapshotWriter` wrote, in the same order; every read checks the bounds.
public struct SnapshotReader {
    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    public var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ n: Int) throws(SnapshotError) -> Int {
        guard n >= 0, n <= bytes.count - offset else { throw SnapshotError("snapshot ends early (at byte \(offset))") }
        defer { offset += n }
        return offset
    }

    public mutating func u8() throws(SnapshotError) -> UInt8 { bytes[try take(1)] }

    public mutating func bool() throws(SnapshotError) -> Bool {
        let b = try u8()
        guard b <= 1 else { throw SnapshotError("bad flag \(b) at byte \(offset - 1)") }
        return b == 1
    }

    public mutating func u32() throws(SnapshotError) -> UInt32 {
        let at = try take(4)
        var v: UInt32 = 0
        for k in 0..<4 { v |= UInt32(bytes[at + k]) << (8 * k) }
        return v
    }

    public mutating func u64() throws(SnapshotError) -> UInt64 {
        let at = try take(8)
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(bytes[at + k]) << (8 * k) }
        return v
    }

    public mutating func i32() throws(SnapshotError) -> Int32 { Int32(bitPattern: try u32()) }
    public mutating func f64() throws(SnapshotError) -> Double { Double(bitPattern: try u64()) }
    public mutating func f32() throws(SnapshotError) -> Float { Float(bitPattern: try u32()) }

    public mutating func varint() throws(SnapshotError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            guard shift < 64 else { throw SnapshotError("bad number at byte \(offset - 1)") }
            v |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// A count, checked against what is left (each counted thing takes at least a byte), so a
    /// corrupt count cannot ask for a huge allocation.
    public mutating func count() throws(SnapshotError) -> Int {
        let v = try varint()
        guard v <= UInt64(bytes.count - offset) else { throw SnapshotError("bad count \(v) at byte \(offset)") }
        return Int(v)
    }

    /// A varint that is an `Int` (a position, a count of records): a larger one is refused, not
    /// trapped on.
    public mutating func natural() throws(SnapshotError) -> Int {
        let v = try varint()
        guard v <= UInt64(Int.max) else { throw SnapshotError("number \(v) out of range at byte \(offset)") }
        return Int(v)
    }

    public mutating func zigzag() throws(SnapshotError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    public mutating func raw() throws(SnapshotError) -> [UInt8] {
        let n = try count()
        let at = try take(n)
        return Array(bytes[at..<at + n])
    }

    public mutating func string() throws(SnapshotError) -> String {
        let b = try raw()
        guard let s = String(validating: b, as: UTF8.self) else { throw SnapshotError("bad UTF-8 at byte \(offset)") }
        return s
    }

    public mutating func list<T>(_ element: (inout SnapshotReader) throws(SnapshotError) -> T) throws(SnapshotError) -> [T] {
        let n = try count()
        var out: [T] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try element(&self)) }
        return out
    }

    public mutating func optional<T>(_ value: (inout SnapshotReader) throws(SnapshotError) -> T) throws(SnapshotError) -> T? {
        try bool() ? try value(&self) : nil
    }

    /// Checks the tag `SnapshotWriter.tag(name)` wrote here.
    public mutating func expect(_ name: StaticString) throws(SnapshotError) {
        let at = offset
        guard try u32() == SnapshotWriter.tagCode(name) else {
            throw SnapshotError("snapshot out of step at byte \(at): expected \(name)")
        }
    }
}

extension TimerQueue {
    /// Every timer with its due time, rank and place in the scheduling order, and the order's
    /// counter: restored, timers due together fire in the same order as before.
    public func writeSnapshot(to w: inout SnapshotWriter, _ payload: (inout SnapshotWriter, Payload) -> Void) {
        w.tag("timers")
        w.varint(sequence)
        w.list(heap.unordered) { w, e in
            w.f64(e.due)
            w.varint(e.rank)
            w.varint(e.sequence)
            payload(&w, e.payload)
        }
    }

    public mutating func restoreSnapshot(from r: inout SnapshotReader,
                                         _ payload: (inout SnapshotReader) throws(SnapshotError) -> Payload) throws(SnapshotError) {
        try r.expect("timers")
        let sequence = try r.varint()
        let entries = try r.list { r throws(SnapshotError) in
            Entry(due: try r.f64(), rank: try r.varint(), sequence: try r.varint(), payload: try payload(&r))
        }
        self.sequence = sequence
        heap = Heap(entries)
        earliest = heap.min?.due ?? .infinity
    }
}

extension Array where Element == UInt8 {
    /// Appends `v`'s bytes, least significant first.
    @inlinable
    public mutating func appendLittleEndian<T: FixedWidthInteger>(_ v: T) {
        for k in 0..<MemoryLayout<T>.size { append(UInt8(truncatingIfNeeded: v >> (8 * k))) }
    }

    /// The `T` whose bytes, least significant first, start at `offset` (all within the array).
    @inlinable
    public func littleEndian<T: FixedWidthInteger>(at offset: Int, as: T.Type) -> T {
        var v: T = 0
        for k in 0..<MemoryLayout<T>.size { v |= T(truncatingIfNeeded: self[offset + k]) << (8 * k) }
        return v
    }
}
