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
