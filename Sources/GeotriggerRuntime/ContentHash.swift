import GeotriggerCore

/// A 64-bit hash of a byte stream, fed in pieces of any size, for telling whether a file is the one
/// a checkpoint was taken with (its checksum, and the regions, requests and the part of each input
/// read so far). Not cryptographic: it guards against changed and torn files, not against forgery.
///
/// Eight bytes a step (a multiply, a rotate and an xor), so hashing the read prefix of a large
/// input at each checkpoint costs a fraction of reading it. The state, bytes not yet making a
/// whole word included, can be written into a checkpoint and the hash continued later.
public struct ContentHash: Equatable, Sendable {
    public private(set) var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// Bytes that do not make a whole word yet (little-endian, the first in the low byte).
    public private(set) var tail: UInt64 = 0
    public private(set) var length: UInt64 = 0

    public init() {}

    /// A hash continued from its written state.
    public init(state: UInt64, tail: UInt64, length: UInt64) {
        self.state = state
        self.tail = tail
        self.length = length
    }

    private static let k1: UInt64 = 0x87C3_7B91_1142_53D5
    private static let k2: UInt64 = 0x4CF5_AD43_2745_937F

    @inline(__always)
    private mutating func mix(_ word: UInt64) {
        var k = word &* Self.k1
        k = (k << 31) | (k >> 33)
        state ^= k &* Self.k2
        state = ((state << 27) | (state >> 37)) &* 5 &+ 0x52DC_E729
    }

    package mutating func update(_ view: ByteView) {
        let bytes = view
        var i = 0
        let n = bytes.count
        var pending = Int(length & 7)
        length &+= UInt64(n)
        // Complete a word begun by an earlier piece.
        while pending != 0 && i < n {
            tail |= UInt64(bytes[i]) << (8 * UInt64(pending))
            i += 1
            pending += 1
            if pending == 8 {
                mix(tail)
                tail = 0
                pending = 0
            }
        }
        while i + 8 <= n {
            mix(bytes.word(at: i))
            i += 8
        }
        while i < n {
            tail |= UInt64(bytes[i]) << (8 * UInt64(pending))
            pending += 1
            i += 1
        }
    }

    package mutating func update(_ bytes: [UInt8]) { bytes.withByteView { update($0) } }

    /// The hash of everything fed so far (feeding may go on).
    public var value: UInt64 {
        var h = state ^ tail &* Self.k2 ^ length
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }

    public static func of(_ bytes: [UInt8]) -> UInt64 {
        var h = ContentHash()
        h.update(bytes)
        return h.value
    }
}
