#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GeotriggerCore

/// An owned, growable byte buffer, followed by `PaddedBuffer.slack` readable bytes that start out
/// zero: the line reader's read buffer and its over-long-line prefix, the decoders' copy of a
/// record they were lent, their scratch for unescaped text and their copy of the default device,
/// the GPX decoder's whole file.
///
/// The trick: the parsers read what these buffers hold as `PaddedBytes`, 8 bytes at a time near
/// a line's end, which is legal only because the buffer goes on for `slack` bytes past the
/// capacity any line can use. Raw memory rather than an array, so that the bytes stay where
/// they are (views of them are handed out until the owner's next record) and a record costs no
/// allocation, retain or uniqueness check. Reads and writes by index are checked with `assert`
/// (debug builds), against `capacity + slack`.
struct PaddedBuffer: ~Copyable {
    /// Readable bytes after the capacity (zero unless written): every line the parsers read from
    /// one of these buffers has at least this many after it.
    static let slack = 16

    private var base: UnsafeMutablePointer<UInt8>
    /// Bytes that may hold data; `slack` more follow.
    private(set) var capacity: Int

    /// The length of the mapping a mapped file lies in (`init(mapping:size:)`); 0 for a buffer
    /// of its own.
    private var mappedLength = 0

    /// The first `size` bytes of regular file `fd`, mapped read-only in place of a buffer, with
    /// `slack` readable bytes after them; nil where the file cannot be mapped. Read-only: never
    /// written, moved, read into or grown.
    ///
    /// mmap fills the file's last page with zeros past its end; where fewer than `slack` bytes
    /// are left on it, the range is first reserved as zero pages and the file laid over its
    /// start, so that the bytes past the file's end read as zero to the end of the range even
    /// where the file ends at a page's end. A file cut shorter while it is mapped faults where it is read
    /// (SIGBUS), as with every reader that maps its input.
    init?(mapping fd: Int32, size: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = (size + PaddedBuffer.slack + page - 1) / page * page
        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        guard size > 0 else { return nil }
        if length == (size + page - 1) / page * page {
            // The file's last page holds the slack: one mapping is enough.
            guard let file = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), file != failed else { return nil }
            base = file.assumingMemoryBound(to: UInt8.self)
            capacity = size
            mappedLength = length
            return
        }
        guard let range = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), range != failed
        else { return nil }
        guard let file = mmap(range, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0), file == range else {
            munmap(range, length)
            return nil
        }
        base = range.assumingMemoryBound(to: UInt8.self)
        capacity = size
        mappedLength = length
    }

    /// A buffer of `capacity` bytes and its slack, all zero.
    init(capacity: Int) {
        self.capacity = capacity
        base = PaddedBuffer.zeroed(capacity + PaddedBuffer.slack)
    }

    /// `count` zero bytes, not written here: a large block is fresh pages mapped from the
    /// kernel, already zero, that cost memory only where they are written. A line reader holds a
    /// mebibyte for the longest line it may meet, and a replay of one file per device opens
    /// thousands of readers, each writing only its first few pages. (Not `calloc`: once a large
    /// block has been freed, malloc serves the next ones from its heap and `calloc` clears every
    /// byte.) A small block comes from `calloc`.
    private static func zeroed(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if count >= mappedFrom {
            let p = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            if let p, p != UnsafeMutableRawPointer(bitPattern: -1) { return p.assumingMemoryBound(to: UInt8.self) }
        } else if let p = calloc(count, 1) {
            return p.assumingMemoryBound(to: UInt8.self)
        }
        fatalError("PaddedBuffer: out of memory (\(count) bytes)")
    }

    /// Gives back a block of `zeroed(count)`.
    private static func release(_ p: UnsafeMutablePointer<UInt8>, count: Int) {
        if count >= mappedFrom { munmap(p, count) } else { free(p) }
    }

    /// Blocks from this size on are mapped pages (glibc's own first threshold for that). Not in
    /// debug builds (the tests, and the sanitizers'): there every block comes from `calloc`, so
    /// that AddressSanitizer knows where each one ends to the byte (a mapping ends at a page).
    #if DEBUG
    private static let mappedFrom = Int.max
    #else
    private static let mappedFrom = 128 << 10
    #endif

    /// A buffer holding `text`'s UTF-8 bytes from index 0 (`view(from: 0, count: text.utf8.count)`).
    init(copying text: String) {
        var text = text
        self.init(capacity: max(text.utf8.count, 1))
        text.withByteView { _ = hold($0) }
    }

    deinit {
        if mappedLength > 0 {
            munmap(base, mappedLength)
        } else {
            PaddedBuffer.release(base, count: capacity + PaddedBuffer.slack)
        }
    }

    /// Makes room for at least `n` bytes (and the slack after them), keeping the first `kept`
    /// bytes; the rest start out zero.
    mutating func grow(to n: Int, keeping kept: Int = 0) {
        guard n > capacity else { return }
        precondition(mappedLength == 0, "PaddedBuffer: a mapped file does not grow")
        let bigger = PaddedBuffer.zeroed(n + PaddedBuffer.slack)
        if kept > 0 { bigger.update(from: base, count: kept) }
        PaddedBuffer.release(base, count: capacity + PaddedBuffer.slack)
        base = bigger
        capacity = n
    }

    @inline(__always)
    subscript(i: Int) -> UInt8 {
        assert(i >= 0 && i < capacity + PaddedBuffer.slack, "PaddedBuffer: read past the slack")
        return base[i]
    }

    /// `count` bytes from `start` (within the capacity), with the `slack` bytes after them that
    /// the buffer guarantees.
    @inline(__always)
    func bytes(from start: Int, count: Int) -> PaddedBytes {
        assert(start >= 0 && count >= 0 && start + count <= capacity, "PaddedBuffer: bytes past the capacity")
        return PaddedBytes(unsafe: UnsafeRawBufferPointer(start: base + start, count: count), padding: PaddedBuffer.slack)
    }

    /// `count` bytes from `start`, as a view (valid until the buffer is written or grows).
    @inline(__always)
    func view(from start: Int, count: Int) -> ByteView {
        bytes(from: start, count: count).bytes
    }

    /// Where byte `start` is (within the capacity), as a hint for the cache (`CacheHint`).
    @inline(__always)
    func address(of start: Int) -> UnsafeRawPointer {
        assert(start >= 0 && start <= capacity, "PaddedBuffer: address past the capacity")
        return UnsafeRawPointer(base + start)
    }

    /// The index of the first `byte` in `range` (within the capacity), found by `memchr`.
    @inline(__always)
    func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int? {
        bytes(from: 0, count: capacity).firstIndex(of: byte, in: range)
    }

    /// Copies `source` to `at` (within the capacity).
    /// (Writing the bytes does not change the buffer's place or size, so an owner that never
    /// grows it keeps it in a `let`: views of it stay valid, and its address need not be reloaded.)
    @inline(__always)
    func copy(_ source: ByteView, to at: Int) {
        assert(at >= 0 && at + source.count <= capacity, "PaddedBuffer: copy past the capacity")
        source.withUnsafeBytes { raw in
            if let from = raw.baseAddress, raw.count > 0 {
                UnsafeMutableRawPointer(base + at).copyMemory(from: from, byteCount: raw.count)
            }
        }
    }

    /// Moves `count` bytes from `from` to `to` (the ranges may overlap): the read buffer's
    /// compaction.
    func move(from: Int, count: Int, to: Int) {
        assert(mappedLength == 0, "PaddedBuffer: a mapped file is not written")
        assert(from >= 0 && to >= 0 && from + count <= capacity && to + count <= capacity, "PaddedBuffer: move past the capacity")
        if count > 0 { memmove(base + to, base + from, count) }
    }

    /// `read(2)` of at most `count` bytes of `fd` into the buffer at `at`: the bytes read, 0 at
    /// end of input, or -1 with `errno` set.
    func read(_ fd: Int32, at: Int, count: Int) -> Int {
        assert(mappedLength == 0, "PaddedBuffer: a mapped file is not written")
        assert(at >= 0 && count >= 0 && at + count <= capacity, "PaddedBuffer: read(2) past the capacity")
        #if canImport(Glibc)
        return Glibc.read(fd, base + at, count)
        #else
        return Darwin.read(fd, base + at, count)
        #endif
    }

    /// `bytes` copied to the start of the buffer (grown to fit, its earlier bytes dropped), with
    /// `slack` zero bytes after them; valid until the next call.
    ///
    /// A Kafka message's payload ends exactly at its last byte: a word read at its end would run
    /// past librdkafka's buffer (and fault where it ends at a page edge). Copying a record of a
    /// hundred bytes costs far less than parsing it, and the buffer is reused, so a record costs
    /// no allocation once the longest one so far fits.
    mutating func hold(_ bytes: ByteView) -> PaddedBytes {
        let n = bytes.count
        if n > capacity { grow(to: max(n, capacity * 2)) }
        copy(bytes, to: 0)
        // Zeros after the copy, not an earlier record's bytes: nothing past the end may look like
        // the rest of a line. (`slack` is 16: two words.)
        UnsafeMutableRawPointer(base + n).storeBytes(of: 0 as UInt64, as: UInt64.self)
        UnsafeMutableRawPointer(base + n + 8).storeBytes(of: 0 as UInt64, as: UInt64.self)
        return self.bytes(from: 0, count: n)
    }

    /// Where to write from `start` on, up to the capacity: the scratch of unescaped text.
    @inline(__always)
    func writer(from start: Int) -> ByteWriter {
        assert(start >= 0 && start <= capacity, "PaddedBuffer: writer past the capacity")
        return ByteWriter(base: base + start, capacity: capacity - start)
    }
}

/// Room to write `capacity` bytes in a `PaddedBuffer` (its scratch for unescaped text), from
/// index 0: each write is checked with `assert` (debug builds). Valid while the buffer is
/// neither freed nor grown, which its owner does only between records.
struct ByteWriter {
    private let base: UnsafeMutablePointer<UInt8>
    let capacity: Int

    fileprivate init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    @inline(__always)
    subscript(i: Int) -> UInt8 {
        get {
            assert(i >= 0 && i < capacity, "ByteWriter: read past the room")
            return base[i]
        }
        nonmutating set {
            assert(i >= 0 && i < capacity, "ByteWriter: write past the room")
            base[i] = newValue
        }
    }

    /// The first `count` bytes written, as the parsers read them (no padding is promised: what
    /// follows is the rest of the scratch).
    @inline(__always)
    func bytes(count: Int) -> PaddedBytes {
        assert(count >= 0 && count <= capacity, "ByteWriter: bytes past the room")
        return PaddedBytes(unsafe: UnsafeRawBufferPointer(start: base, count: count), padding: 0)
    }
}
