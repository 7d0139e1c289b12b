extension UnsafeMutableBufferPointer where Element: Comparable {
    /// Sorts in place by insertion: the fastest choice for the short lists of the hot path
    /// (a fix's candidate regions, a beacon's few recent samples), and it allocates nothing.
    @inlinable
    public func insertionSort() { insertionSort(by: <) }
}

extension UnsafeMutableBufferPointer {
    /// Sorts in place by insertion, stably, by `areInIncreasingOrder`; fastest on short or
    /// nearly sorted lists (a device's neighbourhood after a few regions were retested).
    @inlinable
    public func insertionSort(by areInIncreasingOrder: (Element, Element) -> Bool) {
        guard let p = baseAddress else { return }
        var i = 1
        while i < count {
            let v = p[i]
            var j = i - 1
            while j >= 0 && areInIncreasingOrder(v, p[j]) {
                p[j + 1] = p[j]
                j -= 1
            }
            p[j + 1] = v
            i += 1
        }
    }
}

extension UnsafeMutableBufferPointer {
    /// Puts `head`'s elements in place of the first `head.count` elements and restores the order,
    /// given that the elements after those are in order already: sorts `head` (in place; it is
    /// meant to be short), then merges it forward with that tail. O(n + k log k) moves and
    /// comparisons, where insertion sort over the whole buffer takes O(n·k) when the new head
    /// belongs near the back (a device's retested regions, whose new clearances lie beyond the
    /// older ones'). The merge writes only slots it has already read, so no scratch is needed.
    /// Not stable between `head` and the tail.
    @inlinable
    public func replaceHeadAndMerge(with head: UnsafeMutableBufferPointer<Element>,
                                    by areInIncreasingOrder: (Element, Element) -> Bool) {
        let k = head.count
        precondition(k <= count, "the head is longer than the buffer")
        guard k > 0, let p = baseAddress, let h = head.baseAddress else { return }
        head.smallSort(by: areInIncreasingOrder)
        var w = 0, i = k, j = 0
        // w = (i - k) + j ≤ i: the write never overtakes the tail's read.
        while j < k {
            if i < count && areInIncreasingOrder(p[i], h[j]) {
                p[w] = p[i]
                i += 1
            } else {
                p[w] = h[j]
                j += 1
            }
            w += 1
        }
        // What is left of the tail is in place already (w == i).
    }
}

extension UnsafeMutableBufferPointer where Element: Comparable {
    /// Sorts in place, ascending, allocating nothing: insertion sort for up to 16 elements, Shell
    /// sort above (a candidate list of a few dozen regions, where insertion's n²/4 moves add up).
    @inlinable
    public func smallSort() { smallSort(by: <) }
}

/// Ciura's gap sequence for Shell sort, largest first.
@usableFromInline let shellGaps = [701, 301, 132, 57, 23, 10, 4, 1]

extension UnsafeMutableBufferPointer {
    /// Sorts in place by `areInIncreasingOrder`, allocating nothing: insertion sort for up to 16
    /// elements, Shell sort above. Not stable.
    @inlinable
    public func smallSort(by areInIncreasingOrder: (Element, Element) -> Bool) {
        guard count > 16, let p = baseAddress else { return insertionSort(by: areInIncreasingOrder) }
        for gap in shellGaps where gap < count {
            var i = gap
            while i < count {
                let v = p[i]
                var j = i
                while j >= gap && areInIncreasingOrder(v, p[j - gap]) {
                    p[j] = p[j - gap]
                    j -= gap
                }
                p[j] = v
                i += 1
            }
        }
    }
}
