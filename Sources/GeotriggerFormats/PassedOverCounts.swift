import GeotriggerCore

/// Lines a receiver decoder passed over, counted by kind (`ReadingDecoder.passedOver`).
///
/// Why not a dictionary: in a receiver's log most lines are passed over (GSV, GSA, VTG, a
/// vendor's sentences, gpsd's SKY reports), one kind after another from a handful, and hashing
/// each line's kind cost more than reading it. The first few short kinds (`ShortKind`, compared
/// as one word) are counted in place, in the decoder beside its other state: a merge of
/// thousands of logs comes back to each decoder after the cache has let go of it, and a count
/// kept in an array of its own was one more line to wait for, at every sentence passed over.
/// Further kinds, and longer ones told by their names, go into a short list searched from the
/// front.
struct PassedOverCounts {
    /// Kinds counted in place: `ShortKind` words (the first `inPlace` of them) and their counts.
    private var words = InlineArray<4, UInt64>(repeating: 0)
    private var wordCounts = InlineArray<4, Int>(repeating: 0)
    private var inPlace = 0
    /// Per further kind: its bytes packed (`ShortKind`), or 0 for a longer one, told by its name.
    private var codes: [UInt64] = []
    private var names: [String] = []
    private var counts: [Int] = []

    mutating func add(_ kind: String) {
        if let short = ShortKind(kind) {
            add(short)
            return
        }
        for k in codes.indices where codes[k] == 0 && names[k] == kind {
            counts[k] += 1
            return
        }
        append(0, kind)
    }

    /// Counts a short kind (a sentence's type), its name made only when the counts are read.
    @inline(__always)
    mutating func add(_ kind: ShortKind) {
        for k in 0..<inPlace where words[k] == kind.word {
            wordCounts[k] &+= 1
            return
        }
        addFurther(kind)
    }

    private mutating func addFurther(_ kind: ShortKind) {
        if inPlace < words.count {
            words[inPlace] = kind.word
            wordCounts[inPlace] = 1
            inPlace += 1
            return
        }
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
        var all = Dictionary(uniqueKeysWithValues: zip(names, counts))
        for k in 0..<inPlace { all[ShortKind(word: words[k]).name] = wordCounts[k] }
        return all
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

    /// A kind from its word (one `init?(_: ByteView)` made).
    fileprivate init(word: UInt64) { self.word = word }

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
