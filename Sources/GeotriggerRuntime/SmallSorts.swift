import GeotriggerCore

// Sorts for the short lists of the hot path that allocate nothing (the standard library's sort
// may allocate a buffer). On a buffer or list whose subscript is unchecked (`PodList.buffer`, a
// query's results) they specialise to the same loops as over a raw pointer.

extension MutableCollection where Self: RandomAccessCollection, Index == Int, Element: Comparable {
    /// Sorts in place by insertion: the fastest choice for the short lists of the hot path
    /// (a fix's candidate regions, a beacon's few recent samples), and it allocates nothing.
    @inlinable
    public mutating func insertionSort() { insertionSort(by: <) }

    /// Sorts in place, ascending, allocating nothing: insertion sort for up to 16 elements, Shell
    /// sort above (a candidate list of a few dozen regions, where insertion's n²/4 moves add up).
    @inlinable
    public mutating func smallSort() { smallSort(by: <) }
}

/// Ciura's gap sequence for Shell sort, largest first.
@usableFromInline let shellGaps = [701, 301, 132, 57, 23, 10, 4, 1]

extension MutableCollection where Self: RandomAccessCollection, Index == Int {
    /// Sorts in place by insertion, stably, by `areInIncreasingOrder`; fastest on short or
    /// nearly sorted lists (a device's neighbourhood after a few regions were retested).
    @inlinable
    public mutating func insertionSort(by areInIncreasingOrder: (Element, Element) -> Bool) {
        let s = startIndex, n = count
        var i = 1
        while i < n {
            let v = self[s + i]
            var j = i - 1
            while j >= 0 && areInIncreasingOrder(v, self[s + j]) {
                self[s + j + 1] = self[s + j]
                j -= 1
            }
            self[s + j + 1] = v
            i += 1
        }
    }

    /// Sorts in place by `areInIncreasingOrder`, allocating nothing: insertion sort for up to 16
    /// elements, Shell sort above. Not stable.
    @inlinable
    public mutating func smallSort(by areInIncreasingOrder: (Element, Element) -> Bool) {
        let s = startIndex, n = count
        guard n > 16 else { return insertionSort(by: areInIncreasingOrder) }
        for gap in shellGaps where gap < n {
            var i = gap
            while i < n {
                let v = self[s + i]
                var j = i
                while j >= gap && areInIncreasingOrder(v, self[s + j - gap]) {
                    self[s + j] = self[s + j - gap]
                    j -= gap
                }
                self[s + j] = v
                i += 1
            }
        }
    }
}
