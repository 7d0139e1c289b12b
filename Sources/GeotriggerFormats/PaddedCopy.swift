/// A copy of bytes the decoders do not own, followed by `LineReader.slack` zero bytes, so the
/// parsers that load 8 bytes at a time near a line's end (`PlainLine`, the plain-key and
/// plain-row lanes) can run on it as they run on the line reader's buffer.
///
/// A Kafka message's payload ends exactly at its last byte: a word read at its end would run
/// past librdkafka's buffer (and fault where it ends at a page edge). Copying a record of a
/// hundred bytes costs far less than parsing it, and the buffer is reused, so a record costs no
/// allocation once the longest one so far fits.
struct PaddedCopy: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int

    init(capacity: Int = 4096) {
        precondition(LineReader.slack == 16, "hold(_:) zeroes the slack as two words")
        self.capacity = capacity
        base = .allocate(capacity: capacity + LineReader.slack)
        base.initialize(repeating: 0, count: capacity + LineReader.slack)
    }

    deinit { base.deallocate() }

    /// `bytes` copied to the start of the buffer, with at least `LineReader.slack` readable bytes
    /// after them; valid until the next call.
    mutating func hold(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let n = bytes.count
        if n > capacity { grow(n) }
        if let source = bytes.baseAddress, n > 0 {
            UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: n)
        }
        // Zeros after the copy, not an earlier record's bytes: nothing past the end may look like
        // the rest of a line. (`slack` is 16: two words.)
        UnsafeMutableRawPointer(base + n).storeBytes(of: 0 as UInt64, as: UInt64.self)
        UnsafeMutableRawPointer(base + n + 8).storeBytes(of: 0 as UInt64, as: UInt64.self)
        return UnsafeRawBufferPointer(start: base, count: n)
    }

    @inline(never)
    private mutating func grow(_ n: Int) {
        base.deallocate()
        capacity = max(n, capacity * 2)
        base = .allocate(capacity: capacity + LineReader.slack)
        base.initialize(repeating: 0, count: capacity + LineReader.slack)
    }
}
