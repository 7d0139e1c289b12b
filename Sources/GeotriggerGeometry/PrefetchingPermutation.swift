import CPrefetch

/// Reorders a table in place by a permutation: afterwards `table[k]` holds what was at
/// `table[source[k]]`, for every k. Each cycle of the permutation is walked once, moving every
/// entry once, with no second table; a runner goes a few steps ahead on the cycle asking for the
/// entries the walk will move next.
///
/// Why it is here: putting a large index into spatial order moves every region's entries to a
/// place unrelated to where they were. Walking a cycle alone, each read waits for the one before
/// it (the next place to fill is where the last entry came from), one cache miss at a time. The
/// runner only reads the permutation, which is small and stays in cache, so the misses on the
/// table overlap.
enum PrefetchingPermutation {
    /// How many steps ahead the runner asks: enough to cover a miss's latency at the walk's pace,
    /// few enough that the lines are still there when used.
    static let distance = 16

    /// `moved`: scratch, one flag per entry (reused between tables of one permutation).
    static func permute<T>(_ table: UnsafeMutablePointer<T>, source: UnsafeBufferPointer<Int32>, moved: inout [Bool]) {
        let n = source.count
        if moved.count == n {
            moved.withUnsafeMutableBufferPointer { $0.update(repeating: false) }
        } else {
            moved = [Bool](repeating: false, count: n)
        }
        moved.withUnsafeMutableBufferPointer { moved in
            for start in 0..<n where !moved[start] {
                moved[start] = true
                var from = Int(source[start])
                if from == start { continue }
                // The runner: `ahead` is `distance` steps further on this cycle, until it is back
                // at `start`.
                var ahead = from
                for _ in 0..<distance where ahead != start {
                    geotrigger_prefetch(table + ahead)
                    ahead = Int(source[ahead])
                }
                let saved = (table + start).move()
                var k = start
                while from != start {
                    (table + k).moveInitialize(from: table + from, count: 1)
                    k = from
                    moved[k] = true
                    from = Int(source[k])
                    if ahead != start {
                        geotrigger_prefetch(table + ahead)
                        ahead = Int(source[ahead])
                    }
                }
                (table + k).initialize(to: saved)
            }
        }
    }

    /// `array` reordered in place: element `k` becomes what was at `source[k]`.
    static func permute<T>(_ array: inout [T], source: [Int32], moved: inout [Bool]) {
        precondition(source.count == array.count, "one position per element")
        array.withUnsafeMutableBufferPointer { table in
            source.withUnsafeBufferPointer { permute(table.baseAddress!, source: $0, moved: &moved) }
        }
    }
}
