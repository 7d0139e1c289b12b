import GeotriggerCore
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
