import GeotriggerCore

/// Lines a receiver decoder passed over, counted by kind (`ReadingDecoder.passedOver`).
///
/// Why not a dictionary: in a receiver's log most lines are passed over (GSV, GSA, VTG, a
/// vendor's sentences, gpsd's SKY reports), one kind after another from a handful, and hashing
/// each line's kind cost more than reading it. A short list searched from the front, where the
/// kinds seen first (and most often) stay; a kind of at most eight bytes is compared as one word
/// (`ShortKind`), and a sentence's type is counted without making a string of it.
struct PassedOverCounts {
    /// Per kind: its bytes packed (`ShortKind`), or 0 for a longer one, told by its name.
    private var codes: [UInt64] = []
    private var names: [String] = []
    private var counts: [Int] = []

    mutating func add(_ kind: String) {
        let code = ShortKind(kind)?.word ?? 0
        for k in codes.indices where codes[k] == code && (code != 0 || names[k] == kind) {
            counts[k] += 1
            return
        }
        append(code, kind)
    }

    /// Counts a short kind (a sentence's type), its name made only the first time it is seen.
    mutating func add(_ kind: ShortKind) {
        for k in codes.indices where codes[k] == kind.word {
            counts[k] += 1
            return
        }
        append(kind.word, kind.name)
    }

    private mutating func append(_ code: UInt64, _ name: String) {
        codes.append(code)
        names.append(name)
        counts.append(1)
    }

    var dictionary: [String: Int] {
        Dictionary(uniqueKeysWithValues: zip(names, counts))
    }
}

/// A kind's name of one to eight bytes, none zero (a sentence's type, a vendor's address),
/// packed into a word little-endian: two are the same kind exactly when their words are equal.
struct ShortKind: Equatable {
    let word: UInt64

    init?(_ bytes: ByteView) {
        guard bytes.count >= 1 && bytes.count <= 8 else { return nil }
        var w: UInt64 = 0
        for i in 0..<bytes.count {
            let b = bytes[i]
            // A zero byte would read as the name's end.
            guard b != 0 else { return nil }
            w |= UInt64(b) << (8 &* i)
        }
        word = w
    }

    init?(_ name: String) {
        var name = name
        guard let kind = name.withByteView({ ShortKind($0) }) else { return nil }
        self = kind
    }

    var name: String {
        var w = word, bytes: [UInt8] = []
        while w != 0 {
            bytes.append(UInt8(truncatingIfNeeded: w))
            w >>= 8
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
