/// A table `PrefetchingPermutation` can reorder: entries by position, moved one at a time
/// (`TableRows`: the circle tables' lines, a tree's leaves, an array's elements).
protocol PermutableTable {
    associatedtype Element
    var count: Int { get }
    /// Starts loading entry `i` (a hint).
    func prefetchEntry(_ i: Int)
    /// Moves entry `i` out, leaving its place to be filled (`moveEntry`, `put`).
    func take(_ i: Int) -> Element
    /// Moves entry `from` into the empty place `to`, leaving `from` empty.
    func moveEntry(from: Int, to: Int)
    /// Fills the empty place `i`.
    func put(_ e: Element, at i: Int)
}

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
    static func permute<Table: PermutableTable>(_ table: Table, source: [Int32], moved: inout [Bool]) {
        let n = source.count
        precondition(n == table.count, "one position per entry")
        if moved.count == n {
            var done = moved.mutableSpan
            done.update(repeating: false)
        } else {
            moved = [Bool](repeating: false, count: n)
        }
        var done = moved.mutableSpan
        let order = source.span
        for start in 0..<n where !done[unchecked: start] {
            done[unchecked: start] = true
            var from = Int(order[unchecked: start])
            if from == start { continue }
            // The runner: `ahead` is `distance` steps further on this cycle, until it is back
            // at `start`.
            var ahead = from
            for _ in 0..<distance where ahead != start {
                table.prefetchEntry(ahead)
                ahead = Int(order[unchecked: ahead])
            }
            let saved = table.take(start)
            var k = start
            while from != start {
                table.moveEntry(from: from, to: k)
                k = from
                done[unchecked: k] = true
                from = Int(order[unchecked: k])
                if ahead != start {
                    table.prefetchEntry(ahead)
                    ahead = Int(order[unchecked: ahead])
                }
            }
            table.put(saved, at: k)
        }
    }
}
