/// Lines a receiver decoder passed over, counted by kind (`ReadingDecoder.passedOver`).
///
/// Why not a dictionary: in a receiver's log most lines are passed over (GSV, GSA, VTG, a
/// vendor's sentences, gpsd's SKY reports), one kind after another from a handful, and hashing
/// each line's kind cost more than reading it. A short list searched from the front, where the
/// kinds seen first (and most often) stay, costs a comparison or two of small strings.
struct PassedOverCounts {
    private var kinds: [String] = []
    private var counts: [Int] = []

    mutating func add(_ kind: String) {
        for k in kinds.indices where kinds[k] == kind {
            counts[k] += 1
            return
        }
        kinds.append(kind)
        counts.append(1)
    }

    var dictionary: [String: Int] {
        Dictionary(uniqueKeysWithValues: zip(kinds, counts))
    }
}
