extension UnsafeMutableBufferPointer where Element: Comparable {
    /// Sorts in place by insertion: the fastest choice for the short lists of the hot path
    /// (a fix's candidate regions, a beacon's few recent samples), and it allocates nothing.
    @inlinable
    public func insertionSort() {
        guard let p = baseAddress else { return }
        var i = 1
        while i < count {
            let v = p[i]
            var j = i - 1
            while j >= 0 && p[j] > v {
                p[j + 1] = p[j]
                j -= 1
            }
            p[j + 1] = v
            i += 1
        }
    }
}
