#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes a parser reads by index (a line, a record, a file), `count` of them, followed by
/// `padding` more bytes that may be read but decide nothing.
///
/// The trick: the plain-line parsers (`PlainLine`, the NDJSON plain-key and CSV plain-row
/// lanes) load 8 bytes at a time, unaligned, near a line's end, and compare keys as whole
/// words; that is legal only because every buffer they read is followed by readable bytes
/// (`LineReader.slack` of them: the line reader's buffer, or the decoders' padded copy of a
/// record they were lent). This type is that promise with a name: whoever makes one says how many
/// bytes past `count` are readable, and every read checks it is within `count + padding` with
/// `assert`, so a debug build (`swift test`, the fuzz targets' tests) traps on an over-read,
/// while a release build (the libFuzzer one too) reads as the raw pointer did: every member is
/// inlined, nothing is checked.
/// A parser that never reads past its bytes takes one with no padding (`init(_:)`).
///
/// Valid as long as the bytes it was made from, as a `ByteView` is: a line only until the
/// reader's next one; it is kept only by an object that keeps those bytes too (the GPX decoder
/// and its file, the GeoJSON reader's second thread and the caller's array).
@frozen
public struct PaddedBytes: @unchecked Sendable {
    @usableFromInline let base: UnsafePointer<UInt8>?
    /// How many bytes are the data: indices `0..<count`.
    public let count: Int
    /// `count` plus the padding: the reads the assertions allow.
    @usableFromInline let readable: Int

    /// The bytes of `bytes`, which their owner guarantees are followed by `padding` readable bytes.
    @inlinable @inline(__always)
    public init(unsafe bytes: UnsafeRawBufferPointer, padding: Int) {
        base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        count = bytes.count
        readable = bytes.count &+ padding
    }

    /// The bytes of `view`, with no padding: every read must stay within them.
    @inlinable @inline(__always)
    public init(_ view: ByteView) {
        self.init(unsafe: view.unsafeBytes, padding: 0)
    }

    /// How many bytes past `count` may be read.
    @inlinable @inline(__always)
    public var padding: Int { readable &- count }

    /// The byte at `i` (within `count + padding`).
    @inlinable @inline(__always)
    public subscript(i: Int) -> UInt8 {
        assert(i >= 0 && i < readable, "PaddedBytes: read past the padding")
        return base.unsafelyUnwrapped[i]
    }

    /// The 8 bytes from `i` (all within `count + padding`) as one word, the first byte lowest; `i`
    /// need not be aligned.
    @inlinable @inline(__always)
    public func word(at i: Int) -> UInt64 {
        assert(i >= 0 && i &+ 8 <= readable, "PaddedBytes: word read past the padding")
        return UInt64(littleEndian: UnsafeRawPointer(base.unsafelyUnwrapped + i).loadUnaligned(as: UInt64.self))
    }

    /// The bytes from `i` on (`i` at most `count`), with the same padding after them.
    @inlinable @inline(__always)
    public func dropFirst(_ i: Int) -> PaddedBytes {
        assert(i >= 0 && i <= count, "PaddedBytes: dropFirst past the end")
        return PaddedBytes(base: base.map { $0 + i }, count: count &- i, readable: readable &- i)
    }

    /// The bytes in `range` (within `count`), with the rest of the bytes and the padding after
    /// them still readable.
    @inlinable @inline(__always)
    public func slice(_ range: Range<Int>) -> PaddedBytes {
        assert(range.lowerBound >= 0 && range.upperBound <= count, "PaddedBytes: slice past the end")
        return PaddedBytes(base: base.map { $0 + range.lowerBound }, count: range.count,
                           readable: readable &- range.lowerBound)
    }

    @inlinable @inline(__always)
    init(base: UnsafePointer<UInt8>?, count: Int, readable: Int) {
        self.base = base
        self.count = count
        self.readable = readable
    }

    /// `count` bytes from `start`, as a view for the layers above (valid as long as these bytes).
    @inlinable @inline(__always)
    public func view(from start: Int, count n: Int) -> ByteView {
        assert(start >= 0 && n >= 0 && start &+ n <= readable, "PaddedBytes: view past the padding")
        return ByteView(unsafe: UnsafeRawBufferPointer(start: base.map { $0 + start }, count: n))
    }

    /// The bytes in `range`, as a view.
    @inlinable @inline(__always)
    public func view(_ range: Range<Int>) -> ByteView {
        view(from: range.lowerBound, count: range.count)
    }

    /// All `count` bytes, as a view.
    @inlinable @inline(__always)
    public var bytes: ByteView { view(from: 0, count: count) }

    /// The bytes in `range` as UTF-8 text (invalid sequences replaced).
    @inlinable @inline(__always)
    public func string(_ range: Range<Int>) -> String {
        assert(range.lowerBound >= 0 && range.upperBound <= readable, "PaddedBytes: text past the padding")
        return String(decoding: UnsafeBufferPointer(start: base.map { $0 + range.lowerBound }, count: range.count), as: UTF8.self)
    }

    /// Whether the bytes from `i` are `text` (which must lie within `count + padding`).
    @inlinable @inline(__always)
    public func matches(_ text: StaticString, at i: Int) -> Bool {
        let n = text.utf8CodeUnitCount
        assert(i >= 0 && i &+ n <= readable, "PaddedBytes: comparison past the padding")
        let t = text.utf8Start
        for k in 0..<n where base.unsafelyUnwrapped[i &+ k] != t[k] { return false }
        return true
    }

    /// The index of the first `byte` in `range` (within `count + padding`), found by `memchr`.
    @inlinable @inline(__always)
    public func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
        assert(range.lowerBound >= 0 && range.upperBound <= readable, "PaddedBytes: search past the padding")
        guard !range.isEmpty, let b = base,
              let hit = memchr(b + range.lowerBound, Int32(byte), range.count) else { return nil }
        return b.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }

    /// The bytes in `range` as a NUL-terminated C string, for `body` (`strtod`) to read.
    @inlinable
    public func withCString<R>(_ range: Range<Int>, _ body: (UnsafePointer<CChar>) -> R) -> R {
        assert(range.lowerBound >= 0 && range.upperBound <= readable, "PaddedBytes: copy past the padding")
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: range.count + 1) { buf in
            let out = buf.baseAddress!
            if let b = base, !range.isEmpty {
                UnsafeMutableRawPointer(out).copyMemory(from: b + range.lowerBound, byteCount: range.count)
            }
            out[range.count] = 0
            return body(out)
        }
    }
}

extension Array where Element == UInt8 {
    /// The array's bytes, with no padding, valid during `body`.
    @inlinable @inline(__always)
    public func withPaddedBytes<R>(_ body: (PaddedBytes) throws -> R) rethrows -> R {
        try withUnsafeBytes { try body(PaddedBytes(unsafe: $0, padding: 0)) }
    }
}
