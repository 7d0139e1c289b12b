import GeotriggerCore
import Testing
@testable import GeotriggerFormats

@Suite struct PaddedBufferTests {
    /// A held record is followed by `slack` zero bytes, not by an earlier, longer record's bytes.
    @Test func holdZeroesTheSlackAfterTheRecord() {
        var buffer = PaddedBuffer(capacity: 8)
        var long = "a much longer record than the first capacity"
        _ = long.withByteView { buffer.hold($0) }
        #expect(buffer.capacity >= long.utf8.count)
        var short = "t=1"
        let held = short.withByteView { buffer.hold($0) }
        #expect(held.count == 3 && held.padding == PaddedBuffer.slack)
        #expect(held.bytes.string == "t=1")
        #expect(held.word(at: 3) == 0 && held.word(at: 11) == 0)
    }

    /// Growing keeps the bytes asked for; the writer writes where it was asked to.
    @Test func growKeepsAndWriterWrites() {
        var buffer = PaddedBuffer(capacity: 4)
        let w = buffer.writer(from: 1)
        for (k, c) in "abc".utf8.enumerated() { w[k] = c }
        #expect(w.bytes(count: 3).bytes.string == "abc")
        buffer.grow(to: 64, keeping: 4)
        #expect(buffer.capacity == 64)
        #expect(buffer.view(from: 1, count: 3).string == "abc")
        #expect(buffer.bytes(from: 4, count: 60).word(at: 0) == 0)
    }
}
